//! The event bus the arbiter's services share, as one trait, [`EventBus`], with two
//! implementations:
//!
//! - [`JetStreamBus`]: a NATS JetStream stream (file storage), for production and for several
//!   processes sharing games;
//! - [`MemoryBus`]: an embedded in-process bus with the same semantics, so that one process
//!   (`shogi-arbiter serve`) runs with nothing else installed.
//!
//! The trait covers exactly what the services need, and both implementations pass the same
//! behaviour suite (`tests/behaviour.rs`):
//!
//! - publish with a message id and an optional expected last sequence of the subject: a second
//!   publish with the same id stores nothing and reports the first one's sequence (unguarded,
//!   within the duplicate window; guarded, at any time, found after the expected sequence), and
//!   a wrong expected sequence otherwise stores nothing and reports a conflict;
//! - read the first message of a subject filter at or after a stream sequence, and the last
//!   message of a subject;
//! - tell the stream's last sequence and how many messages were removed from it, so that a
//!   reader that keeps what it read (ListGames' index) knows what is new and when to read again;
//! - follow a filter live from the start of the stream (ordered, ephemeral);
//! - consume a filter with a durable consumer: delivered at least once, acknowledged one by
//!   one, redelivered when not acknowledged within the ack wait; the consumer's position
//!   survives the consumer (and, for JetStream, the process).
//!
//! Sequences are stream sequences: one counter for the whole stream, so a subject's messages
//! have increasing, not consecutive, sequences.
//!
//! Every publish runs in a `publish` span (a producer span) whose W3C trace context is written
//! into the message's headers, and every stored message gives back the headers it was published
//! with, so that its consumers continue the publisher's trace.

#[cfg(feature = "clap")]
mod args;
mod connect;
mod consumer;
mod faulty;
mod jetstream;
mod memory;
mod schedule;
mod server_version;

#[cfg(feature = "clap")]
pub use args::{NatsArgs, ReplicasArgs, check_replicas};
pub use connect::{
    NatsOptions, NatsTls, PING_INTERVAL, Provision, Refusal, permissions_violations,
    refused_connections,
};
pub use consumer::{AckMode, ConsumerStorage, DeliveryMode, DurableConfig};
pub use faulty::FaultyBus;
pub use jetstream::{Applied, JetStreamBus, Replica, ReplicaGroup, deliver_subject};
pub use memory::MemoryBus;
pub use schedule::rfc3339_ms;
pub use server_version::{has_batched_gets, has_message_schedules, push_keeps_deliveries};

use bytes::Bytes;
use futures::stream::BoxStream;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tracing::Instrument as _;

/// A bus shared by the tasks of a process.
pub type Bus = Arc<dyn EventBus>;

/// The header every message carries with its full protobuf type name (the contract's).
pub use shogi_proto::MESSAGE_TYPE_HEADER;

/// The header that carries a guarded write's id (one with an expected subject sequence) in place
/// of `Nats-Msg-Id`: the expected sequence alone keeps a second copy out, at any time, so the
/// server keeps no duplicate window for it (issue 38: that window was most of nats-server's
/// heap); a refused copy is told from another writer's entry by this id, read back.
pub const GUARDED_ID_HEADER: &str = "Shogi-Msg-Id";

