//! The rules core against the shared rule fixtures and its own cases.

use shogi_rules::{Color, IllegalKind, Move, PerftMode, Position, SfenErrorReason, Square, perft};
use std::path::PathBuf;

fn shared(rel: &str) -> PathBuf {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")).join(rel);
    assert!(
        p.exists(),
        "{} is missing: the tests read ../shared beside the checkout",
        p.display()
    );
    p
}

fn pos(sfen: &str) -> Position {
    Position::from_sfen(sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"))
}

/// One fixture row: the move is legal, or illegal with `expected` as its kind.
fn check(sfen: &str, usi: &str, expected: &str) {
    let p = pos(sfen);
    let mv = Move::from_usi(usi).unwrap();
    let listed = p.legal_moves().contains(&mv);
    match p.check_move(mv) {
        Ok(()) => {
            assert_eq!(expected, "legal", "{sfen} {usi}: judged legal");
            assert!(listed, "{sfen} {usi}: legal but not generated");
        }
        Err(e) => {
            assert_eq!(e.kind.as_str(), expected, "{sfen} {usi}");
            assert!(!listed, "{sfen} {usi}: illegal but generated");
        }
    }
}

#[test]
fn shared_move_fixtures() {
    let text = std::fs::read_to_string(shared("rules/moves.tsv")).unwrap();
    let mut n = 0;
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        check(cols[1], cols[2], cols[3]);
        n += 1;
    }
    assert!(n >= 18, "only {n} rows read");
}

#[test]
fn pawn_drop_mate_needs_the_pin() {
    // docs/rules.md section 1: without the rook on 9a the gold may capture and the drop is legal.
    check("R6gk/9/6S1L/9/9/9/9/9/4K4 b P 1", "P*1b", "pawn_drop_mate");
    check("7gk/9/6S1L/9/9/9/9/9/4K4 b P 1", "P*1b", "legal");
}

#[test]
fn haitaka_pawn_drop_mate_position() {
    let p =
        pos("1nk1S2+L1/4pp1+SP/lG1+R2+R1+p/1p2B4/pNp2gPp1/PK2G4/4P1N+BG/L5p2/2+n+p2L2 b 2S3P2p 1");
    assert_eq!(p.legal_moves().len(), 152);
    assert_eq!(p.count_legal_moves(), 152);
    check(&p.to_sfen(), "P*7b", "pawn_drop_mate");
}

#[test]
fn other_illegal_kinds() {
    // A pawn-drop mate that the king escapes by capturing is legal.
    check("8k/9/9/9/9/9/9/9/4K4 b P 1", "P*1b", "legal");
    // Mate by dropping a lance is legal.
    check("7gk/9/6S2/9/9/9/9/9/4K4 b L 1", "L*1b", "legal");
    // Knight declining promotion on the second rank is a dead piece.
    check("4k4/9/9/2N6/9/9/9/9/4K4 b - 1", "7d8b", "dead_piece");
    check("4k4/9/9/2N6/9/9/9/9/4K4 b - 1", "7d8b+", "legal");
    // Silver may decline promotion anywhere.
    check("4k4/9/2S6/9/9/9/9/9/4K4 b - 1", "7c7b", "legal");
    // Promotion outside the zone, gold promotion, capture of own piece.
    check("4k4/9/9/9/9/2S6/9/9/4K4 b - 1", "7f7e+", "impossible");
    check("4k4/9/9/G8/9/9/9/9/4K4 b - 1", "9d9c+", "impossible");
    check("4k4/9/9/9/9/9/9/4G4/4K4 b - 1", "5i5h", "impossible");
    // Moving out of the zone may promote.
    check("4k4/9/1B7/9/9/9/9/9/4K4 b - 1", "8c6e+", "legal");
    // The enemy king is never captured, even in a problem position that leaves it in check.
    let p = pos("4k4/4R4/9/9/9/9/9/9/4K4 b - 1");
    assert!(p.opponent_in_check());
    check("4k4/4R4/9/9/9/9/9/9/4K4 b - 1", "5b5a", "impossible");
    assert!(
        p.legal_moves()
            .iter()
            .all(|m| Some(m.to()) != p.king_square(Color::White))
    );
    // Bishop and rook non-promotions are legal.
    check("4k4/9/9/9/9/2B6/9/9/4K4 b - 1", "7f4c", "legal");
    check("4k4/9/9/9/9/2B6/9/9/4K4 b - 1", "7f4c+", "legal");
    // Nothing on the origin square; a move of the opponent's piece.
    check("4k4/9/9/9/9/9/9/9/4K4 b - 1", "5e5d", "impossible");
    check("4k4/9/9/9/9/9/9/9/4K4 b - 1", "5a5b", "impossible");
    // Knight drop on the last two ranks.
    check("4k4/9/9/9/9/9/9/9/4K4 w n 1", "N*1h", "dead_piece");
    check("4k4/9/9/9/9/9/9/9/4K4 w n 1", "N*1g", "legal");
    // Capturing the checker with a pinned piece is illegal; blocking by drop is legal.
    check("4k4/9/9/9/4r4/9/9/9/4K4 b G 1", "G*5h", "legal");
    check(
        "4k4/9/9/9/4r4/9/9/9/4K4 b G 1",
        "G*4h",
        "leaves_king_in_check",
    );
}

