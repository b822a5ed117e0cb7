//! Single-move legality over the ratio benchmark's legality set, three times, for profiling
//! with callgrind: `check_profile [ours|rsshogi|haitaka]`. Compare the inclusive cost of
//! `ours_legal`, `rsshogi_legal` or `haitaka_legal` (the set is built the same way each time).
#[path = "../benches/peers/mod.rs"]
mod peers;

fn main() {
    let engine = std::env::args().nth(1).unwrap_or_else(|| "ours".to_owned());
    rsshogi::board::init();
    let sfens = peers::fixture_sfens();
    let set = peers::legality_set(&sfens);
    let mut n = 0;
    for _ in 0..3 {
        n += match engine.as_str() {
            "rsshogi" => peers::rsshogi_legal(&set),
            "haitaka" => peers::haitaka_legal(&set),
            _ => peers::ours_legal(&set),
        };
    }
    println!("{engine}: {n} of {}", 3 * set.moves);
}
