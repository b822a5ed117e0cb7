//! Helpers shared by the integration tests.
#![allow(dead_code)]

use shogi_adjudication::{DeclarationTrigger, Game, IllegalMovePolicy, PlyOutcome, Ruleset};
use shogi_rules::{Move, Position};

/// A position from SFEN; the test's own data, so a bad one is a test bug.
pub fn pos(sfen: &str) -> Position {
    Position::from_sfen(sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"))
}

/// A move from USI.
pub fn mv(usi: &str) -> Move {
    Move::from_usi(usi).unwrap_or_else(|e| panic!("{e}"))
}

/// Moves from space-separated USI.
pub fn moves(text: &str) -> Vec<Move> {
    text.split_whitespace().map(mv).collect()
}

/// Plays every move, failing on a refused one, and returns the outcomes.
pub fn play_all(game: &mut Game, text: &str) -> Vec<PlyOutcome> {
    moves(text)
        .into_iter()
        .map(|m| {
            game.play(m)
                .unwrap_or_else(|e| panic!("ply {}: {m}: {e}", game.plies() + 1))
        })
        .collect()
}

/// Plays every move and checks that none ended the game.
pub fn play_quietly(game: &mut Game, text: &str) {
    for o in play_all(game, text) {
        assert_eq!(o.verdict, None, "ply {} ended the game", o.ply);
    }
}

/// A ruleset that gets out of the way: illegal moves rejected (a bad test move fails loudly),
/// no cap, explicit declarations, the JSA rules otherwise.
pub fn plain() -> Ruleset {
    Ruleset {
        illegal_move: IllegalMovePolicy::Reject,
        move_cap: None,
        declaration_trigger: DeclarationTrigger::Explicit,
        ..Ruleset::jsa()
    }
}