/// Everything that can go wrong on the bus. A conflict or a duplicate is an answer
/// ([`Published`]), not an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BusError {
    /// Connecting to the bus failed.
    #[error("connect: {0}")]
    Connect(String),
    /// The connection settings are not usable (a file missing or not what it should be, two
    /// ways to authenticate); nothing was tried.
    #[error("{0}")]
    Config(String),
    /// A server refused this client: its credentials, or the TLS handshake.
    #[error("refused by {servers} ({reason}): {detail}")]
    Refused {
        /// The servers tried.
        servers: String,
        /// Why, in short.
        reason: Refusal,
        /// What the client library said.
        detail: String,
    },
    /// A publish failed without an answer; it may or may not have been stored.
    #[error("publish {msg_id}: {reason}")]
    Publish {
        /// The message id of the publish.
        msg_id: String,
        /// Why.
        reason: String,
    },
    /// A publish the server answered with a refusal (a full store, a stream's limit, no
    /// stream for the subject), or that was never sent: nothing was stored.
    #[error("publish {msg_id} refused: {reason}")]
    PublishRefused {
        /// The message id of the publish.
        msg_id: String,
        /// Why.
        reason: String,
    },
    /// A read failed.
    #[error("read {filter}: {reason}")]
    Read {
        /// The subject or filter read.
        filter: String,
        /// Why.
        reason: String,
    },
    /// A stream or a durable consumer that this client only binds to ([`Provision::Bind`])
    /// does not exist. It stays missing until `shogi-arbiter streams apply` makes it: trying
    /// again soon is no use.
    #[error(
        "{what} does not exist, and this client only binds to it: \
         `shogi-arbiter streams apply` makes it"
    )]
    Missing {
        /// `stream SHOGI_GAMES`, `consumer impasse-judge-p3`.
        what: String,
    },
    /// A consumer could not be created or failed.
    #[error("consumer {name}: {reason}")]
    Consumer {
        /// The consumer's name (the filter for an ordered one).
        name: String,
        /// Why.
        reason: String,
    },
    /// An acknowledgement failed; the message will be redelivered.
    #[error("ack of {sequence}: {reason}")]
    Ack {
        /// The stream sequence acknowledged.
        sequence: u64,
        /// Why.
        reason: String,
    },
}

/// A message to publish.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The subject.
    pub subject: String,
    /// The [`MESSAGE_TYPE_HEADER`] value.
    pub message_type: &'static str,
    /// The write's id. Unguarded, it is the `Nats-Msg-Id`: the same id within the duplicate
    /// window is stored once. Guarded ([`Outgoing::expected_subject_seq`]), it is the
    /// [`GUARDED_ID_HEADER`]: the guard stores it once, and the id tells a retry of a stored
    /// write (a duplicate) from another writer's (a conflict).
    pub msg_id: String,
    /// The subject's expected last sequence (0: the subject must be empty), or none.
    pub expected_subject_seq: Option<u64>,
    /// Extra headers. The publish writes the current trace context (`traceparent`,
    /// `tracestate`) here, replacing any.
    pub headers: Vec<(String, String)>,
    /// The encoded message.
    pub payload: Bytes,
}

impl Outgoing {
    /// A message with no expected sequence and no extra headers.
    pub fn new(
        subject: impl Into<String>,
        message_type: &'static str,
        msg_id: impl Into<String>,
        payload: impl Into<Bytes>,
    ) -> Outgoing {
        Outgoing {
            subject: subject.into(),
            message_type,
            msg_id: msg_id.into(),
            expected_subject_seq: None,
            headers: Vec::new(),
            payload: payload.into(),
        }
    }

    /// The same message, stored only if the subject's last sequence is `seq`.
    pub fn expect(mut self, seq: u64) -> Outgoing {
        self.expected_subject_seq = Some(seq);
        self
    }
}

/// A message of the contract, encoded by it: subject, type, id, guard and headers as it says.
impl From<shogi_proto::event::Envelope> for Outgoing {
    fn from(e: shogi_proto::event::Envelope) -> Outgoing {
        Outgoing {
            subject: e.subject,
            message_type: e.message_type,
            msg_id: e.msg_id,
            expected_subject_seq: e.expected_subject_seq,
            headers: e.headers,
            payload: e.payload.into(),
        }
    }
}

impl Message {
    /// This message as an entry of a game's log, as [`shogi_proto::log::Replay`] reads it.
    pub fn entry(&self) -> shogi_proto::log::Entry<'_> {
        shogi_proto::log::Entry {
            sequence: self.sequence,
            message_type: self.message_type.as_deref(),
            payload: &self.payload,
        }
    }
}

/// What a publish did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    /// Stored at this stream sequence.
    Stored(u64),
    /// A message with the same id was stored before (at this sequence, never 0: a publish
    /// the server holds but has not stored is waited for, not a duplicate): a retry.
    Duplicate(u64),
    /// The subject's last sequence was not the expected one: another writer got there first.
    Conflict,
}

