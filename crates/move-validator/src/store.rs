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
