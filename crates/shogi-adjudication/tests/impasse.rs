//! Impasse through games (docs/rules.md section 4): the try rule, automatic and explicit
//! declarations with every condition, the handicap presets and credit, agreement counting.

mod common;

use common::{mv, plain, pos};
use shogi_adjudication::{
    AgreementTie, DeclarationCondition, DeclarationOutcome, DeclarationRule, DeclarationTrigger,
    Evidence, FailedDeclaration, Game, GameError, Handicap, IllegalMovePolicy, OrdinaryResult,
    ResultCode, Ruleset, evaluate_declaration, handicap_credit, is_try, judge,
};
use shogi_rules::{Color, IllegalKind, IllegalMove};

fn with_try(rs: Ruleset) -> Ruleset {
    Ruleset {
        try_rule: true,
        ..rs
    }
}

#[test]
fn try_rule_king_captures_onto_5a() {
    // The White gold on 5a checks the king; taking it lands on 5a, which nothing guards.
    let start = pos("4g4/4K4/9/9/9/9/9/9/4k4 b - 1");
    assert!(is_try(&start, mv("5b5a")));
    let mut game = Game::new(start, with_try(plain()));
    let v = game.play(mv("5b5a")).unwrap().verdict.expect("a try");
    assert_eq!(
        (v.code, v.winner, v.ply),
        (ResultCode::TryRule, Some(Color::Black), 1)
    );
    assert_eq!(v.evidence, Evidence::TryRule { mv: mv("5b5a") });
    assert_eq!(v.code.lishogi_status(), Some("tryRule"));
}

#[test]
fn try_rule_for_white_onto_5i() {
    let start = pos("4K4/9/9/9/9/9/9/4k4/9 w - 1");
    let v = judge(start, [mv("5h5i")], false, &with_try(plain()))
        .verdict
        .unwrap();
    assert_eq!(
        (v.code, v.winner),
        (ResultCode::TryRule, Some(Color::White))
    );
}

#[test]
fn try_rule_square_attacked_after_the_move() {
    // A rook along rank a guards 5a; a gold next to it guards it after the capture; a rook
    // below the king sees through the king's old square.
    let cases = [
        ("r8/4K4/9/9/9/9/9/9/4k4 b - 1", "5b5a"),
        ("4gg3/4K4/9/9/9/9/9/9/4k4 b - 1", "5b5a"),
        ("9/4K4/9/9/9/9/9/4r4/4k4 b - 1", "5b5a"),
    ];
    for (sfen, m) in cases {
        let start = pos(sfen);
        assert!(!is_try(&start, mv(m)), "{sfen}");
        let mut game = Game::new(start.clone(), with_try(plain()));
        assert_eq!(
            game.play(mv(m)),
            Err(GameError::Illegal(IllegalMove {
                mv: mv(m),
                kind: IllegalKind::LeavesKingInCheck
            })),
            "{sfen}"
        );
        assert!(!game.is_over());
        // Under forfeit it is an illegal move, not a try.
        let rs = with_try(Ruleset {
            illegal_move: IllegalMovePolicy::Forfeit,
            ..plain()
        });
        let v = judge(start, [mv(m)], false, &rs).verdict.unwrap();
        assert_eq!(
            (v.code, v.winner),
            (ResultCode::IllegalMove, Some(Color::White)),
            "{sfen}"
        );
    }
}

#[test]
fn try_rule_own_piece_on_the_square_and_other_pieces() {
    let start = pos("4G4/4K4/9/9/9/9/9/9/4k4 b - 1");
    assert!(!is_try(&start, mv("5b5a")));
    let mut game = Game::new(start, with_try(plain()));
    assert!(matches!(
        game.play(mv("5b5a")),
        Err(GameError::Illegal(IllegalMove {
            kind: IllegalKind::Impossible,
            ..
        }))
    ));
    // A gold reaching 5a is not a try.
    let start = pos("9/4G4/9/9/9/9/9/9/K3k4 b - 1");
    assert!(!is_try(&start, mv("5b5a")));
    let j = judge(start, [mv("5b5a")], false, &with_try(plain()));
    assert_eq!(j.verdict, None);
    // Without the rule, the king's capture on 5a is just a move.
    let j = judge(
        pos("4g4/4K4/9/9/9/9/9/9/4k4 b - 1"),
        [mv("5b5a")],
        false,
        &plain(),
    );
    assert_eq!(j.verdict, None);
}

