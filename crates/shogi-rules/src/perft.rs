//! Perft: counting the leaves of the legal move tree, the standard test of a move generator.

use crate::Position;

/// How the last level is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerftMode {
    /// Count the legal moves of each position one ply above the leaves without playing them.
    Bulk,
    /// Play every leaf move (exercises `play_unchecked` and the hash update too).
    Full,
}

/// The number of leaves `depth` plies below `pos`.
pub fn perft(pos: &Position, depth: u32, mode: PerftMode) -> u64 {
    match (depth, mode) {
        (0, _) => 1,
        (1, PerftMode::Bulk) => pos.count_legal_moves(),
        (1, PerftMode::Full) => {
            let mut n = 0;
            for &mv in pos.legal_moves().iter() {
                let mut child = pos.clone();
                child.play_unchecked(mv);
                std::hint::black_box(child.hash());
                n += 1;
            }
            n
        }
        _ => pos
            .legal_moves()
            .iter()
            .map(|&mv| {
                let mut child = pos.clone();
                child.play_unchecked(mv);
                perft(&child, depth - 1, mode)
            })
            .sum(),
    }
}

/// Perft split by the first move: each legal move with its leaf count.
pub fn divide(pos: &Position, depth: u32, mode: PerftMode) -> Vec<(crate::Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&mv| {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            (mv, perft(&child, depth - 1, mode))
        })
        .collect()
}
