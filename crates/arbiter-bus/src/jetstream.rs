//! [`EventBus`] over a NATS JetStream stream.

use crate::{
    Acker, BusError, ConsumerLag, Delivery, DeliveryMode, DurableConfig, EventBus, MAX_REPLICAS,
    MESSAGE_TYPE_HEADER, Message, NatsOptions, Outgoing, Provision, Published, StreamSettings,
};
use async_nats::jetstream::{
    self, AckKind, ErrorCode, consumer,
    context::PublishErrorKind,
    message::PublishMessage,
    stream::{self, RawMessageErrorKind},
};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::time::Duration;

/// A JetStream stream of game events.
#[derive(Debug, Clone)]
pub struct JetStreamBus {
    client: async_nats::Client,
    js: jetstream::Context,
    stream: stream::Stream,
    provision: Provision,
}

impl JetStreamBus {
    /// Connects to NATS as `client_name` with `nats`, and creates the stream `stream` if it
    /// does not exist (file storage, `stream.replicas` copies, a 2-minute duplicate window for
    /// message ids). An existing stream is left as it is; if its replica count differs from
    /// `stream.replicas`, a warning says how to change it.
    pub async fn connect(
        nats: &NatsOptions,
        client_name: &str,
        stream: &StreamSettings,
    ) -> Result<JetStreamBus, BusError> {
        if !(1..=MAX_REPLICAS).contains(&stream.replicas) {
            return Err(BusError::Connect(format!(
                "stream {}: {} replicas is not in 1..={MAX_REPLICAS}",
                stream.name, stream.replicas
            )));
        }
        // Checked, and a refusal by the server an error at once (see `connect.rs`).
        let client = nats.connect(client_name).await?;
        let js = match &nats.api_prefix {
            Some(prefix) => jetstream::with_prefix(client.clone(), prefix),
            None => jetstream::new(client.clone()),
        };
        let stream = open_stream(&js, stream, nats.provision).await?;
        Ok(JetStreamBus {
            client,
            js,
            stream,
            provision: nats.provision,
        })
    }
}

impl JetStreamBus {
    /// The same connection over another stream, `settings`, created if it does not exist:
    /// reads go to that stream (publishes go wherever their subject is stored).
    pub async fn with_stream(&self, settings: &StreamSettings) -> Result<JetStreamBus, BusError> {
        let stream = open_stream(&self.js, settings, self.provision).await?;
        Ok(JetStreamBus {
            client: self.client.clone(),
            js: self.js.clone(),
            stream,
            provision: self.provision,
        })
    }

    /// Creates the durable consumer `config` on this stream, or brings an existing one to
    /// `config` (ack wait, max ack pending, max deliver, filter): what `shogi-arbiter streams
    /// apply` does for the workers, which then only bind to it ([`Provision::Bind`]). Whether
    /// it was created, updated or already so.
    pub async fn apply_durable(&self, config: &DurableConfig) -> Result<Applied, BusError> {
        let err = |e: &dyn std::fmt::Display| BusError::Consumer {
            name: config.name.clone(),
            reason: e.to_string(),
        };
        let wanted = durable_config(config);
        match self
            .stream
            .get_consumer::<consumer::pull::Config>(&config.name)
            .await
        {
            Ok(existing) => {
                if differences(&existing.cached_info().config, &wanted).is_empty() {
                    return Ok(Applied::Unchanged);
                }
                self.stream
                    .update_consumer(wanted)
                    .await
                    .map_err(|e| err(&e))?;
                Ok(Applied::Updated)
            }
            Err(_) => {
                self.stream
                    .create_consumer(wanted)
                    .await
                    .map_err(|e| err(&e))?;
                Ok(Applied::Created)
            }
        }
    }

    /// Removes every message of this stream whose subject matches `filter` (the retention of
    /// a finished game, `shogi.game.<id>.>`); how many were removed.
    pub async fn purge_subject(&self, filter: &str) -> Result<u64, BusError> {
        self.stream
            .purge()
            .filter(filter)
            .await
            .map(|p| p.purged)
            .map_err(|e| BusError::Read {
                filter: filter.to_owned(),
                reason: format!("purge: {e}"),
            })
    }

