//! The service's one error type and the one function that maps it to a gRPC status.

use std::collections::HashMap;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// The `google.rpc.ErrorInfo` domain of this service's errors.
pub const ERROR_DOMAIN: &str = "shogi-arbiter.move-validator";

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
    #[error("game {game_id} is over: {verdict}")]
    GameOver {
        /// The game.
        game_id: String,
        /// The verdict that ended it, as text.
        verdict: String,
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
    /// The bus failed (publish, read, connect).
    #[error("bus: {0}")]
    Bus(String),
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

    /// An [`Error::Bus`] from any bus error.
    pub fn bus(err: impl std::fmt::Display) -> Error {
        Error::Bus(err.to_string())
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
    match err {
        Error::InvalidArgument { field, description } => Status::with_error_details(
            Code::InvalidArgument,
            message,
            ErrorDetails::with_bad_request_violation(field, description),
        ),
        Error::NotFound(_) => Status::not_found(message),
        Error::AlreadyExists(_) => Status::already_exists(message),
        Error::GameOver { .. } | Error::FailedPrecondition(_) => {
            Status::failed_precondition(message)
        }
        Error::Ply {
            conflict,
            current_ply,
            ..
        } => Status::with_error_details(
            Code::Aborted,
            message,
            ErrorDetails::with_error_info(
                conflict.reason(),
                ERROR_DOMAIN,
                HashMap::from([("current_ply".to_owned(), current_ply.to_string())]),
            ),
        ),
        Error::Contended(_) => Status::aborted(message),
        Error::Bus(_) => Status::unavailable(message),
        Error::CorruptEvent { .. } | Error::Config(_) | Error::Serve(_) | Error::Reflection(_) => {
            Status::internal(message)
        }
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
