//! Every record of `../shared/corpus` judged through the CLI as `judged.tsv` (an independent
//! replay of docs/rules.md) says: the first fourfold repetition and its ply, perpetual check and its
//! loser, the start-position-not-counted variant, the first illegal move, mate at the end, the
//! move cap, and the declaration calculator at the end.

use serde_json::Value;
use shogi_adjudication::{DeclarationOutcome, DeclarationRule, evaluate_declaration};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shared() -> PathBuf {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus"
    ));
    assert!(
        p.join("judged.tsv").exists(),
        "{} is missing: the tests read ../shared beside the checkout",
        p.display()
    );
    p
}

fn rows() -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(shared().join("judged.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            header
                .iter()
                .map(|h| h.to_string())
                .zip(l.split('\t').map(str::to_string))
                .collect()
        })
        .collect()
}

/// Runs `judge` over the whole corpus and returns its lines by record path (relative).
fn judge_all(args: &[&str]) -> HashMap<String, Value> {
    let root = shared();
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
        .arg("judge")
        .args(args)
        .arg(root.join("records"))
        .output()
        .unwrap();
    let prefix = format!("{}/", root.display());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let source = v["source"]
                .as_str()
                .unwrap()
                .strip_prefix(&prefix)
                .unwrap()
                .to_string();
            (source, v)
        })
        .collect()
}

/// The two records the corpus says are broken in their sources must be reported, not guessed.
const BROKEN: [&str; 1] =
    ["records/no_result/SH11235+shogi__packages__web__test-data__tsume-shogi-with-position.kif"];

/// The verdict's result code as RULES.md names it (`codeName`), or `none` for a line without a
/// verdict.
fn result(got: &Value) -> &str {
    match &got["verdict"] {
        Value::Null => "none",
        v => v["codeName"]
            .as_str()
            .unwrap_or_else(|| panic!("a verdict without codeName: {got}")),
    }
}

/// The verdict's ply, or the plies judged for a line without a verdict.
fn ply(got: &Value) -> u64 {
    match &got["verdict"] {
        Value::Null => got["plies"].as_u64(),
        v => v["ply"].as_u64(),
    }
    .unwrap_or_else(|| panic!("no ply: {got}"))
}

fn check_fourfold(file: &str, expected: &str, got: &Value) {
    let (result, ply) = (result(got), ply(got));
    match expected.split_once('@') {
        None => {
            assert_eq!(expected, "none");
            assert!(
                result != "repetition" && result != "perpetual_check",
                "{file}: expected no fourfold repetition, got {got}"
            );
        }
        Some((what, at)) => {
            let at: u64 = at.parse().unwrap();
            let (code, winner) = match what {
                "draw" => ("repetition", Value::from("COLOR_UNSPECIFIED")),
                "black_loses" => ("perpetual_check", Value::from("COLOR_WHITE")),
                "white_loses" => ("perpetual_check", Value::from("COLOR_BLACK")),
                _ => panic!("{file}: unknown fourfold value {expected}"),
            };
            assert_eq!(
                (result, ply, &got["verdict"]["winner"]),
                (code, at, &winner),
                "{file}: expected {expected}, got {got}"
            );
        }
    }
}

#[test]
fn corpus_records_are_judged_as_the_independent_replay_says() {
    // No cap, forfeit on illegal moves, start position counted.
    let jsa = judge_all(&["--rules", "csa", "--max-moves", "0"]);
    let server = judge_all(&[
        "--rules",
        "csa",
        "--max-moves",
        "0",
        "--set",
        "start_position_counted=false",
    ]);
    let rows = rows();
    assert!(rows.len() >= 140, "judged.tsv has only {} rows", rows.len());
    let mut checked = 0;
    for row in &rows {
        let file = row["file"].as_str();
        let got = jsa
            .get(file)
            .unwrap_or_else(|| panic!("{file}: not judged"));
        if BROKEN.contains(&file) {
            let err = got["error"]
                .as_str()
                .unwrap_or_else(|| panic!("{file}: a broken record must be an error, got {got}"));
            assert!(
                err.contains("line"),
                "{file}: the error must name a line: {err}"
            );
            continue;
        }
        assert!(got.get("error").is_none(), "{file}: {got}");
        check_fourfold(file, &row["jsa_fourfold"], got);
        check_fourfold(file, &row["server_fourfold"], &server[file]);

        let (result, ply) = (result(got), ply(got));
        match row["illegal_at"].as_str() {
            "" => assert_ne!(result, "illegal_move", "{file}: {got}"),
            at => {
                let at: u64 = at.parse().unwrap();
                if result == "illegal_move" {
                    assert_eq!(ply, at, "{file}: {got}");
                    assert!(
                        got["verdict"]["illegalMove"]["kind"]
                            .as_str()
                            .is_some_and(|k| k.starts_with("ILLEGAL_KIND_")),
                        "{file}: {got}"
                    );
                } else {
                    // Another rule ended the game before the illegal move.
                    assert!(
                        result != "none" && ply < at,
                        "{file}: illegal at {at}, got {got}"
                    );
                }
            }
        }
        if row["mate_end"] == "True" {
            assert_eq!(result, "checkmate", "{file}: {got}");
            assert_eq!(ply, row["moves"].parse::<u64>().unwrap(), "{file}: {got}");
        }
        checked += 1;
    }
    assert!(checked >= 140);
}

