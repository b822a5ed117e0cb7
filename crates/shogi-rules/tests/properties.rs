//! Property tests: random legal games keep every invariant of the core.

use proptest::prelude::*;
use shogi_rules::{Color, Move, PieceKind, Position, Square};

/// Every move text that could name a move of the side to move: every board move of one of its
/// pieces to any square with and without promotion, and every drop of every hand kind.
fn pseudo_moves(p: &Position) -> Vec<Move> {
    let us = p.side_to_move();
    let mut out = Vec::new();
    for from in p.pieces_by_color(us) {
        for to in Square::all() {
            if to != from {
                out.push(Move::Normal {
                    from,
                    to,
                    promote: false,
                });
                out.push(Move::Normal {
                    from,
                    to,
                    promote: true,
                });
            }
        }
    }
    for kind in PieceKind::HAND {
        for to in Square::all() {
            out.push(Move::Drop { kind, to });
        }
    }
    out
}

fn random_game(seed: u64, plies: usize) -> Vec<Position> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut p = Position::startpos();
    let mut out = vec![p.clone()];
    for _ in 0..plies {
        let moves = p.legal_moves();
        if moves.is_empty() {
            break;
        }
        // Prefer captures and drops so that hands fill and drops get exercised.
        let pick = moves[(next() % moves.len() as u64) as usize];
        p.play_unchecked(pick);
        out.push(p.clone());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generator_and_checker_agree(seed in any::<u64>(), plies in 0usize..160) {
        for p in random_game(seed, plies) {
            let legal = p.legal_moves();
            prop_assert_eq!(legal.len() as u64, p.count_legal_moves());
            for &mv in legal.iter() {
                prop_assert!(p.check_move(mv).is_ok(), "{} {} generated but judged {:?}", p, mv, p.check_move(mv));
                let mut q = p.clone();
                q.play_unchecked(mv);
                prop_assert_eq!(q.hash(), q.recompute_hash(), "{} after {}", p, mv);
                prop_assert!(!q.opponent_in_check());
                prop_assert_eq!(p.gives_check(mv), q.in_check());
            }
            let set: std::collections::HashSet<Move> = legal.iter().copied().collect();
            for mv in pseudo_moves(&p) {
                prop_assert_eq!(p.check_move(mv).is_ok(), set.contains(&mv), "{} {}", p, mv);
                // Told whether the side to move is in check, the checker answers the same.
                for mover in [Color::Black, Color::White] {
                    prop_assert_eq!(
                        p.check_move_as_knowing_check(mover, mv, p.in_check()),
                        p.check_move_as(mover, mv),
                        "{} {}", p, mv
                    );
                }
            }
        }
    }

    #[test]
    fn sfen_round_trips_through_games(seed in any::<u64>(), plies in 0usize..200) {
        for p in random_game(seed, plies) {
            let text = p.to_sfen();
            let q = Position::from_sfen(&text).unwrap();
            prop_assert_eq!(&q, &p);
            prop_assert_eq!(q.to_sfen(), text);
            prop_assert_eq!(q.hash(), p.hash());
        }
    }

    #[test]
    fn move_u16_round_trips(v in any::<u16>()) {
        if let Some(mv) = Move::from_u16(v) {
            prop_assert_eq!(mv.to_u16(), v);
            prop_assert_eq!(Move::from_usi(&mv.to_string()), Ok(mv));
        }
    }

    #[test]
    fn sfen_parser_never_panics(text in "[0-9a-zA-Z+/ -]{0,90}") {
        let _ = Position::from_sfen(&text);
    }
}

#[test]
fn side_alternates() {
    let g = random_game(7, 20);
    for (i, p) in g.iter().enumerate() {
        let want = if i % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        assert_eq!(p.side_to_move(), want);
    }
}
