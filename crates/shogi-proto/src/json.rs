//! The gRPC contract's messages in the CLI's JSON lines (docs/cli-json.md), with the feature
//! `json` (the CLI's; the services do not need it).
//!
//! Where a line says what a message of `proto/shogi/v1/arbiter.proto` says (a verdict, an early
//! warning, a declaration report), it prints that message as the protobuf JSON mapping writes
//! it: lowerCamelCase field names, enum values by their constant names (`RESULT_CODE_CHECKMATE`,
//! `COLOR_BLACK`). The text is not written by hand here: the domain value goes through the one
//! domain -> wire mapping (`shogi_proto::convert`), and prost-reflect writes the message from
//! the contract's own descriptors, so a name in the CLI's output cannot drift from the proto.
//!
//! Fields at their default value are printed too (`"ply": 0`, `"winner": "COLOR_UNSPECIFIED"`),
//! so that every line of a kind has the same keys; proto3 JSON parsers accept both forms.
//! `gameId` is left out: the CLI names a record by its `source`; so is a verdict's
//! `receivedUnixMs`, the time the arbiter received a call, which a record does not have.

use crate::convert;
use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};
use serde_json::Value;
use shogi_adjudication::{DeclarationReport, Verdict, Warning};
use std::sync::LazyLock;

/// The `shogi.v1` descriptors, decoded once.
static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(crate::FILE_DESCRIPTOR_SET)
        .expect("the contract's own descriptor set decodes")
});

/// `msg`, a message of type `full_name`, in the protobuf JSON mapping, without `gameId` and
/// `receivedUnixMs`.
fn to_json(full_name: &str, msg: &impl prost::Message) -> Value {
    let mut value = message(full_name, msg);
    if let Value::Object(map) = &mut value {
        map.remove("gameId");
        map.remove("receivedUnixMs");
    }
    value
}

/// `msg`, a message of type `full_name` of the `shogi.v1` contract, in the protobuf JSON
/// mapping, every field written (`gameId` included).
pub fn message(full_name: &str, msg: &impl prost::Message) -> Value {
    let desc = POOL
        .get_message_by_name(full_name)
        .expect("a message of the shogi.v1 contract");
    let mut dynamic = DynamicMessage::new(desc);
    dynamic
        .transcode_from(msg)
        .expect("a message decodes as its own type");
    let options = SerializeOptions::new().skip_default_fields(false);
    dynamic
        .serialize_with_options(serde_json::value::Serializer, &options)
        .expect("a message without maps of non-string keys serializes to JSON")
}

/// A verdict as the message `shogi.v1.Verdict`: `code`, `winner`, `ply`, `ordinaryResult`,
/// `codeName` and the evidence of its code (`checkmate`, `repetition`, `perpetualCheck` ...).
pub fn verdict(v: &Verdict) -> Value {
    to_json("shogi.v1.Verdict", &convert::verdict_pb("", v))
}

/// An early warning as the message `shogi.v1.Warning`: `ply` and `thirdOccurrence` or
/// `perpetualCheckRisk`.
pub fn warning(w: &Warning) -> Value {
    to_json("shogi.v1.Warning", &convert::warning_pb("", w))
}

/// A declaration report as the message `shogi.v1.DeclarationReport`.
pub fn declaration_report(r: &DeclarationReport) -> Value {
    to_json("shogi.v1.DeclarationReport", &convert::report_pb(r))
}

/// A refused illegal move as the message `shogi.v1.IllegalMoveEvidence` (`kind`, `usi`) with
/// the `ply` it was refused at.
pub fn rejected(ply: u32, illegal: &shogi_rules::IllegalMove) -> Value {
    let evidence = crate::v1::IllegalMoveEvidence {
        kind: convert::illegal_kind_pb(illegal.kind),
        usi: illegal.mv.to_string(),
    };
    let mut value = to_json("shogi.v1.IllegalMoveEvidence", &evidence);
    value["ply"] = ply.into();
    value
}
