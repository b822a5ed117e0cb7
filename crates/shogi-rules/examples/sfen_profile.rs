//! Parses the differential fixture's SFENs in a loop (for profiling the SFEN parser).
fn main() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/cshogi_legal.tsv"
    ))
    .unwrap();
    let sfens: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split('\t').next())
        .filter(|s| s.contains('/'))
        .collect();
    let mut n = 0u64;
    for _ in 0..20 {
        for s in &sfens {
            n += shogi_rules::Position::from_sfen(s)
                .map(|p| p.hash() & 1)
                .unwrap_or(0);
        }
    }
    println!("{n} {}", sfens.len());
}