#[test]
fn wrong_turn() {
    let p = Position::startpos();
    let e = p
        .check_move_as(Color::White, Move::from_usi("3c3d").unwrap())
        .unwrap_err();
    assert_eq!(e.kind, IllegalKind::WrongTurn);
    assert!(
        p.check_move_as(Color::Black, Move::from_usi("7g7f").unwrap())
            .is_ok()
    );
}

#[test]
fn play_leaves_position_unchanged_on_error() {
    let mut p = Position::startpos();
    let before = p.clone();
    assert!(p.play(Move::from_usi("7g7e").unwrap()).is_err());
    assert_eq!(p, before);
}

#[test]
fn startpos_perft_shallow() {
    let p = Position::startpos();
    for (d, n) in [(1, 30), (2, 900), (3, 25470)] {
        assert_eq!(perft(&p, d, PerftMode::Bulk), n);
        assert_eq!(perft(&p, d, PerftMode::Full), n);
    }
}

#[test]
fn check_detection() {
    let p = pos("4k4/9/9/9/9/9/9/4r4/4K3L b - 1");
    assert!(p.in_check());
    assert_eq!(p.checkers().count(), 1);
    assert!(p.checkers().contains(Square::from_usi("5h").unwrap()));
    let q = Position::startpos();
    assert!(!q.in_check());
    // A discovered check: the lance behind the silver.
    let r = pos("4k4/9/9/9/9/9/4S4/9/4L3K b - 1");
    assert!(r.gives_check(Move::from_usi("5g4f").unwrap()));
    assert!(!r.gives_check(Move::from_usi("1i1h").unwrap()));
    let mate = pos("4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1");
    assert!(mate.is_checkmate());
}

fn sfen_err(text: &str) -> (SfenErrorReason, usize) {
    let e = Position::from_sfen(text).unwrap_err();
    (e.reason, e.column)
}

#[test]
fn sfen_errors_say_what_and_where() {
    use SfenErrorReason as R;
    let cases: &[(&str, SfenErrorReason, usize)] = &[
        (
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b -",
            R::FieldCount,
            61,
        ),
        (
            "lnsgkgsnl/1r5b1/ppppxpppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
            R::UnknownLetter,
            20,
        ),
        (
            "lnsgkgsnl/1r5b1/pppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
            R::RankWidth,
            25,
        ),
        (
            "lnsgkgsnl/1r5b1/pppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
            R::RankWidth,
            24,
        ),
        (
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1 b - 1",
            R::RankCount,
            47,
        ),
        (
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b P 1",
            R::TooManyPieces,
            60,
        ),
        (
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b R 1",
            R::TooManyPieces,
            60,
        ),
        (
            "lnsg1gsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
            R::KingMissing,
            0,
        ),
        (
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSKKGSNL b - 1",
            R::KingDoubled,
            52,
        ),
        ("4k4/9/9/9/9/9/9/9/4K4 b 19P 1", R::TooManyPieces, 24),
        ("4k4/9/9/9/9/9/9/9/4K4 b 1P 1", R::BadHand, 24),
        ("4k4/9/9/9/9/9/9/9/4K4 b PP 1", R::BadHand, 25),
        ("4k4/9/9/9/9/9/9/9/4K4 b 3R 1", R::TooManyPieces, 24),
        ("4k+G3/9/9/9/9/9/9/9/4K4 b - 1", R::CannotPromote, 2),
        ("4k+K3/9/9/9/9/9/9/9/4K4 b - 1", R::CannotPromote, 2),
        ("P3k4/9/9/9/9/9/9/9/4K4 b - 1", R::DeadPiece, 0),
        ("4k4/N8/9/9/9/9/9/9/4K4 b - 1", R::DeadPiece, 4),
        ("4k4/9/9/9/9/9/9/9/4K3l b - 1", R::DeadPiece, 21),
        ("4k4/9/9/9/4P4/4P4/9/9/4K4 b - 1", R::TwoPawns, 15),
        ("4k4/9/9/9/9/9/9/9/4K4 x - 1", R::BadSide, 22),
        ("4k4/9/9/9/9/9/9/9/4K4 b - 0", R::BadMoveNumber, 26),
        ("4k4/9/9/9/9/9/9/9/4K4 b - x", R::BadMoveNumber, 26),
    ];
    for &(text, reason, column) in cases {
        assert_eq!(sfen_err(text), (reason, column), "{text}");
    }
    // A tokin does not count for two pawns; promoted pieces beyond a set do.
    assert!(Position::from_sfen("4k4/9/9/9/4P4/4+P4/9/9/4K4 b - 1").is_ok());
    assert_eq!(sfen_err("4k4/9/9/9/9/9/9/9/4K4 b 18P+P 1").0, R::BadHand,);
}

