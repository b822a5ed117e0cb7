//! The pipeline worker, one library for both roles: the repetition-watcher announces fourfold
//! repetition (千日手) and perpetual check (連続王手の千日手) with their evidence the moment the
//! 4th occurrence is played, and the warnings before it; the impasse-judge announces move caps,
//! declarations and every other ending the game's log records or its moves decide. Which role
//! announces what is the adjudication layer's [`shogi_adjudication::ResultCode::announcer`].
//!
//! Both consume the games' logs by partition ([`pipeline`]), in order and once each, sharing
//! the partitions among their live instances by lease ([`lease`]) or by a fixed share. The rules
//! are not here: every game is the contract crate's one replay of its log
//! ([`shogi_proto::log::Replay`]), as every service reads it. The two binaries are thin shells
//! over [`cli::main`].

pub mod cli;
pub mod lease;
pub mod pipeline;
mod telemetry;

pub use lease::{LeaseConfig, default_holder};
pub use pipeline::{Error, LeaseSettings, Role, Stats, Worker, WorkerConfig, part};
pub use telemetry::poll_lag;
