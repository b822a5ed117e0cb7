//! Inputs meant to hang a reader, exhaust its memory or lose lines: one-line move lists of
//! millions of moves, inputs over the size limit, empty files, CR-only line endings, several
//! CSA games in one file.

use shogi_records::{
    Format, MAX_RECORD_BYTES, read_all, read_any, read_csa, read_csa_games, read_ki2, read_kif,
    read_usi,
};
use std::time::{Duration, Instant};

/// Generous: the readers take well under a second for these in a debug build; a quadratic
/// reader takes minutes.
const BOUND: Duration = Duration::from_secs(20);

/// Four plies that bring the position back: the kings step out and back.
const CYCLE_USI: [&str; 4] = ["5i5h", "5a5b", "5h5i", "5b5a"];
const CYCLE_CSA: [&str; 4] = ["+5958OU", "-5152OU", "+5859OU", "-5251OU"];
const CYCLE_KI2: [&str; 4] = ["▲５八玉", "△５二玉", "▲５九玉", "△５一玉"];

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    let took = t.elapsed();
    assert!(took < BOUND, "{what} took {took:?}, more than {BOUND:?}");
    out
}

#[test]
fn a_single_usi_line_of_a_million_moves_reads_in_linear_time() {
    let n = 1_000_000;
    let mut line = String::from("position startpos moves");
    for i in 0..n {
        line.push(' ');
        line.push_str(CYCLE_USI[i % 4]);
    }
    assert!(line.len() > 5_000_000);
    let rec = timed("a 5 MB usi line", || read_usi(&line).expect("reads"));
    assert_eq!(rec.moves.len(), n);
    assert!(rec.moves.iter().all(|m| m.legal.is_ok()));
}

#[test]
fn a_single_csa_line_of_200k_moves_reads_in_linear_time() {
    let n = 200_000;
    let mut text = String::from("V2.2\nPI\n+\n");
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(CYCLE_CSA[i % 4]);
    }
    text.push_str(",%CHUDAN\n");
    let rec = timed("a 1.6 MB csa line", || read_csa(&text).expect("reads"));
    assert_eq!(rec.moves.len(), n);
    // An error at the end of the line still names its column, counted in characters.
    let bad = text.replace(",%CHUDAN", ",+9999XX");
    let e = timed("a 1.6 MB csa line with an error at its end", || {
        read_csa(&bad).expect_err("bad piece")
    });
    assert_eq!((e.line, e.column), (4, (n * 8 + 1 + 5) as u32), "{e}");
}

#[test]
fn a_single_ki2_line_of_100k_moves_reads_in_linear_time() {
    let n = 100_000;
    let mut text = String::from("手合割：平手\n");
    for i in 0..n {
        text.push_str(CYCLE_KI2[i % 4]);
    }
    text.push('\n');
    let rec = timed("a ki2 line of 100k moves", || {
        read_ki2(text.as_bytes()).expect("reads")
    });
    assert_eq!(rec.moves.len(), n);
}

#[test]
fn input_over_the_size_limit_is_an_error_at_once() {
    let big = vec![b' '; MAX_RECORD_BYTES + 1];
    for (name, result) in [
        ("any", read_any("x.usi", &big)),
        ("kif", read_kif(&big)),
        ("usi", read_usi(std::str::from_utf8(&big).unwrap())),
    ] {
        let e = timed(name, || result).expect_err("too large");
        assert!(e.reason.contains("more than"), "{name}: {e}");
    }
    let all = read_all("x.csa", &big);
    assert_eq!(all.len(), 1);
    assert!(all[0].is_err());
}

#[test]
fn an_empty_file_is_an_error_in_every_format() {
    for name in ["x.csa", "x.kif", "x.kifu", "x.ki2", "x.jkf", "x.usi", "x"] {
        for bytes in [&b""[..], b"\n\n", b"\xEF\xBB\xBF", b"  \r\n"] {
            let e = read_any(name, bytes).expect_err("empty");
            assert!(
                e.reason.contains("empty") || e.reason.contains("cannot tell"),
                "{name} {bytes:?}: {e}"
            );
        }
    }
}

#[test]
fn a_kif_with_cr_only_line_endings_is_read() {
    let text = "手合割：平手\r手数----指手---------消費時間--\r   1 ７六歩(77)   ( 0:03/00:00:03)\r   2 ３四歩(33)   ( 0:05/00:00:05)\r*a comment\r   3 投了\r";
    let rec = read_any("game.kif", text.as_bytes()).expect("reads");
    assert_eq!(rec.format, Format::Kif);
    assert_eq!(rec.moves.len(), 2);
    assert_eq!(rec.moves[1].comment.as_deref(), Some("a comment"));
    assert_eq!(rec.moves[1].time.map(|t| t.spent_ms), Some(5000));
    assert!(rec.ending.is_some());
    // Sniffed without an extension too.
    assert_eq!(
        read_any("stdin", text.as_bytes())
            .expect("reads")
            .moves
            .len(),
        2
    );
}

#[test]
fn csa_games_separated_by_slash_are_each_read() {
    let text = "V2.2\nN+a\nPI\n+\n+7776FU\n%TORYO\n/\nV2.2\nN+b\nPI\n+\n+2726FU\n-3334FU\n/\n\nPI\n+\n+7776XX\n/\n";
    let games = read_csa_games(text);
    assert_eq!(games.len(), 3);
    let first = games[0].as_ref().expect("first game");
    assert_eq!((first.moves.len(), first.header("N+")), (1, Some("a")));
    let second = games[1].as_ref().expect("second game");
    assert_eq!((second.moves.len(), second.header("N+")), (2, Some("b")));
    // A bad game is an error with the file's line number, and does not stop the others.
    let e = games[2].as_ref().expect_err("bad piece");
    assert_eq!(e.line, 18, "{e}");
    assert_eq!(read_all("x.csa", text.as_bytes()).len(), 3);
    // One game at a time: a second game is not silently dropped.
    let e = read_csa(text).expect_err("several games");
    assert_eq!(e.line, 7, "{e}");
    assert!(e.reason.contains("second game"), "{e}");
    // A trailing separator is not a game.
    assert_eq!(read_csa_games("PI\n+\n+7776FU\n/\n").len(), 1);
}
