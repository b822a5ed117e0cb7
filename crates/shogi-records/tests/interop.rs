//! Records as other tools read them (issue #22): one regression test a class of the
//! disagreements `make test-interop` found between our records and tsshogi, json-kifu-format,
//! cshogi and python-shogi. docs/records.md says which convention each follows.

use shogi_records::{
    CsaVersion, Encoding, Ending, EndingKind, Format, Record, WriteOptions, read_any, read_as,
    read_kif, write, write_with,
};
use shogi_rules::{Move, Position};

mod common;

fn text(rec: &Record, f: Format) -> String {
    String::from_utf8(write(rec, f, Encoding::Utf8).expect("writes")).expect("utf-8")
}

fn from_usi(sfen: Option<&str>, moves: &[&str]) -> Record {
    let start = sfen.map_or_else(Position::startpos, |s| {
        Position::from_sfen(s).expect("valid sfen")
    });
    let moves: Vec<Move> = moves
        .iter()
        .map(|m| Move::from_usi(m).expect("usi"))
        .collect();
    Record::from_moves(Format::Usi, start, &moves)
}

fn corpus(name: &str) -> Record {
    let (path, bytes) = common::corpus_files()
        .into_iter()
        .find(|(p, _)| p.to_string_lossy().ends_with(name))
        .expect("corpus record");
    read_any(&path.to_string_lossy(), &bytes).expect("reads")
}

/// The KI2 text of ply `ply` (1-based) of a record written as KI2.
fn ki2_move_text(rec: &Record, ply: usize) -> String {
    let ki2 = text(rec, Format::Ki2);
    let moves: Vec<&str> = ki2
        .lines()
        .filter(|l| l.starts_with(['▲', '△']))
        .flat_map(|l| l.split(' ').filter(|w| !w.is_empty()))
        .collect();
    moves[ply - 1].to_string()
}

/// Class 1: what `position` accepts, without `resign` or `win`.
#[test]
fn usi_output_is_a_position_command_without_the_ending() {
    for kind in [EndingKind::Resign, EndingKind::Kachi] {
        let mut rec = from_usi(None, &["7g7f", "3c3d"]);
        rec.ending = Some(Ending::new(kind));
        assert_eq!(
            text(&rec, Format::Usi),
            "position startpos moves 7g7f 3c3d\n"
        );
    }
}

/// Class 2: ASCII blanks between KI2 moves, as Kifu for Windows and tsshogi write them.
#[test]
fn ki2_moves_on_a_line_are_separated_by_ascii_blanks() {
    let rec = from_usi(None, &["7g7f", "3c3d", "2g2f"]);
    let ki2 = text(&rec, Format::Ki2);
    assert!(ki2.contains("▲７六歩    △３四歩    ▲２六歩\n"), "{ki2}");
    assert!(!ki2.contains('\u{3000}'), "{ki2}");
}

/// Class 3: the JSA's relative words, as Kifu for Windows and tsshogi write them.
#[test]
fn ki2_writes_the_relative_words_of_the_jsa_rules() {
    // jishogi_kachi.csa ply 312: a tokin moving straight up, another beside it: 直, not 左.
    let rec = corpus("jishogi_kachi.csa");
    assert_eq!(ki2_move_text(&rec, 312), "△２八と直");
    // not_sennichite.csa ply 72, which we wrote `△４三金右`: tsshogi found no such move.
    let rec = corpus("not_sennichite.csa");
    assert_eq!(ki2_move_text(&rec, 72), "△４三金直");
    let cases: &[(&str, &str, &str)] = &[
        // Two golds reach 5h: the one on the left moving up, the other sideways.
        ("4k4/9/9/9/9/9/9/5G3/3G4K b - 1", "6i5h", "▲５八金上"),
        ("4k4/9/9/9/9/9/9/5G3/3G4K b - 1", "4h5h", "▲５八金寄"),
        // Both move up to 5h: by the side each comes from, 直 for the one straight below.
        ("4k4/9/9/9/9/9/9/9/3GGG2K b - 1", "6i5h", "▲５八金左"),
        ("4k4/9/9/9/9/9/9/9/3GGG2K b - 1", "5i5h", "▲５八金直"),
        ("4k4/9/9/9/9/9/9/9/3GGG2K b - 1", "4i5h", "▲５八金右"),
        // Two dragons: 右 and 左, never 直.
        ("4k4/9/9/9/9/9/9/9/2+R3+R1K b - 1", "3i5i", "▲５九龍右"),
        // A gold pinned on rank 8 by the rook still counts: the drop is written 打.
        ("4k4/9/9/9/9/9/9/4r1G1K/9 b G 1", "G*3i", "▲３九金打"),
        // A drop where no piece on the board reaches the square: no 打.
        ("4k4/9/9/9/9/9/9/9/8K b G 1", "G*5e", "▲５五金"),
    ];
    for (sfen, mv, expected) in cases {
        let rec = from_usi(Some(sfen), &[mv]);
        assert_eq!(&ki2_move_text(&rec, 1), expected, "{sfen} {mv}");
        let back = read_as(Format::Ki2, text(&rec, Format::Ki2).as_bytes()).expect("reads");
        assert_eq!(back.moves[0].mv.to_string(), *mv, "{sfen}");
    }
}

