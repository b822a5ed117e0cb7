//! Re-judging a whole record at once (archive re-judging; the CLI calls [`judge`]).

use crate::game::{Game, GameError, Warning};
use crate::impasse::DeclarationReport;
use crate::ruleset::{DeclarationTrigger, Ruleset};
use crate::verdict::Verdict;
use shogi_rules::{IllegalMove, Move, Position};

/// The judgement of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// The verdict, or `None` when the record ends with the game still going.
    pub verdict: Option<Verdict>,
    /// Every early warning issued along the way, in order.
    pub warnings: Vec<Warning>,
    /// Plies played (legal moves; a forfeited move is not counted).
    pub plies: u32,
    /// Moves the record holds after the game had ended (a record that plays on past a verdict).
    pub moves_after_end: usize,
    /// Under [`crate::IllegalMovePolicy::Reject`], the illegal move that stopped the judging
    /// (the record cannot be followed past it, and the moves after it are not looked at).
    pub rejected: Option<IllegalMove>,
    /// The report of the final declaration, when one was asked for and judged (also when it
    /// was refused).
    pub declaration: Option<DeclarationReport>,
}

/// Judges a record: plays `moves` from `start` under `ruleset`, then, if `final_declaration` and
/// the game is still going, has the side to move declare (with time left, as a record that
/// ends in a declaration implies).
pub fn judge(
    start: Position,
    moves: impl IntoIterator<Item = Move>,
    final_declaration: bool,
    ruleset: &Ruleset,
) -> Judgement {
    judge_prechecked(start, moves, 0, final_declaration, ruleset)
}

/// [`judge`] for a record whose first `checked` moves the caller has already found legal, each
/// in the position the moves before it lead to, as played by the side to move there: a record
/// reader replays every move through [`Position::check_move_as`] as it reads it
/// (`shogi_records::RecordMove::legal`). Those moves are played without checking them a second
/// time ([`Game::play_checked`]), which is a tenth of the cost of re-judging an archive, and
/// each but the last of them tells the game that the side to move after the move before it has
/// a legal move ([`Game::play_checked_with_reply`]), which spares the no-legal-reply test; the
/// moves after them are checked as [`judge`] checks them. The judgement is the same as
/// [`judge`]'s whenever the caller's claim holds (debug builds check it).
pub fn judge_prechecked(
    start: Position,
    moves: impl IntoIterator<Item = Move>,
    checked: usize,
    final_declaration: bool,
    ruleset: &Ruleset,
) -> Judgement {
    judge_moves(
        start,
        moves,
        Prechecked::Legal(checked),
        final_declaration,
        ruleset,
    )
}

/// [`judge_prechecked`] for a caller that has also played the moves it found legal (a record
/// reader replays them as it reads them, `shogi_records::Record::replayed`): `replayed[i]` is
/// the hash of the position after move `i` and whether that move gave check, for each of the
/// first `replayed.len()` moves, which are legal, and `end` is the position after them. The game
/// takes the hashes and check flags instead of playing those moves a second time (the second
/// replay and its check tests were a twelfth of re-judging an archive, issue #24); the moves
/// after them are judged as [`judge`] judges them. The judgement is [`judge_prechecked`]'s
/// whenever the caller's claims hold (debug builds check them). A ruleset with the try rule or
/// automatic declarations reads the position after every ply, and is judged by replaying.
pub fn judge_replayed(
    start: Position,
    moves: impl IntoIterator<Item = Move>,
    replayed: &[(u64, bool)],
    end: &Position,
    final_declaration: bool,
    ruleset: &Ruleset,
) -> Judgement {
    let prechecked =
        if ruleset.try_rule || ruleset.declaration_trigger == DeclarationTrigger::Automatic {
            Prechecked::Legal(replayed.len())
        } else {
            Prechecked::Replayed(replayed, end)
        };
    judge_moves(start, moves, prechecked, final_declaration, ruleset)
}

/// What the caller of [`judge_moves`] knows of the first moves.
#[derive(Clone, Copy)]
enum Prechecked<'a> {
    /// That many are legal.
    Legal(usize),
    /// Those are legal, with the hash and check flag each leads to, and the position after them.
    Replayed(&'a [(u64, bool)], &'a Position),
}

