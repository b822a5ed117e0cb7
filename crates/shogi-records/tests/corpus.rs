//! Every record of the shared corpus, checked against `corpus/manifest.tsv` (plies, legality,
//! recorded ending) and `corpus/judged.tsv` (the first illegal ply), and round-tripped through
//! CSA.

use shogi_records::{EndingKind, Format, Record, RecordError, read_any, read_csa, write_csa};
use shogi_rules::IllegalKind;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

fn corpus_dir() -> PathBuf {
    let dir = PathBuf::from(CORPUS);
    assert!(
        dir.join("manifest.tsv").is_file(),
        "the shared corpus is missing: expected {}/manifest.tsv (the records live outside the \
         repository, in shared/corpus beside it)",
        dir.display()
    );
    dir
}

/// Rows of a TSV file with a header line, as maps from column name to value.
fn tsv(path: &Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines().map(|l| l.trim_end_matches('\r'));
    let head: Vec<String> = lines
        .next()
        .expect("a header line")
        .split('\t')
        .map(String::from)
        .collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            head.iter()
                .cloned()
                .zip(
                    l.split('\t')
                        .map(String::from)
                        .chain(std::iter::repeat(String::new())),
                )
                .collect()
        })
        .collect()
}

/// The broken record whose board diagram is commented out (`#` lines): read as written, it
/// starts from the even-game position, so its first move (a silver drop with no silver in
/// hand) is illegal and its second move cannot be replayed.
const DIAGRAM_COMMENTED_OUT: &str =
    "records/no_result/SH11235+shogi__packages__web__test-data__tsume-shogi-with-position.kif";

/// The broken record with a move through a piece: ply 11, `+8855KA`, passes the knight on 77.
const MOVE_THROUGH_PIECE: &str =
    "records/no_result/hnakada123+ShogiBoardQ__tests__fixtures__test_various_pieces.csa";

/// Where the manifest is wrong or silent, with the reason.
/// (file, plies, ending raw) overrides.
fn overrides(file: &str) -> Option<(usize, Option<&'static str>, &'static str)> {
    match file {
        // The manifest counts 1 ply: its reader stopped at the first '▽' (White's mark in this
        // file). The line holds 27 plies, all legal; stopping at the second would be the silent
        // truncation this crate must not do.
        "records/no_result/mogproject+mog-core-scala__jvm__src__test__resources__ki2__game__004.ki2" => {
            Some((27, None, "manifest counts only up to the first '▽'"))
        }
        // `194 Time-up`: an ending line the manifest's `recorded` column leaves out (its
        // cshogi column has it).
        "records/no_result/mogproject+mog-core-scala__jvm__src__test__resources__kif__game__002.kif" => {
            Some((193, Some("Time-up"), "manifest leaves out the Time-up line"))
        }
        // `53 封じ手`: a sealed move ends the record (adjournment); the manifest only keeps the
        // まで line.
        "records/no_result/na2hiro+Kifu-for-JS__packages__json-kifu-format__test__files__kif__meijinsen_20180508_M7_10034.kif" => {
            Some((52, Some("封じ手"), "manifest leaves out the 封じ手 line"))
        }
        _ => None,
    }
}

fn read(dir: &Path, file: &str) -> Result<Record, RecordError> {
    let bytes = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("cannot read {file}: {e}"));
    read_any(file, &bytes)
}

/// Whether an ending kind fits the manifest's normalised category.
fn kind_fits(category: &str, kind: Option<&EndingKind>) -> bool {
    use EndingKind as K;
    match category {
        "resign" => matches!(kind, Some(K::Resign)),
        "checkmate" => matches!(kind, Some(K::Tsumi)),
        "sennichite" => matches!(kind, Some(K::Sennichite)),
        "interrupted" => matches!(kind, Some(K::Chudan)),
        "time_up" => matches!(kind, Some(K::TimeUp)),
        "illegal" => matches!(
            kind,
            None | Some(K::IllegalMove) | Some(K::IllegalAction(_))
        ),
        "jishogi" => matches!(kind, Some(K::Kachi) | Some(K::Jishogi)),
        // KIF cannot say "move cap" and writes 持将棋; CSA floodgate records only have a summary.
        "max_moves" => matches!(kind, None | Some(K::Jishogi) | Some(K::MaxMoves)),
        "no_result" => matches!(kind, None | Some(K::Other(_)) | Some(K::TimeUp)),
        "oute_sennichite" | "not_sennichite" | "illegal_probe" => kind.is_none(),
        _ => false,
    }
}

