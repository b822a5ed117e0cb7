//! The arbiter's streams, as every service opens them: the games (`SHOGI_GAMES`, which
//! republishes each stored verdict to core NATS), the entries set aside (`SHOGI_ASIDE`) and
//! the partition leases (`SHOGI_LEASES`); and [`open`], the one function every process opens
//! its bus with.

use arbiter_bus::{
    Bus, BusError, ConsumerStorage, DeliveryMode, DurableConfig, JetStreamBus, MemoryBus,
    NatsOptions, StreamSettings,
};
use std::sync::Arc;
use std::time::Duration;

/// The validator's durable consumer of every announcement on `.verdict`
/// ([`shogi_proto::consumer::VERDICT_CHECK`]), shared by its instances, which record on
/// `.result` only what the log decides (`arbiter_runtime::games::GameLog::check_announcement`). `replicas`:
/// servers keeping its state (`None`: as the stream); `storage`: where they keep it, as the
/// workers' consumers (memory from three replicas by default: after a restart of every server
/// it checks the announcements again from the first, and finds each verdict recorded).
/// Created by `shogi-arbiter streams apply`, or by the validator when it creates its streams.
///
/// Pulled, whatever the workers' mode: every validator instance consumes it at once, and a push
/// consumer's idle heartbeats go to one member of its queue group, so with two instances each
/// missed some and opened the consumer again every few seconds with a WARN (2.15.1 and
/// 2.10.26; a pull request's heartbeats go to the instance that sent it).
pub fn verdict_check(replicas: Option<usize>, storage: ConsumerStorage) -> DurableConfig {
    DurableConfig {
        name: shogi_proto::consumer::VERDICT_CHECK.to_owned(),
        filter: shogi_proto::subject::ALL_VERDICTS.to_owned(),
        ack_wait: Duration::from_secs(10),
        max_ack_pending: 1000,
        // No limit: a check fails only when the bus does, and giving an announcement up would
        // leave its game without a result.
        max_deliver: None,
        replicas,
        delivery: DeliveryMode::Pull,
        storage,
        acks: arbiter_bus::AckMode::Each,
    }
}

/// The validator's durable consumer of the clocks' flags ([`shogi_proto::consumer::CLOCK_FLAG`],
/// filter [`shogi_proto::subject::ALL_FLAGS`]), shared by its instances: each flag, fired by a
/// side's deadline schedule, is judged against the game's log and acknowledged once the game is
/// over or the side is found in time. Pulled as `verdict-check` is, and kept as the workers'
/// consumers are (`storage`).
pub fn clock_flag(replicas: Option<usize>, storage: ConsumerStorage) -> DurableConfig {
    DurableConfig {
        name: shogi_proto::consumer::CLOCK_FLAG.to_owned(),
        filter: shogi_proto::subject::ALL_FLAGS.to_owned(),
        // A flag held by an instance that died comes again after this: the bound on how late
        // a silent side is flagged through a crash (a flag is judged in milliseconds).
        ack_wait: Duration::from_secs(2),
        max_ack_pending: 1000,
        // No limit: giving a flag up would leave a silent side's game open for ever.
        max_deliver: None,
        replicas,
        delivery: DeliveryMode::Pull,
        storage,
        acks: arbiter_bus::AckMode::Each,
    }
}

/// The platforms' durable consumer of the checked verdicts ([`shogi_proto::PLATFORM_VERDICTS`],
/// filter [`shogi_proto::VERDICT_REPUBLISH_SOURCE`]): each acknowledged by the platform once
/// processed; pulled, as a platform's client reads it (deploy/STREAMS.md). Its state is a
/// file whatever the workers' consumers use: a platform's read position survives a restart of
/// every server (one delivery a game, so its writes cost the disk little).
pub fn platform_verdicts(replicas: Option<usize>) -> DurableConfig {
    DurableConfig {
        name: shogi_proto::PLATFORM_VERDICTS.to_owned(),
        filter: shogi_proto::VERDICT_REPUBLISH_SOURCE.to_owned(),
        ack_wait: Duration::from_secs(30),
        max_ack_pending: 1000,
        max_deliver: None,
        replicas,
        delivery: DeliveryMode::Pull,
        storage: ConsumerStorage::File,
        acks: arbiter_bus::AckMode::Each,
    }
}

/// The games' stream `name` with `replicas` copies, republishing each checked verdict (its
/// `.result`) to `shogi.verdict.<game_id>`, and keeping the clocks' deadline schedules where
/// the server has message schedules (2.12+).
pub fn games(name: &str, replicas: usize) -> StreamSettings {
    StreamSettings {
        replicas,
        message_schedules: true,
        republish: Some((
            shogi_proto::VERDICT_REPUBLISH_SOURCE.to_owned(),
            shogi_proto::VERDICT_REPUBLISH_DESTINATION.to_owned(),
        )),
        ..StreamSettings::new(name, shogi_proto::STREAM_SUBJECTS)
    }
}

