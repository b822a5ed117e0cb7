//! The bus: the stream that holds every game's events ([`arbiter_bus`]: JetStream or the
//! embedded bus), and the few operations the service needs on it (publish with deduplication
//! and optimistic concurrency, read a game's events in order, follow them live).

use crate::error::Error;
use bytes::Bytes;

pub use arbiter_bus::{Message, Published};

/// The bus of game events, as the service uses it: any [`arbiter_bus::EventBus`] (JetStream,
/// or the embedded in-process bus), with errors as this service's [`Error`]. The bus writes the
/// current trace context (the call being served) into every message it publishes.
#[derive(Debug, Clone)]
pub struct Bus {
    inner: arbiter_bus::Bus,
}

impl Bus {
    /// Connects to NATS and creates the stream if it does not exist (file storage, `replicas`
    /// copies, subjects `shogi.game.>`, a 2-minute duplicate window for `Nats-Msg-Id`).
    pub async fn connect(
        nats: &arbiter_bus::NatsOptions,
        stream_name: &str,
        replicas: usize,
    ) -> Result<Bus, Error> {
        let bus = arbiter_bus::JetStreamBus::connect(
            nats,
            "move-validator",
            &arbiter_bus::StreamSettings {
                replicas,
                ..arbiter_bus::StreamSettings::new(stream_name, shogi_proto::STREAM_SUBJECTS)
            },
        )
        .await
        .map_err(Error::bus)?;
        Ok(Bus::new(std::sync::Arc::new(bus)))
    }

    /// The service's view of `bus`.
    pub fn new(bus: arbiter_bus::Bus) -> Bus {
        Bus { inner: bus }
    }

    /// Publishes `payload`, a message of type `message_type` (see
    /// [`shogi_proto::MESSAGE_TYPE_HEADER`]), on `subject` with `Nats-Msg-Id: msg_id` and, when
    /// given, the subject's expected last sequence (0: the subject must be empty).
    pub async fn publish(
        &self,
        subject: String,
        message_type: &'static str,
        msg_id: &str,
        expected_subject_seq: Option<u64>,
        payload: Bytes,
    ) -> Result<Published, Error> {
        let mut out = arbiter_bus::Outgoing::new(subject, message_type, msg_id, payload);
        out.expected_subject_seq = expected_subject_seq;
        self.inner.publish(out).await.map_err(Error::bus)
    }

    /// The first message at or after `from_seq` whose subject matches `filter` (wildcards
    /// allowed), or `None`.
    pub async fn next(&self, filter: &str, from_seq: u64) -> Result<Option<Message>, Error> {
        self.inner.next(filter, from_seq).await.map_err(Error::bus)
    }

    /// The last message on `subject`, or `None`.
    pub async fn last(&self, subject: &str) -> Result<Option<Message>, Error> {
        self.inner.last(subject).await.map_err(Error::bus)
    }

    /// Every message matching `filter`, from the start of the stream, in order, then live.
    pub async fn follow(
        &self,
        filter: &str,
    ) -> Result<futures::stream::BoxStream<'static, Result<Message, arbiter_bus::BusError>>, Error>
    {
        self.inner.follow(filter).await.map_err(Error::bus)
    }
}
