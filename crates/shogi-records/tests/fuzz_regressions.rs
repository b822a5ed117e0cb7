//! Inputs the fuzzers found, kept as tests: what reads must write and read back.

#[test]
fn a_move_by_the_side_not_to_move_with_its_time_writes_and_reads_back() {
    let text = "V2.2\nPI\n+\n'2726FU,T102\n-8676HI,T132\n";
    let rec = shogi_records::read_csa(text).expect("reads");
    let written = shogi_records::write_csa(&rec, None);
    let back = shogi_records::read_csa(&written)
        .unwrap_or_else(|e| panic!("written CSA reads back: {e}\n{written}"));
    // The move CSA cannot name (by the side not to move) is written as a comment, its time
    // with it, so what is read back has the moves before it.
    assert_eq!(rec.moves.len(), 1);
    assert!(rec.moves[0].legal.is_err());
    assert!(back.moves.is_empty(), "{written}");
    assert!(
        written.contains("'illegal move 8f7f (wrong_turn) by white, 132000 ms"),
        "{written}"
    );
}

#[test]
fn a_move_from_a_square_to_itself_is_not_written_as_usi() {
    // CSA keeps `+8282UM` as an impossible move; USI has no way to say it.
    let rec = shogi_records::read_csa("V2.2\nPI\n+\n+7776FU\n-3334FU\n+8282UM\n").expect("reads");
    assert_eq!(rec.moves.len(), 3);
    let usi = shogi_records::write(
        &rec,
        shogi_records::Format::Usi,
        shogi_records::Encoding::Utf8,
    );
    assert!(
        matches!(
            usi,
            Err(shogi_records::WriteError::Unwritable { ply: 3, .. })
        ),
        "{usi:?}"
    );
    for format in shogi_records::Format::ALL {
        if let Ok(bytes) = shogi_records::write(&rec, format, shogi_records::Encoding::Utf8) {
            shogi_records::read_as(format, &bytes)
                .unwrap_or_else(|e| panic!("{format:?} reads back: {e}"));
        }
    }
}
