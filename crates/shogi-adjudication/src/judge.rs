//! Re-judging a whole record at once (archive re-judging; the CLI calls [`judge`]).

use crate::game::{Game, GameError, Warning};
use crate::impasse::DeclarationReport;
use crate::ruleset::Ruleset;
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
    let mut game = Game::new(start, *ruleset);
    let mut judgement = Judgement {
        verdict: None,
        warnings: Vec::new(),
        plies: 0,
        moves_after_end: 0,
        rejected: None,
        declaration: None,
    };
    let mut moves = moves.into_iter().peekable();
    // One allocation for the whole record instead of a growth every few plies.
    game.reserve(moves.size_hint().0);
    let mut index = 0;
    while let Some(mv) = moves.next() {
        let played = if index + 1 < checked
            && let Some(&reply) = moves.peek()
        {
            // The caller found the next move legal after this one: the side to move then has
            // a legal move, and the game need not look for one.
            game.play_checked_with_reply(mv, reply)
        } else if index < checked {
            game.play_checked(mv)
        } else {
            game.play(mv)
        };
        index += 1;
        match played {
            Ok(outcome) => judgement.warnings.extend(outcome.warnings),
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
