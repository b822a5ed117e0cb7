//! The bus as the service uses it: any [`arbiter_bus::EventBus`] (JetStream, or the embedded
//! in-process bus), with its errors as this service's [`Error`]: a write that got no answer is
//! [`Error::OutcomeUnknown`] (it may be stored later), anything else that failed
//! [`Error::BusUnavailable`] (nothing was written).

use crate::error::Error;
use shogi_proto::event::Envelope;

pub use arbiter_bus::Published;

/// The bus of game events. The bus writes the current trace context (the call being served)
/// into every message it publishes.
#[derive(Debug, Clone)]
pub struct Bus {
    /// The bus itself, for reads.
    pub inner: arbiter_bus::Bus,
}

impl Bus {
    /// The service's view of `bus`.
    pub fn new(bus: arbiter_bus::Bus) -> Bus {
        Bus { inner: bus }
    }

    /// Publishes `out`, a message of the contract with its subject, `Nats-Msg-Id` and, when it
    /// names one, the subject's expected last sequence (0: the subject must be empty). While
    /// the bus is disconnected nothing is published: the client would hold the write and store
    /// it after the call has been answered.
    pub async fn write(&self, out: Envelope) -> Result<Published, Error> {
        self.write_outgoing(out.into()).await
    }

    /// Publishes `out` as [`Bus::write`] does: a message made from the contract's with the
    /// bus's own headers added (a message schedule).
    pub async fn write_outgoing(&self, out: arbiter_bus::Outgoing) -> Result<Published, Error> {
        if !self.inner.connected() {
            return Err(Error::BusUnavailable(format!(
                "not connected; {} was not written",
                out.msg_id
            )));
        }
        self.inner.publish(out).await.map_err(Error::unavailable)
    }
}

/// Reports on `shogi.store.used` the bytes the games' stream `stream` takes in its store, and
/// on `shogi.store.limit` the limit it is held to (the stream's own when it has one, else
/// `limit`: the deployment's `max_file_store`), every `interval` until `stop` turns `true`,
/// the first at once: one stream info a poll, so that an alert fires before writes are
/// refused (deploy/prometheus, `ShogiStoreNearLimit`).
pub async fn watch_usage(
    bus: arbiter_bus::Bus,
    stream: String,
    limit: Option<u64>,
    interval: std::time::Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut failing = false;
    loop {
        match bus.state().await {
            Ok(state) => {
                failing = false;
                arbiter_telemetry::metrics().record_store(
                    &stream,
                    state.bytes,
                    state.max_bytes.or(limit),
                );
            }
            Err(e) => {
                // Once a failure starts, not every tick while the bus is down.
                if !failing {
                    tracing::warn!(error = %e, "the store's use is not known");
                }
                failing = true;
            }
        }
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}
