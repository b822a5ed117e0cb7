//! The pipeline worker: one game log at a time, in order, once each, whatever the bus delivers.
//!
//! Invariants:
//! - A game's state is its [`Game`](shogi_adjudication::Game) and the stream sequence of the
//!   last log event judged. An event is judged only when it is the next ply; a delivery at or
//!   before the last judged
//!   sequence (or for a ply already played) is a duplicate and only acknowledged; a delivery
//!   past the next ply is a gap, filled by reading the game's log from the stream in order up
//!   to it. Nothing is guessed.
//! - A delivery is acknowledged only after what it caused is on the bus, so a crash before the
//!   ack judges it again, and judging again publishes nothing new: the notice on `.verdict`
//!   expects the subject empty. Exactly one verdict per game reaches the bus. A worker writes
//!   nothing into a game's log (its NATS account cannot). The announcement goes out in a task
//!   of its own when consuming, so that other games' events do not wait for it; a failed
//!   announcement forgets the game, and the redelivery rebuilds it from the bus.
//! - A verdict ends the game: later events are void (counted, acknowledged).
//! - Garbage (a message that does not decode, a ply that does not follow, an illegal move, an
//!   event for a game never created) is logged with its game id, counted and acknowledged; it
//!   never stops another game.
//! - Games are partitioned over the instances of a role by a hash of the game id, each
//!   instance with its own durable consumer, so one instance at a time judges a game, with no
//!   coordination but the bus.
//!
//! Code map, one file per job:
//! - `config`: what the parts share: the [`Role`], the [`WorkerConfig`], the [`Stats`] and the
//!   [`Error`];
//! - `acks`: the acknowledgements of a worker's deliveries, one message a run of them where
//!   the consumer takes an ack for every earlier delivery (ack policy `all`), sent only while
//!   nothing before it waits on an announcement;
//! - `judge`: the [`Worker`], its judging loop over the deliveries and the announcement of the
//!   verdicts it decides;
//! - `process`: a service process: the workers of an instance (`spawn_workers`, private to the
//!   crate, so that a process starts them only through the composition) as a part of the one
//!   composition ([`part`]), which serves health and drains.
//!
//! Imports go one way, with no loop: `config` and `acks` use none of the crate's modules, `telemetry`
//! uses `config`, `judge` uses `config` and `telemetry`, [`crate::lease`] uses `config` and
//! `judge`, and `process` uses them all; this file only names their public items again.

pub(crate) mod acks;
pub(crate) mod config;
pub(crate) mod judge;
pub(crate) mod process;

pub use config::{Error, Role, Stats, WorkerConfig};
pub use judge::Worker;
pub use process::{LeaseSettings, part};
