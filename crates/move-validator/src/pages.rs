//! Answers for long games, whole or a page at a time: GetGame's moves and AnalyzeGame's
//! positions. An answer is sized as it is built, against the largest message the service sends
//! (`max_message_bytes`), so that a page stops where it is full and a request for a whole game
//! that cannot fit is refused with ANSWER_TOO_LARGE, never cut short. The refusal is decided
//! from a lower bound on the answer's size before its list is built, so that it costs what the
//! head of the answer costs, not what the answer gRPC would refuse to send cost (issue 20).

use crate::error::Error;
use crate::games;
use shogi_proto::codec::wire_size;
use shogi_proto::log::Replay;
use shogi_proto::v1 as pb;

/// The largest `max_plies` a request may ask for.
pub const MAX_PAGE_PLIES: u32 = 10_000;

/// What the length prefix of the answer's `game` may grow by as its moves are added (a varint
/// of a message length takes 1 to 5 bytes).
const NESTED_SLACK: usize = 4;

/// The bytes one move takes in `GameState.moves`: its tag, its length and 4 or 5 characters
/// (`7g7f`, `P*5e`, `8h2b+`).
const MOVE_BYTES_MIN: usize = 6;
const MOVE_BYTES_MAX: usize = 7;

/// The fewest bytes the position of a ply after 0 takes in an AnalyzeGame answer, with its move
/// in `game.moves`: the position's tag and length, its ply (tag and at least one byte) and its
/// move (6), then the move again (6).
const ANALYSIS_BYTES_MIN: usize = 16;

/// The bytes a position of a long game usually takes at most, with its move: what the page
/// size an ANSWER_TOO_LARGE refusal suggests is counted with (a ply under 2^21, three earlier
/// occurrences, streaks under 128). A page with more is cut where it is full anyway.
const ANALYSIS_BYTES_USUAL: usize = 40;

/// A request's paging fields, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// The ply of the first move or position.
    pub from: u32,
    /// At most this many moves or positions.
    pub max: u32,
}

impl Page {
    /// The page that `from_ply` and `max_plies` ask for, or `None` for the whole game (both
    /// 0); INVALID_ARGUMENT for a `max_plies` over [`MAX_PAGE_PLIES`]. `from_ply` is checked
    /// against the game, once it is read ([`game`], [`analysis`]).
    pub fn parse(from_ply: u32, max_plies: u32) -> Result<Option<Page>, Error> {
        if max_plies > MAX_PAGE_PLIES {
            return Err(Error::invalid(
                "max_plies",
                format!("{max_plies} is more than {MAX_PAGE_PLIES}"),
            ));
        }
        let max = if max_plies == 0 {
            MAX_PAGE_PLIES
        } else {
            max_plies
        };
        Ok((from_ply > 0 || max_plies > 0).then_some(Page {
            from: from_ply,
            max,
        }))
    }
}

/// GetGame's answer: the game's state with all its moves, or those of `page`, in at most
/// `limit` bytes.
pub fn game(
    replay: &Replay,
    page: Option<Page>,
    limit: usize,
) -> Result<pb::GetGameResponse, Error> {
    let from = page.map_or(0, |p| p.from);
    check_from(replay, from)?;
    let mut state = games::head(replay);
    let head = pb::GetGameResponse {
        game: Some(state.clone()),
        next_ply: u32::MAX,
    };
    let budget = limit.saturating_sub(wire_size::of(&head) + NESTED_SLACK);
    let plies = replay.ply();
    // Moves are plies 1 to `plies`; `from` 0 starts at the first too.
    let first = from.max(1);
    let left = (plies + 1).saturating_sub(first);
    let want = page.map_or(left, |p| p.max.min(left));
    let refused = || too_large(replay, budget / MOVE_BYTES_MAX);
    if page.is_none() && left as usize * MOVE_BYTES_MIN > budget {
        return Err(refused());
    }
    let history = replay.game().history();
    let mut used = 0;
    for ply in first..first + want {
        let usi = history
            .move_at(ply)
            .map(|m| m.to_string())
            .unwrap_or_default();
        let cost = wire_size::field(usi.len());
        if used + cost > budget {
            break;
        }
        used += cost;
        state.moves.push(usi);
    }
    let got = state.moves.len() as u32;
    if got < want && (page.is_none() || got == 0) {
        return Err(refused());
    }
    Ok(pb::GetGameResponse {
        game: Some(state),
        next_ply: next_ply(first + got, plies),
    })
}

/// AnalyzeGame's answer: the analysis with every position, or those of `page` (and their
/// moves in `game.moves`), in at most `limit` bytes.
pub fn analysis(
    replay: &Replay,
    page: Option<Page>,
    limit: usize,
) -> Result<pb::AnalyzeGameResponse, Error> {
    let from = page.map_or(0, |p| p.from);
    check_from(replay, from)?;
    let mut answer = games::analysis_head(replay);
    answer.next_ply = u32::MAX;
    let budget = limit.saturating_sub(wire_size::of(&answer) + NESTED_SLACK);
    let plies = replay.ply();
    // Positions are plies 0 to `plies`.
    let left = plies + 1 - from;
    let want = page.map_or(left, |p| p.max.min(left));
    let refused = || too_large(replay, budget / ANALYSIS_BYTES_USUAL);
    // Every position but the start one takes at least ANALYSIS_BYTES_MIN.
    if page.is_none() && left.saturating_sub(1) as usize * ANALYSIS_BYTES_MIN > budget {
        return Err(refused());
    }
    // No more positions than fit at their smallest are built, nor looked up.
    let reach = want.min((budget / ANALYSIS_BYTES_MIN + 1).min(u32::MAX as usize) as u32);
    let mut moves = Vec::new();
    let mut used = 0;
    for position in games::Positions::new(replay.game(), from, from + reach) {
        let mut cost = wire_size::field(wire_size::of(&position));
        if !position.usi.is_empty() {
            cost += wire_size::field(position.usi.len());
        }
        if used + cost > budget {
            break;
        }
        used += cost;
        if !position.usi.is_empty() {
            moves.push(position.usi.clone());
        }
        answer.positions.push(position);
    }
    let got = answer.positions.len() as u32;
    if got < want && (page.is_none() || got == 0) {
        return Err(refused());
    }
    if let Some(game) = answer.game.as_mut() {
        game.moves = moves;
    }
    answer.next_ply = next_ply(from + got, plies);
    Ok(answer)
}

/// INVALID_ARGUMENT unless `from` is at most the game's next ply.
fn check_from(replay: &Replay, from: u32) -> Result<(), Error> {
    let next = replay.ply() + 1;
    if from > next {
        return Err(Error::invalid(
            "from_ply",
            format!("{from} is past ply {next}, the game's next"),
        ));
    }
    Ok(())
}

/// The next page's first ply, when the answer stopped before the game's last ply.
fn next_ply(after_page: u32, plies: u32) -> u32 {
    if after_page <= plies { after_page } else { 0 }
}

fn too_large(replay: &Replay, max_plies: usize) -> Error {
    Error::AnswerTooLarge {
        game_id: replay.id().to_owned(),
        current_ply: replay.ply(),
        max_plies: max_plies.min(MAX_PAGE_PLIES as usize) as u32,
    }
}
