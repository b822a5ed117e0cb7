//! Criterion benchmarks of the rules core beside its peers, in one run:
//!
//! ```text
//! cargo bench -p shogi-rules --bench vs_peers
//! ```
//!
//! Groups: `perft_<mode>_<case>` (ours and haitaka 0.3.2, nodes per second), `check_move`
//! (ours, rsshogi, haitaka; pseudo moves per second over the oracle fixture's positions) and
//! `sfen_parse` (ours, haitaka, rsshogi). The perft counts are checked before anything is timed.
//! For ratios on a noisy machine prefer `--bench ratio`, which alternates the engines.

mod peers;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use shogi_rules::PerftMode;
use std::time::Duration;

fn perft(c: &mut Criterion) {
    for case in peers::PERFT_CASES
        .iter()
        .filter(|c| c.name != "max_moves_d3")
    {
        let pos = peers::ours_pos(case.sfen);
        let board = peers::haitaka_board(case.sfen);
        for mode in [PerftMode::Bulk, PerftMode::Full] {
            let ours = peers::ours_perft(&pos, case.depth, mode);
            let theirs = peers::haitaka_perft(&board, case.depth, mode);
            assert_eq!(
                ours, case.nodes,
                "our perft of {} depth {}",
                case.sfen, case.depth
            );
            if ours != theirs {
                assert_ne!(
                    case.sfen,
                    peers::STARTPOS,
                    "haitaka's start position perft differs"
                );
                eprintln!(
                    "NOTE {} {}: haitaka counts {theirs}, ours {ours} (haitaka 0.3.2 allows \
                     pawn-drop mate)",
                    case.name,
                    peers::mode_name(mode)
                );
            }
            let mut group =
                c.benchmark_group(format!("perft_{}_{}", peers::mode_name(mode), case.name));
            group.throughput(Throughput::Elements(ours));
            // A perft run lasts up to a second: flat sampling keeps a group to ~10 runs per engine
            // instead of the 55 that linear sampling needs for 10 samples.
            group.sampling_mode(SamplingMode::Flat);
            group.sample_size(10).warm_up_time(Duration::from_secs(1));
            group.measurement_time(Duration::from_secs(5));
            group.bench_function("ours", |b| {
                b.iter(|| peers::ours_perft(&pos, case.depth, mode))
            });
            group.bench_function("haitaka", |b| {
                b.iter(|| peers::haitaka_perft(&board, case.depth, mode))
            });
            group.finish();
        }
    }
}

fn legality_and_sfen(c: &mut Criterion) {
    rsshogi::board::init();
    let sfens = peers::fixture_sfens();
    let set = peers::legality_set(&sfens);
    let mut group = c.benchmark_group("check_move");
    group.throughput(Throughput::Elements(set.moves));
    group.sample_size(20);
    group.bench_function("ours", |b| b.iter(|| peers::ours_legal(&set)));
    group.bench_function("rsshogi", |b| b.iter(|| peers::rsshogi_legal(&set)));
    group.bench_function("haitaka", |b| b.iter(|| peers::haitaka_legal(&set)));
    group.finish();

    let mut group = c.benchmark_group("sfen_parse");
    group.throughput(Throughput::Elements(sfens.len() as u64));
    group.sample_size(20);
    group.bench_function("ours", |b| b.iter(|| peers::ours_parse(&sfens)));
    group.bench_function("haitaka", |b| b.iter(|| peers::haitaka_parse(&sfens)));
    group.bench_function("rsshogi", |b| b.iter(|| peers::rsshogi_parse(&sfens)));
    group.finish();
}

criterion_group!(benches, perft, legality_and_sfen);
criterion_main!(benches);