fn judge_moves(
    start: Position,
    moves: impl IntoIterator<Item = Move>,
    prechecked: Prechecked<'_>,
    final_declaration: bool,
    ruleset: &Ruleset,
) -> Judgement {
    let mut game = Game::new(start, *ruleset);
    let mut judgement = Judgement {
        verdict: None,
        warnings: Vec::new(),
        plies: 0,
        moves_after_end: 0,
        rejected: None,
        declaration: None,
    };
    let checked = match prechecked {
        Prechecked::Legal(n) => n,
        Prechecked::Replayed(plies, _) => plies.len(),
    };
    let mut moves = moves.into_iter().peekable();
    // One allocation for the whole record instead of a growth every few plies.
    game.reserve(moves.size_hint().0);
    let mut index = 0;
    while let Some(mv) = moves.next() {
        // The caller found the next move legal after this one: the side to move then has a
        // legal move, and the game need not look for one.
        let reply = if index + 1 < checked {
            moves.peek().copied()
        } else {
            None
        };
        let played = match (prechecked, reply) {
            (Prechecked::Replayed(plies, end), _) if index < checked => {
                let (hash, gave_check) = plies[index];
                let end = reply.is_none().then_some(end);
                game.play_replayed(mv, hash, gave_check, reply, end, &mut judgement.warnings)
                    .map(|_| ())
            }
            (_, Some(reply)) => game
                .play_checked_with_reply(mv, reply)
                .map(|outcome| judgement.warnings.extend(outcome.warnings)),
            _ if index < checked => game
                .play_checked(mv)
                .map(|outcome| judgement.warnings.extend(outcome.warnings)),
            _ => game
                .play(mv)
                .map(|outcome| judgement.warnings.extend(outcome.warnings)),
        };
        index += 1;
        match played {
            Ok(()) => {}
            Err(GameError::Illegal(illegal)) => {
                judgement.rejected = Some(illegal);
                break;
            }
            Err(GameError::GameOver) => {
                judgement.moves_after_end += 1;
                break;
            }
            Err(GameError::NoDeclarationRule) => unreachable!("playing a move never declares"),
        }
    }
    if game.is_over() {
        judgement.moves_after_end += moves.count();
    }
    if final_declaration
        && !game.is_over()
        && judgement.rejected.is_none()
        && let Ok(declared) = game.declare(game.side_to_move(), true)
    {
        judgement.declaration = Some(declared.report);
    }
    judgement.plies = game.plies();
    judgement.verdict = game.verdict().cloned();
    judgement
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a record reader finds replaying `moves` from `start`: per legal move before any
    /// illegal one, the hash after it and whether it gave check, and the position after them.
    fn replay(start: &Position, moves: &[Move]) -> (Vec<(u64, bool)>, Position) {
        let mut pos = start.clone();
        let mut plies = Vec::new();
        for &mv in moves {
            if pos.check_move(mv).is_err() {
                break;
            }
            pos.play_unchecked(mv);
            plies.push((pos.hash(), pos.in_check()));
        }
        (plies, pos)
    }

    /// A game of random legal moves from `start`, `len` plies at most (fewer at a mate).
    fn random_game(start: &Position, len: usize, seed: u64) -> Vec<Move> {
        let mut state = seed | 1;
        let mut pos = start.clone();
        let mut moves = Vec::new();
        while moves.len() < len {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mv = legal[(state % legal.len() as u64) as usize];
            pos.play_unchecked(mv);
            moves.push(mv);
        }
        moves
    }

    fn usi(moves: &str) -> Vec<Move> {
        moves
            .split_whitespace()
            .map(|m| Move::from_usi(m).unwrap())
            .collect()
    }

    /// judge_replayed judges as judge_prechecked does, under every preset, with and without
    /// the final declaration, at prefixes of games that reach a fourfold repetition, a mate or
    /// an illegal move, and of random games of up to 160 plies.
    #[test]
    fn replayed_judges_as_prechecked() {
        let startpos = Position::startpos();
        let mate = Position::from_sfen("4k4/9/4P4/9/9/9/9/9/4K4 b G 1").unwrap();
        let cycle = "5i5h 5a5b 5h5i 5b5a ".repeat(5);
        let mut games = vec![
            (startpos.clone(), usi(&cycle)),
            (
                startpos.clone(),
                usi("7g7f 3c3d 8h2b+ 3a2b B*5e 5a4b 5e4d 4b5a 4d5e 5a4b 5e4d 4b5a 4d5e 5a4b 5e4d"),
            ),
            (mate.clone(), usi("G*5b")),
            (mate.clone(), usi("5i4h 5a4a G*4b")),
        ];
        for seed in 1..6 {
            games.push((startpos.clone(), random_game(&startpos, 160, seed)));
        }
        // Each game again with an illegal move after it: a move from an empty square.
        for i in 0..games.len() {
            let (start, moves) = games[i].clone();
            let (_, end) = replay(&start, &moves);
            let from = shogi_rules::Square::all()
                .find(|&sq| end.piece_at(sq).is_none())
                .unwrap();
            let to = shogi_rules::Square::from_index(((from.index() + 1) % 81) as u8).unwrap();
            let mut moves = moves;
            moves.push(Move::Normal {
                from,
                to,
                promote: false,
            });
            games.push((start, moves));
        }
        let mut judged = 0;
        let mut codes = std::collections::BTreeSet::new();
        for (start, moves) in &games {
            let stride = if moves.len() > 40 { 9 } else { 1 };
            for len in (0..=moves.len()).step_by(stride).chain([moves.len()]) {
                let moves = &moves[..len];
                let (plies, end) = replay(start, moves);
                for name in Ruleset::PRESETS {
                    let rules = Ruleset::preset(name).unwrap();
                    for declares in [false, true] {
                        let want = judge_prechecked(
                            start.clone(),
                            moves.iter().copied(),
                            plies.len(),
                            declares,
                            &rules,
                        );
                        let got = judge_replayed(
                            start.clone(),
                            moves.iter().copied(),
                            &plies,
                            &end,
                            declares,
                            &rules,
                        );
                        assert_eq!(got, want, "{name} {declares} {len}: {moves:?}");
                        judged += 1;
                        codes.extend(want.verdict.map(|v| v.code.as_str()));
                    }
                }
            }
        }
        assert!(judged > 500, "{judged}");
        for code in ["repetition", "checkmate", "illegal_move", "declaration"] {
            assert!(codes.contains(code), "no {code} verdict among {codes:?}");
        }
    }
}
