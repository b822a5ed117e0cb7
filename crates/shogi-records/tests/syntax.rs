//! One small inline record per syntax feature, good and bad; bad ones are checked for their
//! line and column.

use shogi_records::{
    EndingKind, Format, Record, RecordError, read_any, read_csa, read_ki2, read_kif, read_usi,
    write_csa,
};
use shogi_rules::{Color, IllegalKind, PieceKind, Square};

/// The moves of a record in USI, with `!kind` after an illegal one.
fn usi(rec: &Record) -> String {
    rec.moves
        .iter()
        .map(|m| match &m.legal {
            Ok(()) => m.mv.to_string(),
            Err(e) => format!("{}!{}", m.mv, e.kind),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Asserts an error's line, column and a word of its reason.
#[track_caller]
fn check_err(result: Result<Record, RecordError>, line: u32, column: u32, reason: &str) {
    match result {
        Ok(r) => panic!("expected an error, read {} moves", r.moves.len()),
        Err(e) => {
            assert_eq!((e.line, e.column), (line, column), "{e}");
            assert!(
                e.reason.contains(reason),
                "reason {:?} lacks {reason:?}",
                e.reason
            );
            let msg = e.to_string();
            assert!(!msg.ends_with('.'), "{msg}");
            let first = e.reason.chars().next().expect("a reason");
            assert!(!first.is_uppercase(), "reason not lower case: {}", e.reason);
        }
    }
}

fn sq(s: &str) -> Square {
    Square::from_usi(s).expect("square")
}

// ---------------------------------------------------------------- CSA

#[test]
fn csa_basic_game_with_inferred_promotion() {
    let rec =
        read_csa("V2.2\nN+sente\nN-gote\nPI\n+\n+7776FU\n-3334FU\n+8822UM\n-3122GI\n%TORYO\n")
            .expect("reads");
    assert_eq!(rec.format, Format::Csa);
    assert_eq!(usi(&rec), "7g7f 3c3d 8h2b+ 3a2b");
    assert_eq!(rec.header("N+"), Some("sente"));
    assert_eq!(rec.header("V"), Some("2.2"));
    let end = rec.ending.expect("ending");
    assert_eq!(
        (end.kind, end.line, end.raw.as_str()),
        (EndingKind::Resign, 10, "%TORYO")
    );
    assert_eq!(rec.moves[2].line, 8);
    assert_eq!(rec.moves[1].color, Color::White);
}

#[test]
fn csa_statements_separated_by_commas_and_time_lines() {
    let rec = read_csa(
        "V3.0\nPI\n+\n+7776FU,T12,-3334FU,T3.5\n'comment, with a comma\n+2726FU\nT1\n%CHUDAN,T39\n",
    )
    .expect("reads");
    assert_eq!(usi(&rec), "7g7f 3c3d 2g2f");
    assert_eq!(rec.moves[1].line, 4);
    assert_eq!(rec.ending.map(|e| e.kind), Some(EndingKind::Chudan));
}

#[test]
fn csa_max_moves_from_v3_header_and_floodgate_comment() {
    let rec = read_csa("V3.0\n$MAX_MOVES:256\n$EVENT:test\nPI\n+\n").expect("reads");
    assert_eq!(rec.max_moves, Some(256));
    assert_eq!(rec.header("EVENT"), Some("test"));
    let rec = read_csa("V2\n'Max_Moves:512\nPI\n+\n+7776FU\n%TORYO\n'summary:toryo:a win:b lose\n")
        .expect("reads");
    assert_eq!(rec.max_moves, Some(512));
    assert_eq!(rec.header("summary"), Some("toryo:a win:b lose"));
}

#[test]
fn csa_pi_with_handicap_removals() {
    let rec = read_csa("V2.2\nPI82HI22KA\n-\n-3334FU\n+7776FU\n").expect("reads");
    assert_eq!(
        rec.start.to_sfen(),
        "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
    );
    assert_eq!(usi(&rec), "3c3d 7g7f");
}

#[test]
fn csa_board_rows_hands_and_all_remaining() {
    let text = "P1 *  *  *  *  * -OU *  *  * \n\
                P2 *  *  *  *  *  *  *  *  * \n\
                P3 *  *  *  *  *  *  *  *  * \n\
                P4 *  *  *  *  *  *  *  *  * \n\
                P5 *  *  *  *  *  *  *  *  * \n\
                P6 *  *  *  *  *  *  *  *  * \n\
                P7 *  *  *  *  *  *  *  *  * \n\
                P8 *  *  *  *  *  *  *  *  * \n\
                P9 *  *  *  * +OU *  *  *  * \n\
                P+00KI00KI\n\
                P-00AL\n\
                +\n\
                +0042KI\n";
    let rec = read_csa(text).expect("reads");
    assert_eq!(rec.start.hand(Color::Black).count(PieceKind::Gold), 2);
    assert_eq!(rec.start.hand(Color::White).count(PieceKind::Gold), 2);
    assert_eq!(rec.start.hand(Color::White).count(PieceKind::Pawn), 18);
    assert_eq!(rec.start.hand(Color::White).count(PieceKind::Rook), 2);
    assert_eq!(usi(&rec), "G*4b");
}

#[test]
fn csa_single_space_rows() {
    let text = "V2.2\nP1-KY-KE-GI-KI-OU-KI-GI-KE-KY\nP2 * * * * * * * * *\nP3-FU-FU-FU-FU-FU-FU-FU-FU-FU\n\
                P4 * * * * * * * * *\nP5 * * * * * * * * *\nP6 * * * * * * * * *\n\
                P7+FU+FU+FU+FU+FU+FU+FU+FU+FU\nP8 * +KA * * * * * +HI *\nP9+KY+KE+GI+KI+OU+KI+GI+KE+KY\n-\n-3334FU\n";
    let rec = read_csa(text).expect("reads");
    assert_eq!(rec.start.side_to_move(), Color::White);
    assert_eq!(usi(&rec), "3c3d");
}

#[test]
fn csa_every_special_move() {
    let cases = [
        ("%TORYO", EndingKind::Resign),
        ("%CHUDAN", EndingKind::Chudan),
        ("%SENNICHITE", EndingKind::Sennichite),
        ("%OUTE_SENNICHITE", EndingKind::OuteSennichite),
        ("%TIME_UP", EndingKind::TimeUp),
        ("%ILLEGAL_MOVE", EndingKind::IllegalMove),
        ("%+ILLEGAL_ACTION", EndingKind::IllegalAction(Color::Black)),
        ("%-ILLEGAL_ACTION", EndingKind::IllegalAction(Color::White)),
        ("%JISHOGI", EndingKind::Jishogi),
        ("%KACHI", EndingKind::Kachi),
        ("%HIKIWAKE", EndingKind::Hikiwake),
        ("%MATTA", EndingKind::Other("MATTA".into())),
        ("%TSUMI", EndingKind::Tsumi),
        ("%FUZUMI", EndingKind::Fuzumi),
        ("%ERROR", EndingKind::Error),
        ("%MAX_MOVES", EndingKind::MaxMoves),
    ];
    for (special, kind) in cases {
        let rec = read_csa(&format!("V3.0\nPI\n+\n+7776FU\n{special}\n")).expect(special);
        let end = rec.ending.expect("ending");
        assert_eq!(end.kind, kind, "{special}");
        assert_eq!(end.raw, special);
        assert_eq!(end.kind.csa_special().as_deref(), Some(special));
    }
}

#[test]
fn csa_repeated_ending_is_kept_as_a_header() {
    let rec = read_csa("PI\n+\n+7776FU\n%KACHI,'* win\nT10\n%KACHI\n").expect("reads");
    assert_eq!(rec.ending.as_ref().map(|e| e.line), Some(4));
    assert_eq!(rec.header("later_ending"), Some("line 6: %KACHI"));
}

#[test]
fn csa_record_without_position_lines_starts_from_the_even_game() {
    let rec = read_csa("N+a\nN-b\n+\n+7776FU,T0\n%KACHI\n").expect("reads");
    assert_eq!(usi(&rec), "7g7f");
}

#[test]
fn csa_illegal_move_is_kept_and_specials_still_read() {
    let rec = read_csa("PI\n+\n+7776FU\n-3334FU\n+7674FU\n%ILLEGAL_MOVE\n").expect("reads");
    assert_eq!(usi(&rec), "7g7f 3c3d 7f7d!impossible");
    assert_eq!(rec.ending.map(|e| e.kind), Some(EndingKind::IllegalMove));
    let rec = read_csa("PI\n+\n+7775FU\n%TORYO\n").expect("reads");
    assert_eq!(usi(&rec), "7g7e!impossible");
    let rec = read_csa("PI\n+\n-3334FU\n").expect("reads");
    assert_eq!(usi(&rec), "3c3d!wrong_turn");
    // The piece named is neither the origin piece nor its promotion.
    let rec = read_csa("PI\n+\n+7776KI\n").expect("reads");
    assert_eq!(
        rec.moves[0].legal.as_ref().map_err(|e| e.kind),
        Err(IllegalKind::Impossible)
    );
}

#[test]
fn csa_move_after_an_illegal_move_is_an_error() {
    check_err(
        read_csa("PI\n+\n+7775FU\n-3334FU\n"),
        4,
        1,
        "move after an illegal move cannot be replayed",
    );
    check_err(
        read_csa("PI\n+\n+7776FU,-3334FU,+7774FU,-8384FU\n"),
        3,
        25,
        "illegal move on line 3",
    );
}

#[test]
fn csa_bad_inputs() {
    check_err(read_csa("PI\n+\n+77X6FU\n"), 3, 4, "destination");
    check_err(read_csa("PI\n+\n+7776ZZ\n"), 3, 6, "unknown piece");
    check_err(read_csa("PI\n+\n+7776FU,,T1\n"), 3, 9, "empty statement");
    check_err(read_csa("PI\n+\n+776FU\n"), 3, 1, "a move is");
    check_err(
        read_csa("PI\n+7776FU\n"),
        2,
        1,
        "before the side-to-move line",
    );
    check_err(read_csa("V2.2\n$EVENT\n"), 2, 1, "$KEY:value");
    check_err(read_csa("V9\n"), 1, 1, "unknown csa version");
    check_err(read_csa("PI\n+\nX\n"), 3, 1, "unknown statement");
    check_err(read_csa("P1-KY-KE\n+\n"), 1, 9, "nine squares");
    check_err(
        read_csa("P1 *  *  *  * -OU *  *  *  * \nP9 *  *  *  * +OU *  *  *  * \n+\n"),
        3,
        1,
        "board rows missing before the side-to-move line: P2 P3 P4 P5 P6 P7 P8",
    );
    check_err(
        read_csa("P1-KY-KE-GI-KI-OU-KI-GI-KE-KY-FU\n"),
        1,
        30,
        "more than nine",
    );
    check_err(read_csa("PI82KA\n"), 1, 3, "not on that square");
    check_err(
        read_csa("PI\n+\n+7776FU\nP+00FU\n"),
        4,
        1,
        "after the side-to-move line",
    );
    check_err(read_csa("PI\n+\nT12\n"), 3, 1, "before any move");
    check_err(read_csa("PI\n+\n+7776FU\nTx\n"), 4, 1, "time must be");
    check_err(
        read_csa("PI\n+\n+7776FU\n%TORYO\n-3334FU\n"),
        5,
        1,
        "after the end of the game",
    );
    check_err(read_csa("PI\n+\n+0076OU\n"), 3, 6, "can be dropped");
    check_err(read_csa("$MAX_MOVES:many\n"), 1, 1, "whole number");
    // A position that the rules core rejects: two pawns on file 7.
    check_err(
        read_csa("PI\nP+75FU\n+\n"),
        3,
        1,
        "more pieces of this kind",
    );
}

// ---------------------------------------------------------------- KIF

const KIF_GAME: &str = "\u{feff}# comment line\n\
開始日時：2024/01/01\n\
先手：A\n\
後手：B\n\
手合割：平手\n\
手数----指手---------消費時間--\n\
   1 ７六歩(77)   ( 0:01/00:00:01)\n\
*a comment\n\
&a bookmark\n\
   2 ３四歩(33)   ( 0:02/00:00:02)+\n\
   3 ２二角成(88) ( 0:03/00:00:04)\n\
   4 同　銀(31)   ( 0:04/00:00:06)\n\
   5 ３三角打     ( 0:05/00:00:09)\n\
   6 ５二玉(51)\n\
   7 ４四角成(33)\n\
   8 同歩(43)\n\
   9 ５八王(59)   #inline comment\n\
  10 投了\n\
まで9手で先手の勝ち\n\
\n\
変化：2手\n\
   2 ８四歩(83)   ( 0:02/00:00:02)\n\
   3 garbage that is never read\n";

#[test]
fn kif_utf8_game_with_same_square_drops_promotions_variations() {
    let rec = read_kif(KIF_GAME.as_bytes()).expect("reads");
    assert_eq!(rec.format, Format::Kif);
    assert_eq!(usi(&rec), "7g7f 3c3d 8h2b+ 3a2b B*3c 5a5b 3c4d+ 4c4d 5i5h");
    assert_eq!(rec.header("先手"), Some("A"));
    assert_eq!(rec.header("summary"), Some("まで9手で先手の勝ち"));
    let end = rec.ending.expect("ending");
    assert_eq!(
        (end.kind, end.line, end.raw.as_str()),
        (EndingKind::Resign, 18, "投了")
    );
}

#[test]
fn kif_shift_jis() {
    let (bytes, _, bad) = encoding_rs::SHIFT_JIS.encode(KIF_GAME.trim_start_matches('\u{feff}'));
    assert!(!bad);
    assert!(
        std::str::from_utf8(&bytes).is_err(),
        "the test text must not be valid utf-8"
    );
    let rec = read_kif(&bytes).expect("reads");
    assert_eq!(rec.moves.len(), 9);
    let rec = read_any("game.kif", &bytes).expect("reads");
    assert_eq!(rec.header("後手"), Some("B"));
}

#[test]
fn kif_promotion_words_and_piece_names() {
    let text = "1 ７六歩(77)\n2 ３四歩(33)\n3 ２二角不成(88)\n4 同　銀(31)\n5 ５五角打\n6 １四歩(13)\n7 ２二角成(55)\n8 同　飛(82)\n9 ５八金(69)\n";
    let rec = read_kif(text.as_bytes()).expect("reads");
    assert_eq!(usi(&rec), "7g7f 3c3d 8h2b 3a2b B*5e 1c1d 5e2b+ 8b2b 6i5h");
}

#[test]
fn kif_handicap_white_moves_first() {
    let rec = read_kif("手合割：香落ち\n1 ３四歩(33)\n2 ７六歩(77)\n".as_bytes()).expect("reads");
    assert_eq!(
        rec.start.to_sfen(),
        "lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
    );
    assert_eq!(rec.moves[0].color, Color::White);
    assert_eq!(usi(&rec), "3c3d 7g7f");
    for name in [
        "平手",
        "香落ち",
        "右香落ち",
        "角落ち",
        "飛車落ち",
        "飛香落ち",
        "二枚落ち",
        "三枚落ち",
        "四枚落ち",
        "五枚落ち",
        "左五枚落ち",
        "六枚落ち",
        "左七枚落ち",
        "右七枚落ち",
        "八枚落ち",
        "十枚落ち",
    ] {
        let rec = read_kif(format!("手合割：{name}\n").as_bytes()).expect(name);
        let expect = if name == "平手" {
            Color::Black
        } else {
            Color::White
        };
        assert_eq!(rec.start.side_to_move(), expect, "{name}");
    }
    let rec = read_kif("手合割：十枚落ち\n".as_bytes()).expect("reads");
    assert_eq!(
        rec.start.to_sfen(),
        "4k4/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
    );
}

#[test]
fn kif_board_diagram_with_hands_and_side() {
    let text = "後手の持駒：歩二　香\n\
  ９ ８ ７ ６ ５ ４ ３ ２ １\n\
+---------------------------+\n\
| ・ ・ ・ ・v玉 ・ ・ ・ ・|一\n\
| ・ ・ ・ ・ ・ ・ ・ ・ ・|二\n\
| ・ ・ ・ ・ 金 ・ ・ ・ ・|三\n\
| ・ ・ ・ ・ ・ ・ ・ ・ ・|四\n\
| ・ ・ ・ ・ ・ ・ ・ ・ ・|五\n\
| ・ ・ ・ ・ ・ ・ ・ ・ ・|六\n\
| ・ ・ ・ ・ ・ ・ ・ ・ ・|七\n\
| ・ ・ ・ ・ ・ ・ ・ ・ ・|八\n\
| ・ ・ ・ ・ 王 ・ ・ ・ ・|九\n\
+---------------------------+\n\
先手の持駒：金\n\
後手番\n\
手数----指手---------消費時間--\n\
   1 ４一玉(51)\n\
   2 ５二金打\n\
   3 詰み\n";
    let rec = read_kif(text.as_bytes()).expect("reads");
    assert_eq!(rec.start.to_sfen(), "4k4/9/4G4/9/9/9/9/9/4K4 w Gl2p 1");
    assert_eq!(usi(&rec), "5a4a G*5b");
    assert_eq!(rec.ending.map(|e| e.kind), Some(EndingKind::Tsumi));
}

#[test]
fn kif_bod_move_count_continues_the_numbering() {
    let text = "手数＝2  △３四歩(33)  まで\n\
後手の持駒：なし\n\
  ９ ８ ７ ６ ５ ４ ３ ２ １\n\
+---------------------------+\n\
|v香v桂v銀v金v玉v金v銀v桂v香|一\n\
| ・v飛 ・ ・ ・ ・ ・v角 ・|二\n\
|v歩v歩v歩v歩v歩v歩 ・v歩v歩|三\n\
| ・ ・ ・ ・ ・ ・v歩 ・ ・|四\n\
| ・ ・ ・ ・ ・ ・ ・ ・ ・|五\n\
| ・ ・ 歩 ・ ・ ・ ・ ・ ・|六\n\
| 歩 歩 ・ 歩 歩 歩 歩 歩 歩|七\n\
| ・ 角 ・ ・ ・ ・ ・ 飛 ・|八\n\
| 香 桂 銀 金 玉 金 銀 桂 香|九\n\
+---------------------------+\n\
先手の持駒：なし\n\
先手番\n\
3 ２六歩(27)\n";
    let rec = read_kif(text.as_bytes()).expect("reads");
    assert_eq!(usi(&rec), "2g2f");
    assert_eq!(rec.header("手数"), Some("2  △３四歩(33)  まで"));
    check_err(
        read_kif(text.replace("3 ２六歩", "1 ２六歩").as_bytes()),
        17,
        1,
        "where 3 was expected",
    );
}

#[test]
fn kif_endings() {
    let cases = [
        ("中断", EndingKind::Chudan),
        ("千日手", EndingKind::Sennichite),
        ("持将棋", EndingKind::Jishogi),
        ("入玉勝ち", EndingKind::Kachi),
        ("切れ負け", EndingKind::TimeUp),
        ("反則負け", EndingKind::IllegalMove),
        // After Black's move it is White's turn; 反則勝ち means Black's move was a foul.
        ("反則勝ち", EndingKind::IllegalAction(Color::Black)),
        ("不詰", EndingKind::Fuzumi),
        ("封じ手", EndingKind::Other("封じ手".into())),
    ];
    for (word, kind) in cases {
        let rec = read_kif(format!("1 ７六歩(77)\n2 {word}   ( 0:00/00:00:00)\n").as_bytes())
            .expect(word);
        assert_eq!(rec.ending.map(|e| e.kind), Some(kind), "{word}");
    }
}

#[test]
fn kif_illegal_move_is_kept_then_further_moves_are_an_error() {
    let rec = read_kif("1 ７五歩(77)\n2 反則負け\n".as_bytes()).expect("reads");
    assert_eq!(usi(&rec), "7g7e!impossible");
    check_err(
        read_kif("1 ７五歩(77)\n2 ３四歩(33)\n".as_bytes()),
        2,
        3,
        "move after an illegal move cannot be replayed (illegal move on line 1)",
    );
    // A piece named that is not the one on the origin square.
    let rec = read_kif("1 ７六金(77)\n".as_bytes()).expect("reads");
    assert_eq!(usi(&rec), "7g7f!impossible");
}

#[test]
fn kif_bad_inputs() {
    check_err(
        read_kif("1 ７六歩(77)\n3 ３四歩(33)\n".as_bytes()),
        2,
        1,
        "move number 3 where 2",
    );
    check_err(read_kif("1 ７六歩\n".as_bytes()), 1, 6, "missing origin");
    check_err(
        read_kif("1 ７六X(77)\n".as_bytes()),
        1,
        5,
        "expected a piece",
    );
    check_err(
        read_kif("1 同　歩(77)\n".as_bytes()),
        1,
        3,
        "no previous move",
    );
    check_err(
        read_kif("1 ７六歩(77) xyz\n".as_bytes()),
        1,
        11,
        "unexpected text",
    );
    check_err(
        read_kif("手合割：九枚落ち\n1 ７六歩(77)\n".as_bytes()),
        1,
        1,
        "unknown handicap",
    );
    check_err(
        read_kif("先手：a\nこれは何\n".as_bytes()),
        2,
        1,
        "unrecognised line",
    );
    check_err(read_kif("| ・ ・ ・|一\n".as_bytes()), 1, 8, "nine squares");
    check_err(
        read_kif("1 投了\n2 ７六歩(77)\n".as_bytes()),
        2,
        3,
        "after the end of the game",
    );
    check_err(read_kif("先手の持駒：竜\n".as_bytes()), 1, 7, "can be held");
    check_err(
        read_kif(b"\x81\x40\xff\xff\n"),
        1,
        2,
        "not valid utf-8, shift_jis or euc-jp",
    );
}

// ---------------------------------------------------------------- KI2

#[test]
fn ki2_moves_resolved_against_the_position() {
    let text = "手合割：平手\n▲７六歩    △３四歩\n▲２二角成△同　銀\n▲５八金右△４二玉\n▲４五角\nまで7手で先手の勝ち\n";
    let rec = read_ki2(text.as_bytes()).expect("reads");
    assert_eq!(rec.format, Format::Ki2);
    assert_eq!(usi(&rec), "7g7f 3c3d 8h2b+ 3a2b 4i5h 5a4b B*4e");
    let end = rec.ending.expect("ending");
    assert_eq!(end.kind, EndingKind::Resign);
    assert_eq!(end.raw, "まで7手で先手の勝ち");
    let rec = read_ki2("▲５八金左\n".as_bytes()).expect("reads");
    assert_eq!(rec.moves[0].mv.from(), Some(sq("6i")));
    // White's mark written as ▽.
    let rec = read_ki2("▲７六歩▽３四歩\n".as_bytes()).expect("reads");
    assert_eq!(usi(&rec), "7g7f 3c3d");
}

#[test]
fn ki2_bad_inputs() {
    check_err(
        read_ki2("▲５八金\n".as_bytes()),
        1,
        2,
        "more than one legal move",
    );
    check_err(
        read_ki2("▲７五歩\n".as_bytes()),
        1,
        2,
        "no legal move matches",
    );
    check_err(read_ki2("△３四歩\n".as_bytes()), 1, 2, "side not to move");
    check_err(
        read_ki2("▲７六歩△３四歩X\n".as_bytes()),
        1,
        9,
        "unexpected text",
    );
}

// ---------------------------------------------------------------- USI

#[test]
fn usi_lines() {
    let rec = read_usi("position startpos moves 7g7f 3c3d 8h2b+").expect("reads");
    assert_eq!(rec.format, Format::Usi);
    assert_eq!(usi(&rec), "7g7f 3c3d 8h2b+");
    assert!(rec.ending.is_none());
    let rec =
        read_usi("position sfen 4k4/9/4G4/9/9/9/9/9/4K4 b G 1 moves G*5b win\n").expect("reads");
    assert_eq!(usi(&rec), "G*5b");
    let end = rec.ending.expect("ending");
    assert_eq!((end.kind, end.raw.as_str()), (EndingKind::Kachi, "win"));
    let rec = read_usi("startpos").expect("reads");
    assert!(rec.moves.is_empty());
    let rec = read_usi("position startpos moves 7g7e").expect("reads");
    assert_eq!(usi(&rec), "7g7e!impossible");
}

#[test]
fn usi_bad_inputs() {
    check_err(
        read_usi("position startpos moves 7g7f 3c3x"),
        1,
        32,
        "invalid usi move",
    );
    check_err(
        read_usi("position startpos moves 7g7e 3c3d"),
        1,
        30,
        "move after an illegal move",
    );
    check_err(
        read_usi("position sfen 9/9 b - 1 moves"),
        1,
        15,
        "invalid sfen",
    );
    check_err(read_usi("position sfen moves"), 1, 10, "four fields");
    check_err(read_usi("position start"), 1, 10, "startpos or sfen");
    check_err(read_usi("position startpos 7g7f"), 1, 19, "expected moves");
    check_err(
        read_usi("position startpos\nposition startpos"),
        2,
        1,
        "one line",
    );
    check_err(read_usi("  \n"), 1, 1, "empty");
}

// ---------------------------------------------------------------- read_any, write_csa

#[test]
fn read_any_by_extension_and_by_sniffing() {
    let csa = b"V2.2\nPI\n+\n+7776FU\n";
    assert_eq!(read_any("a.CSA", csa).expect("reads").format, Format::Csa);
    assert_eq!(read_any("unknown", csa).expect("reads").format, Format::Csa);
    let kif = "手合割：平手\n手数----指手--\n1 ７六歩(77)\n";
    assert_eq!(
        read_any("x", kif.as_bytes()).expect("reads").format,
        Format::Kif
    );
    assert_eq!(
        read_any("x.kifu", kif.as_bytes()).expect("reads").format,
        Format::Kif
    );
    assert_eq!(
        read_any("x", "▲７六歩\n".as_bytes()).expect("reads").format,
        Format::Ki2
    );
    assert_eq!(
        read_any("x", b"position startpos moves 7g7f")
            .expect("reads")
            .format,
        Format::Usi
    );
    check_err(
        read_any("x", b"hello world"),
        1,
        1,
        "cannot tell the record format",
    );
}

#[test]
fn write_csa_position_moves_and_verdict() {
    let rec = read_kif("手合割：角落ち\n先手：A\n1 ３四歩(33)\n2 ７六歩(77)\n3 投了\n".as_bytes())
        .expect("reads");
    let text = write_csa(&rec, None);
    assert!(text.starts_with("V3.0\nN+A\n"), "{text}");
    assert!(text.contains("P2 * -HI *  *  *  *  *  *  * \n"), "{text}");
    assert!(text.contains("\n-\n-3334FU\n+7776FU\n%TORYO\n"), "{text}");
    let back = read_csa(&text).expect("reads back");
    assert_eq!(usi(&back), usi(&rec));
    assert!(back.start.same_position(&rec.start));

    let text = write_csa(&rec, Some("%SENNICHITE"));
    assert!(text.ends_with("'recorded: %TORYO\n%SENNICHITE\n"), "{text}");
    assert_eq!(
        read_csa(&text).expect("reads").ending.map(|e| e.kind),
        Some(EndingKind::Sennichite)
    );

    // The even game is written as PI; hands as P+/P- lines.
    let rec = read_usi("position startpos moves 7g7f 3c3d 8h2b+ 3a2b").expect("reads");
    let text = write_csa(&rec, None);
    assert!(
        text.contains("PI\n+\n+7776FU\n-3334FU\n+8822UM\n-3122GI\n"),
        "{text}"
    );
    let rec = read_usi("position sfen 4k4/9/4G4/9/9/9/9/9/4K4 w G2Plp 1").expect("reads");
    let text = write_csa(&rec, None);
    assert!(text.contains("P+00FU00FU00KI\nP-00FU00KY\n-\n"), "{text}");
    let back = read_csa(&text).expect("reads back");
    assert!(back.start.same_position(&rec.start));
}

#[test]
fn write_csa_keeps_an_illegal_move() {
    let rec = read_csa("PI\n+\n+7776FU\n-3334FU\n+7674FU\n%ILLEGAL_MOVE\n").expect("reads");
    let text = write_csa(&rec, None);
    let back = read_csa(&text).expect("reads back");
    assert_eq!(usi(&back), usi(&rec));
    assert_eq!(back.ending.map(|e| e.kind), Some(EndingKind::IllegalMove));
    // An illegal move with nothing on its origin square cannot be written as a CSA move.
    let rec = read_csa("PI\n+\n+5554FU\n").expect("reads");
    let text = write_csa(&rec, None);
    assert!(
        text.contains("'illegal move 5e5d (impossible) by black\n"),
        "{text}"
    );
}
