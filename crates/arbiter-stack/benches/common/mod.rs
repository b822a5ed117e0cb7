//! What the pipeline benchmarks share: the random games they play, and percentiles.

use shogi_adjudication::{Game, Ruleset};
use shogi_rules::Move;
use std::time::Duration;

/// Plies of every random game.
pub const PLIES: usize = 100;

/// SplitMix64: a deterministic source for the random games.
pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A random legal game of [`PLIES`] plies that does not end before its last ply under the
/// online rules (with no cap, it does not end at all).
pub fn random_game(rng: &mut Rng) -> Vec<Move> {
    'again: loop {
        let mut game = Game::startpos(Ruleset::online());
        let mut moves = Vec::with_capacity(PLIES);
        while moves.len() < PLIES {
            let legal = game.position().legal_moves();
            if legal.is_empty() {
                continue 'again;
            }
            let mv = legal
                .iter()
                .copied()
                .nth(rng.next() as usize % legal.len())
                .expect("a legal move");
            if game.play(mv).expect("legal").verdict.is_some() {
                continue 'again;
            }
            moves.push(mv);
        }
        return moves;
    }
}

/// The `p` quantile of `sorted` (zero when empty).
pub fn pct(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}
