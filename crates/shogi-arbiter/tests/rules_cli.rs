//! All of `../shared/rules/*.tsv` through the CLI, as a user would run it.

use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn fixture(name: &str) -> Vec<Vec<String>> {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/rules"
    ))
    .join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the tests read ../shared beside the checkout)",
            p.display()
        )
    });
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

fn run(args: &[&str], stdin: &str) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn move_fixtures_through_judge() {
    let rows = fixture("moves.tsv");
    let input: String = rows
        .iter()
        .map(|r| format!("position sfen {} moves {}\n", r[1], r[2]))
        .collect();
    let out = run(&["judge", "--rules", "csa", "--stdin"], &input);
    assert_eq!(out.len(), rows.len());
    for (r, v) in rows.iter().zip(&out) {
        if r[3] == "legal" {
            assert_ne!(v["result"], "illegal_move", "{}: {v}", r[0]);
        } else {
            assert_eq!(v["result"], "illegal_move", "{}: {v}", r[0]);
            assert_eq!(v["kind"], r[3].as_str(), "{}", r[0]);
            assert_eq!(v["ply"], 1, "{}", r[0]);
            assert_eq!(v["move"], r[2].as_str(), "{}", r[0]);
        }
    }
    // Under the `online` preset an illegal move is rejected, not forfeited.
    let out = run(&["judge", "--rules", "online", "--stdin"], &input);
    for (r, v) in rows.iter().zip(&out) {
        if r[3] != "legal" {
            assert_eq!(v["rejected"]["kind"], r[3].as_str(), "{}: {v}", r[0]);
            assert_ne!(v["result"], "illegal_move");
        }
    }
}

#[test]
fn repetition_fixtures_through_judge() {
    let rows = fixture("repetition.tsv");
    let input: String = rows
        .iter()
        .map(|r| format!("position sfen {} moves {}\n", r[1], r[2]))
        .collect();
    let out = run(
        &["judge", "--rules", "csa", "--max-moves", "0", "--stdin"],
        &input,
    );
    assert_eq!(out.len(), rows.len());
    for (r, v) in rows.iter().zip(&out) {
        let id = &r[0];
        assert_eq!(v["result"], r[3].as_str(), "{id}: {v}");
        let winner = if r[4] == "-" {
            Value::Null
        } else {
            Value::from(r[4].as_str())
        };
        assert_eq!(v["winner"], winner, "{id}: {v}");
        assert_eq!(v["ply"].to_string(), r[5], "{id}: {v}");
        if r[3] != "none" {
            // A fourfold repetition is always announced by a third-occurrence warning first.
            let warnings = v["warnings"]
                .as_array()
                .unwrap_or_else(|| panic!("{id}: no warnings: {v}"));
            assert!(
                warnings.iter().any(|w| w["warning"] == "third_occurrence"),
                "{id}: {v}"
            );
        }
        if r[3] == "perpetual_check" {
            let warnings = v["warnings"].as_array().unwrap();
            assert!(
                warnings
                    .iter()
                    .any(|w| w["warning"] == "perpetual_check_risk" && w["checker"] != v["winner"]),
                "{id}: {v}"
            );
        }
        if r[6] != "-" {
            let plies: Vec<u64> = r[6].split(' ').map(|p| p.parse().unwrap()).collect();
            let got: Vec<u64> = v["occurrence_plies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_u64().unwrap())
                .collect();
            assert_eq!(got, plies, "{id}: {v}");
        }
    }
}

#[test]
fn declaration_fixtures_through_impasse() {
    for r in fixture("declaration.tsv") {
        let (id, sfen, initial) = (&r[0], &r[1], &r[2]);
        for (rule, col) in [("points27", 7), ("jsa24", 8)] {
            let mut args = vec!["impasse", "--sfen", sfen, "--rule", rule];
            if initial != "-" {
                args.extend(["--initial-sfen", initial]);
            }
            let v = &run(&args, "")[0];
            let outcome = match r[col].as_str() {
                "W" => "win",
                "D" => "jishogi",
                "L" => "loss",
                o => panic!("{id}: unknown outcome {o}"),
            };
            assert_eq!(v["outcome"], outcome, "{id} {rule}: {v}");
            assert_eq!(v["points"].to_string(), r[4], "{id} {rule}: {v}");
            assert_eq!(v["pieces_in_camp"].to_string(), r[5], "{id} {rule}: {v}");
            assert_eq!(v["in_check"].to_string(), r[6], "{id} {rule}: {v}");
            assert_eq!(v["declarer"], r[3].as_str(), "{id}");
            assert!(v["points_missing"].is_u64() && v["king_in_camp"].is_boolean());
        }
    }
}

#[test]
fn judge_text_explains_in_a_sentence() {
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
        .args(["judge", "--format", "text", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(
                b"position sfen 6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1 moves 5h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h\n",
            )?;
            c.wait_with_output()
        })
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("perpetual check"), "{text}");
    assert!(text.contains("Black (sente) loses"), "{text}");
}

#[test]
fn bad_input_is_reported_and_the_batch_goes_on() {
    let out = run(
        &["judge", "--stdin"],
        "position sfen nonsense moves 7g7f\nposition startpos moves 7g7f 3c3d\nposition startpos moves 7g7f zz\n",
    );
    assert_eq!(out.len(), 3);
    assert!(
        out[0]["error"].as_str().unwrap().contains("sfen"),
        "{}",
        out[0]
    );
    assert_eq!(out[1]["result"], "none");
    assert_eq!(out[1]["plies"], 2);
    assert!(out[2]["error"].is_string(), "{}", out[2]);
    let bad_rules = Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
        .args(["judge", "--rules", "nope", "x.csa"])
        .output()
        .unwrap();
    assert_eq!(bad_rules.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_rules.stderr).contains("unknown ruleset preset"));
}