/// Class 4: the closing line names the side, in KI2 and in KIF (which now has one).
#[test]
fn the_closing_line_names_the_side_in_ki2_and_kif() {
    let cases = [
        (EndingKind::IllegalMove, "まで2手で先手の反則負け"),
        (EndingKind::Kachi, "まで2手で先手の入玉勝ち"),
        (
            EndingKind::IllegalAction(shogi_rules::Color::White),
            "まで2手で先手の反則勝ち",
        ),
        (EndingKind::Resign, "まで2手で後手の勝ち"),
    ];
    for (kind, line) in cases {
        let mut rec = from_usi(None, &["7g7f", "3c3d"]);
        rec.ending = Some(Ending::new(kind.clone()));
        for f in [Format::Ki2, Format::Kif] {
            let t = text(&rec, f);
            assert!(t.contains(&format!("{line}\n")), "{kind:?} {f:?}: {t}");
            let back = read_as(f, t.as_bytes()).expect("reads");
            assert_eq!(back.ending.map(|e| e.kind), Some(kind.clone()), "{f:?}");
        }
    }
}

/// cshogi's KIF writer says a declaration `入玉宣言` (`まで…手で入玉宣言`): read as one.
#[test]
fn cshogis_word_for_a_declaration_is_read() {
    let kif = "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 入玉宣言\nまで1手で入玉宣言\n";
    let rec = read_kif(kif.as_bytes()).expect("reads");
    assert_eq!(rec.ending.map(|e| e.kind), Some(EndingKind::Kachi));
}

/// Class 5: a KI2 variation's `まで` line is the variation's ending, not the main line's.
#[test]
fn a_ki2_variations_closing_line_ends_the_variation() {
    let ki2 = "手合割：平手\n▲７六歩    △３四歩    ▲２二角成\nまで3手で中断\n\n変化：3手\n▲２六歩\nまで3手で先手の勝ち\n";
    let rec = read_as(Format::Ki2, ki2.as_bytes()).expect("reads");
    assert_eq!(rec.ending.map(|e| e.kind), Some(EndingKind::Chudan));
    assert_eq!(rec.variations.len(), 1);
    assert_eq!(
        rec.variations[0].ending.as_ref().map(|e| &e.kind),
        Some(&EndingKind::Resign)
    );
}

/// Class 6: a variation may replace the ending's ply, as tsshogi writes and reads, in KIF and
/// in KI2 (where the ending is the `まで` line).
#[test]
fn a_variation_may_replace_the_ending() {
    let ki2 = "手合割：平手\n▲７六歩\nまで1手で先手の勝ち\n\n変化：2手\n△３四歩\nまで2手で中断\n";
    let rec = read_as(Format::Ki2, ki2.as_bytes()).expect("reads");
    assert_eq!(rec.ending.map(|e| e.kind), Some(EndingKind::Resign));
    assert_eq!(rec.variations[0].ply, 2);
    assert_eq!(rec.variations[0].moves[0].mv.to_string(), "3c3d");
    let kif = "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 投了\n\n変化：2手\n   2 ３四歩(33)\n";
    let rec = read_kif(kif.as_bytes()).expect("reads");
    assert_eq!(rec.ending.map(|e| e.kind), Some(EndingKind::Resign));
    assert_eq!(rec.variations.len(), 1);
    assert_eq!(rec.variations[0].ply, 2);
    assert_eq!(rec.variations[0].moves[0].mv.to_string(), "3c3d");
}

