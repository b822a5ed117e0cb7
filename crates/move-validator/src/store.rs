//! The bus: the stream that holds every game's events ([`arbiter_bus`]: JetStream or the
//! embedded bus), and the few operations the service needs on it (publish with deduplication
//! and optimistic concurrency, read a game's events in order, follow them live).

use crate::error::Error;
use bytes::Bytes;

/// The W3C trace context (`traceparent`, `tracestate`) of the call being served, carried from
/// the gRPC request's metadata onto every message the call publishes, so that a consumer of the
/// bus can join the caller's trace.
#[derive(Debug, Clone, Default)]
pub struct TraceContext {
    traceparent: Option<String>,
    tracestate: Option<String>,
}

tokio::task_local! {
    static TRACE_CONTEXT: TraceContext;
}

impl TraceContext {
    /// The trace context a request carries, if any.
    pub fn from_metadata(metadata: &tonic::metadata::MetadataMap) -> TraceContext {
        let get = |key: &str| {
            metadata
                .get(key)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        TraceContext {
            traceparent: get("traceparent"),
            tracestate: get("tracestate"),
        }
    }

    /// Runs `fut` with this trace context for the publishes it makes.
    pub async fn scope<F: std::future::Future>(self, fut: F) -> F::Output {
        TRACE_CONTEXT.scope(self, fut).await
    }
}

pub use arbiter_bus::{Message, Published};

/// The bus of game events, as the service uses it: any [`arbiter_bus::EventBus`] (JetStream,
/// or the embedded in-process bus), with errors as this service's [`Error`] and the trace
/// context of the call being served added to every publish.
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
        let trace = TRACE_CONTEXT.try_with(Clone::clone).unwrap_or_default();
        if let Some(v) = trace.traceparent {
            out.headers.push(("traceparent".to_owned(), v));
        }
        if let Some(v) = trace.tracestate {
            out.headers.push(("tracestate".to_owned(), v));
        }
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
