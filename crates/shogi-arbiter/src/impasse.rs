//! `shogi-arbiter impasse`: the declaration calculator.

use crate::proto_json;
use serde_json::Value;
use shogi_adjudication::{DeclarationRule, evaluate_declaration};
use shogi_rules::Position;

/// The `schema` field of the line `impasse` prints (docs/cli-json.md).
pub const SCHEMA: &str = "shogi-arbiter.impasse.v2";

/// The calculator's JSON: the report as the message `shogi.v1.DeclarationReport` in the
/// protobuf JSON mapping, with `schema` and `sfen` for the side to move of `sfen`.
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
    let mut v = proto_json::declaration_report(&r);
    v["sfen"] = sfen.into();
    v["schema"] = SCHEMA.into();
    Ok(v)
}
