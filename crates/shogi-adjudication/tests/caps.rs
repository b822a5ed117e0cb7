//! Move caps (docs/rules.md section 5): the plain cap, a mate on the cap ply, the CSA shogi-server's
//! early cap, and the JSA 500-move rule with its check extension, played out for real.

mod common;

use common::{moves, mv, play_all, play_quietly, pos};
use shogi_adjudication::{
    CapMode, DeclarationCondition, DeclarationOutcome, Evidence, Game, IllegalMovePolicy,
    OrdinaryResult, ResultCode, Ruleset,
};
use shogi_rules::{Color, Move, PieceKind, Square};

/// White king on 1a, Black dragon on 3c and pawn on 1d, a gold in Black's hand; Black king on
/// 9i. A White gold wanders in files 6-9 ranks a-c and a Black gold in files 6-9 ranks f-h, far
/// from everything else, to use up plies without a check or a repetition. White moves
/// first, so Black makes the even plies, ply 500 among them.
const ARENA: &str = "8k/2g6/6+R2/8P/9/9/2G6/9/K8 w G 1";

/// The wandering golds' tours: eleven squares for White's, twelve for Black's, each step a
/// legal gold move. Coprime lengths make the pair of squares repeat only every 132 moves, so
/// 250 moves each never bring a position back a third time.
const WHITE_TOUR: [&str; 11] = [
    "6a", "7a", "8a", "9a", "9b", "8c", "8b", "7c", "7b", "6c", "6b",
];
const BLACK_TOUR: [&str; 12] = [
    "6h", "7h", "8h", "9h", "9g", "9f", "8f", "8g", "7f", "7g", "6f", "6g",
];

fn tour(color: Color) -> Vec<Square> {
    let squares: &[&str] = match color {
        Color::White => &WHITE_TOUR,
        Color::Black => &BLACK_TOUR,
    };
    squares
        .iter()
        .map(|s| Square::from_usi(s).unwrap())
        .collect()
}

/// The next step of the side to move's wandering gold.
fn wander_move(game: &Game) -> Move {
    let side = game.side_to_move();
    let tour = tour(side);
    let pos = game.position();
    let (i, from) = tour
        .iter()
        .enumerate()
        .find(|(_, sq)| {
            pos.piece_at(**sq)
                .is_some_and(|p| p.color == side && p.kind == PieceKind::Gold)
        })
        .map(|(i, sq)| (i, *sq))
        .expect("the wandering gold is on its tour");
    Move::Normal {
        from,
        to: tour[(i + 1) % tour.len()],
        promote: false,
    }
}

/// Plays `plies` wandering moves, none of which may end the game or give check.
fn wander(game: &mut Game, plies: u32) {
    for _ in 0..plies {
        let out = game.play(wander_move(game)).unwrap();
        assert_eq!(
            out.verdict, None,
            "wandering ply {} ended the game",
            out.ply
        );
        assert!(!out.gave_check, "wandering ply {} gave check", out.ply);
        assert!(
            out.warnings.is_empty(),
            "wandering ply {}: {:?}",
            out.ply,
            out.warnings
        );
    }
}

/// A game in the arena that has reached ply 499, Black to play ply 500.
fn at_499(ruleset: Ruleset) -> Game {
    let mut game = Game::new(
        pos(ARENA),
        Ruleset {
            illegal_move: IllegalMovePolicy::Reject,
            ..ruleset
        },
    );
    wander(&mut game, 499);
    assert_eq!((game.plies(), game.side_to_move()), (499, Color::Black));
    game
}

/// A Black gold move on its tour: the ply that does nothing.
fn quiet_black(game: &Game) -> Move {
    assert_eq!(game.side_to_move(), Color::Black);
    wander_move(game)
}

fn max_moves(cap: u32, extended_by_checks: bool) -> Evidence {
    Evidence::MaxMoves {
        cap,
        extended_by_checks,
    }
}

#[test]
fn jsa500_no_check_on_ply_500_is_jishogi_there() {
    let mut game = at_499(Ruleset::jsa());
    let q = quiet_black(&game);
    let v = game.play(q).unwrap().verdict.expect("jishogi at ply 500");
    assert_eq!((v.code, v.ply, v.winner), (ResultCode::MaxMoves, 500, None));
    assert_eq!(v.ordinary_result, Some(OrdinaryResult::Replay));
    assert_eq!(v.evidence, max_moves(500, false));
}

#[test]
fn jsa500_check_on_ply_500_extends_and_a_broken_streak_ends_it() {
    let mut game = at_499(Ruleset::jsa());
    // Ply 500 checks, ply 501 escapes (no check, but ply 500 did): play goes on.
    play_quietly(&mut game, "3c3a 1a1b");
    assert_eq!(game.gave_check(500), Some(true));
    // Ply 502 does not check and neither did 501: jishogi at 502, extended.
    let q = quiet_black(&game);
    let v = game.play(q).unwrap().verdict.expect("jishogi at ply 502");
    assert_eq!((v.code, v.ply, v.winner), (ResultCode::MaxMoves, 502, None));
    assert_eq!(v.evidence, max_moves(500, true));
    assert_eq!(v.ordinary_result, Some(OrdinaryResult::Replay));
}

#[test]
fn jsa500_extension_ending_in_mate() {
    let mut game = at_499(Ruleset::jsa());
    play_quietly(&mut game, "3c3a 1a1b");
    let out = game.play(mv("G*1c")).unwrap();
    let v = out.verdict.expect("mate at ply 502");
    assert_eq!(
        (v.code, v.ply, v.winner),
        (ResultCode::Checkmate, 502, Some(Color::Black))
    );
    assert_eq!(
        v.evidence,
        Evidence::Checkmate {
            mating_ply: 502,
            mating_move: Some(mv("G*1c"))
        }
    );
}

