//! The readers never panic: on arbitrary bytes, and on corpus records with lines deleted,
//! duplicated, swapped or garbled. Whatever reads also writes as CSA and reads back with the
//! same moves. (The cargo-fuzz targets in `fuzz/` do the same with coverage guidance; they
//! need nightly, this runs in the normal test suite.)

use proptest::prelude::*;
use shogi_records::{
    Encoding, Format, Record, read_any, read_as, read_csa, read_jkf, read_ki2, read_kif, read_usi,
    write, write_csa,
};
use std::sync::OnceLock;

mod common;

/// Every corpus record as (file name, bytes).
fn corpus() -> &'static [(String, Vec<u8>)] {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let mut out: Vec<(String, Vec<u8>)> = common::corpus_files()
            .into_iter()
            .map(|(path, bytes)| {
                let name = path
                    .file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned();
                (name, bytes)
            })
            .collect();
        out.sort();
        out
    })
}

/// A record that reads must write as CSA and read back with the same moves and start.
fn round_trips(rec: &Record) {
    let text = write_csa(rec, None);
    let back =
        read_csa(&text).unwrap_or_else(|e| panic!("written CSA does not read back: {e}\n{text}"));
    assert!(back.start.same_position(&rec.start));
    if rec.moves.iter().all(|m| m.legal.is_ok()) {
        let a: Vec<_> = rec.moves.iter().map(|m| (m.mv, m.color)).collect();
        let b: Vec<_> = back.moves.iter().map(|m| (m.mv, m.color)).collect();
        assert_eq!(a, b);
    }
}

/// Every other writer: no panic, and what is written reads back in its format (KI2 may refuse
/// an illegal move; it says so).
fn writes_back(rec: &Record) {
    for f in [Format::Kif, Format::Ki2, Format::Jkf, Format::Usi] {
        let Ok(bytes) = write(rec, f, Encoding::Utf8) else {
            assert_eq!(f, Format::Ki2, "only ki2 refuses a record");
            continue;
        };
        let back = read_as(f, &bytes).unwrap_or_else(|e| {
            panic!(
                "written {} does not read back: {e}\n{}",
                f.name(),
                String::from_utf8_lossy(&bytes)
            )
        });
        assert!(back.start.same_position(&rec.start));
        if rec.moves.iter().all(|m| m.legal.is_ok()) {
            assert_eq!(back.moves.len(), rec.moves.len(), "{}", f.name());
        }
    }
}

fn read_all_ways(name: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let results = [
        read_any(name, bytes),
        read_any("noext", bytes),
        read_kif(bytes),
        read_ki2(bytes),
        read_csa(&text),
        read_usi(&text),
        read_jkf(bytes),
    ];
    for rec in results.iter().flatten() {
        round_trips(rec);
    }
    // The other writers on the record as `read_any` sees it (once, to keep the run short).
    if let Some(rec) = results.iter().flatten().next() {
        writes_back(rec);
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    /// Replace the character at a fraction of the line with one of a set of troublesome ones.
    Garble(usize, usize, char),
    Truncate(usize, usize),
    Insert(usize, String),
}

fn edit() -> impl Strategy<Value = Edit> {
    let chars = prop::sample::select(vec![
        ',', '\'', '%', '+', '-', '*', '0', '9', 'P', 'T', '同', '　', '成', '打', '(', ')', '|',
        'v', '：', '#', '▲', '△', '\u{0}', '\r', 'é', '王', '龍',
    ]);
    prop_oneof![
        any::<usize>().prop_map(Edit::Delete),
        any::<usize>().prop_map(Edit::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Swap(a, b)),
        (any::<usize>(), any::<usize>(), chars).prop_map(|(a, b, c)| Edit::Garble(a, b, c)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Truncate(a, b)),
        (any::<usize>(), "[-+%'PVNT$0-9A-Z:,|v ]{0,40}").prop_map(|(a, s)| Edit::Insert(a, s)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    for e in edits {
        let n = lines.len().max(1);
        match e {
            Edit::Delete(i) => {
                if !lines.is_empty() {
                    lines.remove(i % n);
                }
            }
            Edit::Duplicate(i) => {
                if !lines.is_empty() {
                    let l = lines[i % n].clone();
                    lines.insert(i % n, l);
                }
            }
            Edit::Swap(a, b) => {
                if !lines.is_empty() {
                    lines.swap(a % n, b % n);
                }
            }
            Edit::Garble(i, at, c) => {
                if let Some(l) = lines.get_mut(i % n) {
                    let mut cs: Vec<char> = l.chars().collect();
                    if cs.is_empty() {
                        cs.push(*c);
                    } else {
                        let k = at % cs.len();
                        cs[k] = *c;
                    }
                    *l = cs.into_iter().collect();
                }
            }
            Edit::Truncate(i, at) => {
                if let Some(l) = lines.get_mut(i % n) {
                    let cs: Vec<char> = l.chars().collect();
                    *l = cs[..at % (cs.len() + 1)].iter().collect();
                }
            }
            Edit::Insert(i, s) => lines.insert(i % (lines.len() + 1), s.clone()),
        }
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        read_all_ways("x.csa", &bytes);
        read_all_ways("x.kif", &bytes);
    }

    #[test]
    fn record_shaped_text_never_panics(text in "([-+%'PVNT$0-9A-Z:,|v *]{0,30}\n){0,12}") {
        read_all_ways("x.csa", text.as_bytes());
        let usi = format!("position startpos moves {}", text.replace('\n', " "));
        let _ = read_usi(&usi);
    }

    #[test]
    fn mutated_corpus_records_never_panic(index in any::<usize>(), edits in prop::collection::vec(edit(), 1..4)) {
        let files = corpus();
        let (name, bytes) = &files[index % files.len()];
        // Mutate the decoded text, then read it back both as UTF-8 and in its own encoding.
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t.to_string(),
            Err(_) => encoding_rs::SHIFT_JIS.decode(bytes).0.into_owned(),
        };
        let mutated = apply(&text, &edits);
        if let Ok(rec) = read_any(name, mutated.as_bytes()) {
            round_trips(&rec);
        }
        if std::str::from_utf8(bytes).is_err() {
            let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode(&mutated);
            if let Ok(rec) = read_any(name, &sjis) {
                round_trips(&rec);
            }
        }
    }
}

#[test]
fn usi_lines_from_corpus_records_never_panic() {
    // Every corpus record as a USI line, cut at every ply count, with a bad word appended.
    for (name, bytes) in corpus() {
        let Ok(rec) = read_any(name, bytes) else {
            continue;
        };
        let sfen = rec.start.to_sfen();
        let words: Vec<String> = rec.moves.iter().map(|m| m.mv.to_string()).collect();
        for cut in (0..=words.len()).step_by(7) {
            let line = format!("position sfen {sfen} moves {} 9z9z", words[..cut].join(" "));
            assert!(read_usi(&line).is_err());
            let line = format!("position sfen {sfen} moves {} win", words[..cut].join(" "));
            let got = read_usi(&line).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got.moves.len(), cut);
        }
    }
}
