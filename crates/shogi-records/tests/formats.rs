//! The writers and the JKF reader on small records whose every field is known: one
//! `check(input, expected)` a case.

use shogi_records::{
    Encoding, Ending, EndingKind, Format, MoveTime, Record, read_as, read_jkf, read_kif, write,
};
use shogi_rules::{Move, Position};

fn usi(moves: &[shogi_records::RecordMove]) -> String {
    moves
        .iter()
        .map(|m| m.mv.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// An export as a game log makes it: moves, times, a comment and an ending, in every format.
#[test]
fn a_record_built_from_moves_is_written_in_every_format_with_its_ending() {
    let moves: Vec<Move> = ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"]
        .iter()
        .map(|m| Move::from_usi(m).expect("usi"))
        .collect();
    let mut rec = Record::from_moves(Format::Csa, Position::startpos(), &moves);
    assert!(rec.moves.iter().all(|m| m.legal.is_ok()));
    rec.moves[0].time = Some(MoveTime {
        spent_ms: 3000,
        total_ms: None,
    });
    rec.moves[2].comment = Some("bishop trade".into());
    rec.ending = Some(Ending::new(EndingKind::Resign));
    let expect: [(Format, &[&str]); 5] = [
        (
            Format::Csa,
            &["+7776FU\nT3\n", "+8822UM\n'*bishop trade\n", "%TORYO\n"],
        ),
        (
            Format::Kif,
            &[
                "   1 ７六歩(77)",
                "( 0:03/00:00:03)",
                "   3 ２二角成(88)\n*bishop trade\n",
                "   6 投了\nまで5手で先手の勝ち\n",
            ],
        ),
        (
            Format::Ki2,
            &[
                "▲７六歩    △３四歩    ▲２二角成\n*bishop trade\n△同銀      ▲４五角\n",
                "まで5手で先手の勝ち\n",
            ],
        ),
        (
            Format::Jkf,
            &[
                "\"special\":\"TORYO\"",
                "\"now\":{\"m\":0,\"s\":3}",
                "\"capture\":\"KA\"",
            ],
        ),
        (
            Format::Usi,
            &["position startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e\n"],
        ),
    ];
    for (f, parts) in expect {
        let bytes = write(&rec, f, Encoding::Utf8).expect("writes");
        let text = String::from_utf8(bytes.clone()).expect("utf-8");
        for p in parts {
            assert!(text.contains(p), "{}: expected {p:?} in\n{text}", f.name());
        }
        let back = read_as(f, &bytes).expect("reads back");
        assert_eq!(usi(&back.moves), usi(&rec.moves), "{}", f.name());
        // A USI `position` command has no ending (issue #22, class 1).
        let ending = (f != Format::Usi).then_some(EndingKind::Resign);
        assert_eq!(back.ending.map(|e| e.kind), ending, "{}", f.name());
    }
}

#[test]
fn each_ending_is_written_the_way_each_format_writes_it() {
    let moves = [Move::from_usi("7g7f").expect("usi")];
    let cases: &[(EndingKind, &str, &str)] = &[
        (EndingKind::Resign, "%TORYO", "投了"),
        (EndingKind::Sennichite, "%SENNICHITE", "千日手"),
        (EndingKind::Kachi, "%KACHI", "入玉勝ち"),
        (EndingKind::Tsumi, "%TSUMI", "詰み"),
        (EndingKind::Jishogi, "%JISHOGI", "持将棋"),
        (EndingKind::MaxMoves, "%MAX_MOVES", "持将棋"),
        (EndingKind::IllegalMove, "%ILLEGAL_MOVE", "反則負け"),
        (EndingKind::TimeUp, "%TIME_UP", "切れ負け"),
        (EndingKind::Chudan, "%CHUDAN", "中断"),
    ];
    for (kind, csa, kif) in cases {
        let mut rec = Record::from_moves(Format::Csa, Position::startpos(), &moves);
        rec.ending = Some(Ending::new(kind.clone()));
        let c = String::from_utf8(write(&rec, Format::Csa, Encoding::Utf8).unwrap()).unwrap();
        assert!(c.ends_with(&format!("{csa}\n")), "{kind:?}: {c}");
        let k = String::from_utf8(write(&rec, Format::Kif, Encoding::Utf8).unwrap()).unwrap();
        assert!(
            k.contains(&format!("   2 {kif}\nまで1手で")),
            "{kind:?}: {k}"
        );
        let j = String::from_utf8(write(&rec, Format::Jkf, Encoding::Utf8).unwrap()).unwrap();
        // JKF says a move cap as json-kifu-format's schema does (issue #22, class 8).
        let special = if *kind == EndingKind::MaxMoves {
            "JISHOGI"
        } else {
            csa.trim_start_matches('%')
        };
        assert!(
            j.contains(&format!("\"special\":\"{special}\"")),
            "{kind:?}: {j}"
        );
    }
}

#[test]
fn jkf_with_times_comments_forks_and_a_special_is_read() {
    let text = r#"{
      "header": {"先手": "A", "後手": "B"},
      "initial": {"preset": "HIRATE"},
      "moves": [
        {"comments": ["opening"]},
        {"move": {"color": 0, "from": {"x": 7, "y": 7}, "to": {"x": 7, "y": 6}, "piece": "FU"},
         "time": {"now": {"m": 0, "s": 5}, "total": {"h": 0, "m": 0, "s": 5}}},
        {"move": {"color": 1, "from": {"x": 3, "y": 3}, "to": {"x": 3, "y": 4}, "piece": "FU"},
         "comments": ["usual"],
         "forks": [[{"move": {"color": 1, "from": {"x": 8, "y": 3}, "to": {"x": 8, "y": 4}, "piece": "FU"}},
                    {"special": "TORYO"}]]},
        {"move": {"color": 0, "from": {"x": 8, "y": 8}, "to": {"x": 2, "y": 2}, "piece": "KA", "promote": true}},
        {"move": {"color": 1, "from": {"x": 3, "y": 1}, "to": {"x": 2, "y": 2}, "piece": "GI", "same": true}},
        {"special": "CHUDAN"}
      ]
    }"#;
    let rec = read_jkf(text.as_bytes()).expect("reads");
    assert_eq!(usi(&rec.moves), "7g7f 3c3d 8h2b+ 3a2b");
    assert_eq!(rec.comment.as_deref(), Some("opening"));
    assert_eq!(rec.moves[1].comment.as_deref(), Some("usual"));
    assert_eq!(
        rec.moves[0].time,
        Some(MoveTime {
            spent_ms: 5000,
            total_ms: Some(5000)
        })
    );
    assert_eq!(
        rec.ending.as_ref().map(|e| &e.kind),
        Some(&EndingKind::Chudan)
    );
    assert_eq!(rec.header("先手"), Some("A"));
    assert_eq!(rec.variations.len(), 1);
    let v = &rec.variations[0];
    assert_eq!((v.parent, v.ply, usi(&v.moves)), (0, 2, "8c8d".to_string()));
    assert_eq!(
        v.ending.as_ref().map(|e| &e.kind),
        Some(&EndingKind::Resign)
    );

    // Errors name the JSON path.
    let bad = text.replace("\"x\": 8, \"y\": 8", "\"x\": 10, \"y\": 8");
    let e = read_jkf(bad.as_bytes()).expect_err("bad square");
    assert_eq!(e.token, "moves[3].move.from", "{e}");
    let e = read_jkf(b"{\"moves\": [}").expect_err("bad json");
    assert!(e.reason.contains("invalid json"), "{e}");
}

#[test]
fn kif_variations_are_read_into_the_tree_and_written_back() {
    let text = "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 ３四歩(33)+\n   3 ２六歩(27)\n   4 投了\n\n変化：2手\n   2 ８四歩(83)\n   3 ２六歩(27)+\n\n変化：3手\n   3 ６八銀(79)\n\n変化：2手\n   2 同　歩(73)\n";
    let rec = read_kif(text.as_bytes()).expect("reads");
    assert_eq!(usi(&rec.moves), "7g7f 3c3d 2g2f");
    let vs: Vec<(usize, u32, String)> = rec
        .variations
        .iter()
        .map(|v| (v.parent, v.ply, usi(&v.moves)))
        .collect();
    // The third block replaces ply 3 of the latest line with a ply 3 (the first variation);
    // the fourth is a second alternative to ply 2 of the main line, its 同 the main line's 7f
    // (an impossible pawn move, kept for the adjudicator as any illegal move is).
    assert_eq!(
        vs,
        [
            (0, 2, "8c8d 2g2f".to_string()),
            (1, 3, "7i6h".to_string()),
            (0, 2, "7c7f".to_string())
        ]
    );
    let back = read_kif(&write(&rec, Format::Kif, Encoding::Utf8).unwrap()).expect("reads back");
    let mut a: Vec<_> = vs.iter().map(|v| (v.1, v.2.clone())).collect();
    let mut b: Vec<_> = back
        .variations
        .iter()
        .map(|v| (v.ply, usi(&v.moves)))
        .collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    let jkf = read_jkf(&write(&rec, Format::Jkf, Encoding::Utf8).unwrap()).expect("jkf");
    assert_eq!(jkf.variations.len(), 3);
}

#[test]
fn a_bad_variation_is_reported_and_the_main_line_kept() {
    let text = "   1 ７六歩(77)\n   2 ３四歩(33)\n\n変化：2手\n   5 ８四歩(83)\n";
    let rec = read_kif(text.as_bytes()).expect("reads");
    assert_eq!(rec.moves.len(), 2);
    let e = rec.header("variation_error").expect("reported");
    assert!(e.contains("line 5") && e.contains("move number 5"), "{e}");
}

#[test]
fn shift_jis_output_names_a_character_it_cannot_encode() {
    let mut rec = Record::from_moves(Format::Kif, Position::startpos(), &[]);
    rec.comment = Some("ok 🙂".into());
    match write(&rec, Format::Kif, Encoding::ShiftJis) {
        Err(shogi_records::WriteError::Unencodable { token, .. }) => assert_eq!(token, "🙂"),
        other => panic!("expected an unencodable error, got {other:?}"),
    }
}