#[test]
fn jsa500_extension_ending_in_perpetual_check() {
    let mut game = at_499(Ruleset::jsa());
    // The dragon checks from 3a and 3b in turn; the king shuttles between 1a and 1b. The
    // position after ply 500 recurs at 504, 508 and 512.
    play_quietly(&mut game, "3c3a 1a1b 3a3b 1b1a");
    let outs = play_all(
        &mut game,
        &format!("{}3b3a", "3b3a 1a1b 3a3b 1b1a ".repeat(2)),
    );
    let (last, before) = outs.split_last().unwrap();
    assert!(before.iter().all(|o| o.verdict.is_none()));
    let v = last.verdict.clone().expect("perpetual check at ply 512");
    assert_eq!(
        (v.code, v.winner),
        (ResultCode::PerpetualCheck, Some(Color::White))
    );
    let Evidence::PerpetualCheck {
        plies,
        checker,
        check_plies,
    } = v.evidence
    else {
        panic!("{v:?}")
    };
    assert_eq!(
        (checker, v.ply, plies),
        (Color::Black, 512, [500, 504, 508, 512])
    );
    assert_eq!(check_plies, vec![502, 504, 506, 508, 510, 512]);
    assert!(
        check_plies
            .iter()
            .all(|&p| game.gave_check(p) == Some(true))
    );
}

#[test]
fn jsa500_no_declaration_from_ply_500_on() {
    let mut game = at_499(Ruleset::jsa());
    let r = game.declaration_report(Color::Black, true).unwrap();
    assert!(r.met(DeclarationCondition::BeforeMoveCap));
    play_quietly(&mut game, "3c3a");
    let d = game.declare(Color::White, true).unwrap();
    assert!(!d.report.met(DeclarationCondition::BeforeMoveCap));
    assert_eq!(d.report.outcome, DeclarationOutcome::Loss);
    assert_eq!(
        d.verdict.map(|v| (v.code, v.winner, v.ply)),
        Some((ResultCode::Declaration, Some(Color::Black), 500))
    );
}

#[test]
fn a_mate_on_the_cap_ply_wins() {
    for ruleset in [
        Ruleset::jsa(),
        Ruleset {
            move_cap: Some(500),
            ..Ruleset::csa()
        },
    ] {
        let mut game = at_499(ruleset);
        let v = game
            .play(mv("G*2b"))
            .unwrap()
            .verdict
            .expect("mate at ply 500");
        assert_eq!(
            (v.code, v.ply, v.winner),
            (ResultCode::Checkmate, 500, Some(Color::Black))
        );
    }
}

#[test]
fn the_csa_server_cap_fires_before_it_sees_the_mate() {
    let rs = Ruleset {
        move_cap: Some(500),
        ..Ruleset::floodgate()
    };
    let mut game = at_499(rs);
    let v = game
        .play(mv("G*2b"))
        .unwrap()
        .verdict
        .expect("cap at ply 500");
    assert_eq!((v.code, v.ply, v.winner), (ResultCode::MaxMoves, 500, None));
    assert_eq!(v.ordinary_result, Some(OrdinaryResult::Draw));
    assert_eq!(v.evidence, max_moves(500, false));
}

#[test]
fn plain_cap_ends_when_ply_n_plus_1_would_be_due() {
    let rs = Ruleset {
        move_cap: Some(500),
        cap_mode: CapMode::Plain,
        ..Ruleset::csa()
    };
    let mut game = at_499(rs);
    // A check on ply 500 does not extend a plain cap.
    let v = game
        .play(mv("3c3a"))
        .unwrap()
        .verdict
        .expect("cap at ply 500");
    assert_eq!((v.code, v.ply, v.winner), (ResultCode::MaxMoves, 500, None));
    assert_eq!(v.evidence, max_moves(500, false));
    assert_eq!(v.ordinary_result, Some(OrdinaryResult::Draw));
    assert_eq!(
        game.play(mv("1a1b")),
        Err(shogi_adjudication::GameError::GameOver)
    );
}

#[test]
fn the_csa_preset_caps_at_256() {
    let mut game = Game::new(
        pos(ARENA),
        Ruleset {
            illegal_move: IllegalMovePolicy::Reject,
            ..Ruleset::csa()
        },
    );
    wander(&mut game, 255);
    let next = wander_move(&game);
    let v = game.play(next).unwrap().verdict.expect("cap at ply 256");
    assert_eq!((v.code, v.ply), (ResultCode::MaxMoves, 256));
    assert_eq!(v.code.csa_server_result(), Some("#MAX_MOVES"));
}

#[test]
fn a_small_jsa500_style_cap_with_a_check_extension_through_judge() {
    // The mode is generic in N: with N = 1 the first ply (a check) extends play.
    let rs = Ruleset {
        move_cap: Some(1),
        ..Ruleset::jsa()
    };
    let j = shogi_adjudication::judge(
        pos("k2K5/2R6/9/9/9/9/9/9/9 b - 1"),
        moves("7b7a 9a9b 6a5a"),
        false,
        &rs,
    );
    let v = j.verdict.unwrap();
    assert_eq!((v.code, v.ply), (ResultCode::MaxMoves, 3));
    assert_eq!(v.evidence, max_moves(1, true));
}