#[test]
fn declarations_and_caps_at_the_end_of_records() {
    let root = shared();
    for row in rows() {
        let file = row["file"].as_str();
        if BROKEN.contains(&file) {
            continue;
        }
        let bytes = std::fs::read(root.join(file)).unwrap();
        let record =
            shogi_records::read_any(file, &bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let cap = row["max_moves_hdr"].as_str();
        assert_eq!(
            record.max_moves.map(|n| n.to_string()).unwrap_or_default(),
            cap,
            "{file}: the record's own cap"
        );
        let Some(end) = record.final_position() else {
            continue;
        };
        let r27 = evaluate_declaration(&end, Some(&record.start), DeclarationRule::Points27);
        let expect27 = row["nyugyoku27_stm"] == "True";
        assert_eq!(
            r27.outcome == DeclarationOutcome::Win,
            expect27,
            "{file}: 27-point rule, {r27:?}"
        );
        let r24 = evaluate_declaration(&end, Some(&record.start), DeclarationRule::Jsa24);
        let expect24 = match row["nyugyoku24_stm"].as_str() {
            "win" => DeclarationOutcome::Win,
            "draw" => DeclarationOutcome::Jishogi,
            "none" => DeclarationOutcome::Loss,
            other => panic!("{file}: unknown nyugyoku24_stm {other}"),
        };
        assert_eq!(r24.outcome, expect24, "{file}: 24-point rule, {r24:?}");
    }
}

#[test]
fn recorded_declarations_and_caps_through_the_cli() {
    // Records that end in %KACHI / 入玉勝ち are judged as that declaration.
    let by27 = judge_all(&["--rules", "csa", "--max-moves", "0"]);
    let by24 = judge_all(&["--rules", "jsa", "--max-moves", "0"]);
    let capped = judge_all(&["--rules", "csa", "--max-moves", "256"]);
    let mut declarations = 0;
    for row in rows() {
        let file = row["file"].as_str();
        if BROKEN.contains(&file) {
            continue;
        }
        let oracle = row["oracle"].as_str();
        if oracle.starts_with("nyugyoku") && result(&by27[file]) == "declaration" {
            declarations += 1;
            assert_eq!(
                by27[file]["verdict"]["declaration"]["outcome"],
                if oracle.contains("stm27=True") {
                    "win"
                } else {
                    "loss"
                },
                "{file}"
            );
            let o24 = if oracle.contains("24=win") {
                "win"
            } else if oracle.contains("24=draw") {
                "jishogi"
            } else {
                "loss"
            };
            assert_eq!(
                by24[file]["verdict"]["declaration"]["outcome"], o24,
                "{file}: {}",
                by24[file]
            );
            assert!(
                by27[file]["verdict"]["declaration"]["points"]
                    .as_u64()
                    .unwrap()
                    > 0
            );
        }
        if let Some(rest) = oracle.strip_prefix("max_moves(") {
            let (_, cap) = rest.trim_end_matches(')').split_once(">=").unwrap();
            assert_eq!(
                result(&capped[file]),
                "max_moves",
                "{file}: {}",
                capped[file]
            );
            assert_eq!(
                capped[file]["verdict"]["maxMoves"]["cap"].to_string(),
                cap,
                "{file}"
            );
        }
    }
    assert!(
        declarations >= 3,
        "only {declarations} recorded declarations judged"
    );
}

#[test]
fn judged_records_written_as_csa_read_back_to_the_same_verdict() {
    let out_dir =
        std::env::temp_dir().join(format!("shogi-arbiter-csa-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);
    let root = shared();
    let dirs = [
        "records/oute_sennichite",
        "records/sennichite",
        "records/checkmate",
        "records/jishogi",
    ];
    let run = |paths: Vec<PathBuf>, extra: &[&str]| -> Vec<Value> {
        let out = Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
            .args(["judge", "--rules", "csa", "--max-moves", "0"])
            .args(extra)
            .args(paths)
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let first = run(
        dirs.iter().map(|d| root.join(d)).collect(),
        &["--csa-out", out_dir.to_str().unwrap()],
    );
    let mut written: Vec<PathBuf> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    written.sort();
    assert_eq!(written.len(), first.len(), "one CSA file a judged record");
    let again = run(vec![out_dir.clone()], &[]);
    let by_stem = |v: &Value| {
        let s = v["source"].as_str().unwrap();
        Path::new(s)
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string()
    };
    let again: HashMap<String, &Value> = again.iter().map(|v| (by_stem(v), v)).collect();
    let mut perpetual = 0;
    for v in &first {
        let w = again[&by_stem(v)];
        assert_eq!(
            (result(w), &w["verdict"]["winner"], ply(w)),
            (result(v), &v["verdict"]["winner"], ply(v)),
            "{v} vs {w}"
        );
        if result(v) == "perpetual_check" {
            perpetual += 1;
            let text =
                std::fs::read_to_string(out_dir.join(format!("{}.csa", by_stem(v)))).unwrap();
            assert!(text.starts_with("V3.0"), "CSA V3.0 out");
            // RULES.md section 7: the checker's illegal action, not the server's
            // `#OUTE_SENNICHITE` (the same ending `export` writes: src/ending.rs).
            let sign = match v["verdict"]["perpetualCheck"]["checker"].as_str() {
                Some("COLOR_BLACK") => '+',
                Some("COLOR_WHITE") => '-',
                other => panic!("no checker: {other:?}"),
            };
            assert_eq!(
                text.lines().last(),
                Some(format!("%{sign}ILLEGAL_ACTION").as_str()),
                "the perpetual checker's loss is written"
            );
        }
    }
    assert!(perpetual >= 3);
    std::fs::remove_dir_all(&out_dir).unwrap();
}
