//! Verdicts as sentences a player understands, and rulesets by name (their JSON is
//! [`crate::proto_json`]'s).

use shogi_adjudication::{Evidence, OrdinaryResult, Ruleset, Verdict};
use shogi_rules::Color;

fn side(c: Color) -> &'static str {
    match c {
        Color::Black => "Black (sente)",
        Color::White => "White (gote)",
    }
}

fn ordinary(r: Option<OrdinaryResult>) -> &'static str {
    match r {
        Some(OrdinaryResult::Replay) => "no result; the game is replayed with colours swapped",
        _ => "a draw",
    }
}

/// One sentence a player understands.
pub fn verdict_sentence(v: &Verdict) -> String {
    let winner = v.winner.map(side).unwrap_or("nobody");
    match &v.evidence {
        Evidence::Checkmate { .. } => format!("{winner} wins by checkmate on ply {}.", v.ply),
        Evidence::NoLegalMoves => {
            format!(
                "{winner} wins on ply {}: the other side has no legal move.",
                v.ply
            )
        }
        Evidence::IllegalMove { kind, mv } => format!(
            "Ply {} ({mv}) is an illegal move ({}); {winner} wins.",
            v.ply,
            kind.as_str().replace('_', " ")
        ),
        Evidence::Repetition {
            plies,
            mutual_check,
        } => format!(
            "The same position occurred for the fourth time on ply {} (plies {}, {}, {}, {}){}: {}.",
            v.ply,
            plies[0],
            plies[1],
            plies[2],
            plies[3],
            if *mutual_check {
                ", both sides checking throughout"
            } else {
                ""
            },
            ordinary(v.ordinary_result)
        ),
        Evidence::PerpetualCheck { plies, checker, .. } => format!(
            "The same position occurred for the fourth time on ply {} and {} gave check on every move since ply {}: perpetual check, {} loses.",
            v.ply,
            side(*checker),
            plies[0],
            side(*checker)
        ),
        Evidence::Declaration(r) => format!(
            "{} declared impasse after ply {} with {} points ({} needed, {} pieces in camp): {}.",
            side(r.declarer),
            v.ply,
            r.points,
            r.points_to_win,
            r.pieces_in_camp,
            match r.outcome.as_str() {
                "win" => format!("{} wins", side(r.declarer)),
                "jishogi" => format!("jishogi, {}", ordinary(v.ordinary_result)),
                "loss" => format!("the declaration fails and {} loses", side(r.declarer)),
                _ => "the declaration is refused and play goes on".to_string(),
            }
        ),
        Evidence::TryRule { mv } => {
            format!(
                "{winner} wins by the try rule: the king reached the opponent's king square with {mv} on ply {}.",
                v.ply
            )
        }
        Evidence::MaxMoves {
            cap,
            extended_by_checks,
        } => format!(
            "The game reached the {cap}-ply cap{}: {}.",
            if *extended_by_checks {
                ", extended while checks continued"
            } else {
                ""
            },
            ordinary(v.ordinary_result)
        ),
        Evidence::Reported { note } if note.is_empty() => {
            format!("{} ({winner} wins) on ply {}.", v.code, v.ply)
        }
        Evidence::Reported { note } => {
            format!("{} ({winner} wins) on ply {}: {note}.", v.code, v.ply)
        }
        Evidence::TimeUp(up) => format!(
            "{} ran out of time after ply {}: {} ms charged of {} ms; {winner} wins.",
            side(up.side),
            v.ply,
            up.charged_ms,
            up.available_ms
        ),
        Evidence::Abandoned(a) => format!(
            "Aborted after ply {}: nobody played for {} ms (the limit is {} ms).",
            v.ply,
            a.at_ms.saturating_sub(a.last_activity_ms),
            a.limit_ms
        ),
    }
}

/// Parses a `key=value` override onto a ruleset: the adjudication layer's one parser of ruleset
/// options ([`Ruleset::set`]), which the gRPC contract shares.
pub fn apply_override(rules: &mut Ruleset, text: &str) -> Result<(), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected key=value, got {text:?}"))?;
    rules.set(key, value).map_err(|e| e.to_string())
}

/// The preset by name, or an error listing the names.
pub fn preset(name: &str) -> Result<Ruleset, String> {
    Ruleset::preset(name).ok_or_else(|| {
        format!(
            "unknown ruleset preset {name:?} (known: {})",
            Ruleset::PRESETS.join(", ")
        )
    })
}