/// Which bus a process runs on.
#[derive(Debug, Clone)]
pub enum BusConfig {
    /// The embedded in-process bus: nothing else to install, nothing kept after exit.
    Embedded,
    /// NATS JetStream: the servers, the games' stream and its replicas.
    Nats {
        /// How to reach the servers (URLs, credentials, TLS).
        options: Box<NatsOptions>,
        /// The games' stream.
        stream: String,
        /// Copies of each stream, when this process creates them.
        replicas: usize,
    },
    /// A bus already open (a test's, or one shared by several compositions).
    Open(Opened),
}

/// An open bus: the games' stream, and the lease stream's bus beside it.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The games' stream (and, on JetStream, the set-aside stream's subjects through it).
    pub bus: Bus,
    /// The bus of the lease stream (`SHOGI_LEASES`: one message kept per subject).
    pub leases: Bus,
}

impl From<Bus> for Opened {
    /// `bus` for the games and the leases alike: right for the embedded bus, whose one store
    /// holds every subject.
    fn from(bus: Bus) -> Opened {
        Opened {
            leases: bus.clone(),
            bus,
        }
    }
}

/// Opens the bus `config` names, as `client_name`: the embedded one, or a connection to NATS
/// with the games' stream and the side streams (created when missing, unless the provision is
/// `bind`). This is the one way a process opens its bus.
pub async fn open(config: &BusConfig, client_name: &str) -> Result<Opened, BusError> {
    Ok(match config {
        BusConfig::Embedded => Opened::from(Arc::new(MemoryBus::default()) as Bus),
        BusConfig::Nats {
            options,
            stream,
            replicas,
        } => {
            let (js, leases) = connect_all(options, client_name, stream, *replicas).await?;
            Opened {
                bus: Arc::new(js),
                leases,
            }
        }
        BusConfig::Open(opened) => opened.clone(),
    })
}

/// Connects to NATS as `client_name` and opens the games' stream `stream` (creating it, and
/// the side streams, when missing): [`open`]'s JetStream bus, for a caller that needs its
/// JetStream calls (`shogi-arbiter streams`, the benchmarks' setup).
pub async fn connect(
    nats: &NatsOptions,
    client_name: &str,
    stream: &str,
    replicas: usize,
) -> Result<JetStreamBus, BusError> {
    Ok(connect_all(nats, client_name, stream, replicas).await?.0)
}

/// Connects to NATS as `client_name` to the games' stream `stream` alone, for the operator
/// tools (`shogi-arbiter export` and `prune`), which read and purge games and set up nothing
/// else: with `bind` provision (their documented users), the stream must exist.
pub async fn connect_games(
    nats: &NatsOptions,
    client_name: &str,
    stream: &str,
) -> Result<JetStreamBus, BusError> {
    JetStreamBus::connect(nats, client_name, &games(stream, 1)).await
}

/// The games' stream and the lease stream's bus.
async fn connect_all(
    nats: &NatsOptions,
    client_name: &str,
    stream: &str,
    replicas: usize,
) -> Result<(JetStreamBus, Bus), BusError> {
    let bus = JetStreamBus::connect(nats, client_name, &games(stream, replicas)).await?;
    let leases = side_streams(&bus, replicas).await?;
    Ok((bus, leases))
}

/// How long `SHOGI_ASIDE` keeps a copy set aside.
pub const ASIDE_MAX_AGE: Duration = Duration::from_secs(30 * 86_400);

/// Makes sure the side streams exist on `js` (`SHOGI_ASIDE` for entries set aside,
/// `SHOGI_LEASES` for the leases, one message kept per subject, ten minutes at most), each with
/// `replicas` copies; the bus of the lease stream.
pub async fn side_streams(js: &JetStreamBus, replicas: usize) -> Result<Bus, BusError> {
    let mut aside = StreamSettings::new(shogi_proto::ASIDE_STREAM, shogi_proto::ASIDE_SUBJECTS);
    aside.replicas = replicas;
    // Copies for an operator to inspect, not the games' record: bounded in time (issue 20).
    aside.max_age = Some(ASIDE_MAX_AGE);
    js.with_stream(&aside).await?;
    let mut lease = StreamSettings::new(shogi_proto::LEASE_STREAM, shogi_proto::LEASE_SUBJECTS);
    lease.replicas = replicas;
    lease.max_messages_per_subject = Some(1);
    // Old members and released leases go; live ones are rewritten every few seconds.
    lease.max_age = Some(Duration::from_secs(600));
    Ok(Arc::new(js.with_stream(&lease).await?))
}
