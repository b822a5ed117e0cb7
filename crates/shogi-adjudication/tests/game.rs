//! The game itself: illegal-move policies (docs/rules.md section 1, every row of the shared
//! `moves.tsv` through a game), turn and game-over errors, no legal moves, `judge`.

mod common;

use common::{moves, mv, plain, play_quietly, pos};
use shogi_adjudication::{
    Evidence, Game, GameError, IllegalMovePolicy, OrdinaryResult, ResultCode, Ruleset, judge,
};
use shogi_rules::{Color, IllegalKind, IllegalMove};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared");

fn forfeit() -> Ruleset {
    Ruleset {
        illegal_move: IllegalMovePolicy::Forfeit,
        ..plain()
    }
}

/// One row of `moves.tsv`: `id sfen move expected note`, through a game under each policy.
fn check_move_row(row: &[&str]) {
    let [id, sfen, m, expected, ..] = row else {
        panic!("moves.tsv row: {row:?}")
    };
    let start = pos(sfen);
    let m = mv(m);
    let mut rejecting = Game::new(start.clone(), plain());
    let mut forfeiting = Game::new(start.clone(), forfeit());
    let mover = start.side_to_move();
    if *expected == "legal" {
        assert!(rejecting.play(m).is_ok(), "{id}");
        let out = forfeiting.play(m).unwrap();
        assert!(
            out.verdict
                .as_ref()
                .is_none_or(|v| v.code != ResultCode::IllegalMove),
            "{id}"
        );
        return;
    }
    match rejecting.play(m) {
        Err(GameError::Illegal(IllegalMove { mv: got, kind })) => {
            assert_eq!((got, kind.as_str()), (m, *expected), "{id}");
        }
        other => panic!("{id}: expected {expected}, got {other:?}"),
    }
    assert_eq!(rejecting.plies(), 0, "{id}: a rejected move is not played");
    let v = forfeiting.play(m).unwrap().verdict.expect("a forfeit");
    assert_eq!(
        (v.code, v.winner, v.ply),
        (ResultCode::IllegalMove, Some(!mover), 1),
        "{id}"
    );
    let Evidence::IllegalMove { kind, mv: got } = v.evidence else {
        panic!("{id}: {v:?}")
    };
    assert_eq!((kind.as_str(), got), (*expected, m), "{id}");
    assert_eq!(forfeiting.play(m), Err(GameError::GameOver), "{id}");
}

#[test]
fn every_moves_row_under_both_policies() {
    let path = format!("{SHARED}/rules/moves.tsv");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the shared fixture {path}: {e}"));
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\t').collect())
        .collect();
    assert!(rows.len() >= 18, "{path}: {} rows", rows.len());
    for row in &rows {
        check_move_row(row);
    }
}

#[test]
fn wrong_turn_follows_the_policy() {
    let m = mv("3c3d");
    let mut game = Game::startpos(plain());
    assert_eq!(
        game.play_as(Color::White, m),
        Err(GameError::Illegal(IllegalMove {
            mv: m,
            kind: IllegalKind::WrongTurn
        }))
    );
    assert_eq!(game.plies(), 0);
    let mut game = Game::startpos(forfeit());
    let v = game.play_as(Color::White, m).unwrap().verdict.unwrap();
    assert_eq!(
        (v.code, v.winner),
        (ResultCode::IllegalMove, Some(Color::Black))
    );
    assert_eq!(
        v.evidence,
        Evidence::IllegalMove {
            kind: IllegalKind::WrongTurn,
            mv: m
        }
    );
}

#[test]
fn errors_read_well() {
    assert_eq!(GameError::GameOver.to_string(), "the game is over");
    let e = GameError::Illegal(IllegalMove {
        mv: mv("7g7e"),
        kind: IllegalKind::Impossible,
    });
    assert_eq!(e.to_string(), "illegal move 7g7e: impossible");
    assert_eq!(
        GameError::NoDeclarationRule.to_string(),
        "declarations are not allowed by this ruleset"
    );
}

