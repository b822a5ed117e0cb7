//! Verdicts, declaration reports and rulesets as JSON and as sentences a player understands.

use serde_json::{Map, Value, json};
use shogi_adjudication::{
    DeclarationReport, Evidence, IllegalMovePolicy, OrdinaryResult, Ruleset, Verdict, Warning,
};
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

/// Parses `key=value` overrides onto a ruleset.
pub fn apply_override(rules: &mut Ruleset, text: &str) -> Result<(), String> {
    use shogi_adjudication::{CapMode, DeclarationRule, DeclarationTrigger, FailedDeclaration};
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected key=value, got {text:?}"))?;
    let bad = || format!("bad value {value:?} for {key}");
    let boolean = || match value {
        "true" | "on" | "yes" => Ok(true),
        "false" | "off" | "no" => Ok(false),
        _ => Err(bad()),
    };
    let ordinary = || match value {
        "draw" => Ok(OrdinaryResult::Draw),
        "replay" => Ok(OrdinaryResult::Replay),
        _ => Err(bad()),
    };
    match key {
        "illegal_move" => {
            rules.illegal_move = match value {
                "reject" => IllegalMovePolicy::Reject,
                "forfeit" => IllegalMovePolicy::Forfeit,
                _ => return Err(bad()),
            }
        }
        "repetition" => rules.repetition = ordinary()?,
        "jishogi" => rules.jishogi = ordinary()?,
        "start_position_counted" => rules.start_position_counted = boolean()?,
        "declaration" => {
            rules.declaration = match value {
                "points27" => Some(DeclarationRule::Points27),
                "jsa24" => Some(DeclarationRule::Jsa24),
                "none" => None,
                _ => return Err(bad()),
            }
        }
        "declaration_trigger" => {
            rules.declaration_trigger = match value {
                "explicit" => DeclarationTrigger::Explicit,
                "automatic" => DeclarationTrigger::Automatic,
                _ => return Err(bad()),
            }
        }
        "failed_declaration" => {
            rules.failed_declaration = match value {
                "loss" => FailedDeclaration::Loss,
                "refuse" => FailedDeclaration::Refuse,
                _ => return Err(bad()),
            }
        }
        "handicap_credit" => rules.handicap_credit = boolean()?,
        "try_rule" => rules.try_rule = boolean()?,
        "move_cap" => rules.move_cap = parse_cap(value).ok_or_else(bad)?,
        "cap_mode" => {
            rules.cap_mode = match value {
                "plain" => CapMode::Plain,
                "jsa500" => CapMode::Jsa500,
                _ => return Err(bad()),
            }
        }
        "csa_server_cap" => rules.csa_server_cap = boolean()?,
        "agreement_threshold" => rules.agreement_threshold = value.parse().map_err(|_| bad())?,
        _ => return Err(format!("unknown ruleset option {key:?}")),
    }
    Ok(())
}

/// `0` or `none` turns the cap off.
pub fn parse_cap(value: &str) -> Option<Option<u32>> {
    match value {
        "none" | "0" => Some(None),
        v => v.parse().ok().map(Some),
    }
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
