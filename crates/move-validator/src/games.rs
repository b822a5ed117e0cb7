//! One game as this instance knows it: the contract crate's [`Replay`] of its log (the one
//! reader every service shares), and the answers the service gives from it. Built from the
//! game's log on the bus and kept up to date from it, so that any instance can serve any game.
//!
//! Per ply it keeps what the adjudication [`shogi_adjudication::Game`] keeps (the move, the
//! position hash and the check flag); an answer to a retry of an earlier ply is rebuilt by
//! replaying from the start, which only a late retry pays for.

use shogi_proto::convert::{self, illegal_kind_pb, verdict_pb, warning_pb};
use shogi_proto::log::Replay;
use shogi_proto::v1 as pb;

/// The answer SubmitMove gave for ply `ply`, if that ply was played.
pub fn answer(replay: &Replay, ply: u32) -> Option<pb::SubmitMoveResponse> {
    let a = replay.answer(ply)?;
    let id = replay.id();
    Some(pb::SubmitMoveResponse {
        outcome: pb::MoveOutcome::Accepted as i32,
        illegal_kind: pb::IllegalKind::Unspecified as i32,
        ply,
        sfen_after: a.position.to_sfen(),
        gives_check: a.gave_check,
        verdict: a.verdict.as_ref().map(|v| verdict_pb(id, v)),
        warnings: a.warnings.iter().map(|w| warning_pb(id, w)).collect(),
        position_hash: a.position.hash(),
    })
}

/// The answer for the forfeited move that ended the game.
pub fn forfeit_answer(replay: &Replay) -> Option<pb::SubmitMoveResponse> {
    let forfeit = replay.forfeit()?;
    let verdict = replay.game().verdict()?;
    let kind = match &verdict.evidence {
        shogi_adjudication::Evidence::IllegalMove { kind, .. } => illegal_kind_pb(*kind),
        _ => pb::IllegalKind::Unspecified as i32,
    };
    let pos = replay.game().position();
    Some(pb::SubmitMoveResponse {
        outcome: pb::MoveOutcome::Forfeited as i32,
        illegal_kind: kind,
        ply: forfeit.ply,
        sfen_after: pos.to_sfen(),
        gives_check: false,
        verdict: Some(verdict_pb(replay.id(), verdict)),
        warnings: Vec::new(),
        position_hash: pos.hash(),
    })
}

/// The game's verdict as a message.
pub fn verdict(replay: &Replay) -> Option<pb::Verdict> {
    replay.game().verdict().map(|v| verdict_pb(replay.id(), v))
}

/// The game's state as a message, with the effective ruleset: the preset expanded into every
/// option, as the game is judged.
pub fn state(replay: &Replay) -> pb::GameState {
    let game = replay.game();
    let pos = game.position();
    pb::GameState {
        game_id: replay.id().to_owned(),
        ruleset: Some(convert::effective_ruleset_pb(
            replay.requested_ruleset(),
            game.ruleset(),
        )),
        start_sfen: game.start_position().to_sfen(),
        sfen: pos.to_sfen(),
        ply: game.plies(),
        side_to_move: convert::color_pb(pos.side_to_move()),
        in_check: pos.in_check(),
        moves: game.moves().map(|m| m.to_string()).collect(),
        verdict: verdict(replay),
        position_hash: pos.hash(),
    }
}

/// About the bytes a cached game takes, erring high: what the cache's memory bound counts
/// (`tests/memory.rs` holds it to what a game really takes).
pub fn footprint(replay: &Replay) -> usize {
    // The position, the creation event and the map entry; the adjudication game's history
    // keeps ten bytes a ply, in a vector up to twice as large as it holds.
    const BASE: usize = 1024;
    const PER_PLY: usize = 24;
    BASE + PER_PLY * replay.ply() as usize
}

/// AnalyzeGame's answer: the state, every position's occurrence count and check streaks, both
/// sides' declaration reports at the current position and the last ply's warnings.
pub fn analysis(replay: &Replay) -> pb::AnalyzeGameResponse {
    let game = replay.game();
    let id = replay.id();
    let report = |side| {
        game.declaration_report(side, true)
            .map(|r| convert::report_pb(&r))
    };
    pb::AnalyzeGameResponse {
        game: Some(state(replay)),
        positions: positions(game),
        black_declaration: report(shogi_rules::Color::Black),
        white_declaration: report(shogi_rules::Color::White),
        warnings: replay
            .last_warnings()
            .iter()
            .map(|w| warning_pb(id, w))
            .collect(),
    }
}

/// Each position of `game` from ply 0 on, counted as the repetition rules count (RULES.md
/// sections 2 and 3): on the hashes, over the counted part of the game, a position being
/// equal only to positions of the same parity (the side to move is part of it).
fn positions(game: &shogi_adjudication::Game) -> Vec<pb::PositionAnalysis> {
    use shogi_rules::Color;
    let history = game.history();
    let hashes = history.hashes();
    let first =
        shogi_adjudication::repetition::first_counted_ply(game.ruleset().start_position_counted);
    let mut streaks = [0u32; 2];
    let mut out = Vec::with_capacity(hashes.len());
    for (p, &hash) in hashes.iter().enumerate() {
        let ply = p as u32;
        if ply > 0 {
            // The mover's streak grows with a check and ends without one; the other side's
            // stands as it was.
            let mover = history.mover_of_ply(ply);
            let streak = &mut streaks[usize::from(mover == Color::White)];
            *streak = if history.gave_check(ply) {
                *streak + 1
            } else {
                0
            };
        }
        let (occurrence, earlier_plies) = if p < first {
            (0, Vec::new())
        } else {
            let earlier: Vec<u32> = (first..p)
                .filter(|&q| (p - q) % 2 == 0 && hashes[q] == hash)
                .map(|q| q as u32)
                .collect();
            (earlier.len() as u32 + 1, earlier)
        };
        out.push(pb::PositionAnalysis {
            ply,
            usi: history
                .move_at(ply)
                .map(|m| m.to_string())
                .unwrap_or_default(),
            gave_check: history.gave_check(ply),
            occurrence,
            earlier_plies,
            black_check_streak: streaks[0],
            white_check_streak: streaks[1],
        });
    }
    out
}
