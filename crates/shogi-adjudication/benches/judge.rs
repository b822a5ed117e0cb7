//! Archive re-judging speed: `judge` over a 150-ply game (the goal is 20,000 records a second on
//! one core, parsing included, so judging must take well under 50 µs a record).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shogi_adjudication::{Ruleset, judge};
use shogi_rules::{Move, Position};
use std::hint::black_box;

/// A deterministic 150-ply game from the start position: pseudo-random legal moves that keep
/// the game going (no mate, no fourfold repetition), like a real record's middle game.
fn game(plies: usize) -> Vec<Move> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut pos = Position::startpos();
    let mut out = Vec::new();
    while out.len() < plies {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let legal = pos.legal_moves();
        let candidates: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|&m| {
                let mut after = pos.clone();
                after.play_unchecked(m);
                after.has_legal_move()
            })
            .collect();
        let m = candidates[(state % candidates.len() as u64) as usize];
        pos.play_unchecked(m);
        out.push(m);
    }
    out
}

fn bench(c: &mut Criterion) {
    let moves = game(150);
    let start = Position::startpos();
    let mut group = c.benchmark_group("judge");
    group.throughput(Throughput::Elements(1));
    for name in ["csa", "online", "jsa"] {
        let rs = Ruleset::preset(name).unwrap();
        let verdict = judge(start.clone(), moves.iter().copied(), false, &rs).verdict;
        assert!(
            verdict.is_none(),
            "the benchmark game must run all 150 plies: {verdict:?}"
        );
        group.bench_function(format!("150 plies, {name}"), |b| {
            b.iter(|| {
                judge(
                    black_box(start.clone()),
                    black_box(&moves).iter().copied(),
                    false,
                    &rs,
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
