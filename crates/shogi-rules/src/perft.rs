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
    if let Some(n) = crate::cpu::perft_avx2(pos, depth, mode, &mut buffers) {
        return n;
    }
    count(pos, depth, mode, &mut buffers)
}

/// The portable perft: [`node`] compiled for the baseline target.
fn count(pos: &Position, depth: u32, mode: PerftMode, buffers: &mut [Vec<Move>]) -> u64 {
    node(pos, depth, mode, buffers, count)
}

/// One node of the tree, `recurse` counting each child: inlined into the portable [`count`]
/// and into the copy compiled with AVX2 (see [`crate::cpu::perft_avx2`]).
#[inline(always)]
pub(crate) fn node(
    pos: &Position,
    depth: u32,
    mode: PerftMode,
    buffers: &mut [Vec<Move>],
    recurse: impl Fn(&Position, u32, PerftMode, &mut [Vec<Move>]) -> u64,
) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 && mode == PerftMode::Bulk {
        return pos.count_legal_moves();
    }
    let (moves, rest) = buffers.split_first_mut().expect("one buffer per level");
    moves.clear();
    movegen::generate_inline(pos, moves);
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
        n += recurse(&child, depth - 1, mode, rest);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The portable perft and the dispatched one (with AVX2 where the CPU has it) agree, in both
    /// modes, on positions with drops, promotions and checks.
    #[test]
    fn portable_and_dispatched_perft_agree() {
        let cases = [
            (crate::STARTPOS, 3, 25_470),
            (
                "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
                2,
                105_677,
            ),
            (
                "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
                2,
                28_684,
            ),
        ];
        for (sfen, depth, nodes) in cases {
            let pos = Position::from_sfen(sfen).expect("valid");
            for mode in [PerftMode::Bulk, PerftMode::Full] {
                let mut buffers: Vec<Vec<Move>> = (0..depth).map(|_| Vec::new()).collect();
                assert_eq!(
                    count(&pos, depth, mode, &mut buffers),
                    nodes,
                    "{sfen} {mode:?}"
                );
                assert_eq!(perft(&pos, depth, mode), nodes, "{sfen} {mode:?}");
            }
        }
    }
}
