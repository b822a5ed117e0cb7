//! Archive re-judging speed and memory, as issue 3 asks: records judged per second on one core
//! over the shared corpus, parsing included (move times, comments and variations kept, as the
//! readers always keep them), the same on two threads (`judge --jobs 2`), and bytes kept per
//! game at 100 plies.
//!
//! Run: `cargo bench -p shogi-arbiter --bench archive`. Prints one line a measure.
//!
//! For a profile or instruction counts, `ARCHIVE_ROUNDS=N` judges the corpus exactly N times
//! (after one warm-up round) and stops, without the timed rounds, the two threads or the
//! memory measure: `ARCHIVE_ROUNDS=3 valgrind --tool=callgrind target/release/deps/archive-*`.

use shogi_adjudication::{Game, Ruleset, judge_prechecked, judge_replayed};
use shogi_records::{EndingKind, read_any};
use shogi_rules::Position;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn corpus() -> Vec<(String, Vec<u8>)> {
    let root = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/records"
    ));
    assert!(root.exists(), "{} is missing", root.display());
    fn walk(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root, &mut out);
    out
}

fn judge_all(records: &[(String, Vec<u8>)], rules: &Ruleset) -> (usize, u64) {
    let (mut n, mut plies) = (0, 0u64);
    for (name, bytes) in records {
        let Ok(record) = read_any(name, bytes) else {
            continue;
        };
        // The moves the reader found legal are neither checked nor played a second time: the
        // game takes the hashes and check flags the reader found (`judge` checks them once).
        let replayed = record.replayed().expect("a record as read");
        let moves = record.moves.iter().map(|m| m.mv);
        let declares = matches!(
            record.ending.as_ref().map(|e| &e.kind),
            Some(EndingKind::Kachi)
        );
        let j = judge_replayed(
            record.start.clone(),
            moves,
            replayed.plies(),
            replayed.end(),
            declares,
            rules,
        );
        plies += j.plies as u64;
        n += 1;
        std::hint::black_box(j);
    }
    (n, plies)
}

/// Before timing: the judgement from the reader's replay (`judge_replayed`) is the one from
/// the moves alone (`judge_prechecked`), for every record under every preset, with and without
/// the final declaration.
fn check_replayed(records: &[(String, Vec<u8>)]) {
    for (name, bytes) in records {
        let Ok(record) = read_any(name, bytes) else {
            continue;
        };
        let replayed = record.replayed().expect("a record as read");
        let checked = record.moves.iter().take_while(|m| m.legal.is_ok()).count();
        assert_eq!(replayed.plies().len(), checked, "{name}");
        for preset in Ruleset::PRESETS {
            let rules = Ruleset::preset(preset).expect("a preset");
            for declares in [false, true] {
                let moves = || record.moves.iter().map(|m| m.mv);
                let start = || record.start.clone();
                let want = judge_prechecked(start(), moves(), checked, declares, &rules);
                let got = judge_replayed(
                    start(),
                    moves(),
                    replayed.plies(),
                    replayed.end(),
                    declares,
                    &rules,
                );
                assert_eq!(got, want, "{name} under {preset}, declaring {declares}");
            }
        }
    }
}

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// A deterministic 100-ply game without an ending, as a move list.
fn hundred_plies(seed: u64) -> Vec<shogi_rules::Move> {
    let mut state = seed | 1;
    loop {
        let mut pos = Position::startpos();
        let mut game = Game::new(pos.clone(), Ruleset::online());
        let mut moves = Vec::new();
        while moves.len() < 100 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let legal = pos.legal_moves();
            let mv = legal[(state % legal.len() as u64) as usize];
            if game.play(mv).is_err() || game.is_over() {
                break;
            }
            pos.play_unchecked(mv);
            moves.push(mv);
        }
        if moves.len() == 100 {
            return moves;
        }
    }
}

fn main() {
    let records = corpus();
    let rules = Ruleset::csa();
    check_replayed(&records);
    judge_all(&records, &rules); // warm up
    if let Ok(n) = std::env::var("ARCHIVE_ROUNDS") {
        let n: usize = n.parse().expect("ARCHIVE_ROUNDS is a number of rounds");
        let (mut judged, mut plies) = (0, 0);
        for _ in 0..n {
            let (j, p) = judge_all(&records, &rules);
            judged += j;
            plies += p;
        }
        println!("archive: {n} rounds, {judged} records, {plies} plies judged");
        return;
    }
    let mut rounds = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline || rounds.len() < 5 {
        let t = Instant::now();
        let (n, plies) = judge_all(&records, &rules);
        rounds.push((
            n as f64 / t.elapsed().as_secs_f64(),
            plies as f64 / t.elapsed().as_secs_f64(),
        ));
    }
    rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (rps, pps) = rounds[rounds.len() / 2];
    // On a shared machine the median says how busy it is; the best round, what one core does.
    let best = rounds[rounds.len() - 1].0;
    let (n, plies) = judge_all(&records, &rules);
    let kept = records
        .iter()
        .filter_map(|(name, bytes)| read_any(name, bytes).ok())
        .filter(|r| {
            r.moves
                .iter()
                .any(|m| m.time.is_some() || m.comment.is_some())
        })
        .count();
    println!(
        "archive: {n} records ({plies} plies, {kept} with times or comments, kept) over {} rounds; median {rps:.0} records/s (best round {best:.0}), {:.1}M plies/s on one core, parsing included",
        rounds.len(),
        pps / 1e6
    );

    // Two threads, each judging every other record, as `judge --jobs 2` shares files out.
    let mut rounds2 = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline || rounds2.len() < 5 {
        let halves: Vec<Vec<(String, Vec<u8>)>> = (0..2)
            .map(|k| records.iter().skip(k).step_by(2).cloned().collect())
            .collect();
        let start = Instant::now();
        let n: usize = std::thread::scope(|s| {
            let hs: Vec<_> = halves
                .iter()
                .map(|h| s.spawn(|| judge_all(h, &rules).0))
                .collect();
            hs.into_iter().map(|h| h.join().expect("no panic")).sum()
        });
        rounds2.push(n as f64 / start.elapsed().as_secs_f64());
    }
    rounds2.sort_by(f64::total_cmp);
    println!(
        "archive --jobs 2: median {:.0} records/s (best round {:.0}) on two threads ({} cores available)",
        rounds2[rounds2.len() / 2],
        rounds2[rounds2.len() - 1],
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    // Memory: many live games of 100 plies each, measured as resident memory.
    let games_n = 20_000;
    let scripts: Vec<_> = (0..16).map(|i| hundred_plies(0x9e37_79b9 + i)).collect();
    let before = rss_bytes();
    let mut games = Vec::with_capacity(games_n);
    let after_vec = rss_bytes();
    for i in 0..games_n {
        let mut g = Game::new(Position::startpos(), rules);
        for &mv in &scripts[i % scripts.len()] {
            g.play(mv).expect("a scripted legal move");
        }
        games.push(g);
    }
    let after = rss_bytes();
    let per_game = (after - after_vec) as f64 / games_n as f64;
    let slot = std::mem::size_of::<Game>();
    println!(
        "memory: {per_game:.0} bytes per live game at 100 plies (resident, allocator included; {slot} bytes inline, the current position among them); vec of games {} KiB",
        (after_vec.saturating_sub(before)) / 1024
    );
    std::hint::black_box(&games);
}