    /// The stream's name and its configuration as the server has it.
    pub async fn stream_config(&self) -> Result<stream::Config, BusError> {
        let mut s = self.stream.clone();
        s.info()
            .await
            .map(|i| i.config.clone())
            .map_err(|e| BusError::Connect(format!("stream {}: {e}", s.cached_info().config.name)))
    }
}

/// What [`JetStreamBus::apply_durable`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// It did not exist and was created.
    Created,
    /// It existed with other settings and was updated.
    Updated,
    /// It existed as asked.
    Unchanged,
}

/// The JetStream configuration of the durable pull consumer `config`.
fn durable_config(config: &DurableConfig) -> consumer::pull::Config {
    consumer::pull::Config {
        durable_name: Some(config.name.clone()),
        filter_subject: config.filter.clone(),
        ack_policy: consumer::AckPolicy::Explicit,
        ack_wait: config.ack_wait,
        max_ack_pending: i64::try_from(config.max_ack_pending).unwrap_or(i64::MAX),
        // -1: no limit (the server's default, set explicitly).
        max_deliver: config
            .max_deliver
            .map_or(-1, |n| i64::try_from(n.max(1)).unwrap_or(i64::MAX)),
        deliver_policy: consumer::DeliverPolicy::All,
        // 0: the stream's replica count.
        num_replicas: config.replicas.unwrap_or(0),
        ..Default::default()
    }
}

/// The deliveries of a consumer's `messages`.
fn deliveries(
    name: String,
    messages: BoxStream<'static, Result<jetstream::Message, String>>,
) -> BoxStream<'static, Result<Delivery, BusError>> {
    messages
        .map(move |m| match m {
            Ok(m) => {
                let info = m.info().ok();
                let (sequence, delivered, pending) = info
                    .as_ref()
                    .map(|i| (i.stream_sequence, i.delivered.max(1) as u64, i.pending))
                    .unwrap_or((0, 1, 0));
                let message = Message {
                    subject: m.subject.to_string(),
                    sequence,
                    message_type: message_type(m.headers.as_ref()),
                    headers: headers(m.headers.as_ref()),
                    time: info.map(|i| i.published.into()),
                    payload: m.payload.clone(),
                };
                Ok(Delivery {
                    message,
                    delivered,
                    pending,
                    acker: Box::new(JsAcker(m)),
                })
            }
            Err(e) => Err(BusError::Consumer {
                name: name.clone(),
                reason: e.to_string(),
            }),
        })
        .boxed()
}

/// Where the push consumer `name` delivers ([`DeliveryMode::Push`]).
pub fn deliver_subject(name: &str) -> String {
    format!("shogi.deliver.{name}")
}

/// The JetStream configuration of the durable push consumer `config`: as the pull consumer's
/// ([`durable_config`]), delivered with flow control to [`deliver_subject`], to a queue group
/// of its name.
fn push_config(config: &DurableConfig) -> consumer::push::Config {
    consumer::push::Config {
        durable_name: Some(config.name.clone()),
        deliver_subject: deliver_subject(&config.name),
        deliver_group: Some(config.name.clone()),
        filter_subject: config.filter.clone(),
        ack_policy: consumer::AckPolicy::Explicit,
        ack_wait: config.ack_wait,
        max_ack_pending: i64::try_from(config.max_ack_pending).unwrap_or(i64::MAX),
        max_deliver: config
            .max_deliver
            .map_or(-1, |n| i64::try_from(n.max(1)).unwrap_or(i64::MAX)),
        deliver_policy: consumer::DeliverPolicy::All,
        num_replicas: config.replicas.unwrap_or(0),
        // Flow control is what lets a replicated consumer send before its Raft group agrees.
        flow_control: true,
        idle_heartbeat: PULL_HEARTBEAT,
        ..Default::default()
    }
}

/// How long a pull request of the consumers waits for messages before a new one is sent.
const PULL_EXPIRES: Duration = Duration::from_secs(5);
/// The idle heartbeat of the consumers' pull requests: two missed, and the pull is sent again.
const PULL_HEARTBEAT: Duration = Duration::from_secs(2);