#[test]
fn every_corpus_record_reads_as_the_manifest_says() {
    let dir = corpus_dir();
    let manifest = tsv(&dir.join("manifest.tsv"));
    let judged: HashMap<String, HashMap<String, String>> = tsv(&dir.join("judged.tsv"))
        .into_iter()
        .map(|r| (r["file"].clone(), r))
        .collect();
    assert!(
        manifest.len() >= 140,
        "manifest has only {} rows",
        manifest.len()
    );

    // Every file on disk must be in the manifest, so that none goes untested.
    let listed: std::collections::HashSet<&str> =
        manifest.iter().map(|r| r["file"].as_str()).collect();
    for cat in std::fs::read_dir(dir.join("records")).expect("records directory") {
        let cat = cat.expect("entry").path();
        for f in std::fs::read_dir(&cat).expect("category directory") {
            let f = f.expect("entry").path();
            let rel = f
                .strip_prefix(&dir)
                .expect("under corpus")
                .to_string_lossy()
                .replace('\\', "/");
            assert!(
                listed.contains(rel.as_str()),
                "{rel} is not in manifest.tsv"
            );
        }
    }

    let mut failures = Vec::new();
    let mut read_ok = 0;
    let mut replayed = 0;
    for row in &manifest {
        let file = row["file"].as_str();
        let result = read(&dir, file);
        let mut fail = |msg: String| failures.push(format!("{file}: {msg}"));

        if file == DIAGRAM_COMMENTED_OUT {
            match &result {
                Err(e)
                    if e.line == 24
                        && e.reason
                            .contains("move after an illegal move cannot be replayed")
                        && e.reason.contains("comment") => {}
                other => fail(format!(
                    "expected an error at line 24 naming the illegal move and the commented-out diagram, got {other:?}"
                )),
            }
            continue;
        }
        let rec = match result {
            Ok(r) => r,
            Err(e) => {
                fail(format!("read error: {e}"));
                continue;
            }
        };
        read_ok += 1;
        if file == MOVE_THROUGH_PIECE {
            let last = rec.moves.last().expect("moves");
            if rec.moves.len() != 11
                || rec.moves[..10].iter().any(|m| m.legal.is_err())
                || last.legal.as_ref().err().map(|e| e.kind) != Some(IllegalKind::Impossible)
                || last.mv.to_string() != "8h5e"
            {
                fail(format!(
                    "expected 10 legal plies then 8h5e impossible, got {:?}",
                    rec.moves.last()
                ));
            }
            continue;
        }

        let (plies, ending_override) = match overrides(file) {
            Some((n, e, _why)) => (n, e.map(Some)),
            None => (row["moves"].parse::<usize>().expect("moves column"), None),
        };
        if rec.moves.len() != plies {
            fail(format!("{} plies read, expected {plies}", rec.moves.len()));
        }

        // Legality: all legal, or legal up to the judged first illegal ply, which is the last.
        let all_legal = row["all_legal"] == "True";
        let first_illegal = rec
            .moves
            .iter()
            .position(|m| m.legal.is_err())
            .map(|i| i + 1);
        if all_legal {
            if let Some(p) = first_illegal {
                fail(format!(
                    "ply {p} judged illegal: {:?}",
                    rec.moves[p - 1].legal
                ));
            }
        } else {
            let judged_at = judged
                .get(file)
                .and_then(|j| j["illegal_at"].parse::<usize>().ok());
            if first_illegal.is_none()
                || first_illegal != judged_at
                || first_illegal != Some(rec.moves.len())
            {
                fail(format!(
                    "first illegal ply {first_illegal:?}, judged {judged_at:?}, plies {}",
                    rec.moves.len()
                ));
            }
        }

        // The recorded ending and result lines.
        let entries: Vec<&str> = row["recorded"]
            .split('|')
            .filter(|e| !e.is_empty())
            .collect();
        let specials: Vec<&str> = entries
            .iter()
            .copied()
            .filter(|e| !e.starts_with("summary:") && !e.starts_with("まで"))
            .collect();
        let got = rec.ending.as_ref().map(|e| e.raw.as_str());
        let want = match ending_override {
            Some(e) => e,
            None if rec.format == Format::Ki2 => {
                entries.iter().copied().find(|e| e.starts_with("まで"))
            }
            None => specials.first().copied(),
        };
        if got != want {
            fail(format!("ending {got:?}, recorded {want:?}"));
        }
        if specials.iter().any(|s| Some(*s) != want) {
            fail(format!(
                "recorded specials {specials:?} differ from each other"
            ));
        }
        for e in &entries {
            let ok = if let Some(s) = e.strip_prefix("summary:") {
                rec.headers
                    .iter()
                    .any(|(k, v)| k == "summary" && v.starts_with(s))
            } else if e.starts_with("まで") {
                rec.headers
                    .iter()
                    .any(|(k, v)| k == "summary" && e.starts_with(v.as_str()))
            } else {
                true
            };
            if !ok {
                fail(format!("result line {e:?} is not among the headers"));
            }
        }
        if !kind_fits(&row["category"], rec.ending.as_ref().map(|e| &e.kind)) {
            fail(format!(
                "ending {:?} does not fit category {}",
                rec.ending, row["category"]
            ));
        }

        // The positions the moves lead to, against the independent replay in judged.tsv: is the
        // side to move at the end mated, and where does a position first occur a fourth time
        // (counting the start position).
        if let Some(j) = judged.get(file)
            && first_illegal.is_none()
        {
            replayed += 1;
            let mut pos = rec.start.clone();
            let mut seen: HashMap<u64, u32> = HashMap::new();
            *seen.entry(pos.hash()).or_default() += 1;
            let mut fourfold = None;
            for (i, m) in rec.moves.iter().enumerate() {
                pos.play_unchecked(m.mv);
                let n = seen.entry(pos.hash()).or_default();
                *n += 1;
                if *n == 4 && fourfold.is_none() {
                    fourfold = Some(i + 1);
                }
            }
            let mate = if pos.is_checkmate() { "True" } else { "False" };
            if j["mate_end"] != mate {
                fail(format!(
                    "checkmate at the end {mate}, judged {}",
                    j["mate_end"]
                ));
            }
            let judged_fourfold = j["jsa_fourfold"]
                .split_once('@')
                .and_then(|(_, p)| p.parse::<usize>().ok());
            if fourfold != judged_fourfold {
                fail(format!(
                    "first fourfold repetition at {fourfold:?}, judged {}",
                    j["jsa_fourfold"]
                ));
            }
        }

        // The record's own move cap.
        let cap = judged
            .get(file)
            .map(|j| j["max_moves_hdr"].as_str())
            .unwrap_or("");
        let want_cap = cap.parse::<u32>().ok();
        if rec.max_moves != want_cap {
            fail(format!(
                "max_moves {:?}, judged.tsv says {want_cap:?}",
                rec.max_moves
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} records wrong:\n{}",
        failures.len(),
        manifest.len(),
        failures.join("\n")
    );
    assert!(read_ok >= 140, "only {read_ok} records read");
    assert!(
        replayed >= 130,
        "only {replayed} records replayed against judged.tsv"
    );
}

#[test]
fn corpus_records_round_trip_through_csa() {
    let dir = corpus_dir();
    let manifest = tsv(&dir.join("manifest.tsv"));
    let mut checked = 0;
    let mut csa_checked = 0;
    for row in &manifest {
        let file = row["file"].as_str();
        let Ok(rec) = read(&dir, file) else { continue };
        let text = write_csa(&rec, None);
        assert!(text.starts_with("V3.0\n"), "{file}: no V3.0 line");
        let back = read_csa(&text)
            .unwrap_or_else(|e| panic!("{file}: written CSA does not read back: {e}\n{text}"));
        assert!(
            back.start.same_position(&rec.start),
            "{file}: start position differs"
        );
        assert_eq!(
            back.start.side_to_move(),
            rec.start.side_to_move(),
            "{file}"
        );
        let illegal_unnamed = rec.moves.iter().filter(|m| m.legal.is_err()).count();
        assert!(
            back.moves.len() == rec.moves.len() || illegal_unnamed > 0,
            "{file}: {} moves back, {} written",
            back.moves.len(),
            rec.moves.len()
        );
        for (a, b) in rec.moves.iter().zip(&back.moves) {
            assert_eq!((a.mv, a.color), (b.mv, b.color), "{file}: move differs");
            assert_eq!(
                a.legal.is_ok(),
                b.legal.is_ok(),
                "{file}: legality differs at {}",
                a.mv
            );
        }
        match rec.ending.as_ref().and_then(|e| e.kind.csa_special()) {
            Some(_) => assert_eq!(
                back.ending.as_ref().map(|e| &e.kind),
                rec.ending.as_ref().map(|e| &e.kind),
                "{file}: ending differs"
            ),
            None => assert!(back.ending.is_none(), "{file}: ending appeared"),
        }
        assert_eq!(back.max_moves, rec.max_moves, "{file}: move cap differs");
        checked += 1;
        if file.ends_with(".csa") {
            csa_checked += 1;
        }
    }
    assert!(
        checked >= 130 && csa_checked >= 25,
        "only {checked} records ({csa_checked} CSA) round-tripped"
    );
}

#[test]
fn verdict_special_is_appended_and_reads_back() {
    let dir = corpus_dir();
    let file = "records/not_sennichite/TadaoYamaoka+shogi-server__test__csa__not_sennichite.csa";
    let rec = read(&dir, file).expect("reads");
    let text = write_csa(&rec, Some("%SENNICHITE"));
    assert!(text.ends_with("%SENNICHITE\n"));
    let back = read_csa(&text).expect("reads back");
    assert_eq!(back.ending.map(|e| e.kind), Some(EndingKind::Sennichite));
    assert_eq!(back.moves.len(), 89);
}
