//! What every arbiter service runs on, in one place:
//!
//! - [`compose`]: the one composition every process starts through: its parts over one bus,
//!   with one health, one follower of it and one drain;
//! - [`games`]: a game read from the bus (its creation event and its log) through the one
//!   replay of the contract crate ([`shogi_proto::log::Replay`]), with entries that cannot be
//!   applied set aside on the bus, counted and logged the same way by every service
//!   ([`games::GameLog`], [`games::AsideLedger`]);
//! - [`lag`]: the lag of durable consumers, polled from the bus for the `shogi.consumer.lag`
//!   gauge;
//! - [`grpc`]: the one gRPC bootstrap (health, reflection, drain on shutdown) that the
//!   validator and the workers' health endpoints share;
//! - [`streams`]: the arbiter's streams, and the one function that opens a process's bus
//!   ([`streams::open`]);
//! - [`tls`]: TLS towards the validator's gRPC for its clients, and the PEM checks the
//!   validator's server TLS shares;
//! - [`shutdown_signal`]: the first SIGTERM or SIGINT.

pub mod compose;
pub mod games;
pub mod grpc;
pub mod lag;
pub mod streams;
pub mod tls;

/// A future that completes on the first SIGTERM or SIGINT. The handlers are installed here, at
/// once, so that a signal arriving before the future is first polled still drains instead of
/// killing the process.
pub fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()> + Send> {
    use anyhow::Context as _;
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("listen for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("listen for SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM"),
            _ = int.recv() => tracing::info!("SIGINT"),
        }
    })
}