/// The messages of `consumer`, pulled in short requests: a pull request waiting on a server
/// that dies is only noticed after two missed heartbeats, then sent again to the consumer's new
/// leader; with async-nats's defaults (30 s pulls, 15 s heartbeats) a partition could wait
/// 30 s after a node loss.
async fn pull(
    consumer: &consumer::PullConsumer,
) -> Result<consumer::pull::Stream, consumer::StreamError> {
    consumer
        .stream()
        .expires(PULL_EXPIRES)
        .heartbeat(PULL_HEARTBEAT)
        .messages()
        .await
}

/// The wait before a stream's set-up is tried again after a transient refusal; it doubles up
/// to [`MAX_SETUP_BACKOFF`].
const FIRST_SETUP_BACKOFF: Duration = Duration::from_millis(250);

/// The longest wait between two tries of a stream's set-up.
const MAX_SETUP_BACKOFF: Duration = Duration::from_secs(5);

/// Whether a JetStream API error says "not now" rather than "no": the request timed out or had
/// no responder (a just-started or busy server, a cluster still electing its meta leader), or
/// the cluster cannot place or serve the stream yet (too few peers for its replicas, no leader,
/// a peer joining). Such an answer changes by itself within seconds, so a service waits it out
/// instead of exiting (issue 18: both watchers of the cluster test exited at start on "stream
/// SHOGI_LEASES: jetstream request timed out").
fn transient_code(code: jetstream::ErrorCode) -> bool {
    use jetstream::ErrorCode as C;
    [
        C::CLUSTER_NO_PEERS,
        C::CLUSTER_NOT_AVAILABLE,
        C::CLUSTER_INCOMPLETE,
        C::CLUSTER_NOT_ACTIVE,
        C::CLUSTER_NOT_ASSIGNED,
        C::CLUSTER_NOT_LEADER,
        C::CLUSTER_SERVER_MEMBER_CHANGE_INFLIGHT,
    ]
    .contains(&code)
}

fn transient_create(e: &jetstream::context::CreateStreamError) -> bool {
    use jetstream::context::CreateStreamErrorKind as K;
    match e.kind() {
        K::TimedOut | K::JetStreamUnavailable | K::Response => true,
        K::JetStream(js) => transient_code(js.error_code()),
        _ => false,
    }
}

fn transient_get(e: &jetstream::context::GetStreamError) -> bool {
    use jetstream::context::GetStreamErrorKind as K;
    match e.kind() {
        K::Request => true,
        K::JetStream(js) => transient_code(js.error_code()),
        _ => false,
    }
}

/// One try of a stream's set-up: done, or refused for now with the reason.
enum Try<T> {
    Done(T),
    Again(String),
}

/// Runs `attempt` until it is done or fails for good, waiting between tries with a backoff of up
/// to [`MAX_SETUP_BACKOFF`], as long as it takes (as [`NatsOptions::connect`] waits for a
/// server). The first transient refusal is logged at WARN, then every tenth; a service whose
/// JetStream never answers keeps saying so, and its health stays NOT_SERVING.
async fn until_done<T, F, Fut>(stream: &str, mut attempt: F) -> Result<T, BusError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Try<T>, BusError>>,
{
    let started = std::time::Instant::now();
    let mut backoff = FIRST_SETUP_BACKOFF;
    for tries in 1u64.. {
        let reason = match attempt().await? {
            Try::Done(done) => {
                if tries > 1 {
                    tracing::info!(stream, tries, waited = ?started.elapsed(), "stream set up");
                }
                return Ok(done);
            }
            Try::Again(reason) => reason,
        };
        if tries % 10 == 1 {
            tracing::warn!(
                stream,
                tries,
                waited = ?started.elapsed(),
                error = reason,
                "JetStream cannot set the stream up yet; trying again"
            );
        } else {
            tracing::debug!(
                stream,
                tries,
                error = reason,
                "stream set-up refused for now"
            );
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_SETUP_BACKOFF);
    }
    unreachable!("u64 tries run out")
}

/// The settings of durable consumer `found` that are not as `wanted`, by name.
fn differences(found: &consumer::Config, wanted: &consumer::pull::Config) -> Vec<&'static str> {
    [
        (
            "filter subject",
            found.filter_subject == wanted.filter_subject,
        ),
        ("ack wait", found.ack_wait == wanted.ack_wait),
        (
            "max ack pending",
            found.max_ack_pending == wanted.max_ack_pending,
        ),
        ("max deliver", found.max_deliver == wanted.max_deliver),
        (
            "replicas",
            wanted.num_replicas == 0 || found.num_replicas == wanted.num_replicas,
        ),
    ]
    .into_iter()
    .filter(|(_, same)| !same)
    .map(|(name, _)| name)
    .collect()
}

