//! Perft against the published counts in `shared/corpus/perft/perft_positions.tsv` (sources named
//! per row: YaneuraOu, shogiops, yasai).
//!
//! Rows of at most 5,000,000 nodes run in every test run, in bulk mode, and also in full mode
//! (every leaf played) up to 1,000,000 nodes. The deeper rows take minutes and run only with
//! `SHOGI_DEEP_PERFT=1`:
//!
//! ```text
//! SHOGI_DEEP_PERFT=1 cargo test --release -p shogi-rules --test perft_corpus -- --nocapture
//! ```
//!
//! `deep_perft_rows_are_listed` pins the set of deep rows, so that none can drop out of both
//! runs unnoticed.

use shogi_rules::{IllegalKind, Move, PerftMode, Position, perft};
use std::time::Instant;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/corpus/perft/perft_positions.tsv"
);

/// Rows above this many nodes run only in the deep run.
const NORMAL_LIMIT: u64 = 5_000_000;
/// Rows up to this many nodes also run in full mode in the normal run.
const FULL_LIMIT: u64 = 1_000_000;

const STARTPOS: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
const MATSURI: &str = "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1";

/// The rows the deep run must find, as (sfen, depth, nodes).
const EXPECTED_DEEP_ROWS: [(&str, u32, u64); 3] = [
    (STARTPOS, 5, 19_861_490),
    (STARTPOS, 6, 547_581_517),
    (MATSURI, 4, 516_925_165),
];

#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    line: usize,
    sfen: String,
    depth: u32,
    nodes: u64,
}

fn load() -> Vec<Row> {
    let text = std::fs::read_to_string(CORPUS).unwrap_or_else(|e| {
        panic!(
            "cannot read the perft corpus {CORPUS}: {e}; it lives in shared/corpus beside the \
             repository checkout"
        )
    });
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().expect("the corpus has a header line");
    assert!(
        header.starts_with("sfen\tdepth\tnodes"),
        "unexpected header: {header}"
    );
    let rows: Vec<Row> = lines
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert!(cols.len() >= 3, "line {}: fewer than 3 columns: {l}", i + 1);
            Row {
                line: i + 1,
                sfen: cols[0].to_owned(),
                depth: cols[1]
                    .parse()
                    .unwrap_or_else(|e| panic!("line {}: depth: {e}", i + 1)),
                nodes: cols[2]
                    .parse()
                    .unwrap_or_else(|e| panic!("line {}: nodes: {e}", i + 1)),
            }
        })
        .collect();
    assert!(rows.len() > 100, "only {} rows in {CORPUS}", rows.len());
    rows
}

fn deep_run_requested() -> bool {
    std::env::var("SHOGI_DEEP_PERFT").is_ok_and(|v| v == "1")
}

/// Runs one row in one mode; returns a failure message if the count differs.
fn run(row: &Row, mode: PerftMode) -> Option<String> {
    let pos = match Position::from_sfen(&row.sfen) {
        Ok(pos) => pos,
        Err(e) => return Some(format!("line {}: {}: from_sfen: {e}", row.line, row.sfen)),
    };
    let got = perft(&pos, row.depth, mode);
    (got != row.nodes).then(|| {
        format!(
            "line {}: {} depth {} {mode:?}: {got} nodes, want {}",
            row.line, row.sfen, row.depth, row.nodes
        )
    })
}

#[test]
fn perft_corpus_rows() {
    let rows = load();
    let mut failures = Vec::new();
    let (normal, deep): (Vec<&Row>, Vec<&Row>) = rows.iter().partition(|r| r.nodes <= NORMAL_LIMIT);
    let started = Instant::now();
    for row in &normal {
        failures.extend(run(row, PerftMode::Bulk));
        if row.nodes <= FULL_LIMIT {
            failures.extend(run(row, PerftMode::Full));
        }
    }
    println!(
        "{} rows of at most {NORMAL_LIMIT} nodes ran in bulk mode ({} also in full mode) in {:.1?}",
        normal.len(),
        normal.iter().filter(|r| r.nodes <= FULL_LIMIT).count(),
        started.elapsed()
    );
    if deep_run_requested() {
        for row in &deep {
            let started = Instant::now();
            let failure = run(row, PerftMode::Bulk);
            println!(
                "deep row ran: line {} {} depth {} = {} nodes (bulk) in {:.1?}: {}",
                row.line,
                row.sfen,
                row.depth,
                row.nodes,
                started.elapsed(),
                if failure.is_some() { "FAILED" } else { "ok" }
            );
            failures.extend(failure);
        }
    } else {
        println!(
            "{} deep rows (over {NORMAL_LIMIT} nodes) were left to the deep run: \
             SHOGI_DEEP_PERFT=1 cargo test --release -p shogi-rules --test perft_corpus",
            deep.len()
        );
    }
    assert!(
        failures.is_empty(),
        "{} perft failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn deep_perft_rows_are_listed() {
    let deep: Vec<(String, u32, u64)> = load()
        .into_iter()
        .filter(|r| r.nodes > NORMAL_LIMIT)
        .map(|r| (r.sfen, r.depth, r.nodes))
        .collect();
    let expected: Vec<(String, u32, u64)> = EXPECTED_DEEP_ROWS
        .iter()
        .map(|&(s, d, n)| (s.to_owned(), d, n))
        .collect();
    assert_eq!(
        deep, expected,
        "the corpus's deep rows changed; update EXPECTED_DEEP_ROWS"
    );
}

/// haitaka 0.3.2 offers `P*7b` here, a pawn drop that mates (打ち歩詰め): the core must not, and
/// must say why when asked.
#[test]
fn pawn_drop_mate_that_haitaka_offers() {
    let sfen =
        "1nk1S2+L1/4pp1+SP/lG1+R2+R1+p/1p2B4/pNp2gPp1/PK2G4/4P1N+BG/L5p2/2+n+p2L2 b 2S3P2p 1";
    let pos = Position::from_sfen(sfen).expect("valid sfen");
    let moves = pos.legal_moves();
    let drop = Move::from_usi("P*7b").expect("usi");
    assert_eq!(moves.len(), 152, "legal moves of {sfen}");
    assert!(!moves.contains(&drop), "P*7b is pawn-drop mate in {sfen}");
    let err = pos.check_move(drop).expect_err("P*7b is illegal");
    assert_eq!(err.kind, IllegalKind::PawnDropMate, "{sfen}: P*7b");
}
