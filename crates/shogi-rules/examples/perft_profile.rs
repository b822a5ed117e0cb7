//! One perft run, for profiling with callgrind: `perft_profile SFEN DEPTH bulk|full [haitaka]`.
//! With `haitaka`, haitaka's perft as the ratio benchmark drives it, for instruction counts of
//! the peer on the same case.
#[path = "../benches/peers/mod.rs"]
mod peers;

use shogi_rules::{PerftMode, STARTPOS};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sfen = args.get(1).map_or(STARTPOS, String::as_str);
    let depth: u32 = args.get(2).map_or(3, |s| s.parse().expect("depth"));
    let mode = match args.get(3).map(String::as_str) {
        Some("full") => PerftMode::Full,
        _ => PerftMode::Bulk,
    };
    let nodes = match args.get(4).map(String::as_str) {
        Some("haitaka") => peers::haitaka_perft(&peers::haitaka_board(sfen), depth, mode),
        _ => peers::ours_perft(&peers::ours_pos(sfen), depth, mode),
    };
    println!("{nodes}");
}
