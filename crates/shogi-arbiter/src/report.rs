//! Verdicts, declaration reports and rulesets as JSON and as sentences a player understands.

use serde_json::{Map, Value, json};
use shogi_adjudication::{DeclarationReport, Evidence, OrdinaryResult, Ruleset, Verdict, Warning};
use shogi_rules::Color;

fn color(c: Color) -> Value {
    Value::from(c.name())
}

/// The declaration calculator's report as JSON: outcome, points and every condition.
pub fn declaration_json(r: &DeclarationReport) -> Value {
    let mut conditions = Map::new();
    for (c, met) in r.conditions() {
        conditions.insert(c.as_str().to_string(), Value::Bool(met));
    }
    json!({
        "rule": r.rule.as_str(),
        "declarer": r.declarer.name(),
        "outcome": r.outcome.as_str(),
        "points": r.points,
        "points_in_camp": r.points_in_camp,
        "points_in_hand": r.points_in_hand,
        "credit": r.credit,
        "points_to_win": r.points_to_win,
        "points_missing": r.points_missing,
        "pieces_in_camp": r.pieces_in_camp,
        "king_in_camp": r.king_in_camp,
        "in_check": r.in_check,
        "has_time": r.has_time,
        "conditions": conditions,
    })
}

/// Adds a verdict's fields (result, winner, ply, evidence) to `out`.
pub fn verdict_fields(v: &Verdict, out: &mut Map<String, Value>) {
    out.insert("result".into(), v.code.as_str().into());
    out.insert("winner".into(), v.winner.map_or(Value::Null, color));
    out.insert("ply".into(), v.ply.into());
    if let Some(r) = v.ordinary_result {
        out.insert("ordinary_result".into(), r.as_str().into());
    }
    if let Some(s) = v.code.csa_server_result().or(v.code.csa_special_move()) {
        out.insert("csa".into(), s.into());
    }
    match &v.evidence {
        Evidence::Checkmate {
            mating_ply,
            mating_move,
        } => {
            out.insert("mating_ply".into(), (*mating_ply).into());
            if let Some(m) = mating_move {
                out.insert("move".into(), m.to_string().into());
            }
        }
        Evidence::NoLegalMoves | Evidence::Reported => {}
        Evidence::IllegalMove { kind, mv } => {
            out.insert("kind".into(), kind.as_str().into());
            out.insert("move".into(), mv.to_string().into());
        }
        Evidence::Repetition {
            plies,
            mutual_check,
        } => {
            out.insert("occurrence_plies".into(), json!(plies));
            out.insert("mutual_check".into(), (*mutual_check).into());
        }
        Evidence::PerpetualCheck {
            plies,
            checker,
            check_plies,
        } => {
            out.insert("occurrence_plies".into(), json!(plies));
            out.insert("checker".into(), color(*checker));
            out.insert("check_plies".into(), json!(check_plies));
        }
        Evidence::Declaration(report) => {
            out.insert("outcome".into(), report.outcome.as_str().into());
            out.insert("points".into(), report.points.into());
            out.insert("declaration".into(), declaration_json(report));
        }
        Evidence::TryRule { mv } => {
            out.insert("move".into(), mv.to_string().into());
        }
        Evidence::MaxMoves {
            cap,
            extended_by_checks,
        } => {
            out.insert("cap".into(), (*cap).into());
            out.insert("extended_by_checks".into(), (*extended_by_checks).into());
        }
    }
}

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
        Evidence::Reported => format!("{} ({winner} wins) on ply {}.", v.code, v.ply),
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

/// An early warning as JSON: the ply it was issued after and what it says.
pub fn warning_json(w: &Warning) -> Value {
    match w {
        Warning::ThirdOccurrence { ply, plies } => {
            json!({"ply": ply, "warning": "third_occurrence", "occurrence_plies": plies})
        }
        Warning::PerpetualCheckRisk {
            ply,
            checker,
            since_ply,
        } => json!({
            "ply": ply,
            "warning": "perpetual_check_risk",
            "checker": checker.name(),
            "since_ply": since_ply,
        }),
    }
}