#[test]
fn sfen_round_trips() {
    for s in [
        shogi_rules::STARTPOS,
        "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1",
        "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
        "4k4/9/9/9/9/9/9/9/4K4 b - 123",
    ] {
        assert_eq!(pos(s).to_sfen(), s);
    }
    // Hands in another order parse to the same position and format canonically.
    let a = pos("l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1");
    assert_eq!(
        a.to_sfen(),
        "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1"
    );
}

#[test]
fn usi_parse_errors() {
    for (text, column) in [
        ("7g7", 3),
        ("0g7f", 0),
        ("7g7j", 2),
        ("K*5e", 0),
        ("p*5e", 0),
        ("7g7f=", 4),
        ("7g7g", 2),
        ("P*5e+", 4),
    ] {
        let e = Move::from_usi(text).unwrap_err();
        assert_eq!(e.column, column, "{text}: {e}");
    }
    for text in ["7g7f", "8h2b+", "P*5e", "R*1a"] {
        assert_eq!(Move::from_usi(text).unwrap().to_string(), text);
    }
}

#[test]
fn same_position_ignores_move_number_not_hands() {
    let a = pos("4k4/9/9/9/9/9/9/9/4K4 b P 1");
    let b = pos("4k4/9/9/9/9/9/9/9/4K4 b P 7");
    let c = pos("4k4/9/9/9/9/9/9/9/4K4 b 2P 1");
    let d = pos("4k4/9/9/9/9/9/9/9/4K4 w P 1");
    assert!(a.same_position(&b));
    assert_eq!(a.hash(), b.hash());
    assert!(!a.same_position(&c));
    assert_ne!(a.hash(), c.hash());
    assert!(!a.same_position(&d));
    assert_ne!(a.hash(), d.hash());
}

#[test]
fn problem_positions_may_lack_a_king() {
    // A tsume problem: Black (the attacker) has no king.
    let sfen = "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l16p 1";
    assert_eq!(
        Position::from_sfen(sfen).unwrap_err().reason,
        SfenErrorReason::KingMissing
    );
    let p = Position::from_sfen_problem(sfen).unwrap();
    assert_eq!(p.king_square(Color::Black), None);
    assert!(!p.in_check());
    // G*5b mates; the king cannot take the protected gold.
    let mut q = p.clone();
    q.play(Move::from_usi("G*5b").unwrap()).unwrap();
    assert!(q.is_checkmate());
    // The defender may move freely: nothing of Black's can be captured as a king.
    let r = Position::from_sfen_problem("4k4/9/9/9/9/9/9/9/9 w - 1").unwrap();
    assert_eq!(r.legal_moves().len(), 5);
    // 九歩: nine White pawns on one file, one on its last rank, are accepted in a problem.
    let nine = "7pk/7p1/7p1/7p1/7p1/7p1/7p1/7p1/7p1 b 2R4L4s4n 1";
    // Strictly, the file's second pawn is the first error met in reading order.
    assert_eq!(
        Position::from_sfen(nine).unwrap_err().reason,
        SfenErrorReason::TwoPawns
    );
    let n = Position::from_sfen_problem(nine).unwrap();
    assert_eq!(n.to_sfen(), nine);
    assert!(n.legal_moves().iter().all(|m| m.is_drop()));
    // Still rejected in a problem: a doubled king, too many pieces.
    assert_eq!(
        Position::from_sfen_problem("4k4/9/9/9/9/9/9/9/3KK4 b - 1")
            .unwrap_err()
            .reason,
        SfenErrorReason::KingDoubled
    );
}

#[test]
fn adjacent_kings_never_capture() {
    // The White king checks the Black king; the bishop may not "capture the checker".
    let p = pos("9/1+r7/3b2+R2/9/9/9/9/6k2/5BK2 b - 1");
    assert!(p.in_check());
    check(&p.to_sfen(), "4i3h", "impossible");
    for &mv in p.legal_moves().iter() {
        assert_ne!(Some(mv.to()), p.king_square(Color::White), "{mv}");
        let mut q = p.clone();
        q.play_unchecked(mv);
        assert_eq!(q.hash(), q.recompute_hash());
    }
    let q = pos("9/9/9/9/9/9/9/6k2/6K2 b - 1");
    assert!(
        q.legal_moves()
            .iter()
            .all(|m| Some(m.to()) != q.king_square(Color::White))
    );
}
