use shogi_rules::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sfen = args.get(1).cloned().unwrap_or(STARTPOS.to_string());
    let depth: u32 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(4);
    let pos = Position::from_sfen(&sfen).unwrap();
    for d in 1..=depth {
        let t = std::time::Instant::now();
        let n = perft(&pos, d, PerftMode::Bulk);
        let e = t.elapsed();
        println!(
            "depth {d} nodes {n} {:.1} Mnps",
            n as f64 / e.as_secs_f64() / 1e6
        );
    }
}
