//! Speed ratios of the rules core against its peers, robust to a shared, noisy machine.
//!
//! ```text
//! cargo bench -p shogi-rules --bench ratio                # 7 rounds
//! cargo bench -p shogi-rules --bench ratio -- --rounds 11
//! cargo bench -p shogi-rules --bench ratio -- full matsuri   # cases whose name contains any
//! ```
//!
//! Each case runs ours and the peer's code alternately, `--rounds` times (the order swapped every
//! round), each sample repeated for at least 0.25 s of the thread's CPU time (read from
//! `/proc/thread-self/schedstat`; `--wall` for the wall clock); it prints one line per case:
//! `case ours_per_s theirs_per_s ratio`, the first two the median rates, the ratio the median of
//! the per-round ratios (stderr adds their range). Ratios, not absolute times, are the result: the
//! two samples of a round run back to back, under the same machine load.
//!
//! Before timing, every perft count is checked: ours against the published count (panic on a
//! difference), haitaka's against ours (panic on the start position; elsewhere reported, since
//! haitaka 0.3.2 allows pawn-drop mate). The legality set's verdicts are compared too and every
//! disagreement is printed.
//!
//! Run without `--bench` (as `cargo test --benches` does), it only checks the counts on small
//! cases and exits.

mod peers;

use peers::{PERFT_CASES, PerftCase};
use shogi_rules::PerftMode;
use std::time::{Duration, Instant};

const MIN_SAMPLE: Duration = Duration::from_millis(250);

/// Substrings given on the command line; a case runs when its name contains one (or none given).
static FILTERS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

fn selected(case: &str) -> bool {
    let filters = FILTERS.get().map(Vec::as_slice).unwrap_or_default();
    filters.is_empty() || filters.iter().any(|f| case.contains(f.as_str()))
}

