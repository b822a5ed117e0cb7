//! The hot paths' uses of CPU features chosen at run time: counting moves with `popcnt`, and
//! perft compiled with AVX2 (see [`perft_avx2`]).
//!
//! Perft's bulk mode counts target sets, one popcount each. The baseline x86-64 target has no
//! `popcnt` instruction, so `count_ones` is a dozen shifts and masks per 64-bit word. Counting is
//! compiled a second time with `popcnt` enabled and chosen when the CPU has it (every x86-64
//! CPU since 2008); the check is a cached flag. Elsewhere, or on another architecture, the
//! portable build runs. This is the only module of the crate allowed `unsafe`: calling a
//! function compiled for a CPU feature is unsafe unless the feature is known to be present.

#![allow(unsafe_code)]

use crate::movegen::{self, Counter};
use crate::{Move, PerftMode, Position, perft};

/// The number of legal moves of the side to move (see [`Position::count_legal_moves`]).
#[inline]
pub(crate) fn count_legal_moves(pos: &Position) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("popcnt")
        && std::is_x86_feature_detected!("lzcnt")
        && std::is_x86_feature_detected!("bmi1")
    {
        // SAFETY: `count_with_popcnt` enables `popcnt`, `lzcnt` and `bmi1` (for `tzcnt`), which
        // the CPU has (checked just above); it is otherwise the same safe code as the portable
        // count.
        return unsafe { count_with_popcnt(pos) };
    }
    let mut c = Counter(0);
    movegen::generate(pos, &mut c);
    c.0
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,lzcnt,bmi1")]
fn count_with_popcnt(pos: &Position) -> u64 {
    let mut c = Counter(0);
    movegen::generate_inline(pos, &mut c);
    c.0
}

/// Perft (see [`crate::perft`]) compiled with AVX2 (and `popcnt`, `lzcnt`, `bmi1`, `bmi2`),
/// when the CPU has them; `None` elsewhere, for the portable build to run.
///
/// Full mode copies the 256-byte position once per leaf. In the baseline build that copy is a
/// call to glibc's `memcpy`, whose implementation glibc picks by CPU: on an AVX-512 Xeon it is
/// `__memcpy_avx512_unaligned_erms`, four 64-byte stores that the move's narrow reads of the
/// copy then wait on, and full mode ran at 0.6x its speed with glibc's 32-byte `memcpy` on the
/// same host (`GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL`; docs/benchmarks-history.md,
/// "Full mode on an AVX-512 Xeon"). With AVX the compiler copies 256 bytes inline with eight
/// 32-byte moves: no call, and the same code on every host.
#[inline]
pub(crate) fn perft_avx2(
    pos: &Position,
    depth: u32,
    mode: PerftMode,
    buffers: &mut [Vec<Move>],
) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("popcnt")
        && std::is_x86_feature_detected!("lzcnt")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
    {
        // SAFETY: `count_avx2` enables `avx2`, `popcnt`, `lzcnt`, `bmi1` and `bmi2`, which the
        // CPU has (checked just above); it is otherwise the same safe code as the portable perft.
        return Some(unsafe { count_avx2(pos, depth, mode, buffers) });
    }
    let _ = (pos, depth, mode, buffers);
    None
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,lzcnt,bmi1,bmi2")]
fn count_avx2(pos: &Position, depth: u32, mode: PerftMode, buffers: &mut [Vec<Move>]) -> u64 {
    // The closure inherits `count_avx2`'s features, so the recursive call is safe.
    perft::node(pos, depth, mode, buffers, |p, d, m, b| {
        count_avx2(p, d, m, b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Move, PieceKind};

    /// The portable count and the dispatched one (with `popcnt` here) agree, and both agree with
    /// the length of the move list, over the positions of short random games.
    #[test]
    fn both_counts_agree_with_the_list() {
        let starts = [
            crate::STARTPOS,
            "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
            "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
        ];
        for sfen in starts {
            let mut pos = Position::from_sfen(sfen).expect("valid");
            for ply in 0..120 {
                let list = pos.legal_moves();
                let mut portable = Counter(0);
                movegen::generate(&pos, &mut portable);
                assert_eq!(portable.0, list.len() as u64, "{pos}");
                assert_eq!(count_legal_moves(&pos), list.len() as u64, "{pos}");
                if list.is_empty() {
                    break;
                }
                // Prefer drops and promotions now and then, so that hands and promoted pieces
                // come into play.
                let pick = list
                    .iter()
                    .copied()
                    .filter(|m| matches!(m, Move::Drop { kind, .. } if *kind != PieceKind::Pawn))
                    .nth(ply % 3)
                    .unwrap_or(list[(ply * 7919) % list.len()]);
                pos.play_unchecked(pick);
            }
        }
    }
}