/// A stored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Its subject.
    pub subject: String,
    /// Its stream sequence.
    pub sequence: u64,
    /// Its [`MESSAGE_TYPE_HEADER`], if it has one.
    pub message_type: Option<String>,
    /// The headers it was published with ([`Outgoing::headers`]), without the bus's own
    /// (`Nats-*`, [`MESSAGE_TYPE_HEADER`]), in name order.
    pub headers: Vec<(String, String)>,
    /// When the bus stored it (the server's clock for JetStream), if the bus says.
    pub time: Option<SystemTime>,
    /// The encoded message.
    pub payload: Bytes,
}

/// A message delivered by a durable consumer; acknowledge it once handled, or it comes again.
pub struct Delivery {
    /// The message.
    pub message: Message,
    /// How many times it has been delivered, 1 the first time.
    pub delivered: u64,
    /// How many messages matching the consumer's filter were stored and not yet delivered
    /// when this one was delivered: the consumer's lag.
    pub pending: u64,
    /// What its ack acknowledges: with [`AckMode::Cumulative`], every earlier delivery of its
    /// consumer too.
    pub acks: AckMode,
    /// The consumer's delivery sequence of this delivery (JetStream's consumer sequence): one
    /// more for each delivery the consumer makes, to whichever subscriber, redeliveries
    /// included. A subscriber that sees a gap knows another one was delivered something.
    pub consumer_sequence: u64,
    acker: Box<dyn Acker>,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("message", &self.message)
            .field("delivered", &self.delivered)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

impl Delivery {
    /// Acknowledges the message: the consumer does not deliver it again.
    pub async fn ack(self) -> Result<(), BusError> {
        self.acker.ack(self.message.sequence).await
    }
}

/// How an implementation acknowledges one delivery.
#[async_trait::async_trait]
trait Acker: Send + Sync {
    async fn ack(&self, sequence: u64) -> Result<(), BusError>;
}

/// Where a durable consumer's deliveries and acknowledgements stand, as the bus reports it
/// now: what a worker with cumulative acks reads to know that every delivery pending is its own
/// (`arbiter-worker`'s `pipeline::acks`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsumerPosition {
    /// Messages delivered and not yet acknowledged (JetStream's `num_ack_pending`).
    pub ack_pending: u64,
    /// The consumer sequence of its latest delivery (JetStream's `delivered.consumer_seq`).
    pub delivered: u64,
    /// The stream sequence at and below which everything is acknowledged (JetStream's
    /// `ack_floor.stream_seq`).
    pub ack_floor: u64,
}

/// A durable consumer's lag, as the bus reports it now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsumerLag {
    /// Messages matching the consumer's filter not yet delivered (JetStream's `num_pending`).
    pub pending: u64,
    /// Messages delivered and not yet acknowledged (JetStream's `num_ack_pending`).
    pub ack_pending: u64,
}

impl ConsumerLag {
    /// Messages the consumer has not finished with: not delivered, or delivered and not
    /// acknowledged.
    pub fn total(&self) -> u64 {
        self.pending.saturating_add(self.ack_pending)
    }
}

/// Where the stream stands: what a reader that keeps what it has read compares with what it
/// saw last.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamState {
    /// The sequence of the last message stored (0: none yet).
    pub last_sequence: u64,
    /// How many stored messages have been removed since the stream was created (purged,
    /// deleted): a count that only grows while the stream lives. A reader that finds it
    /// changed knows that some message it read is gone.
    pub removed: u64,
    /// The bytes the stream's messages take in its store (0 on the embedded bus).
    pub bytes: u64,
    /// The stream's own byte limit, when it has one (the arbiter's streams have none: the
    /// server's `max_file_store` bounds them).
    pub max_bytes: Option<u64>,
}

/// The JetStream stream the bus lives in.
#[derive(Debug, Clone)]
pub struct StreamSettings {
    /// Its name.
    pub name: String,
    /// The subjects it stores.
    pub subjects: Vec<String>,
    /// How many servers keep a copy (1, or 3 on a cluster), at most [`MAX_REPLICAS`]. Used
    /// when the stream is created; an existing stream keeps its own count.
    pub replicas: usize,
    /// Messages kept per subject, the oldest dropped first; `None`: all.
    pub max_messages_per_subject: Option<i64>,
    /// Messages older than this are dropped; `None`: none is.
    pub max_age: Option<Duration>,
    /// The stream republishes what it stores on subjects matching the first (a filter) to the
    /// second (a subject transform, `{{wildcard(1)}}` for the first wildcard's token), so that a
    /// core subscriber of the second hears each stored message exactly once, never a publish
    /// the stream refused or deduplicated. Added to an existing stream that lacks it.
    pub republish: Option<(String, String)>,
    /// Whether the stream honours message schedules (a message with a `Nats-Schedule: @at
    /// <time>` header publishes a copy of itself to its `Nats-Schedule-Target` at that time,
    /// and a later one on the same subject replaces it), on nats-server 2.12 or later. Added to
    /// an existing stream that lacks it, where the server has them.
    pub message_schedules: bool,
}

