//! The stream's set-up (created if missing and brought up to the settings, or bound to as it
//! is), waiting out a JetStream that cannot answer yet; and the configurations of the durable
//! consumers, pull and push.

use crate::{
    AckMode, BusError, ConsumerStorage, DeliveryMode, DurableConfig, Provision, StreamSettings,
};
use async_nats::jetstream::{self, consumer, stream};
use std::time::Duration;

/// The JetStream configuration of the durable pull consumer `config`.
pub(super) fn durable_config(config: &DurableConfig) -> consumer::pull::Config {
    consumer::pull::Config {
        durable_name: Some(config.name.clone()),
        filter_subject: config.filter.clone(),
        ack_policy: ack_policy(config.acks),
        ack_wait: config.ack_wait,
        max_ack_pending: i64::try_from(config.max_ack_pending).unwrap_or(i64::MAX),
        // -1: no limit (the server's default, set explicitly).
        max_deliver: config
            .max_deliver
            .map_or(-1, |n| i64::try_from(n.max(1)).unwrap_or(i64::MAX)),
        deliver_policy: consumer::DeliverPolicy::All,
        // 0: the stream's replica count.
        num_replicas: config.replicas.unwrap_or(0),
        memory_storage: in_memory(config),
        ..Default::default()
    }
}

/// JetStream's ack policy for `acks`.
fn ack_policy(acks: AckMode) -> consumer::AckPolicy {
    match acks {
        AckMode::Each => consumer::AckPolicy::Explicit,
        AckMode::Cumulative => consumer::AckPolicy::All,
    }
}

/// What one ack acknowledges on the durable consumer configured as `found`.
pub(super) fn acks_of(found: &consumer::Config) -> AckMode {
    match found.ack_policy {
        consumer::AckPolicy::All => AckMode::Cumulative,
        _ => AckMode::Each,
    }
}

/// Whether the consumer `config` keeps its state in memory: [`ConsumerStorage::Memory`], as
/// the bus resolves [`ConsumerStorage::Auto`] before a consumer is made (`JetStreamBus::resolved`).
fn in_memory(config: &DurableConfig) -> bool {
    config.storage == ConsumerStorage::Memory
}

/// How the durable consumer configured as `found` keeps its state.
pub(super) fn storage_of(found: &consumer::Config) -> ConsumerStorage {
    if found.memory_storage {
        ConsumerStorage::Memory
    } else {
        ConsumerStorage::File
    }
}

/// Where the push consumer `name` delivers ([`DeliveryMode::Push`]).
pub fn deliver_subject(name: &str) -> String {
    shogi_proto::subject::deliver(name)
}

/// The JetStream configuration of the durable push consumer `config`: as the pull consumer's
/// ([`durable_config`]), delivered with flow control to [`deliver_subject`], to a queue group
/// of its name.
pub(super) fn push_config(config: &DurableConfig) -> consumer::push::Config {
    consumer::push::Config {
        durable_name: Some(config.name.clone()),
        deliver_subject: deliver_subject(&config.name),
        deliver_group: Some(config.name.clone()),
        filter_subject: config.filter.clone(),
        ack_policy: ack_policy(config.acks),
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
        memory_storage: in_memory(config),
        ..Default::default()
    }
}

/// How long a pull request of the consumers waits for messages before a new one is sent.
pub(super) const PULL_EXPIRES: Duration = Duration::from_secs(5);
/// The idle heartbeat of the consumers' pull requests: two missed, and the pull is sent again.
pub(super) const PULL_HEARTBEAT: Duration = Duration::from_secs(2);

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

/// Whether the server said that the stream looked up does not exist.
pub(super) fn stream_not_found(e: &jetstream::context::GetStreamError) -> bool {
    matches!(
        e.kind(),
        jetstream::context::GetStreamErrorKind::JetStream(js)
            if js.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND
    )
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

/// The JetStream configuration of the durable consumer `config`, pull or push as its
/// [`DeliveryMode`] says.
pub(super) fn wanted_config(config: &DurableConfig) -> consumer::Config {
    use consumer::IntoConsumerConfig as _;
    match config.delivery {
        DeliveryMode::Pull => durable_config(config).into_consumer_config(),
        DeliveryMode::Push => push_config(config).into_consumer_config(),
    }
}

/// How the durable consumer configured as `found` delivers: push when it has a deliver
/// subject.
pub(super) fn mode_of(found: &consumer::Config) -> DeliveryMode {
    if found.deliver_subject.is_some() {
        DeliveryMode::Push
    } else {
        DeliveryMode::Pull
    }
}

/// The settings of durable consumer `found` that are not as `wanted`, by name. The deliver
/// policy is not one: a consumer keeps the start it was made with (`streams apply` makes a
/// replacing push consumer start after its pull predecessor's ack floor).
pub(super) fn differences(
    found: &consumer::Config,
    wanted: &consumer::Config,
) -> Vec<&'static str> {
    [
        (
            "filter subject",
            found.filter_subject == wanted.filter_subject,
        ),
        ("ack wait", found.ack_wait == wanted.ack_wait),
        ("ack policy", found.ack_policy == wanted.ack_policy),
        (
            "max ack pending",
            found.max_ack_pending == wanted.max_ack_pending,
        ),
        ("max deliver", found.max_deliver == wanted.max_deliver),
        (
            "replicas",
            wanted.num_replicas == 0 || found.num_replicas == wanted.num_replicas,
        ),
        (
            "delivery (pull or push)",
            found.deliver_subject == wanted.deliver_subject
                && found.deliver_group == wanted.deliver_group,
        ),
        (
            "storage (file or memory)",
            found.memory_storage == wanted.memory_storage,
        ),
        (
            "flow control and heartbeat",
            found.flow_control == wanted.flow_control
                && found.idle_heartbeat == wanted.idle_heartbeat,
        ),
    ]
    .into_iter()
    .filter(|(_, same)| !same)
    .map(|(name, _)| name)
    .collect()
}

/// Gets the stream `settings.name`, creating it as `settings` says when it does not exist
/// (file storage, a 2-minute duplicate window for message ids).
pub(super) async fn open_stream(
    js: &jetstream::Context,
    settings: &StreamSettings,
    provision: Provision,
    server: &str,
) -> Result<stream::Stream, BusError> {
    let schedules =
        settings.message_schedules && crate::server_version::has_message_schedules(server);
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
        allow_message_schedules: schedules,
        // Batched reads (`direct.rs`); a direct get refused a user reads one message get each.
        allow_direct: true,
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
    // Message schedules (the clocks' flags), where the server has them, the same way.
    if schedules && !stream.cached_info().config.allow_message_schedules {
        let mut updated = stream.cached_info().config.clone();
        updated.allow_message_schedules = true;
        stream = update(js, stream, updated, "message schedules").await?;
    }
    // Direct gets (batched reads, `direct.rs`) the same way: a stream made before them.
    if !stream.cached_info().config.allow_direct {
        let mut updated = stream.cached_info().config.clone();
        updated.allow_direct = true;
        stream = update(js, stream, updated, "direct gets").await?;
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
            Err(e) if stream_not_found(&e) => Err(BusError::Missing {
                what: format!("stream {name}"),
            }),
            Err(e) => Err(BusError::Connect(format!("stream {name}: {e}"))),
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
