//! `shogi-arbiter impasse`: the declaration calculator.

use crate::report;
use serde_json::Value;
use shogi_adjudication::{DeclarationRule, evaluate_declaration};
use shogi_rules::Position;

/// The calculator's JSON for the side to move of `sfen`.
pub fn calculate(
    sfen: &str,
    initial: Option<&str>,
    rule: DeclarationRule,
) -> Result<Value, String> {
    let pos = Position::from_sfen(sfen).map_err(|e| format!("--sfen: {e}"))?;
    let initial = initial
        .map(|s| Position::from_sfen(s).map_err(|e| format!("--initial-sfen: {e}")))
        .transpose()?;
    let r = evaluate_declaration(&pos, initial.as_ref(), rule);
    let mut v = report::declaration_json(&r);
    v["sfen"] = sfen.into();
    v["schema"] = "shogi-arbiter.impasse.v1".into();
    Ok(v)
}