const BLACK_28: &str = "2SGS4/+B+RGKGLLRB/3G5/9/7pp/8k/9/9/9";

#[test]
fn automatic_declaration_for_the_side_to_move() {
    // Black meets the 27-point conditions as soon as it is to move.
    let game = Game::new(pos(&format!("{BLACK_28} b - 1")), Ruleset::online());
    let v = game.verdict().expect("an automatic win at ply 0");
    assert_eq!(
        (v.code, v.winner, v.ply),
        (ResultCode::Declaration, Some(Color::Black), 0)
    );
    // And after White's move.
    let mut game = Game::new(pos(&format!("{BLACK_28} w - 1")), Ruleset::online());
    assert!(!game.is_over());
    let v = game
        .play(mv("1f1g"))
        .unwrap()
        .verdict
        .expect("an automatic win at ply 1");
    assert_eq!(
        (v.code, v.winner, v.ply),
        (ResultCode::Declaration, Some(Color::Black), 1)
    );
    let Evidence::Declaration(report) = &v.evidence else {
        panic!("{v:?}")
    };
    assert_eq!(
        (report.points, report.pieces_in_camp, report.outcome),
        (28, 12, DeclarationOutcome::Win)
    );
    // An explicit trigger waits for the request.
    let mut game = Game::new(pos(&format!("{BLACK_28} w - 1")), Ruleset::csa());
    assert_eq!(game.play(mv("1f1g")).unwrap().verdict, None);
    let d = game.declare(Color::Black, true).unwrap();
    assert_eq!(
        d.verdict.map(|v| (v.winner, v.ply)),
        Some((Some(Color::Black), 1))
    );
}

#[test]
fn automatic_declaration_awards_only_wins() {
    // 27 points for Black: a jishogi under jsa24, a loss under points27; neither is awarded.
    let sfen = "G3+R3S/GG5SS/GLPBKBPLS/9/9/7+p+p/7+pk/7+p+p/9 b - 1";
    for rule in [DeclarationRule::Points27, DeclarationRule::Jsa24] {
        let rs = Ruleset {
            declaration: Some(rule),
            declaration_trigger: DeclarationTrigger::Automatic,
            ..plain()
        };
        assert!(!Game::new(pos(sfen), rs).is_over(), "{rule:?}");
    }
    // 35 points: a win under jsa24 too.
    let sfen = "+R8/2+NK1+R+P+P1/+P+PPS+P4/6g+b1/7p1/3g5/3+b1g+p1+p/5p3/5k+p2 b G3S3N3L7Pl 1";
    let rs = Ruleset {
        declaration_trigger: DeclarationTrigger::Automatic,
        ..plain()
    };
    assert_eq!(
        Game::new(pos(sfen), rs).verdict().map(|v| v.winner),
        Some(Some(Color::Black))
    );
}

#[test]
fn declaration_conditions_in_a_game() {
    let black_to_move = pos(&format!("{BLACK_28} b - 1"));
    let white_to_move = pos(&format!("{BLACK_28} w - 1"));

    // Condition 1: on the opponent's turn, a loss (or a refusal).
    let mut game = Game::new(white_to_move.clone(), Ruleset::csa());
    let d = game.declare(Color::Black, true).unwrap();
    assert_eq!(
        d.report.failed_conditions(),
        vec![DeclarationCondition::DeclarersTurn]
    );
    assert_eq!(d.verdict.map(|v| v.winner), Some(Some(Color::White)));
    let rs = Ruleset {
        failed_declaration: FailedDeclaration::Refuse,
        ..Ruleset::csa()
    };
    let mut game = Game::new(white_to_move, rs);
    let d = game.declare(Color::Black, true).unwrap();
    assert_eq!(
        (d.report.outcome, d.verdict),
        (DeclarationOutcome::Refused, None)
    );
    assert!(!game.is_over());

    // Condition 5: no time left.
    let mut game = Game::new(black_to_move.clone(), Ruleset::csa());
    let d = game.declare(Color::Black, false).unwrap();
    assert_eq!(
        d.report.failed_conditions(),
        vec![DeclarationCondition::HasTime]
    );
    assert_eq!(
        d.verdict.map(|v| (v.code, v.winner)),
        Some((ResultCode::Declaration, Some(Color::White)))
    );
    // After the end, nothing more.
    assert_eq!(game.declare(Color::Black, true), Err(GameError::GameOver));

    // No declaration rule: the game refuses the request.
    let mut game = Game::new(
        black_to_move.clone(),
        Ruleset {
            declaration: None,
            ..Ruleset::csa()
        },
    );
    assert_eq!(
        game.declare(Color::Black, true),
        Err(GameError::NoDeclarationRule)
    );
    assert_eq!(game.declaration_report(Color::Black, true), None);

    // Every condition reported with its value.
    let r = evaluate_declaration(&black_to_move, None, DeclarationRule::Points27);
    assert!(r.conditions().iter().all(|&(_, met)| met));
    assert_eq!(
        (
            r.points_in_camp,
            r.points_in_hand,
            r.credit,
            r.points_to_win,
            r.points_missing
        ),
        (28, 0, 0, 28, 0)
    );
}

