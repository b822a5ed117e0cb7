//! Perft: counting the leaves of the legal move tree, the standard test of a move generator.

use crate::{Move, Position, movegen};

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
    // One move buffer per level, reused across siblings.
    let mut buffers: Vec<Vec<Move>> = (0..depth).map(|_| Vec::with_capacity(256)).collect();
    count(pos, depth, mode, &mut buffers)
}

fn count(pos: &Position, depth: u32, mode: PerftMode, buffers: &mut [Vec<Move>]) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 && mode == PerftMode::Bulk {
        return pos.count_legal_moves();
    }
    let (moves, rest) = buffers.split_first_mut().expect("one buffer per level");
    moves.clear();
    movegen::generate(pos, moves);
    if depth == 1 {
        for &mv in moves.iter() {
            let mut child = pos.clone();
            child.play_inline(mv);
            std::hint::black_box(child.hash());
        }
        return moves.len() as u64;
    }
    let mut n = 0;
    for &mv in moves.iter() {
        let mut child = pos.clone();
        child.play_inline(mv);
        n += count(&child, depth - 1, mode, rest);
    }
    n
}

/// Perft split by the first move: each legal move with its leaf count.
pub fn divide(pos: &Position, depth: u32, mode: PerftMode) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&mv| {
            let mut child = pos.clone();
            child.play_inline(mv);
            (mv, perft(&child, depth - 1, mode))
        })
        .collect()
}
