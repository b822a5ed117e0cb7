//! The service's one error type and the one function that maps it to a gRPC status.

use std::collections::HashMap;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// The `google.rpc.ErrorInfo` domain of this service's errors.
pub const ERROR_DOMAIN: &str = "shogi-arbiter.move-validator";

/// The `google.rpc.ErrorInfo` reasons this service gives (the `shogi.v1.ErrorReason` value
/// names without their `ERROR_REASON_` prefix), for a client to branch on.
pub mod reason {
    /// ABORTED: the ply is already taken by a different move.
    pub const PLY_TAKEN: &str = "PLY_TAKEN";
    /// ABORTED: the ply is beyond the game's next ply.
    pub const PLY_AHEAD: &str = "PLY_AHEAD";
    /// ABORTED: concurrent writers kept winning the race for the game; retry.
    pub const CONTENDED: &str = "CONTENDED";
    /// FAILED_PRECONDITION: the game is over; the verdict is in the metadata.
    pub const GAME_OVER: &str = "GAME_OVER";
    /// UNAVAILABLE: a write got no answer from the bus; it may be stored later. Retry the same
    /// request (it is idempotent), never a different one for the same ply.
    pub const OUTCOME_UNKNOWN: &str = "OUTCOME_UNKNOWN";
    /// UNAVAILABLE: the bus could not be reached; nothing was written. Retry.
    pub const BUS_UNAVAILABLE: &str = "BUS_UNAVAILABLE";
    /// NOT_FOUND: no game with this id.
    pub const GAME_NOT_FOUND: &str = "GAME_NOT_FOUND";
    /// ALREADY_EXISTS: a game with this id exists with a different setup.
    pub const GAME_EXISTS: &str = "GAME_EXISTS";
    /// INTERNAL: the game's creation event cannot be read.
    pub const UNREADABLE_GAME: &str = "UNREADABLE_GAME";
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
    pub const fn reason(self) -> &'static str {
        match self {
            PlyConflict::Taken => "PLY_TAKEN",
            PlyConflict::Ahead => "PLY_AHEAD",
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
    /// Concurrent writers kept winning the race for this game; the client may retry.
    #[error("game {0} is being changed concurrently, retry")]
    Contended(String),
    /// The bus could not be reached (a read, a connect, or a write the bus refused without
    /// storing it): nothing was written.
    #[error("bus unavailable: {0}")]
    BusUnavailable(String),
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
    /// anything else [`Error::BusUnavailable`].
    pub fn unavailable(err: arbiter_bus::BusError) -> Error {
        match err {
            arbiter_bus::BusError::Publish { msg_id, reason } => {
                Error::OutcomeUnknown { msg_id, reason }
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
    let info = |code: Code, reason: &str, metadata: HashMap<String, String>| {
        Status::with_error_details(
            code,
            message.clone(),
            ErrorDetails::with_error_info(reason, ERROR_DOMAIN, metadata),
        )
    };
    let status = match err {
        Error::InvalidArgument { field, description } => Status::with_error_details(
            Code::InvalidArgument,
            message,
            ErrorDetails::with_bad_request_violation(field, description),
        ),
        Error::NotFound(id) => info(
            Code::NotFound,
            reason::GAME_NOT_FOUND,
            HashMap::from([("game_id".to_owned(), id)]),
        ),
        Error::AlreadyExists(id) => info(
            Code::AlreadyExists,
            reason::GAME_EXISTS,
            HashMap::from([("game_id".to_owned(), id)]),
        ),
        Error::GameOver { game_id, verdict } => info(
            Code::FailedPrecondition,
            reason::GAME_OVER,
            HashMap::from([
                ("game_id".to_owned(), game_id),
                ("code".to_owned(), verdict.code_name.clone()),
                ("winner".to_owned(), winner_name(verdict.winner).to_owned()),
                ("ply".to_owned(), verdict.ply.to_string()),
            ]),
        ),
        Error::FailedPrecondition(_) => Status::failed_precondition(message),
        Error::Ply {
            conflict,
            current_ply,
            ..
        } => info(
            Code::Aborted,
            conflict.reason(),
            HashMap::from([("current_ply".to_owned(), current_ply.to_string())]),
        ),
        Error::Contended(id) => info(
            Code::Aborted,
            reason::CONTENDED,
            HashMap::from([("game_id".to_owned(), id)]),
        ),
        Error::BusUnavailable(_) => {
            info(Code::Unavailable, reason::BUS_UNAVAILABLE, HashMap::new())
        }
        Error::OutcomeUnknown { msg_id, .. } => info(
            Code::Unavailable,
            reason::OUTCOME_UNKNOWN,
            HashMap::from([("msg_id".to_owned(), msg_id)]),
        ),
        Error::CorruptEvent {
            game_id, sequence, ..
        } => info(
            Code::Internal,
            reason::UNREADABLE_GAME,
            HashMap::from([
                ("game_id".to_owned(), game_id),
                ("sequence".to_owned(), sequence.to_string()),
            ]),
        ),
        Error::Config(_) | Error::Serve(_) | Error::Reflection(_) => Status::internal(message),
    };
    // Failures of the service, not of the request, are what an operator must see.
    match status.code() {
        Code::Internal => tracing::error!(status = %status.message(), "call failed: INTERNAL"),
        Code::Unavailable => tracing::warn!(status = %status.message(), "call failed: UNAVAILABLE"),
        _ => {}
    }
    status
}

fn winner_name(value: i32) -> &'static str {
    match shogi_proto::v1::Color::try_from(value) {
        Ok(shogi_proto::v1::Color::Black) => "black",
        Ok(shogi_proto::v1::Color::White) => "white",
        _ => "none",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