/// Gets the stream `settings.name`, creating it as `settings` says when it does not exist
/// (file storage, a 2-minute duplicate window for message ids).
async fn open_stream(
    js: &jetstream::Context,
    settings: &StreamSettings,
    provision: Provision,
) -> Result<stream::Stream, BusError> {
    let stream_name = settings.name.as_str();
    if provision == Provision::Bind {
        return bind_stream(js, settings).await;
    }
    let config = stream::Config {
        name: stream_name.to_owned(),
        subjects: settings.subjects.clone(),
        num_replicas: settings.replicas,
        storage: stream::StorageType::File,
        duplicate_window: Duration::from_secs(120),
        max_messages_per_subject: settings.max_messages_per_subject.unwrap_or(-1),
        max_age: settings.max_age.unwrap_or_default(),
        republish: republish_of(settings),
        ..Default::default()
    };
    let republish = config.republish.clone();
    let stream = until_done(stream_name, || async {
        match js.get_or_create_stream(config.clone()).await {
            Ok(stream) => Ok(Try::Done(stream)),
            Err(e) if transient_create(&e) => Ok(Try::Again(e.to_string())),
            // Two instances starting together can both find no stream and both create it;
            // the server refuses the second, and the stream is there to take.
            Err(create) => match js.get_stream(stream_name).await {
                Ok(stream) => Ok(Try::Done(stream)),
                Err(get) if transient_get(&get) => Ok(Try::Again(get.to_string())),
                Err(get) => Err(BusError::Connect(format!(
                    "stream {stream_name}: {create}; then: {get}"
                ))),
            },
        }
    })
    .await?;
    // A stream made before the republish was part of the contract gets it: it only adds a
    // core subject, and every instance asks for the same one.
    let mut stream = stream;
    if republish.is_some() && stream.cached_info().config.republish != republish {
        let mut updated = stream.cached_info().config.clone();
        updated.republish = republish;
        stream = update(js, stream, updated, "the republish of stored verdicts").await?;
    }
    // An age limit the settings have and the stream lacks (SHOGI_ASIDE made before it had
    // one, issue 20) is added the same way: every instance asks for the same one.
    if let Some(max_age) = settings.max_age
        && stream.cached_info().config.max_age != max_age
    {
        let mut updated = stream.cached_info().config.clone();
        updated.max_age = max_age;
        stream = update(js, stream, updated, "the age limit").await?;
    }
    // Not changed here: two services configured differently would change it back and
    // forth. Changing it is an operator's decision (deploy/STREAMS.md).
    warn_on_other_replicas(&stream, settings);
    Ok(stream)
}

/// Gives `stream` the configuration `updated`, which adds `what` to it; the stream as it is then
/// (as it was, with a warning, when the server refuses).
async fn update(
    js: &jetstream::Context,
    stream: stream::Stream,
    updated: stream::Config,
    what: &str,
) -> Result<stream::Stream, BusError> {
    let name = updated.name.clone();
    match js.update_stream(updated).await {
        Ok(_) => {
            tracing::info!(stream = %name, "{what} added");
            js.get_stream(&name)
                .await
                .map_err(|e| BusError::Connect(format!("stream {name}: {e}")))
        }
        Err(e) => {
            tracing::warn!(stream = %name, error = %e, "the stream lacks {what} and could not be updated");
            Ok(stream)
        }
    }
}

/// Logs, naming the command that changes it, a stream found with a replica count other than
/// `settings.replicas`.
fn warn_on_other_replicas(stream: &stream::Stream, settings: &StreamSettings) {
    let (name, replicas) = (settings.name.as_str(), settings.replicas);
    let found = stream.cached_info().config.num_replicas;
    if found != replicas {
        tracing::warn!(
            stream = name,
            replicas = found,
            configured = replicas,
            "the stream exists with another replica count and is left so; to change it: \
             nats stream edit {name} --replicas {replicas}"
        );
    }
}

/// The JetStream republish of `settings` (stored messages on its source subjects sent on to
/// core NATS).
fn republish_of(settings: &StreamSettings) -> Option<stream::Republish> {
    settings
        .republish
        .as_ref()
        .map(|(source, destination)| stream::Republish {
            source: source.clone(),
            destination: destination.clone(),
            headers_only: false,
        })
}