/// Class 7: 封じ手 (sealed move) survives KIF -> KI2 -> KIF, and JKF says it within its schema.
#[test]
fn a_sealed_move_survives_ki2_and_jkf_stays_in_its_schema() {
    let kif = "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 封じ手\n";
    let rec = read_kif(kif.as_bytes()).expect("reads");
    let sealed = Some(EndingKind::Other("封じ手".into()));
    let ki2 = text(&rec, Format::Ki2);
    assert!(ki2.ends_with("まで1手で封じ手\n"), "{ki2}");
    let back = read_as(Format::Ki2, ki2.as_bytes()).expect("reads");
    assert_eq!(back.ending.as_ref().map(|e| e.kind.clone()), sealed);
    assert!(text(&back, Format::Kif).contains("   2 封じ手\n"));
    assert!(text(&back, Format::Ki2).ends_with("\nまで1手で封じ手\n"));
    assert!(text(&back, Format::Jkf).contains("{\"special\":\"CHUDAN\"}"));
}

/// An ending named by a JKF `special` with a line break stays on the closing line.
#[test]
fn a_closing_line_is_one_line() {
    let jkf = r#"{"header":{},"moves":[{},{"move":{"color":0,"from":{"x":7,"y":7},"to":{"x":7,"y":6},"piece":"FU"}},{"special":"a\nb"}]}"#;
    let rec = read_as(Format::Jkf, jkf.as_bytes()).expect("reads");
    for f in [Format::Kif, Format::Ki2] {
        let t = text(&rec, f);
        assert!(t.contains("まで1手でa b\n"), "{t}");
        read_as(f, t.as_bytes()).expect("reads back");
    }
}

/// Class 8: CSA V2.2 where the record fits it, V3.0 where it does not; JKF specials in the
/// schema's enum.
#[test]
fn csa_is_v22_where_the_record_fits_and_jkf_specials_are_the_schemas() {
    let mut rec = from_usi(None, &["7g7f"]);
    rec.ending = Some(Ending::new(EndingKind::Resign));
    rec.max_moves = Some(256);
    let csa = text(&rec, Format::Csa);
    assert!(
        csa.starts_with("V2.2\n") && csa.contains("'Max_Moves:256\n"),
        "{csa}"
    );
    let back = read_as(Format::Csa, csa.as_bytes()).expect("reads");
    assert_eq!(back.max_moves, Some(256));
    let v3 = WriteOptions {
        csa_version: CsaVersion::V3_0,
    };
    let csa3 = String::from_utf8(write_with(&rec, Format::Csa, Encoding::Utf8, v3).unwrap());
    assert!(csa3.unwrap().starts_with("V3.0\n$MAX_MOVES:256\n"));
    for (kind, special) in [
        (EndingKind::MaxMoves, "JISHOGI"),
        (EndingKind::OuteSennichite, "SENNICHITE"),
    ] {
        rec.ending = Some(Ending::new(kind));
        assert!(text(&rec, Format::Csa).starts_with("V3.0\n"));
        let jkf = text(&rec, Format::Jkf);
        assert!(
            jkf.contains(&format!("{{\"special\":\"{special}\"}}")),
            "{jkf}"
        );
    }
    rec.moves[0].time = Some(shogi_records::MoveTime {
        spent_ms: 1500,
        total_ms: None,
    });
    rec.ending = None;
    assert!(
        text(&rec, Format::Csa).starts_with("V3.0\n"),
        "milliseconds need V3.0"
    );
}

/// Class 9: `#` in a KIF header value is part of the value, as the other readers keep it.
#[test]
fn a_hash_in_a_kif_header_value_is_kept() {
    let kif = "先手：Sente-san#コメント3\n手合割：平手#コメント2\n手数----指手---------消費時間--\n   1 ７六歩(77)\n";
    let rec = read_kif(kif.as_bytes()).expect("reads");
    assert_eq!(rec.header("先手"), Some("Sente-san#コメント3"));
    assert!(text(&rec, Format::Kif).contains("先手：Sente-san#コメント3\n"));
}
