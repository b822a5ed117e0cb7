//! gRPC statuses with `google.rpc` details (docs/errors.md): an `ErrorInfo` with a
//! `shogi.v1.ErrorReason`, a `BadRequest` field violation, the `shogi.v1.Verdict` of a game that
//! is over, packed as `google.protobuf.Any` into a `google.rpc.Status`. Which error gets which
//! details is the validator's to say (`move_validator::error::to_status`); how they are encoded
//! is the contract's.

use crate::v1::{ErrorReason, Verdict};
use prost::Message as _;
use tonic::{Code, Status};

/// The `google.rpc.ErrorInfo` domain of the arbiter's errors.
pub const ERROR_DOMAIN: &str = "shogi-arbiter.move-validator";

/// The name `ErrorInfo.reason` carries for `reason`: the `shogi.v1.ErrorReason` value name
/// without its `ERROR_REASON_` prefix, for a client to branch on.
pub fn reason_name(reason: ErrorReason) -> &'static str {
    let full = reason.as_str_name();
    full.strip_prefix("ERROR_REASON_").unwrap_or(full)
}

/// A status's `google.rpc` details as they are built.
#[derive(Debug)]
pub struct Details {
    message: String,
    details: Vec<prost_types::Any>,
}

impl Details {
    /// No details yet, for a status saying `message`.
    pub fn new(message: &str) -> Details {
        Details {
            message: message.to_owned(),
            details: Vec::new(),
        }
    }

    fn any(&mut self, type_name: &str, value: Vec<u8>) {
        self.details.push(prost_types::Any {
            type_url: format!("type.googleapis.com/{type_name}"),
            value,
        });
    }

    /// A `google.rpc.ErrorInfo`: `reason` (by [`reason_name`]) in [`ERROR_DOMAIN`], with
    /// `metadata`.
    pub fn info<const N: usize>(&mut self, reason: ErrorReason, metadata: [(&str, String); N]) {
        let info = tonic_types::pb::ErrorInfo {
            reason: reason_name(reason).to_owned(),
            domain: ERROR_DOMAIN.to_owned(),
            metadata: metadata
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        };
        self.any("google.rpc.ErrorInfo", info.encode_to_vec());
    }

    /// A `google.rpc.BadRequest` with one field violation.
    pub fn bad_request(&mut self, field: &str, description: &str) {
        let bad = tonic_types::pb::BadRequest {
            field_violations: vec![tonic_types::pb::bad_request::FieldViolation {
                field: field.to_owned(),
                description: description.to_owned(),
                ..Default::default()
            }],
        };
        self.any("google.rpc.BadRequest", bad.encode_to_vec());
    }

    /// A `google.rpc.QuotaFailure` with one violation: `subject` is over the quota
    /// `description` says.
    pub fn quota_failure(&mut self, subject: &str, description: &str) {
        let failure = tonic_types::pb::QuotaFailure {
            violations: vec![tonic_types::pb::quota_failure::Violation {
                subject: subject.to_owned(),
                description: description.to_owned(),
                ..Default::default()
            }],
        };
        self.any("google.rpc.QuotaFailure", failure.encode_to_vec());
    }

    /// The verdict of a game that is over.
    pub fn verdict(&mut self, verdict: &Verdict) {
        self.any("shogi.v1.Verdict", verdict.encode_to_vec());
    }

    /// The status: `code`, the message, and the details packed into a `google.rpc.Status`.
    pub fn into_status(self, code: Code) -> Status {
        let status = tonic_types::pb::Status {
            code: code as i32,
            message: self.message.clone(),
            details: self.details,
        };
        Status::with_details(code, self.message, status.encode_to_vec().into())
    }
}

/// `status` as one answer of a SubmitMoves stream carries it
/// ([`SubmitMoveError`](crate::v1::SubmitMoveError)): its
/// code, its message and its details, read back from the `google.rpc.Status` it was made
/// with.
pub fn submit_move_error(status: &Status) -> crate::v1::SubmitMoveError {
    let details = tonic_types::pb::Status::decode(status.details())
        .map(|s| s.details)
        .unwrap_or_default();
    crate::v1::SubmitMoveError {
        code: status.code() as i32,
        message: status.message().to_owned(),
        details,
    }
}

/// A SubmitMoves stream's error answer as the status a SubmitMove call would have ended with:
/// the inverse of [`submit_move_error`], so that a client reads both alike.
pub fn from_submit_move_error(error: &crate::v1::SubmitMoveError) -> Status {
    let packed = tonic_types::pb::Status {
        code: error.code,
        message: error.message.clone(),
        details: error.details.clone(),
    };
    Status::with_details(
        Code::from(error.code),
        error.message.clone(),
        packed.encode_to_vec().into(),
    )
}

/// The `shogi.v1.Verdict`s packed into `status`'s details (a game over carries its verdict).
pub fn verdicts(status: &Status) -> Vec<Verdict> {
    tonic_types::pb::Status::decode(status.details())
        .map(|s| {
            s.details
                .iter()
                .filter(|a| a.type_url.ends_with("/shogi.v1.Verdict"))
                .filter_map(|a| Verdict::decode(a.value.as_slice()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The violations, `(subject, description)`, of the `google.rpc.QuotaFailure` packed into
/// `status`'s details (a call refused over a quota), none without one.
pub fn quota_violations(status: &Status) -> Vec<(String, String)> {
    use tonic_types::StatusExt as _;
    status
        .get_error_details()
        .quota_failure()
        .map(|q| {
            q.violations
                .iter()
                .map(|v| (v.subject.clone(), v.description.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic_types::StatusExt;

    #[test]
    fn details_decode_as_the_standard_ones() {
        let mut d = Details::new("game g is over");
        d.info(ErrorReason::GameOver, [("game_id", "g".to_owned())]);
        d.bad_request("usi", "not a square");
        d.quota_failure("credential:a", "live_games: 10");
        d.verdict(&Verdict {
            game_id: "g".into(),
            ply: 3,
            ..Default::default()
        });
        let status = d.into_status(Code::FailedPrecondition);
        let details = status.get_error_details();
        let info = details.error_info().expect("error info");
        assert_eq!(
            (info.reason.as_str(), info.domain.as_str()),
            ("GAME_OVER", ERROR_DOMAIN)
        );
        assert_eq!(info.metadata["game_id"], "g");
        assert_eq!(
            details.bad_request().expect("bad request").field_violations[0].field,
            "usi"
        );
        let quota = details.quota_failure().expect("quota failure");
        assert_eq!(quota.violations[0].subject, "credential:a");
        assert_eq!(verdicts(&status)[0].ply, 3);

        // A stream's error answer carries the same, and reads back as the same status.
        let answer = submit_move_error(&status);
        assert_eq!(answer.code, Code::FailedPrecondition as i32);
        let back = from_submit_move_error(&answer);
        assert_eq!(
            (back.code(), back.message(), back.details()),
            (status.code(), status.message(), status.details())
        );
        assert_eq!(quota_violations(&back), quota_violations(&status));
    }
}
