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
