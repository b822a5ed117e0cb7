//! `check_move` over the ratio benchmark's legality set (for profiling with callgrind; read the
//! inclusive cost of `shogi_rules::movegen::check`).
#[path = "../benches/peers/mod.rs"]
mod peers;

fn main() {
    let sfens = peers::fixture_sfens();
    let set = peers::legality_set(&sfens);
    let mut n = 0;
    for _ in 0..3 {
        n += peers::ours_legal(&set);
    }
    println!("{n} of {}", 3 * set.moves);
}
