//! check_move over every pseudo move of the differential fixture's positions (for profiling).
use shogi_rules::{Move, PieceKind, Position, Square};
fn main() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/cshogi_legal.tsv"
    ))
    .unwrap();
    let mut set = Vec::new();
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let Some(sfen) = l.split('\t').next() else {
            continue;
        };
        let Ok(p) = Position::from_sfen(sfen) else {
            continue;
        };
        let us = p.side_to_move();
        let mut moves = Vec::new();
        for from in p.pieces_by_color(us) {
            for to in Square::all() {
                if to != from && !p.pieces_by_color(us).contains(to) {
                    moves.push(Move::Normal {
                        from,
                        to,
                        promote: false,
                    });
                }
            }
        }
        for kind in PieceKind::HAND {
            if p.hand(us).has(kind) {
                for to in !p.occupied() {
                    moves.push(Move::Drop { kind, to });
                }
            }
        }
        set.push((p, moves));
    }
    let mut n = 0u64;
    for _ in 0..3 {
        for (p, moves) in &set {
            for &mv in moves {
                n += p.check_move(std::hint::black_box(mv)).is_ok() as u64;
            }
        }
    }
    println!("{n}");
}