/// Looks the stream `settings.name` up without creating or changing it ([`Provision::Bind`]);
/// a missing stream is an error that names the command that creates it, and settings that
/// differ from `settings` are logged.
async fn bind_stream(
    js: &jetstream::Context,
    settings: &StreamSettings,
) -> Result<stream::Stream, BusError> {
    let name = settings.name.as_str();
    let stream = until_done(name, || async {
        match js.get_stream(name).await {
            Ok(stream) => Ok(Try::Done(stream)),
            Err(e) if transient_get(&e) => Ok(Try::Again(e.to_string())),
            Err(e) => Err(BusError::Connect(format!(
                "stream {name}: {e}; this service only binds to its streams \
                 (ARBITER_STREAMS=bind): create them with `shogi-arbiter streams apply`"
            ))),
        }
    })
    .await?;
    let found = &stream.cached_info().config;
    let republish = republish_of(settings);
    if republish.is_some() && found.republish != republish {
        tracing::warn!(
            stream = name,
            "the stream lacks the republish of stored verdicts: run `shogi-arbiter streams apply`"
        );
    }
    warn_on_other_replicas(&stream, settings);
    Ok(stream)
}

fn message_type(headers: Option<&async_nats::HeaderMap>) -> Option<String> {
    headers
        .and_then(|h| h.get(MESSAGE_TYPE_HEADER))
        .map(|v| v.as_str().to_owned())
}

/// The headers a message was published with, without the bus's own, in name order.
fn headers(headers: Option<&async_nats::HeaderMap>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = headers
        .into_iter()
        .flat_map(|h| h.iter())
        .filter(|(name, _)| {
            let name: &str = name.as_ref();
            !name.starts_with("Nats-") && name != MESSAGE_TYPE_HEADER
        })
        .flat_map(|(name, values)| {
            values
                .iter()
                .map(move |v| (name.to_string(), v.as_str().to_owned()))
        })
        .collect();
    out.sort();
    out
}

fn from_raw(m: jetstream::message::StreamMessage) -> Message {
    Message {
        subject: m.subject.to_string(),
        sequence: m.sequence,
        message_type: message_type(Some(&m.headers)),
        headers: headers(Some(&m.headers)),
        time: Some(m.time.into()),
        payload: m.payload,
    }
}