#[test]
fn jsa24_jishogi_takes_the_rulesets_result() {
    let sfen = "G3+R3S/GG5SS/GLPBKBPLS/9/9/7+p+p/7+pk/7+p+p/9 b - 1";
    for (jishogi, want) in [
        (OrdinaryResult::Replay, OrdinaryResult::Replay),
        (OrdinaryResult::Draw, OrdinaryResult::Draw),
    ] {
        let mut game = Game::new(
            pos(sfen),
            Ruleset {
                jishogi,
                handicap_credit: false,
                ..Ruleset::jsa()
            },
        );
        let d = game.declare(Color::Black, true).unwrap();
        assert_eq!(d.report.outcome, DeclarationOutcome::Jishogi);
        assert_eq!((d.report.points, d.report.points_missing), (27, 4));
        let v = d.verdict.unwrap();
        assert_eq!(
            (v.code, v.winner, v.ordinary_result),
            (ResultCode::Declaration, None, Some(want))
        );
    }
}

#[test]
fn handicap_presets_and_their_credit() {
    let credits = [1, 1, 5, 5, 6, 10, 12, 14, 16, 18];
    for (h, want) in Handicap::ALL.into_iter().zip(credits) {
        let start = h.start_position();
        assert_eq!(start.side_to_move(), Color::White, "{}", h.as_str());
        assert_eq!(handicap_credit(&start), want, "{}", h.as_str());
        assert_eq!(
            Game::new(start.clone(), Ruleset::csa()).handicap_credit(),
            want
        );
        let off = Game::new(
            start,
            Ruleset {
                handicap_credit: false,
                ..Ruleset::csa()
            },
        );
        assert_eq!(off.handicap_credit(), 0);
    }
    // What the giver then needs under the 27-point rule (docs/rules.md section 4).
    for (h, need) in [
        (Handicap::TwoPiece, 17),
        (Handicap::Rook, 22),
        (Handicap::FourPiece, 15),
    ] {
        assert_eq!(
            27 - handicap_credit(&h.start_position()),
            need,
            "{}",
            h.as_str()
        );
    }
    assert_eq!(handicap_credit(&shogi_rules::Position::startpos()), 0);
}

#[test]
fn agreement_count_in_a_game() {
    let two = Handicap::TwoPiece.start_position();
    let a = Game::new(two.clone(), Ruleset::jsa()).agreement_count();
    assert_eq!(
        (a.black, a.white, a.credit, a.threshold, a.winner),
        (27, 27, 10, 24, None)
    );
    let a = Game::new(two.clone(), Ruleset::amateur()).agreement_count();
    assert_eq!((a.threshold, a.winner), (27, Some(Color::White)));
    let rs = Ruleset {
        handicap_credit: false,
        agreement_tie: AgreementTie::Jishogi,
        ..Ruleset::jsa()
    };
    let a = Game::new(two, rs).agreement_count();
    assert_eq!((a.white, a.winner), (17, Some(Color::Black)));
    // The players agree: the platform records it.
    let mut game = Game::startpos(Ruleset::jsa());
    let v = game
        .record_result(ResultCode::Agreement, None, Some(OrdinaryResult::Replay))
        .unwrap()
        .clone();
    assert_eq!(
        (v.code, v.ply, v.evidence),
        (
            ResultCode::Agreement,
            0,
            Evidence::Reported {
                note: String::new()
            }
        )
    );
}
