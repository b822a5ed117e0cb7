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
use std::collections::HashMap;

/// The answer SubmitMove gave for ply `ply`, if that ply was played; with the game's clock when
/// it is the game's last ply.
pub fn answer(replay: &Replay, ply: u32) -> Option<pb::SubmitMoveResponse> {
    let a = replay.answer(ply)?;
    let id = replay.id();
    Some(pb::SubmitMoveResponse {
        clock: (ply == replay.ply())
            .then(|| convert::clock_pb(replay.game()))
            .flatten(),
        outcome: pb::MoveOutcome::Accepted as i32,
        illegal_kind: pb::IllegalKind::Unspecified as i32,
        ply,
        sfen_after: a.position.to_sfen(),
        gives_check: a.gave_check,
        verdict: a.verdict.as_ref().map(|v| verdict_pb(id, v)),
        warnings: a.warnings.iter().map(|w| warning_pb(id, w)).collect(),
        position_hash: a.position.hash(),
        charged_ms: a.charged_ms,
    })
}

/// The answer for the move that ended the game without being played: a forfeited illegal move,
/// or a move after its side's deadline (time-up).
pub fn forfeit_answer(replay: &Replay) -> Option<pb::SubmitMoveResponse> {
    let forfeit = replay.forfeit()?;
    let verdict = replay.game().verdict()?;
    let (outcome, kind) = match &verdict.evidence {
        shogi_adjudication::Evidence::IllegalMove { kind, .. } => {
            (pb::MoveOutcome::Forfeited, illegal_kind_pb(*kind))
        }
        _ => (pb::MoveOutcome::TimeUp, pb::IllegalKind::Unspecified as i32),
    };
    let pos = replay.game().position();
    Some(pb::SubmitMoveResponse {
        clock: convert::clock_pb(replay.game()),
        outcome: outcome as i32,
        illegal_kind: kind,
        ply: forfeit.ply,
        sfen_after: pos.to_sfen(),
        gives_check: false,
        verdict: replay.verdict(),
        warnings: Vec::new(),
        position_hash: pos.hash(),
        charged_ms: None,
    })
}

/// The game's verdict as a message.
pub fn verdict(replay: &Replay) -> Option<pb::Verdict> {
    replay.verdict()
}

/// The game's state as a message, with the effective ruleset: the preset expanded into every
/// option, as the game is judged.
pub fn state(replay: &Replay) -> pb::GameState {
    let mut state = head(replay);
    state.moves = replay.game().moves().map(|m| m.to_string()).collect();
    state
}

/// [`state`] without its moves: what describes the whole game in every page of it.
pub fn head(replay: &Replay) -> pb::GameState {
    let game = replay.game();
    let pos = game.position();
    pb::GameState {
        clock: convert::clock_pb(game),
        game_id: replay.id().to_owned(),
        ruleset: Some(convert::effective_ruleset_pb(
            replay.requested_ruleset().as_ref(),
            game.ruleset(),
        )),
        start_sfen: game.start_position().to_sfen(),
        sfen: pos.to_sfen(),
        ply: game.plies(),
        side_to_move: convert::color_pb(pos.side_to_move()),
        in_check: pos.in_check(),
        moves: Vec::new(),
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

/// AnalyzeGame's answer without its positions and moves (what describes the whole game in
/// every page of it): the state, both sides' declaration reports at the current position and
/// the last ply's warnings.
pub fn analysis_head(replay: &Replay) -> pb::AnalyzeGameResponse {
    let game = replay.game();
    let id = replay.id();
    let report = |side| {
        game.declaration_report(side, true)
            .map(|r| convert::report_pb(&r))
    };
    pb::AnalyzeGameResponse {
        game: Some(head(replay)),
        positions: Vec::new(),
        black_declaration: report(shogi_rules::Color::Black),
        white_declaration: report(shogi_rules::Color::White),
        warnings: replay
            .last_warnings()
            .iter()
            .map(|w| warning_pb(id, w))
            .collect(),
        next_ply: 0,
    }
}

/// The positions of `game` from ply `from` on, as AnalyzeGame lists them, counted as the
/// repetition rules count (RULES.md sections 2 and 3): on the hashes, over the counted part of
/// the game, a position being equal only to positions of the same parity (the side to move is
/// part of it). Each is built when it is asked for, so that a page stops where its answer is
/// full; `until` (exclusive) bounds how far a page may go, so that the earlier occurrences are
/// looked up in one pass over the game up to there, not one per position.
pub struct Positions<'a> {
    history: &'a shogi_adjudication::repetition::History,
    first: usize,
    next: u32,
    until: u32,
    /// The check streaks, Black's then White's, after ply `next - 1`.
    streaks: [u32; 2],
    /// For each hash of a position in `from..until`: its counted plies in `..until`, ascending.
    seen: HashMap<u64, Vec<u32>>,
}

impl<'a> Positions<'a> {
    /// The positions of plies `from..until` (`until` at most the game's ply + 1).
    pub fn new(game: &'a shogi_adjudication::Game, from: u32, until: u32) -> Positions<'a> {
        let history = game.history();
        let hashes = history.hashes();
        let until = until.min(hashes.len() as u32);
        let first = shogi_adjudication::repetition::first_counted_ply(
            game.ruleset().start_position_counted,
        );
        let mut seen: HashMap<u64, Vec<u32>> = (from..until)
            .map(|p| (hashes[p as usize], Vec::new()))
            .collect();
        for (q, hash) in hashes.iter().enumerate().take(until as usize).skip(first) {
            if let Some(plies) = seen.get_mut(hash) {
                plies.push(q as u32);
            }
        }
        let mut positions = Positions {
            history,
            first,
            next: 0,
            until,
            streaks: [0; 2],
            seen,
        };
        // The streaks as they stand before `from`: arithmetic over the plies, nothing built.
        while positions.next < from.min(until) {
            positions.advance_streaks();
            positions.next += 1;
        }
        positions
    }

    /// Counts ply `next` into the check streaks: the mover's grows with a check and ends
    /// without one; the other side's stands as it was.
    fn advance_streaks(&mut self) {
        let ply = self.next;
        if ply == 0 {
            return;
        }
        let mover = self.history.mover_of_ply(ply);
        let streak = &mut self.streaks[usize::from(mover == shogi_rules::Color::White)];
        *streak = if self.history.gave_check(ply) {
            *streak + 1
        } else {
            0
        };
    }
}

impl Iterator for Positions<'_> {
    type Item = pb::PositionAnalysis;

    fn next(&mut self) -> Option<pb::PositionAnalysis> {
        if self.next >= self.until {
            return None;
        }
        self.advance_streaks();
        let ply = self.next;
        self.next += 1;
        let p = ply as usize;
        let (occurrence, earlier_plies) = if p < self.first {
            (0, Vec::new())
        } else {
            let hash = self.history.hashes()[p];
            let earlier: Vec<u32> = self.seen[&hash]
                .iter()
                .copied()
                .filter(|&q| q < ply && (ply - q).is_multiple_of(2))
                .collect();
            (earlier.len() as u32 + 1, earlier)
        };
        Some(pb::PositionAnalysis {
            ply,
            usi: self
                .history
                .move_at(ply)
                .map(|m| m.to_string())
                .unwrap_or_default(),
            gave_check: self.history.gave_check(ply),
            occurrence,
            earlier_plies,
            black_check_streak: self.streaks[0],
            white_check_streak: self.streaks[1],
        })
    }
}