impl JetStreamBus {
    /// Publishes `out` (a publish, without its span).
    ///
    /// A replicated stream's leader answers the retry of a publish it has proposed but not yet
    /// stored (its replicas have not confirmed it) as a duplicate at sequence 0 (nats-server
    /// stages the message id before the proposal commits), or, where it checks the expected
    /// sequence first, as a conflict with nothing stored after that sequence. Neither is an
    /// outcome: the caller would read a game that is not there yet (issue 18: a CreateGame
    /// answered NOT_FOUND with a node killed). The publish is sent again after a pause until the
    /// server answers with a sequence or a real conflict, for at most [`IN_FLIGHT_PATIENCE`];
    /// then the outcome is unknown, as for a publish with no answer.
    async fn store(&self, out: Outgoing) -> Result<Published, BusError> {
        let deadline = tokio::time::Instant::now() + IN_FLIGHT_PATIENCE;
        let mut pause = Duration::from_millis(10);
        loop {
            let why = match self.store_once(&out).await? {
                Stored::Done(published) => return Ok(published),
                Stored::InFlight(why) => why,
            };
            if tokio::time::Instant::now() + pause > deadline {
                return Err(BusError::Publish {
                    msg_id: out.msg_id,
                    reason: format!(
                        "{why}, still after {IN_FLIGHT_PATIENCE:?}: it may yet be stored"
                    ),
                });
            }
            tracing::debug!(msg_id = %out.msg_id, subject = %out.subject, why, "publish in flight on the server: sent again after a pause");
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    /// One publish of `out` and what the server's answer says of it.
    async fn store_once(&self, out: &Outgoing) -> Result<Stored, BusError> {
        let mut msg = PublishMessage::build()
            .payload(out.payload.clone())
            .message_id(out.msg_id.as_str())
            .header(MESSAGE_TYPE_HEADER, out.message_type);
        for (k, v) in &out.headers {
            msg = msg.header(k.as_str(), v.as_str());
        }
        if let Some(seq) = out.expected_subject_seq {
            msg = msg.expected_last_subject_sequence(seq);
        }
        let subject = out.subject.as_str();
        let ack = match self.js.send_publish(subject.to_owned(), msg).await {
            Ok(future) => future.await,
            Err(e) => Err(e),
        };
        match ack {
            // A message id staged by a publish not yet stored.
            Ok(ack) if ack.duplicate && ack.sequence == 0 => Ok(Stored::InFlight(
                "the server holds an earlier publish of this message id, not yet stored",
            )),
            Ok(ack) if ack.duplicate => Ok(Stored::Done(Published::Duplicate(ack.sequence))),
            Ok(ack) => Ok(Stored::Done(Published::Stored(ack.sequence))),
            // 2.14 and later say so in so many words (10158, "duplicate message id is in
            // process").
            Err(e) if server_error(&e) == Some(ErrorCode::STREAM_DUPLICATE_MESSAGE_CONFLICT) => {
                Ok(Stored::InFlight(
                    "the server holds an earlier publish of this message id, in process",
                ))
            }
            // nats-server 2.12 checks the expected sequence before the message id, so the
            // retry of a publish that was stored is refused as a conflict, where 2.10 answered
            // it as a duplicate. Whether ours was stored is plain to see: with an expected
            // sequence, it is the subject's first message after that sequence.
            Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {
                let Some(expected) = out.expected_subject_seq else {
                    return Ok(Stored::Done(Published::Conflict));
                };
                self.after_wrong_sequence(subject, expected, &out.msg_id)
                    .await
            }
            // No answer, or the connection lost while waiting for it: it may have been stored.
            Err(e)
                if matches!(
                    e.kind(),
                    PublishErrorKind::TimedOut | PublishErrorKind::BrokenPipe
                ) =>
            {
                Err(BusError::Publish {
                    msg_id: out.msg_id.clone(),
                    reason: e.to_string(),
                })
            }
            // The server's answer is a refusal (a full store, a limit of the stream, no stream
            // for the subject), or the publish was never sent: nothing was stored, and saying
            // "outcome unknown" would have a client retry it for ever (issue 20).
            Err(e) => Err(BusError::PublishRefused {
                msg_id: out.msg_id.clone(),
                reason: e.to_string(),
            }),
        }
    }

    /// What a refusal for a wrong expected sequence means: ours stored before (a duplicate), a
    /// message of someone else's stored after `expected` (a conflict), or nothing stored after
    /// it though the subject's last message is the one expected: a publish to the subject
    /// proposed and not yet stored, ours or another's (in flight). A subject whose last
    /// message is older than `expected`, or gone, is a conflict too (purged: the writer's copy
    /// is stale).
    async fn after_wrong_sequence(
        &self,
        subject: &str,
        expected: u64,
        msg_id: &str,
    ) -> Result<Stored, BusError> {
        let read_error = |reason: String| BusError::Read {
            filter: subject.to_owned(),
            reason,
        };
        match self
            .stream
            .raw_message_builder()
            .sequence(expected + 1)
            .next_by_subject(subject.to_owned())
            .send()
            .await
        {
            Ok(m) => {
                let ours = m
                    .headers
                    .get(async_nats::header::NATS_MESSAGE_ID)
                    .is_some_and(|id| id.as_str() == msg_id);
                return Ok(Stored::Done(if ours && m.subject.as_str() == subject {
                    Published::Duplicate(m.sequence)
                } else {
                    Published::Conflict
                }));
            }
            Err(e) if matches!(e.kind(), RawMessageErrorKind::NoMessageFound) => {}
            Err(e) => return Err(read_error(e.to_string())),
        }
        let last = match self.stream.get_last_raw_message_by_subject(subject).await {
            Ok(m) => m.sequence,
            Err(e) if matches!(e.kind(), RawMessageErrorKind::NoMessageFound) => 0,
            Err(e) => return Err(read_error(e.to_string())),
        };
        Ok(if last == expected {
            Stored::InFlight(
                "the server refused the expected sequence with a publish to the subject not yet stored",
            )
        } else {
            Stored::Done(Published::Conflict)
        })
    }
}

/// The JetStream error code of the server's answer `e` carries, if it carries one.
fn server_error(e: &jetstream::context::PublishError) -> Option<ErrorCode> {
    std::error::Error::source(e)?
        .downcast_ref::<jetstream::Error>()
        .map(jetstream::Error::error_code)
}

/// What one publish did: an outcome, or not yet one.
enum Stored {
    Done(Published),
    /// The server is storing a publish of this message id or to this subject: why.
    InFlight(&'static str),
}

/// How long a publish waits for an earlier one of the same message, or to the same subject,
/// that the server has proposed to its replicas but not stored.
const IN_FLIGHT_PATIENCE: Duration = Duration::from_secs(5);

struct JsAcker(jetstream::Message);

#[async_trait::async_trait]
impl Acker for JsAcker {
    async fn ack(&self, sequence: u64) -> Result<(), BusError> {
        // A plain ack, not confirmed by the server: a lost one only brings the message back,
        // and the consumers judge a message again without effect. Confirming every ack would
        // cost a round trip per event.
        self.0
            .ack_with(AckKind::Ack)
            .await
            .map_err(|e| BusError::Ack {
                sequence,
                reason: e.to_string(),
            })
    }
}

#[async_trait::async_trait]
impl EventBus for JetStreamBus {
    fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    async fn publish(&self, out: Outgoing) -> Result<Published, BusError> {
        crate::traced_publish(out, |out| self.store(out)).await
    }

    async fn next(&self, filter: &str, from_seq: u64) -> Result<Option<Message>, BusError> {
        let got = self
            .stream
            .raw_message_builder()
            .sequence(from_seq.max(1))
            .next_by_subject(filter.to_owned())
            .send()
            .await;
        match got {
            Ok(m) => Ok(Some(from_raw(m))),
            Err(e) if matches!(e.kind(), RawMessageErrorKind::NoMessageFound) => Ok(None),
            Err(e) => Err(BusError::Read {
                filter: format!("{filter} from {from_seq}"),
                reason: e.to_string(),
            }),
        }
    }

    async fn last(&self, subject: &str) -> Result<Option<Message>, BusError> {
        match self.stream.get_last_raw_message_by_subject(subject).await {
            Ok(m) => Ok(Some(from_raw(m))),
            Err(e) if matches!(e.kind(), RawMessageErrorKind::NoMessageFound) => Ok(None),
            Err(e) => Err(BusError::Read {
                filter: subject.to_owned(),
                reason: e.to_string(),
            }),
        }
    }

    async fn follow(
        &self,
        filter: &str,
    ) -> Result<BoxStream<'static, Result<Message, BusError>>, BusError> {
        // No consumer: the stored messages are read with message gets (the stream's leader
        // answers them, so a follower reads what is stored, in order), and a core subscription
        // to the raw publishes on `filter` only says when to read again. Following then needs
        // no right to create consumers (deploy/nats/auth.conf: such a right reaches the
        // workers' durable consumers too), and leaves nothing on the server when the follower
        // goes: dropping the stream unsubscribes (issue 20).
        let wake = self
            .client
            .subscribe(filter.to_owned())
            .await
            .map_err(|e| BusError::Consumer {
                name: filter.to_owned(),
                reason: format!("subscribe: {e}"),
            })?;
        let state = Follow {
            bus: self.clone(),
            filter: filter.to_owned(),
            from: 1,
            wake: Box::pin(wake),
            ended: false,
        };
        Ok(futures::stream::unfold(state, Follow::step).boxed())
    }

    async fn consume(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<Delivery, BusError>>, BusError> {
        let messages = match config.delivery {
            DeliveryMode::Pull => self.pull_messages(config).await?,
            DeliveryMode::Push => self.push_messages(config).await?,
        };
        Ok(deliveries(config.name.clone(), messages))
    }

    async fn consumer_lag(&self, name: &str) -> Result<Option<ConsumerLag>, BusError> {
        match self.stream.consumer_info(name).await {
            Ok(info) => Ok(Some(ConsumerLag {
                pending: info.num_pending,
                ack_pending: info.num_ack_pending as u64,
            })),
            Err(e)
                if matches!(
                    e.kind(),
                    jetstream::context::ConsumerInfoErrorKind::NotFound
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(BusError::Consumer {
                name: name.to_owned(),
                reason: e.to_string(),
            }),
        }
    }
}

impl JetStreamBus {
    /// The messages of the durable push consumer `config` ([`DeliveryMode::Push`]), created
    /// when missing (or, with [`Provision::Bind`], bound to).
    async fn push_messages(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<jetstream::Message, String>>, BusError> {
        let err = |e: &dyn std::fmt::Display| BusError::Consumer {
            name: config.name.clone(),
            reason: e.to_string(),
        };
        let consumer: consumer::PushConsumer = match self.provision {
            Provision::Create => self
                .stream
                .get_or_create_consumer(&config.name, push_config(config))
                .await
                .map_err(|e| err(&e))?,
            Provision::Bind => self.stream.get_consumer(&config.name).await.map_err(|e| {
                err(&format!(
                    "{e}; this service only binds to its durable consumers \
                     (ARBITER_STREAMS=bind): create them with `shogi-arbiter streams apply`"
                ))
            })?,
        };
        Ok(consumer
            .messages()
            .await
            .map_err(|e| err(&e))?
            .map(|m| m.map_err(|e| e.to_string()))
            .boxed())
    }

    /// The messages of the durable pull consumer `config` ([`DeliveryMode::Pull`]), created
    /// when missing (or, with [`Provision::Bind`], bound to).
    async fn pull_messages(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<jetstream::Message, String>>, BusError> {
        let err = |e: &dyn std::fmt::Display| BusError::Consumer {
            name: config.name.clone(),
            reason: e.to_string(),
        };
        let consumer: consumer::PullConsumer = match self.provision {
            Provision::Create => self
                .stream
                .get_or_create_consumer(&config.name, durable_config(config))
                .await
                .map_err(|e| err(&e))?,
            Provision::Bind => {
                let consumer: consumer::PullConsumer =
                    self.stream.get_consumer(&config.name).await.map_err(|e| {
                        err(&format!(
                            "{e}; this service only binds to its durable consumers \
                             (ARBITER_STREAMS=bind): create them with `shogi-arbiter streams apply`"
                        ))
                    })?;
                // Bound, not changed: settings of this service's (its ack wait, say) that the
                // consumer does not have are said, not silently ignored.
                let differ = differences(&consumer.cached_info().config, &durable_config(config));
                if !differ.is_empty() {
                    tracing::warn!(
                        consumer = %config.name,
                        settings = differ.join(", "),
                        "the durable consumer is not as this service is configured, and is used \
                         as it is (ARBITER_STREAMS=bind); `shogi-arbiter streams apply` with the \
                         same settings changes it"
                    );
                }
                consumer
            }
        };
        let messages = pull(&consumer)
            .await
            .map_err(|e| err(&e))?
            .map(|m| m.map_err(|e| e.to_string()))
            .boxed();
        Ok(messages)
    }
}

/// How often a follower reads again without being woken up: a raw publish heard before its
/// message was stored, or one missed while the connection was down, is read within this.
const FOLLOW_POLL: Duration = Duration::from_millis(500);

/// A follower's state (`JetStreamBus::follow`): the next stream sequence to read from.
struct Follow {
    bus: JetStreamBus,
    filter: String,
    from: u64,
    wake: std::pin::Pin<Box<async_nats::Subscriber>>,
    ended: bool,
}

impl Follow {
    /// The next stored message, waiting for one; `None` after an error.
    async fn step(mut self) -> Option<(Result<Message, BusError>, Follow)> {
        if self.ended {
            return None;
        }
        loop {
            match self.bus.next(&self.filter, self.from).await {
                Ok(Some(m)) => {
                    self.from = m.sequence + 1;
                    return Some((Ok(m), self));
                }
                Ok(None) => {}
                Err(e) => {
                    self.ended = true;
                    return Some((Err(e), self));
                }
            }
            // Nothing stored yet: wait for a raw publish (or the poll), then read again.
            match tokio::time::timeout(FOLLOW_POLL, self.wake.next()).await {
                Ok(Some(_)) | Err(_) => {}
                Ok(None) => {
                    self.ended = true;
                    let e = BusError::Consumer {
                        name: self.filter.clone(),
                        reason: "the connection's subscription ended".to_owned(),
                    };
                    return Some((Err(e), self));
                }
            }
        }
    }
}
