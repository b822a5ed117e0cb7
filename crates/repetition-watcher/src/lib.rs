//! The repetition-watcher: consumes the games' move events from the bus with a durable
//! consumer and announces fourfold repetition (千日手) and perpetual check (連続王手の千日手)
//! with their evidence the moment the 4th occurrence is played, and the warnings before it
//! (3rd occurrence; a side whose every move since the first occurrence was a check).
//!
//! The consumer loop is [`pipeline`], shared with the impasse-judge, which runs it in the
//! [`pipeline::Role::Judge`] role. The rules are not here: every game is a
//! [`shogi_adjudication::Game`] fed the log's moves in order; a role announces only the
//! endings it owns.

pub mod cli;
pub mod lease;
pub mod pipeline;
mod telemetry;

pub use lease::{LeaseConfig, default_holder};
pub use pipeline::{
    Error, Role, ServiceConfig, Stats, Worker, WorkerConfig, run_service, spawn_workers,
};