/// The most replicas JetStream allows a stream.
pub const MAX_REPLICAS: usize = 5;

impl StreamSettings {
    /// The stream `name` over `subjects`, one replica.
    pub fn new(name: impl Into<String>, subjects: impl Into<String>) -> StreamSettings {
        StreamSettings {
            name: name.into(),
            subjects: vec![subjects.into()],
            replicas: 1,
            max_messages_per_subject: None,
            max_age: None,
            republish: None,
            message_schedules: false,
        }
    }
}

/// The operations the arbiter's services need from the bus.
#[async_trait::async_trait]
pub trait EventBus: Send + Sync + std::fmt::Debug {
    /// Whether the bus is reachable now: a JetStream bus while its connection is up (a publish
    /// made while it is down is held by the client and may be stored later), an embedded one
    /// always.
    fn connected(&self) -> bool {
        true
    }

    /// Publishes `msg`: stored, a duplicate of an earlier publish, or a conflict.
    async fn publish(&self, msg: Outgoing) -> Result<Published, BusError>;

    /// The first message at or after stream sequence `from_seq` whose subject matches
    /// `filter`, or `None`.
    async fn next(&self, filter: &str, from_seq: u64) -> Result<Option<Message>, BusError>;

    /// Up to `max` (at least one) of the messages at or after stream sequence `from_seq`
    /// whose subject matches `filter`, in stream order, in as few requests as the bus allows:
    /// a reader of many ([`EventBus::next`] one at a time costs a request each). Possibly
    /// fewer than `max` while more are stored; empty only when [`EventBus::next`] would find
    /// none, so a reader goes on from the last one's sequence until it gets none.
    ///
    /// On JetStream a batch also costs nats-server a count of what it leaves pending over the
    /// stream's blocks from `from_seq` on: for a reader of one place of the stream (a game's
    /// log), not for a wildcard read again and again over a growing stream, which cost the
    /// server its memory (docs/benchmarks-history.md, "Batched reads").
    async fn next_batch(
        &self,
        filter: &str,
        from_seq: u64,
        max: usize,
    ) -> Result<Vec<Message>, BusError> {
        let _ = max;
        Ok(self.next(filter, from_seq).await?.into_iter().collect())
    }

    /// The last message on `subject`, or `None`.
    async fn last(&self, subject: &str) -> Result<Option<Message>, BusError>;

    /// The stream's last sequence and how many of its messages were removed so far, in one
    /// request.
    async fn state(&self) -> Result<StreamState, BusError>;

    /// Every message matching `filter`, from the start of the stream, in order, then live.
    async fn follow(
        &self,
        filter: &str,
    ) -> Result<BoxStream<'static, Result<Message, BusError>>, BusError>;

