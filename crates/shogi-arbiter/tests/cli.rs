//! The `shogi-arbiter` binary, run as a user runs it.

use std::io::Write;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
}

#[test]
fn perft_last_line_holds_the_count() {
    for mode in ["bulk", "full"] {
        let out = bin()
            .args(["perft", "--depth", "3", "--mode", mode])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().last(), Some("nodes 25470"), "{text}");
    }
}

#[test]
fn perft_divide_sums_to_the_total() {
    let out = bin()
        .args([
            "perft",
            "--sfen",
            "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
            "--depth",
            "2",
            "--divide",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 207 + 2);
    let sum: u64 = lines[..207]
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 28684);
    assert_eq!(lines.last(), Some(&"nodes 28684"));
}

#[test]
fn perft_bad_sfen_is_an_error_not_a_panic() {
    let out = bin()
        .args(["perft", "--sfen", "nonsense", "--depth", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("invalid sfen at column"), "{err}");
}

#[test]
fn moves_from_stdin_goes_on_after_a_bad_line() {
    let mut child = bin()
        .args(["moves", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1\nbad sfen\n4k4/9/9/9/9/9/9/4r4/4K3L b - 1\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a bad line makes the exit code 1"
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["moves"].as_array().unwrap().len(), 30);
    assert_eq!(lines[0]["inCheck"], false);
    assert!(
        lines[0]["moves"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "7g7f")
    );
    assert_eq!(lines[1]["sfen"], "bad sfen");
    assert!(lines[1]["error"].as_str().unwrap().contains("invalid sfen"));
    assert_eq!(lines[2]["inCheck"], true);
}

#[test]
fn moves_single_sfen() {
    let out = bin()
        .args(["moves", "--sfen", "R6gk/9/6S1L/9/9/9/9/9/4K4 b P 1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let moves: Vec<&str> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(
        !moves.contains(&"P*1b"),
        "pawn-drop mate must not be listed"
    );
    assert!(moves.contains(&"P*2b"));
}
