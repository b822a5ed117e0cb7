//! The CSA server protocol as shogi-server (the server behind floodgate) speaks it, so that
//! engines written for shogi-server play through the arbiter unchanged.
//!
//! Pure: no IO, no async runtime, no clock; it fails only through typed errors. The layers:
//!
//! - [`Command::parse`]: a client line (any bytes) into a typed [`Command`], or a
//!   [`ParseError`] saying what and where;
//! - [`GameName`]: `<base>-<total>-<byoyomi>[F]` into a [`TimeControl`] and a [`GameKind`];
//! - [`server`]: every server line, rendered byte for byte as shogi-server writes it
//!   ([`GameSummary`], [`GameEnd`], the x1 answers);
//! - [`ServerLine::parse`]: a server line read back, as a client meets it;
//! - [`Session`]: one connection's state machine, lines and [`Event`]s in, [`Output`]s out;
//! - [`Matcher`]: pairing by game name.
//!
//! docs/csa.md describes the dialect and where each of shogi-server's quirks lives in its code.

mod command;
mod game_name;
mod matcher;
mod moves;
pub mod server;
mod server_line;
mod session;

pub use command::{
    Command, CsaLoginRequest, Eol, Login, MAX_LINE_LEN, ParseError, ParseErrorKind, Turn, chomp,
};
pub use game_name::{
    GameKind, GameName, GameNameError, Handicap, IdentifierError, MAX_IDENTIFIER_LEN, TimeControl,
    check_identifier,
};
pub use matcher::{Matcher, Pairing, SeekRefusal};
pub use moves::{CsaMove, MoveError};
pub use server::{GameEnd, GameSummary, Outcome, ShowState, Status, TimedMove, WhoEntry};
pub use server_line::{ServerLine, ServerLineError};
pub use session::{Action, Event, Output, Session};

#[cfg(test)]
mod tests;