#[test]
fn checkmate_by_a_move_and_at_the_start() {
    let mut game = Game::new(pos("8k/9/7P1/9/9/9/9/9/K8 b G 1"), plain());
    let v = game.play(mv("G*2b")).unwrap().verdict.unwrap();
    assert_eq!(
        (v.code, v.winner, v.ply),
        (ResultCode::Checkmate, Some(Color::Black), 1)
    );
    assert_eq!(
        v.evidence,
        Evidence::Checkmate {
            mating_ply: 1,
            mating_move: Some(mv("G*2b"))
        }
    );
    // A game that starts mated is decided at ply 0.
    let game = Game::new(pos("8k/7G1/7P1/9/9/9/9/9/K8 w - 1"), plain());
    let v = game.verdict().unwrap();
    assert_eq!(
        (v.code, v.winner, v.ply),
        (ResultCode::Checkmate, Some(Color::Black), 0)
    );
    assert_eq!(
        v.evidence,
        Evidence::Checkmate {
            mating_ply: 0,
            mating_move: None
        }
    );
}

#[test]
fn no_legal_moves_without_check_loses() {
    // The White king on 1a cannot move (gold and knight guard its squares) and White has
    // nothing else: after any Black move, White is stalemated, which loses in shogi.
    let mut game = Game::new(pos("8k/6G2/9/7N1/9/9/9/9/K8 b - 1"), plain());
    let v = game.play(mv("9i9h")).unwrap().verdict.unwrap();
    assert_eq!(
        (v.code, v.winner, v.ply),
        (ResultCode::NoLegalMoves, Some(Color::Black), 1)
    );
    assert_eq!(v.evidence, Evidence::NoLegalMoves);
    assert_eq!(v.code.lishogi_status(), Some("stalemate"));
}

#[test]
fn judge_reports_moves_after_the_end_rejections_and_final_declarations() {
    let start = pos("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1");
    let shuffle = "5i5h 5a5b 5h5i 5b5a ".repeat(4);
    let j = judge(start.clone(), moves(&shuffle), false, &plain());
    assert_eq!((j.plies, j.moves_after_end), (12, 4));
    assert_eq!(j.verdict.map(|v| v.code), Some(ResultCode::Repetition));

    let j = judge(start.clone(), moves("7g7f 3c3d 7f7d 8c8d"), false, &plain());
    assert_eq!(
        j.rejected,
        Some(IllegalMove {
            mv: mv("7f7d"),
            kind: IllegalKind::Impossible
        })
    );
    assert_eq!((j.plies, j.verdict, j.moves_after_end), (2, None, 0));

    let j = judge(start, moves("7g7f 3c3d"), false, &plain());
    assert_eq!((j.plies, j.verdict, j.declaration), (2, None, None));

    let black_28 = pos("2SGS4/+B+RGKGLLRB/3G5/9/7pp/8k/9/9/9 w - 1");
    let j = judge(black_28.clone(), moves("1f1g"), true, &Ruleset::csa());
    let v = j.verdict.unwrap();
    assert_eq!(
        (v.code, v.winner, v.ply),
        (ResultCode::Declaration, Some(Color::Black), 1)
    );
    assert_eq!(j.declaration.map(|r| r.points), Some(28));
    // A refused final declaration (White, with nothing in its camp) is reported, and the game
    // stays open.
    let refusing = Ruleset {
        failed_declaration: shogi_adjudication::FailedDeclaration::Refuse,
        ..Ruleset::csa()
    };
    let j = judge(black_28, moves("1f1g 6c6d"), true, &refusing);
    assert_eq!(j.verdict, None);
    assert_eq!(
        j.declaration.map(|r| r.outcome),
        Some(shogi_adjudication::DeclarationOutcome::Refused)
    );
}

#[test]
fn history_positions_and_platform_results() {
    let mut game = Game::startpos(plain());
    play_quietly(&mut game, "7g7f 3c3d 8h2b+");
    assert_eq!(game.moves().collect::<Vec<_>>(), moves("7g7f 3c3d 8h2b+"));
    assert_eq!(game.gave_check(3), Some(false));
    assert_eq!(game.gave_check(4), None);
    let p2 = game.position_at(2).unwrap();
    let mut replay = shogi_rules::Position::startpos();
    for m in moves("7g7f 3c3d") {
        replay.play(m).unwrap();
    }
    assert!(p2.same_position(&replay));
    assert!(game.position_at(3).unwrap().same_position(game.position()));
    assert_eq!(game.position_at(4), None);
    assert_eq!(game.history().plies(), 3);

    let v = game
        .record_result(ResultCode::Resignation, Some(Color::Black), None)
        .unwrap();
    assert_eq!(v.to_string(), "resignation black wins at ply 3");
    assert_eq!(game.play(mv("3a2b")), Err(GameError::GameOver));
    assert_eq!(
        game.record_result(ResultCode::Abort, None, Some(OrdinaryResult::Replay)),
        Err(GameError::GameOver)
    );
}