    /// The deliveries of the durable consumer `config.name` (created when missing).
    async fn consume(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<Delivery, BusError>>, BusError>;

    /// The lag of the durable consumer `name` as the bus knows it now, whoever consumes it
    /// and whether anyone does; `None` when there is no such consumer.
    async fn consumer_lag(&self, name: &str) -> Result<Option<ConsumerLag>, BusError>;

    /// The durable consumer `name`'s deliveries and acknowledgements now, if it exists.
    async fn consumer_position(&self, name: &str) -> Result<Option<ConsumerPosition>, BusError>;

    /// Whether the bus honours message schedules ([`Outgoing::schedule_at`]): `Ok`, or why
    /// not, in words that name the server's version.
    fn schedules(&self) -> Result<(), String> {
        Err("this bus keeps no message schedules".into())
    }
}

/// The header of a scheduled message: `@at <RFC 3339 time>` (nats-server 2.12+).
pub const SCHEDULE_HEADER: &str = "Nats-Schedule";
/// The header naming where a scheduled message is published when it fires.
pub const SCHEDULE_TARGET_HEADER: &str = "Nats-Schedule-Target";
/// The header a fired message carries: the subject of the schedule that fired it.
pub const SCHEDULER_HEADER: &str = "Nats-Scheduler";

/// Runs `store` (an implementation's publish) in a `publish` span whose trace context is
/// written into the message's headers first, and records on the span what the publish did.
async fn traced_publish<F, Fut>(mut out: Outgoing, store: F) -> Result<Published, BusError>
where
    F: FnOnce(Outgoing) -> Fut,
    Fut: Future<Output = Result<Published, BusError>>,
{
    let span = tracing::info_span!(
        "publish",
        otel.kind = "producer",
        messaging.system = "nats",
        messaging.destination.name = %out.subject,
        messaging.message.id = %out.msg_id,
        outcome = tracing::field::Empty,
    );
    async move {
        arbiter_telemetry::propagation::inject(&mut out.headers);
        let published = store(out).await;
        let outcome = match &published {
            Ok(Published::Stored(_)) => "stored",
            Ok(Published::Duplicate(_)) => "duplicate",
            Ok(Published::Conflict) => "conflict",
            Err(_) => "error",
        };
        tracing::Span::current().record("outcome", outcome);
        published
    }
    .instrument(span)
    .await
}

/// Whether `subject` matches the NATS subject `filter` (`*`: one token, `>`: the rest).
pub fn subject_matches(filter: &str, subject: &str) -> bool {
    let mut subject_tokens = subject.split('.');
    for f in filter.split('.') {
        match (f, subject_tokens.next()) {
            (">", Some(_)) => return true,
            ("*", Some(_)) => {}
            (f, Some(s)) if f == s => {}
            _ => return false,
        }
    }
    subject_tokens.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::subject_matches;

    #[test]
    fn a_copy_behind_or_offline_or_no_leader_is_not_current() {
        use super::{Replica, ReplicaGroup};
        use std::time::Duration;
        let copy = |server: &str, current: bool, offline: bool| Replica {
            server: server.into(),
            current,
            offline,
            lag: (!current).then_some(1234),
            seen: Duration::from_millis(200),
        };
        let group = |leader: Option<&str>, replicas| ReplicaGroup {
            name: "SHOGI_GAMES".into(),
            clustered: true,
            leader: leader.map(Into::into),
            replicas,
        };
        let all = group(
            Some("n0"),
            vec![copy("n1", true, false), copy("n2", true, false)],
        );
        assert!(all.is_current());
        assert_eq!(
            all.to_string(),
            "SHOGI_GAMES: led by n0; n1 current; n2 current"
        );
        let behind = group(
            Some("n0"),
            vec![copy("n1", true, false), copy("n2", false, false)],
        );
        assert!(!behind.is_current());
        assert_eq!(
            behind.to_string(),
            "SHOGI_GAMES: led by n0; n1 current; n2 behind (lag 1234, seen 0.2 s ago)"
        );
        assert!(!group(Some("n0"), vec![copy("n1", true, true)]).is_current());
        assert!(!group(None, vec![]).is_current());
        let single = ReplicaGroup {
            clustered: false,
            ..group(None, vec![])
        };
        assert!(single.is_current());
        assert_eq!(single.to_string(), "SHOGI_GAMES: on a single server");
    }

    #[test]
    fn wildcards_match_as_in_nats() {
        assert!(subject_matches("shogi.game.*.move", "shogi.game.g1.move"));
        assert!(!subject_matches(
            "shogi.game.*.move",
            "shogi.game.g1.verdict"
        ));
        assert!(subject_matches("shogi.game.>", "shogi.game.g1.move"));
        assert!(subject_matches("shogi.game.g1.>", "shogi.game.g1.move"));
        assert!(!subject_matches("shogi.game.g1.>", "shogi.game.g1"));
        assert!(!subject_matches("shogi.game.g1", "shogi.game.g1.move"));
        assert!(subject_matches("a.b", "a.b"));
    }
}
