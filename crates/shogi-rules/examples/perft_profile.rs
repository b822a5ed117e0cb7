//! One perft run (for profiling with callgrind): `perft_profile SFEN DEPTH bulk|full`.
use shogi_rules::{PerftMode, Position, STARTPOS, perft};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sfen = args.get(1).map_or(STARTPOS, String::as_str);
    let depth: u32 = args.get(2).map_or(3, |s| s.parse().expect("depth"));
    let mode = match args.get(3).map(String::as_str) {
        Some("full") => PerftMode::Full,
        _ => PerftMode::Bulk,
    };
    let pos = Position::from_sfen(sfen).expect("sfen");
    println!("{}", perft(&pos, depth, mode));
}