/// Whether samples are timed by the wall clock (`--wall`) rather than by this thread's CPU time.
static WALL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// The CPU time this thread has run, from `/proc/thread-self/schedstat` (nanoseconds on a CPU,
/// its first field), or `None` where there is no such file. On a machine shared with other
/// builds, the wall clock also counts the time the thread waited for a core; the CPU time does
/// not, so a burst of load elsewhere changes a sample much less (it still shares caches).
fn thread_cpu_time() -> Option<Duration> {
    if *WALL.get().unwrap_or(&false) {
        return None;
    }
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Rate (units per second) of `f`, repeated until the sample has run at least [`MIN_SAMPLE`] of
/// CPU time (of wall time without a per-thread CPU clock, or with `--wall`).
fn rate(units: u64, f: &mut dyn FnMut() -> u64) -> f64 {
    let started = Instant::now();
    let cpu_started = thread_cpu_time();
    let mut reps = 0u64;
    loop {
        std::hint::black_box(f());
        reps += 1;
        let elapsed = match (cpu_started, thread_cpu_time()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => started.elapsed(),
        };
        if elapsed >= MIN_SAMPLE {
            return (units * reps) as f64 / elapsed.as_secs_f64();
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Alternates ours and theirs for `rounds` rounds; prints and returns the median rates.
fn compare(
    case: &str,
    rounds: usize,
    units: u64,
    ours: &mut dyn FnMut() -> u64,
    theirs: &mut dyn FnMut() -> u64,
) {
    if !selected(case) {
        return;
    }
    let (mut o, mut t) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            o.push(rate(units, ours));
            t.push(rate(units, theirs));
        } else {
            t.push(rate(units, theirs));
            o.push(rate(units, ours));
        }
    }
    let per_round: Vec<f64> = o.iter().zip(&t).map(|(a, b)| a / b).collect();
    let (lo, hi) = per_round
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &r| (lo.min(r), hi.max(r)));
    let (om, tm) = (median(o), median(t));
    // The ratio is the median of the per-round ratios: the two samples of a round run back to
    // back under the same load, which the medians of the rates taken apart do not guarantee.
    println!("{case} {om:.0} {tm:.0} {:.3}", median(per_round.clone()));
    eprintln!("#   {case}: per-round ratio range {lo:.3}..{hi:.3} over {rounds} rounds");
}

/// Checks the counts of a perft case; returns ours and haitaka's, panicking where a difference
/// cannot be explained by haitaka's known pawn-drop-mate bug.
fn verify(case: &PerftCase, mode: PerftMode) -> (u64, u64) {
    let pos = peers::ours_pos(case.sfen);
    let board = peers::haitaka_board(case.sfen);
    let ours = peers::ours_perft(&pos, case.depth, mode);
    let theirs = peers::haitaka_perft(&board, case.depth, mode);
    if case.nodes != 0 {
        assert_eq!(
            ours,
            case.nodes,
            "our perft of {} depth {} ({}) differs from the published count",
            case.sfen,
            case.depth,
            peers::mode_name(mode)
        );
    }
    if ours != theirs {
        assert_ne!(
            case.sfen,
            peers::STARTPOS,
            "haitaka's perft from the start position differs from ours: {theirs} vs {ours}"
        );
        eprintln!(
            "# NOTE {} {}: haitaka counts {theirs} nodes, ours {ours} (published: {}); haitaka \
             0.3.2 allows pawn-drop mate",
            case.name,
            peers::mode_name(mode),
            if case.nodes == 0 {
                "none".to_owned()
            } else {
                case.nodes.to_string()
            }
        );
    }
    eprintln!(
        "# counts {} {}: ours {ours}, haitaka {theirs}, published {}",
        case.name,
        peers::mode_name(mode),
        if case.nodes == 0 {
            "none".to_owned()
        } else {
            case.nodes.to_string()
        }
    );
    (ours, theirs)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bench = args.iter().any(|a| a == "--bench");
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .map(|r| r.parse().expect("--rounds takes a number"))
        .unwrap_or(7);
    let filters: Vec<String> = args
        .iter()
        .enumerate()
        .skip(1)
        .filter(|&(i, a)| !a.starts_with("--") && args[i - 1] != "--rounds")
        .map(|(_, a)| a.clone())
        .collect();
    FILTERS.set(filters).expect("set once");
    let wall = args.iter().any(|a| a == "--wall");
    WALL.set(wall).expect("set once");
    rsshogi::board::init();

    if !bench {
        // Smoke mode for `cargo test --benches`: the counts of the small cases only.
        for case in PERFT_CASES.iter().filter(|c| c.name == "max_moves_d2") {
            verify(case, PerftMode::Bulk);
            verify(case, PerftMode::Full);
        }
        let sfens = peers::fixture_sfens();
        let set = peers::legality_set(&sfens[..50]);
        assert_eq!(peers::ours_legal(&set), peers::rsshogi_legal(&set));
        println!("ratio: smoke run ok (run with `cargo bench` to measure)");
        return;
    }

    eprintln!(
        "# rounds {rounds}, each sample at least {MIN_SAMPLE:?} of {}; stdout: case ours_per_s \
         theirs_per_s ratio",
        if thread_cpu_time().is_some() {
            "this thread's CPU time"
        } else {
            "wall time"
        }
    );
    println!("# case ours_per_s theirs_per_s ratio");
    for case in &PERFT_CASES {
        for mode in [PerftMode::Bulk, PerftMode::Full] {
            // The 593-move position at depth 3 is large in full mode: bulk only.
            if case.name == "max_moves_d3" && mode == PerftMode::Full {
                continue;
            }
            let name = format!("perft_{}_{}_vs_haitaka", peers::mode_name(mode), case.name);
            if !selected(&name) {
                continue;
            }
            let (nodes, _) = verify(case, mode);
            let pos = peers::ours_pos(case.sfen);
            let board = peers::haitaka_board(case.sfen);
            compare(
                &name,
                rounds,
                nodes,
                &mut || peers::ours_perft(&pos, case.depth, mode),
                &mut || peers::haitaka_perft(&board, case.depth, mode),
            );
        }
    }

    let sfens = peers::fixture_sfens();
    let set = peers::legality_set(&sfens);
    let disagreements = peers::legality_disagreements(&set);
    eprintln!(
        "# legality set: {} pseudo moves in {} positions; ours accepts {}, rsshogi {}, haitaka {}; \
         {} disagreements with ours",
        set.moves,
        set.ours.len(),
        peers::ours_legal(&set),
        peers::rsshogi_legal(&set),
        peers::haitaka_legal(&set),
        disagreements.len()
    );
    // Grouped by verdicts, a few examples each: haitaka 0.3.2's pawn-drop-mate bug alone makes
    // dozens of lines.
    let mut groups: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for d in &disagreements {
        let (example, verdicts) = d.split_once(": ").expect("sfen move: verdicts");
        groups.entry(verdicts).or_default().push(example);
    }
    for (verdicts, examples) in &groups {
        eprintln!("#   {} x {verdicts}, e.g.", examples.len());
        for e in examples.iter().take(3) {
            eprintln!("#     {e}");
        }
    }
    compare(
        "check_move_vs_rsshogi",
        rounds,
        set.moves,
        &mut || peers::ours_legal(&set),
        &mut || peers::rsshogi_legal(&set),
    );
    compare(
        "check_move_vs_haitaka",
        rounds,
        set.moves,
        &mut || peers::ours_legal(&set),
        &mut || peers::haitaka_legal(&set),
    );

    let n = sfens.len() as u64;
    assert_eq!(peers::ours_parse(&sfens), n, "we reject fixture SFENs");
    let h = peers::haitaka_parse(&sfens);
    let r = peers::rsshogi_parse(&sfens);
    if h != n || r != n {
        eprintln!("# NOTE of {n} SFENs haitaka parses {h}, rsshogi {r}");
    }
    compare(
        "sfen_parse_vs_haitaka",
        rounds,
        n,
        &mut || peers::ours_parse(&sfens),
        &mut || peers::haitaka_parse(&sfens),
    );
    compare(
        "sfen_parse_vs_rsshogi",
        rounds,
        n,
        &mut || peers::ours_parse(&sfens),
        &mut || peers::rsshogi_parse(&sfens),
    );
}
