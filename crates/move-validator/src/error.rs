//! The service's one error type and the one function that maps it to a gRPC status.

use shogi_proto::status::Details;
use shogi_proto::v1::ErrorReason;
use tonic::{Code, Status};

/// The `google.rpc.ErrorInfo` domain of this service's errors (the contract's).
pub use shogi_proto::status::ERROR_DOMAIN;

/// The `google.rpc.ErrorInfo` reasons this service gives: the `shogi.v1.ErrorReason` value
/// names without their `ERROR_REASON_` prefix, for a client to branch on (the proto documents
/// what each asks of a client).
pub mod reason {
    /// The name `ErrorInfo.reason` carries for `reason`.
    pub use shogi_proto::status::reason_name as name;
}

/// Why a submitted ply does not fit the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlyConflict {
    /// The ply is already taken by a different move.
    Taken,
    /// The ply is beyond the game's next ply.
    Ahead,
}

impl PlyConflict {
    /// The `ErrorInfo` reason: `PLY_TAKEN` or `PLY_AHEAD`.
    pub const fn reason(self) -> ErrorReason {
        match self {
            PlyConflict::Taken => ErrorReason::PlyTaken,
            PlyConflict::Ahead => ErrorReason::PlyAhead,
        }
    }
}

/// Everything the service can fail with. Verdicts and illegal moves are answers, not errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request field is malformed (bad SFEN, USI, game id, preset, handicap ...).
    #[error("invalid {field}: {description}")]
    InvalidArgument {
        /// The field path in the request, as `google.rpc.BadRequest` names it (`start.sfen`).
        field: &'static str,
        /// What is wrong with it.
        description: String,
    },
    /// No game with this id is on the bus.
    #[error("game {0} not found")]
    NotFound(String),
    /// A game with this id exists with a different setup.
    #[error("game {0} already exists")]
    AlreadyExists(String),
    /// The game has ended; nothing more can be played or declared.
    #[error("game {game_id} is over: {} at ply {}", verdict.code_name, verdict.ply)]
    GameOver {
        /// The game.
        game_id: String,
        /// The verdict that ended it.
        verdict: Box<shogi_proto::v1::Verdict>,
    },
    /// The action is not allowed in this game (for instance, no declaration rule).
    #[error("{0}")]
    FailedPrecondition(String),
    /// Declarations are not allowed by this game's ruleset.
    #[error("declarations are not allowed by the ruleset of game {0}")]
    DeclarationNotAllowed(String),
    /// Strict mode: the ending is stored but its owner did not announce it in time.
    #[error("{0}")]
    VerdictPending(String),
    /// The submitted ply does not follow the game's current ply.
    #[error("ply {requested} does not fit game {game_id}, which is at ply {current_ply}")]
    Ply {
        /// Taken or ahead.
        conflict: PlyConflict,
        /// The game.
        game_id: String,
        /// The ply the request named.
        requested: u32,
        /// Plies played in the game.
        current_ply: u32,
    },
    /// The answer would be larger than the largest message the service sends: a whole long
    /// game asked for without paging, or a page when not even one ply fits.
    #[error(
        "the answer for game {game_id} at ply {current_ply} is larger than the largest message; \
         ask for pages of at most {max_plies} plies"
    )]
    AnswerTooLarge {
        /// The game.
        game_id: String,
        /// Plies played in the game.
        current_ply: u32,
        /// A page size whose answer fits (0 when none does).
        max_plies: u32,
    },
    /// The call's credential is over one of its quotas; nothing was done.
    #[error("credential {credential} is over its quota {}: {value}", limit.as_str())]
    QuotaExceeded {
        /// The credential's name.
        credential: String,
        /// The quota.
        limit: crate::credentials::Limit,
        /// Its value, as configured (`5`, `2.5`).
        value: String,
    },
    /// The call's credential does not have the scope its method needs.
    #[error("credential {credential} may not call {method}: it needs the scope {}", scope.as_str())]
    PermissionDenied {
        /// The credential's name.
        credential: String,
        /// The method, as the contract names it.
        method: &'static str,
        /// The scope the method needs.
        scope: crate::credentials::Scope,
    },
    /// Concurrent writers kept winning the race for this game; the client may retry.
    #[error("game {0} is being changed concurrently, retry")]
    Contended(String),
    /// The bus could not be reached (a read, a connect, or a write the bus refused without
    /// storing it): nothing was written.
    #[error("bus unavailable: {0}")]
    BusUnavailable(String),
    /// The bus refused a write because its store is full: JetStream at a storage limit (the
    /// server's `max_file_store`, the account's or the stream's bytes). Nothing was written;
    /// writes succeed again once an operator frees space (`streams prune`).
    #[error(
        "the bus's store is full: JetStream refused write {msg_id} at its storage limit \
         (the server's max_file_store, or the account's or stream's max bytes: {reason}); \
         nothing was stored, retry after the operator frees space (docs/runbooks/full-store.md)"
    )]
    StoreFull {
        /// The write's message id.
        msg_id: String,
        /// What the server said.
        reason: String,
    },
    /// A write got no answer from the bus: it may be stored later.
    #[error(
        "the bus did not answer write {msg_id} ({reason}): it may still be stored; retry the same request"
    )]
    OutcomeUnknown {
        /// The write's message id.
        msg_id: String,
        /// What the client library said.
        reason: String,
    },
    /// An event on the bus cannot be read back.
    #[error("event {sequence} of game {game_id} is unreadable: {reason}")]
    CorruptEvent {
        /// The game.
        game_id: String,
        /// The stream sequence.
        sequence: u64,
        /// Why.
        reason: String,
    },
    /// The configuration is invalid.
    #[error("config: {0}")]
    Config(#[from] crate::config::ConfigError),
    /// The gRPC server failed.
    #[error("grpc server: {0}")]
    Serve(#[from] tonic::transport::Error),

    /// The reflection service could not be built.
    #[error("reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
}

impl Error {
    /// An [`Error::InvalidArgument`].
    pub fn invalid(field: &'static str, description: impl Into<String>) -> Error {
        Error::InvalidArgument {
            field,
            description: description.into(),
        }
    }

    /// An error of a bus call: a publish without an answer is [`Error::OutcomeUnknown`],
    /// anything else (a publish the server refused included: nothing was stored)
    /// [`Error::BusUnavailable`].
    pub fn unavailable(err: arbiter_bus::BusError) -> Error {
        match err {
            arbiter_bus::BusError::Publish { msg_id, reason } => {
                Error::OutcomeUnknown { msg_id, reason }
            }
            arbiter_bus::BusError::PublishRefused { msg_id, reason } if store_full(&reason) => {
                Error::StoreFull { msg_id, reason }
            }
            other => Error::BusUnavailable(other.to_string()),
        }
    }

    /// An error reading a game from the bus.
    pub fn from_read(err: arbiter_runtime::games::ReadError) -> Error {
        match err {
            arbiter_runtime::games::ReadError::Bus(e) => Error::unavailable(e),
            arbiter_runtime::games::ReadError::Unreadable(u) => Error::CorruptEvent {
                game_id: u.game_id,
                sequence: u.sequence,
                reason: u.reason,
            },
        }
    }
}

/// Whether JetStream's refusal of a publish says a storage limit was reached: the server's
/// store (10023, "insufficient resources"), the account's ("resource limits exceeded for
/// account"), or the stream's bytes ("maximum bytes exceeded").
fn store_full(reason: &str) -> bool {
    let reason = reason.to_ascii_lowercase();
    [
        "insufficient resources",
        "resource limits exceeded",
        "maximum bytes exceeded",
    ]
    .iter()
    .any(|s| reason.contains(s))
}

impl From<shogi_proto::convert::FieldError> for Error {
    fn from(e: shogi_proto::convert::FieldError) -> Error {
        Error::InvalidArgument {
            field: e.field,
            description: e.description,
        }
    }
}

impl From<Error> for Status {
    fn from(err: Error) -> Status {
        to_status(err)
    }
}

/// The one place where domain errors become gRPC statuses, with `google.rpc` details: a
/// `BadRequest` field violation for bad input, an `ErrorInfo` with the current ply for a ply
/// conflict.
pub fn to_status(err: Error) -> Status {
    let message = err.to_string();
    let mut details = Details::new(&message);
    let code = match err {
        Error::InvalidArgument { field, description } => {
            let reason = if field.starts_with("ruleset") {
                ErrorReason::InvalidRuleset
            } else {
                ErrorReason::InvalidRequest
            };
            details.bad_request(field, &description);
            details.info(reason, []);
            Code::InvalidArgument
        }
        Error::NotFound(id) => {
            details.info(ErrorReason::GameNotFound, [("game_id", id)]);
            Code::NotFound
        }
        Error::AlreadyExists(id) => {
            details.info(ErrorReason::GameExists, [("game_id", id)]);
            Code::AlreadyExists
        }
        Error::GameOver { game_id, verdict } => {
            details.info(
                ErrorReason::GameOver,
                [
                    ("game_id", game_id),
                    ("verdict_code", verdict.code_name.clone()),
                    ("verdict_ply", verdict.ply.to_string()),
                ],
            );
            details.verdict(&verdict);
            Code::FailedPrecondition
        }
        Error::DeclarationNotAllowed(id) => {
            details.info(ErrorReason::DeclarationNotAllowed, [("game_id", id)]);
            Code::FailedPrecondition
        }
        Error::AnswerTooLarge {
            game_id,
            current_ply,
            max_plies,
        } => {
            details.info(
                ErrorReason::AnswerTooLarge,
                [
                    ("game_id", game_id),
                    ("current_ply", current_ply.to_string()),
                    ("max_plies", max_plies.to_string()),
                ],
            );
            Code::FailedPrecondition
        }
        Error::FailedPrecondition(_) => {
            details.info(ErrorReason::Unspecified, []);
            Code::FailedPrecondition
        }
        Error::Ply {
            conflict,
            current_ply,
            game_id,
            ..
        } => {
            details.info(
                conflict.reason(),
                [
                    ("game_id", game_id),
                    ("current_ply", current_ply.to_string()),
                ],
            );
            Code::Aborted
        }
        Error::Contended(id) => {
            details.info(ErrorReason::Contended, [("game_id", id)]);
            Code::Aborted
        }
        Error::QuotaExceeded {
            credential,
            limit,
            value,
        } => {
            details.quota_failure(
                &format!("credential:{credential}"),
                &format!("{}: {value}", limit.as_str()),
            );
            details.info(
                ErrorReason::QuotaExceeded,
                [
                    ("credential", credential),
                    ("limit", limit.as_str().to_owned()),
                ],
            );
            Code::ResourceExhausted
        }
        Error::PermissionDenied {
            credential, scope, ..
        } => {
            details.info(
                ErrorReason::PermissionDenied,
                [
                    ("credential", credential),
                    ("scope", scope.as_str().to_owned()),
                ],
            );
            Code::PermissionDenied
        }
        Error::BusUnavailable(_) => {
            details.info(ErrorReason::BusUnavailable, []);
            Code::Unavailable
        }
        // Retryable once space is freed, as any refused write: the same reason, with the
        // limit named for a client or an operator reading it.
        Error::StoreFull { msg_id, .. } => {
            details.info(
                ErrorReason::BusUnavailable,
                [("msg_id", msg_id), ("limit", "store".to_owned())],
            );
            Code::Unavailable
        }
        Error::OutcomeUnknown { msg_id, .. } => {
            details.info(ErrorReason::OutcomeUnknown, [("msg_id", msg_id)]);
            Code::Unavailable
        }
        Error::VerdictPending(_) => {
            details.info(ErrorReason::VerdictPending, []);
            Code::Unavailable
        }
        Error::CorruptEvent {
            game_id, sequence, ..
        } => {
            details.info(
                ErrorReason::UnreadableGame,
                [("game_id", game_id), ("sequence", sequence.to_string())],
            );
            Code::Internal
        }
        Error::Config(_) | Error::Serve(_) | Error::Reflection(_) => {
            details.info(ErrorReason::Unspecified, []);
            Code::Internal
        }
    };
    let status = details.into_status(code);
    // Failures of the service, not of the request, are what an operator must see.
    match status.code() {
        Code::Internal => tracing::error!(status = %status.message(), "call failed: INTERNAL"),
        Code::Unavailable => tracing::warn!(status = %status.message(), "call failed: UNAVAILABLE"),
        _ => {}
    }
    status
}

/// UNAUTHENTICATED with its ErrorInfo, for the credentials layer (`auth.rs`).
pub fn unauthenticated() -> Status {
    let mut details = Details::new("missing or wrong bearer token");
    details.info(ErrorReason::Unauthenticated, []);
    details.into_status(Code::Unauthenticated)
}

/// UNAVAILABLE with reason SHUTTING_DOWN, for the streams this instance ends as it drains.
pub fn shutting_down() -> Status {
    let mut details = Details::new("server shutting down");
    details.info(ErrorReason::ShuttingDown, []);
    details.into_status(Code::Unavailable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic_types::StatusExt;

    #[test]
    fn bad_input_carries_the_field() {
        let status = to_status(Error::invalid("usi", "not a square"));
        assert_eq!(status.code(), Code::InvalidArgument);
        let details = status.get_error_details();
        let violation = &details.bad_request().expect("bad request").field_violations[0];
        assert_eq!(violation.field, "usi");
    }

    #[test]
    fn ply_conflict_names_the_current_ply() {
        let status = to_status(Error::Ply {
            conflict: PlyConflict::Taken,
            game_id: "g".into(),
            requested: 3,
            current_ply: 5,
        });
        assert_eq!(status.code(), Code::Aborted);
        let details = status.get_error_details();
        let info = details.error_info().expect("error info");
        assert_eq!(info.reason, "PLY_TAKEN");
        assert_eq!(info.metadata["current_ply"], "5");
    }
}
