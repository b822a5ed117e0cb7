//! The bus: the JetStream stream that holds every game's events, and the few operations the
//! service needs on it (publish with deduplication and optimistic concurrency, read a game's
//! events in order, follow them live).

use crate::error::Error;
use async_nats::jetstream::{
    self, consumer,
    context::PublishErrorKind,
    message::PublishMessage,
    stream::{self, RawMessageErrorKind},
};
use bytes::Bytes;
use std::time::Duration;

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

/// What a publish did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    /// Stored at this stream sequence.
    Stored(u64),
    /// A message with the same `Nats-Msg-Id` was stored before (at this sequence): a retry.
    Duplicate(u64),
    /// The subject's last sequence was not the expected one: another writer got there first.
    Conflict,
}

/// The stream of game events.
#[derive(Debug, Clone)]
pub struct Bus {
    js: jetstream::Context,
    stream: stream::Stream,
}

impl Bus {
    /// Connects to NATS and creates the stream if it does not exist (file storage, subjects
    /// `shogi.game.>`, a 2-minute duplicate window for `Nats-Msg-Id`).
    pub async fn connect(url: &str, stream_name: &str, token: Option<&str>) -> Result<Bus, Error> {
        let mut options = async_nats::ConnectOptions::new()
            .name("move-validator")
            .connection_timeout(Duration::from_secs(5));
        if let Some(token) = token {
            options = options.token(token.to_owned());
        }
        let client = options
            .connect(url)
            .await
            .map_err(|e| Error::Bus(format!("connect to {url}: {e}")))?;
        let js = jetstream::new(client);
        let config = stream::Config {
            name: stream_name.to_owned(),
            subjects: vec![shogi_proto::STREAM_SUBJECTS.to_owned()],
            storage: stream::StorageType::File,
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        };
        let stream = match js.get_or_create_stream(config).await {
            Ok(stream) => stream,
            // Two instances starting together can both find no stream and both create it; the
            // server refuses the second ("subjects overlap with an existing stream"), and the
            // stream is there to take.
            Err(create) => js.get_stream(stream_name).await.map_err(|get| {
                Error::Bus(format!("stream {stream_name}: {create}; then: {get}"))
            })?,
        };
        Ok(Bus { js, stream })
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
        let mut msg = PublishMessage::build()
            .payload(payload)
            .message_id(msg_id)
            .header(shogi_proto::MESSAGE_TYPE_HEADER, message_type);
        let trace = TRACE_CONTEXT.try_with(Clone::clone).unwrap_or_default();
        if let Some(v) = trace.traceparent {
            msg = msg.header("traceparent", v.as_str());
        }
        if let Some(v) = trace.tracestate {
            msg = msg.header("tracestate", v.as_str());
        }
        if let Some(seq) = expected_subject_seq {
            msg = msg.expected_last_subject_sequence(seq);
        }
        let ack = match self.js.send_publish(subject, msg).await {
            Ok(future) => future.await,
            Err(e) => Err(e),
        };
        match ack {
            Ok(ack) if ack.duplicate => Ok(Published::Duplicate(ack.sequence)),
            Ok(ack) => Ok(Published::Stored(ack.sequence)),
            Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => Ok(Published::Conflict),
            Err(e) => Err(Error::bus(format!("publish {msg_id}: {e}"))),
        }
    }

    /// The first message at or after `from_seq` whose subject matches `filter` (wildcards
    /// allowed), or `None`.
    pub async fn next(
        &self,
        filter: &str,
        from_seq: u64,
    ) -> Result<Option<jetstream::message::StreamMessage>, Error> {
        let got = self
            .stream
            .raw_message_builder()
            .sequence(from_seq.max(1))
            .next_by_subject(filter.to_owned())
            .send()
            .await;
        match got {
            Ok(m) => Ok(Some(m)),
            Err(e) if matches!(e.kind(), RawMessageErrorKind::NoMessageFound) => Ok(None),
            Err(e) => Err(Error::bus(format!("read {filter} from {from_seq}: {e}"))),
        }
    }

    /// The last message on `subject`, or `None`.
    pub async fn last(
        &self,
        subject: &str,
    ) -> Result<Option<jetstream::message::StreamMessage>, Error> {
        match self.stream.get_last_raw_message_by_subject(subject).await {
            Ok(m) => Ok(Some(m)),
            Err(e) if matches!(e.kind(), RawMessageErrorKind::NoMessageFound) => Ok(None),
            Err(e) => Err(Error::bus(format!("read last of {subject}: {e}"))),
        }
    }

    /// An ordered consumer of every message matching `filter`, from the start of the stream.
    pub async fn follow(&self, filter: &str) -> Result<consumer::pull::Ordered, Error> {
        let consumer = self
            .stream
            .create_consumer(consumer::pull::OrderedConfig {
                filter_subject: filter.to_owned(),
                deliver_policy: consumer::DeliverPolicy::All,
                ..Default::default()
            })
            .await
            .map_err(|e| Error::bus(format!("follow {filter}: {e}")))?;
        consumer
            .messages()
            .await
            .map_err(|e| Error::bus(format!("follow {filter}: {e}")))
    }
}
