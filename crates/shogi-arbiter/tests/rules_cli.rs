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

/// The verdict's result code as RULES.md names it (`codeName`), or `none` for a line without a
/// verdict.
fn result(v: &Value) -> &str {
    match &v["verdict"] {
        Value::Null => "none",
        verdict => verdict["codeName"]
            .as_str()
            .unwrap_or_else(|| panic!("a verdict without codeName: {v}")),
    }
}

/// A fixture's lower-case name (`pawn_drop_mate`, `white`) as the proto JSON mapping writes the
/// enum value (`ILLEGAL_KIND_PAWN_DROP_MATE`, `COLOR_WHITE`).
fn enum_value(prefix: &str, name: &str) -> Value {
    Value::from(format!("{prefix}_{}", name.to_uppercase()))
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
            assert_ne!(result(v), "illegal_move", "{}: {v}", r[0]);
        } else {
            let verdict = &v["verdict"];
            assert_eq!(result(v), "illegal_move", "{}: {v}", r[0]);
            assert_eq!(
                verdict["illegalMove"]["kind"],
                enum_value("ILLEGAL_KIND", &r[3]),
                "{}",
                r[0]
            );
            assert_eq!(verdict["code"], "RESULT_CODE_ILLEGAL_MOVE", "{}", r[0]);
            assert_eq!(verdict["ply"], 1, "{}", r[0]);
            assert_eq!(verdict["illegalMove"]["usi"], r[2].as_str(), "{}", r[0]);
        }
    }
    // Under the `online` preset an illegal move is rejected, not forfeited.
    let out = run(&["judge", "--rules", "online", "--stdin"], &input);
    for (r, v) in rows.iter().zip(&out) {
        if r[3] != "legal" {
            assert_eq!(
                v["rejected"]["kind"],
                enum_value("ILLEGAL_KIND", &r[3]),
                "{}: {v}",
                r[0]
            );
            assert_eq!(v["rejected"]["ply"], 1, "{}: {v}", r[0]);
            assert_eq!(v["rejected"]["usi"], r[2].as_str(), "{}: {v}", r[0]);
            assert_ne!(result(v), "illegal_move");
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
        assert_eq!(result(v), r[3].as_str(), "{id}: {v}");
        let verdict = &v["verdict"];
        if r[3] == "none" {
            assert_eq!(v["plies"].to_string(), r[5], "{id}: {v}");
        } else {
            let winner = if r[4] == "-" { "unspecified" } else { &r[4] };
            assert_eq!(verdict["winner"], enum_value("COLOR", winner), "{id}: {v}");
            assert_eq!(verdict["ply"].to_string(), r[5], "{id}: {v}");
        }
        if r[3] != "none" {
            // A fourfold repetition is always announced by a third-occurrence warning first.
            let warnings = v["warnings"]
                .as_array()
                .unwrap_or_else(|| panic!("{id}: no warnings: {v}"));
            assert!(
                warnings
                    .iter()
                    .any(|w| w["thirdOccurrence"]["plies"].is_array()),
                "{id}: {v}"
            );
        }
        if r[3] == "perpetual_check" {
            let warnings = v["warnings"].as_array().unwrap();
            assert!(
                warnings
                    .iter()
                    .any(|w| w["perpetualCheckRisk"]["checker"].is_string()
                        && w["perpetualCheckRisk"]["checker"] != verdict["winner"]),
                "{id}: {v}"
            );
        }
        if r[6] != "-" {
            let plies: Vec<u64> = r[6].split(' ').map(|p| p.parse().unwrap()).collect();
            let evidence = match r[3].as_str() {
                "perpetual_check" => &verdict["perpetualCheck"],
                _ => &verdict["repetition"],
            };
            let got: Vec<u64> = evidence["plies"]
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
            assert_eq!(v["schema"], "shogi-arbiter.impasse.v2");
            assert_eq!(v["outcome"], outcome, "{id} {rule}: {v}");
            assert_eq!(v["points"].to_string(), r[4], "{id} {rule}: {v}");
            assert_eq!(v["piecesInCamp"].to_string(), r[5], "{id} {rule}: {v}");
            assert_eq!(v["inCheck"].to_string(), r[6], "{id} {rule}: {v}");
            assert_eq!(v["declarer"], enum_value("COLOR", &r[3]), "{id}");
            assert!(v["pointsMissing"].is_u64() && v["kingInCamp"].is_boolean());
            // Every condition of RULES.md, as the message's list of {name, met}.
            let conditions = v["conditions"].as_array().unwrap();
            assert_eq!(conditions.len(), 8, "{id}: {v}");
            assert!(
                conditions
                    .iter()
                    .all(|c| c["name"].is_string() && c["met"].is_boolean())
            );
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
    assert_eq!(out[1]["verdict"], Value::Null);
    assert_eq!(out[1]["plies"], 2);
    assert!(out[2]["error"].is_string(), "{}", out[2]);
    let bad_rules = Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
        .args(["judge", "--rules", "nope", "x.csa"])
        .output()
        .unwrap();
    assert_eq!(bad_rules.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_rules.stderr).contains("unknown ruleset preset"));
}

#[test]
fn judge_json_writes_the_verdict_as_the_proto_json_mapping_does() {
    // Black checks with the rook on every move until the position after ply 1 occurs for the
    // fourth time on ply 13: perpetual check, Black loses.
    let out = run(
        &["judge", "--rules", "csa", "--stdin"],
        "position sfen 6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1 moves 5h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h\n",
    );
    assert_eq!(out.len(), 1);
    let v = &out[0];
    // The message shogi.v1.Verdict as protobuf's canonical JSON writes it: lowerCamelCase
    // names, enum values by name, defaults written out, `gameId` left out.
    let expected: Value = serde_json::from_str(
        r#"{
            "code": "RESULT_CODE_PERPETUAL_CHECK",
            "codeName": "perpetual_check",
            "winner": "COLOR_WHITE",
            "ply": 13,
            "ordinaryResult": "ORDINARY_RESULT_UNSPECIFIED",
            "perpetualCheck": {
                "plies": [1, 5, 9, 13],
                "checker": "COLOR_BLACK",
                "checkPlies": [3, 5, 7, 9, 11, 13]
            }
        }"#,
    )
    .unwrap();
    assert_eq!(v["verdict"], expected, "{v}");
    assert_eq!(v["schema"], "shogi-arbiter.judge.v2");
    assert_eq!(v["format"], "usi");
    assert_eq!(v["plies"], 13);
    assert_eq!(v["csa"], "#OUTE_SENNICHITE");
    // Warnings are shogi.v1.Warning messages: the ply, and one of its kinds.
    let warnings = v["warnings"].as_array().unwrap();
    let third = serde_json::json!({"ply": 9, "thirdOccurrence": {"plies": [1, 5, 9]}});
    let risk = serde_json::json!({
        "ply": 9,
        "perpetualCheckRisk": {"checker": "COLOR_BLACK", "sincePly": 1}
    });
    assert!(warnings.contains(&third), "{v}");
    assert!(warnings.contains(&risk), "{v}");
}
