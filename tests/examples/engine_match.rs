//! A longer run of real engines through the CSA front end, by hand (the test `engines` plays a
//! few short games of the same kind):
//!
//! ```sh
//! cargo build --release --bins
//! cargo run --release -p arbiter-tests --example engine_match -- --games 20 --max-moves 80 --jobs 2
//! ```
//!
//! fairy-stockfish against gpsusi, each behind shogi-server's USI-to-CSA bridge, against
//! `shogi-arbiter serve --csa-listen` on loopback: `--games` byoyomi games (colours
//! alternating, fairy-stockfish's skill level varied, byoyomi 3 s, which leaves each engine
//! 0.5 s a move), then one sudden-death game of `--clock-secs` that fairy-stockfish loses on
//! time. Prints the games, their endings by kind and how many records `shogi-arbiter judge`
//! read to the announced ending; exits 1 on any disagreement. Records and the bridges' logs
//! stay in `--out` (default: a temporary folder, removed).

use arbiter_tests::engines::{self, Bridge, Engine, Front};
use std::path::PathBuf;
use std::time::Duration;

struct Args {
    games: usize,
    max_moves: u32,
    jobs: usize,
    clock_secs: u32,
    out: Option<PathBuf>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        games: 20,
        max_moves: 80,
        jobs: 1,
        clock_secs: 10,
        out: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} takes a value"))?;
        let bad = |e: std::num::ParseIntError| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--games" => a.games = value.parse().map_err(bad)?,
            "--max-moves" => a.max_moves = value.parse().map_err(bad)?,
            "--jobs" => a.jobs = value.parse().map_err(bad)?,
            "--clock-secs" => a.clock_secs = value.parse().map_err(bad)?,
            "--out" => a.out = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "engine_match: {e}\nusage: engine_match [--games N] [--max-moves N] [--jobs N] \
                 [--clock-secs N] [--out DIR]"
            );
            std::process::exit(2);
        }
    };
    let (bridge, fairy, gps) = match (Bridge::find(), Engine::fairy_stockfish(), Engine::gpsusi()) {
        (Ok(b), Ok(f), Ok(g)) => (b, f, g),
        (b, f, g) => {
            let missing: Vec<String> = [b.err(), f.err(), g.err()].into_iter().flatten().collect();
            eprintln!("engine_match: {}", missing.join("; "));
            std::process::exit(2);
        }
    };
    let temp = tempfile::tempdir().expect("a temporary folder");
    let work = a.out.clone().unwrap_or_else(|| temp.path().to_owned());
    std::fs::create_dir_all(&work).expect("the output folder");
    let front = Front::start(
        &work.join("records"),
        a.max_moves,
        &[],
        Duration::from_secs(60),
    );
    let mut matches = engines::byoyomi_games("match", a.games, &fairy, &gps);
    if a.clock_secs > 0 {
        matches.push(engines::clock_game("clock", a.clock_secs, &fairy, &gps));
    }
    // A game of the cap's length at the bridge's byoyomi, with room for a slow machine.
    let per_game = Duration::from_secs(60 + 3 * u64::from(a.max_moves.max(100)));
    let started = std::time::Instant::now();
    let tally = engines::run(&bridge, &front, &matches, a.jobs, &work, per_game);
    let problems = tally.problems();
    for p in &problems {
        eprintln!("problem: {p}");
    }
    println!("{} ({:.0?})", tally.summary(), started.elapsed());
    if let Some(out) = &a.out {
        println!("records and logs: {}", out.display());
    }
    let clean = front.stop(Duration::from_secs(30));
    if !problems.is_empty() || !clean {
        std::process::exit(1);
    }
}
