//! [`EventBus`] over a NATS JetStream stream.
//!
//! Code map: this file is the bus ([`JetStreamBus`]: connecting, its operator calls, and the
//! [`EventBus`] trait, each method answered here or by the file that does the job):
//! - `setup`: the stream's configuration and set-up (created, updated or bound to, waiting out
//!   a cluster that cannot answer yet), and the durable consumers' configurations;
//! - `publish`: a publish and what the server's answer says of it, including the retry of a
//!   publish the server holds but has not stored;
//! - `consume`: the deliveries of a durable consumer, pulled or pushed, and their acks;
//! - `follow`: following a subject without a consumer;
//! - `direct`: batched reads, with direct gets where the server and the stream allow them;
//! - `message`: a JetStream message as the bus's [`Message`].
//!
//! Imports go one way: `setup` and `message` use no other file here; `publish`, `consume`,
//! `follow` and `direct` add methods to [`JetStreamBus`], and this file uses only `setup`,
//! `message` and `direct`'s state (`Direct`, made when a stream is opened).

mod consume;
mod direct;
mod follow;
mod message;
mod publish;
mod setup;

pub use setup::deliver_subject;

use crate::{
    BusError, ConsumerLag, Delivery, DeliveryMode, DurableConfig, EventBus, MAX_REPLICAS, Message,
    NatsOptions, Outgoing, Provision, Published, StreamSettings, StreamState,
};
use async_nats::jetstream::{
    self, consumer,
    stream::{self, RawMessageErrorKind},
};
use futures::stream::BoxStream;
use message::from_raw;
use setup::{acks_of, differences, mode_of, open_stream, storage_of, wanted_config};

/// A JetStream stream of game events.
#[derive(Debug, Clone)]
pub struct JetStreamBus {
    client: async_nats::Client,
    js: jetstream::Context,
    /// The stream's handle: its name, for message gets, purges and its consumers.
    stream: stream::Stream<()>,
    /// The stream's name.
    name: String,
    /// The stream's information as this bus found it when it opened the stream (`None` for a
    /// bus bound with message gets alone, [`JetStreamBus::connect_reading`]).
    found: Option<stream::Info>,
    provision: Provision,
    /// How [`EventBus::next_batch`] reads: batched direct gets, or one message get a message.
    direct: direct::Direct,
    /// The JetStream API's prefix (`$JS.API`, or the one configured).
    api: String,
}

impl JetStreamBus {
    /// The mode a durable consumer configured as `wanted` is made and consumed in on the server
    /// this bus is connected to ([`DeliveryMode::on_server`]): push becomes pull on a server
    /// older than 2.11, said once a process at WARN.
    pub fn delivery_on_server(&self, wanted: DeliveryMode) -> DeliveryMode {
        let version = self.client.server_info().version;
        let mode = wanted.on_server(&version);
        if mode != wanted {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::warn!(
                    server = %version,
                    "push consumers lose deliveries on nats-server before 2.11 when a \
                     subscriber dies: this process's durable consumers are pulled instead \
                     (deploy/STREAMS.md, \"Delivery modes and server versions\")"
                );
            });
        }
        mode
    }

    /// `config` as its consumer is made and consumed on this bus: in the delivery mode the
    /// server allows ([`Self::delivery_on_server`]), with the acks it allows
    /// ([`crate::AckMode::on_server`]: one a delivery before 2.11), and with [`crate::ConsumerStorage::Auto`]
    /// made memory or file by its replica count (the stream's when `config` names none) and the
    /// server's version ([`crate::ConsumerStorage::for_replicas`]).
    pub fn resolved(&self, config: &DurableConfig) -> DurableConfig {
        let replicas = config
            .replicas
            .filter(|&r| r > 0)
            .or(self.found.as_ref().map(|i| i.config.num_replicas))
            .unwrap_or(1);
        DurableConfig {
            delivery: self.delivery_on_server(config.delivery),
            storage: config
                .storage
                .for_replicas(replicas, &self.client.server_info().version),
            acks: config.acks.on_server(&self.client.server_info().version),
            ..config.clone()
        }
    }

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
        let server = client.server_info().version;
        let stream = open_stream(&js, stream, nats.provision, &server).await?;
        JetStreamBus::opened(client, js, api_prefix(nats), stream, nats.provision).await
    }

    /// Connects to NATS as `client_name` with `nats` to read the stream `name` with message
    /// gets alone (`$JS.API.STREAM.MSG.GET`), as a platform's user may (deploy/nats/auth.conf):
    /// the stream is not looked up with its info, which that user is refused, but with one
    /// message get, and a missing stream is [`BusError::Missing`]. Nothing is created.
    pub async fn connect_reading(
        nats: &NatsOptions,
        client_name: &str,
        name: &str,
    ) -> Result<JetStreamBus, BusError> {
        let client = nats.connect(client_name).await?;
        let js = match &nats.api_prefix {
            Some(prefix) => jetstream::with_prefix(client.clone(), prefix),
            None => jetstream::new(client.clone()),
        };
        let stream = js
            .get_stream_no_info(name)
            .await
            .map_err(|e| BusError::Connect(format!("stream {name}: {e}")))?;
        match stream.get_raw_message(1).await {
            Ok(_) => {}
            Err(e) => match e.kind() {
                RawMessageErrorKind::NoMessageFound => {}
                RawMessageErrorKind::JetStream(js)
                    if js.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND =>
                {
                    return Err(BusError::Missing {
                        what: format!("stream {name}"),
                    });
                }
                _ => {
                    return Err(BusError::Read {
                        filter: format!("stream {name}"),
                        reason: e.to_string(),
                    });
                }
            },
        }
        Ok(JetStreamBus {
            client,
            js,
            stream,
            name: name.to_owned(),
            found: None,
            provision: Provision::Bind,
            direct: direct::Direct::default(),
            api: api_prefix(nats),
        })
    }

    /// The bus over `stream`, opened with its information.
    async fn opened(
        client: async_nats::Client,
        js: jetstream::Context,
        api: String,
        stream: stream::Stream,
        provision: Provision,
    ) -> Result<JetStreamBus, BusError> {
        let info = stream.cached_info().clone();
        let name = info.config.name.clone();
        // A handle without the information (no request is made): the reads need its name.
        let stream = js
            .get_stream_no_info(&name)
            .await
            .map_err(|e| BusError::Connect(format!("stream {name}: {e}")))?;
        let direct = direct::Direct::new(&api, &info, &client.server_info().version);
        Ok(JetStreamBus {
            client,
            js,
            stream,
            name,
            direct,
            found: Some(info),
            provision,
            api,
        })
    }
}

/// The JetStream API's prefix `nats` connects with.
fn api_prefix(nats: &NatsOptions) -> String {
    nats.api_prefix
        .clone()
        .unwrap_or_else(|| "$JS.API".to_owned())
}

impl JetStreamBus {
    /// [`EventBus::next`]: one message get (`STREAM.MSG.GET`), answered by the stream's leader.
    pub(super) async fn get_next(
        &self,
        filter: &str,
        from_seq: u64,
    ) -> Result<Option<Message>, BusError> {
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

    /// The same connection over another stream, `settings`, created if it does not exist:
    /// reads go to that stream (publishes go wherever their subject is stored).
    pub async fn with_stream(&self, settings: &StreamSettings) -> Result<JetStreamBus, BusError> {
        let server = self.client.server_info().version;
        let stream = open_stream(&self.js, settings, self.provision, &server).await?;
        JetStreamBus::opened(
            self.client.clone(),
            self.js.clone(),
            self.api.clone(),
            stream,
            self.provision,
        )
        .await
    }

    /// Creates the durable consumer `config` on this stream, or brings an existing one to
    /// `config` (ack wait, max ack pending, max deliver, filter, pull or push, file or memory):
    /// what `shogi-arbiter streams apply` does for the workers, which then only bind to it
    /// ([`Provision::Bind`]). Whether it was created, updated, replaced or already so.
    ///
    /// The server cannot turn a pull consumer into a push one (nor back), nor move its state
    /// between a file and memory, nor change its ack policy, so a consumer found in the other
    /// [`DeliveryMode`], the other [`crate::ConsumerStorage`] or the other [`crate::AckMode`]
    /// is replaced: deleted, and made again as `config` says,
    /// starting at the stream sequence after the old one's ack floor, with the same filter and
    /// settings. Every event at or below the ack floor was acknowledged and is not delivered
    /// again; every event after it is delivered (including one acknowledged out of order above
    /// the floor, judged again without effect). Stop the consumer's instances first, or an ack
    /// they send between the read of the floor and the delete only brings its event back.
    pub async fn apply_durable(&self, config: &DurableConfig) -> Result<Applied, BusError> {
        let config = &self.resolved(config);
        let err = |e: &dyn std::fmt::Display| BusError::Consumer {
            name: config.name.clone(),
            reason: e.to_string(),
        };
        let wanted = wanted_config(config);
        match self.stream.consumer_info(&config.name).await {
            Ok(info)
                if mode_of(&info.config) != config.delivery
                    || storage_of(&info.config) != config.storage
                    || acks_of(&info.config) != config.acks =>
            {
                let from_sequence = info.ack_floor.stream_sequence + 1;
                let mut replacing = wanted;
                replacing.deliver_policy = consumer::DeliverPolicy::ByStartSequence {
                    start_sequence: from_sequence,
                };
                self.stream
                    .delete_consumer(&config.name)
                    .await
                    .map_err(|e| err(&e))?;
                self.stream.create_consumer(replacing).await.map_err(|e| {
                    err(&format!(
                        "{e}; the old consumer was deleted: make it again to start at \
                             stream sequence {from_sequence} (deliver policy by start \
                             sequence), or its partition starts over from the first event"
                    ))
                })?;
                Ok(Applied::Replaced { from_sequence })
            }
            Ok(info) => {
                if differences(&info.config, &wanted).is_empty() {
                    return Ok(Applied::Unchanged);
                }
                // Where it starts is the consumer's own (a replaced one starts after its
                // predecessor's ack floor), and the server refuses to change it.
                let mut updated = wanted;
                updated.deliver_policy = info.config.deliver_policy;
                self.stream
                    .update_consumer(updated)
                    .await
                    .map_err(|e| err(&e))?;
                Ok(Applied::Updated)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    jetstream::context::ConsumerInfoErrorKind::NotFound
                ) =>
            {
                self.stream
                    .create_consumer(wanted)
                    .await
                    .map_err(|e| err(&e))?;
                Ok(Applied::Created)
            }
            Err(e) => Err(err(&e)),
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
        self.stream
            .get_info()
            .await
            .map(|i| i.config)
            .map_err(|e| BusError::Connect(format!("stream {}: {e}", self.name)))
    }
}

impl JetStreamBus {
    /// The copies of the stream `name` and of each of its consumers, as each one's leader
    /// reports them (`$JS.API.STREAM.INFO`, `$JS.API.CONSUMER.LIST`): what a rolling upgrade of
    /// the servers waits on before it restarts the next one (deploy/STREAMS.md, "Upgrading the
    /// servers"). The stream first, then its consumers by name.
    pub async fn replica_groups(&self, name: &str) -> Result<Vec<ReplicaGroup>, BusError> {
        use futures::TryStreamExt as _;
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            BusError::Connect(format!("stream {name}: {what}: {e}"))
        };
        let mut stream = self.js.get_stream(name).await.map_err(|e| {
            if setup::stream_not_found(&e) {
                BusError::Missing {
                    what: format!("stream {name}"),
                }
            } else {
                fail("look it up", &e)
            }
        })?;
        let info = stream.info().await.map_err(|e| fail("info", &e))?;
        let mut groups = vec![ReplicaGroup::of(name.to_owned(), info.cluster.as_ref())];
        let mut consumers: Vec<ReplicaGroup> = stream
            .consumers()
            .map_ok(|c| ReplicaGroup::of(format!("{name} > {}", c.name), c.cluster.as_ref()))
            .try_collect()
            .await
            .map_err(|e| fail("list its consumers", &e))?;
        consumers.sort_by(|a, b| a.name.cmp(&b.name));
        groups.extend(consumers);
        Ok(groups)
    }
}

/// A stream's or a consumer's copies on a cluster, as its leader reports them
/// ([`JetStreamBus::replica_groups`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaGroup {
    /// `SHOGI_GAMES`, or `SHOGI_GAMES > repetition-watcher-p0` for a consumer.
    pub name: String,
    /// Whether the server keeps it on a cluster (a Raft group); on a single server it has no
    /// replicas and is always current.
    pub clustered: bool,
    /// The server that leads it, if any.
    pub leader: Option<String>,
    /// Every other server that holds a copy.
    pub replicas: Vec<Replica>,
}

/// One copy of a [`ReplicaGroup`] on a server other than its leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    /// The server's name.
    pub server: String,
    /// Whether it has everything the leader has applied.
    pub current: bool,
    /// Whether the leader considers the server gone.
    pub offline: bool,
    /// How many operations it is behind the leader, when the leader says.
    pub lag: Option<u64>,
    /// How long ago the leader last heard from it.
    pub seen: std::time::Duration,
}

impl ReplicaGroup {
    fn of(name: String, cluster: Option<&stream::ClusterInfo>) -> ReplicaGroup {
        // A server outside a cluster reports no cluster name (and names itself the leader).
        let clustered = cluster.is_some_and(|c| c.name.is_some());
        ReplicaGroup {
            name,
            clustered,
            leader: cluster.and_then(|c| c.leader.clone()),
            replicas: cluster
                .map(|c| {
                    c.replicas
                        .iter()
                        .map(|p| Replica {
                            server: p.name.clone(),
                            current: p.current,
                            offline: p.offline,
                            lag: p.lag,
                            seen: p.active,
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// Whether it has a leader and every copy is current (always, off a cluster).
    pub fn is_current(&self) -> bool {
        !self.clustered
            || (self.leader.is_some() && self.replicas.iter().all(|r| r.current && !r.offline))
    }
}

impl std::fmt::Display for ReplicaGroup {
    /// `SHOGI_GAMES: led by n0; n1 current; n2 behind (lag 1234, seen 0.2 s ago)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.clustered {
            return write!(f, "{}: on a single server", self.name);
        }
        match &self.leader {
            Some(leader) => write!(f, "{}: led by {leader}", self.name)?,
            None => write!(f, "{}: no leader", self.name)?,
        }
        for r in &self.replicas {
            let state = if r.offline {
                "offline"
            } else if r.current {
                "current"
            } else {
                "behind"
            };
            write!(f, "; {} {state}", r.server)?;
            if !r.current || r.offline {
                let lag = r.lag.map_or(String::new(), |l| format!("lag {l}, "));
                write!(f, " ({lag}seen {:.1} s ago)", r.seen.as_secs_f64())?;
            }
        }
        Ok(())
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
    /// It existed in the other delivery mode, which the server cannot change, and was made
    /// again in this one, starting at stream sequence `from_sequence` (after the old one's
    /// ack floor).
    Replaced {
        /// The first stream sequence the new consumer delivers.
        from_sequence: u64,
    },
}

impl JetStreamBus {
    /// The durable consumer `name`'s info, `None` when it does not exist.
    async fn consumer_info(
        &self,
        name: &str,
    ) -> Result<Option<jetstream::consumer::Info>, BusError> {
        match self.stream.consumer_info(name).await {
            Ok(info) => Ok(Some(info)),
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

#[async_trait::async_trait]
impl EventBus for JetStreamBus {
    fn schedules(&self) -> Result<(), String> {
        let server = self.client.server_info().version;
        if !crate::server_version::has_message_schedules(&server) {
            return Err(format!(
                "message schedules need nats-server 2.12.0 or later, and this one is {server}"
            ));
        }
        if !self
            .found
            .as_ref()
            .is_some_and(|i| i.config.allow_message_schedules)
        {
            return Err(format!(
                "stream {} does not allow message schedules: `shogi-arbiter streams apply` \
                 allows them",
                self.name
            ));
        }
        Ok(())
    }

    fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    async fn publish(&self, out: Outgoing) -> Result<Published, BusError> {
        crate::traced_publish(out, |out| self.store(out)).await
    }

    async fn next(&self, filter: &str, from_seq: u64) -> Result<Option<Message>, BusError> {
        self.get_next(filter, from_seq).await
    }

    async fn next_batch(
        &self,
        filter: &str,
        from_seq: u64,
        max: usize,
    ) -> Result<Vec<Message>, BusError> {
        self.read_batch(filter, from_seq, max).await
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

    async fn state(&self) -> Result<StreamState, BusError> {
        // One STREAM.INFO (no subject details): the leader's count of the messages it holds.
        // Sequences from the first to the last are either held or removed, and JetStream
        // never gives a sequence twice, so what is not held was removed.
        let name = &self.name;
        let info = self.stream.get_info().await.map_err(|e| BusError::Read {
            filter: format!("stream {name}"),
            reason: format!("info: {e}"),
        })?;
        let s = &info.state;
        Ok(StreamState {
            last_sequence: s.last_sequence,
            removed: s.last_sequence.saturating_sub(s.messages),
            bytes: s.bytes,
            max_bytes: u64::try_from(info.config.max_bytes).ok().filter(|&b| b > 0),
        })
    }

    async fn follow(
        &self,
        filter: &str,
    ) -> Result<BoxStream<'static, Result<Message, BusError>>, BusError> {
        self.follow_stored(filter).await
    }

    async fn consume(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<Delivery, BusError>>, BusError> {
        self.consume_durable(config).await
    }

    async fn consumer_position(
        &self,
        name: &str,
    ) -> Result<Option<crate::ConsumerPosition>, BusError> {
        Ok(self
            .consumer_info(name)
            .await?
            .map(|info| crate::ConsumerPosition {
                ack_pending: info.num_ack_pending as u64,
                delivered: info.delivered.consumer_sequence,
                ack_floor: info.ack_floor.stream_sequence,
            }))
    }

    async fn consumer_lag(&self, name: &str) -> Result<Option<ConsumerLag>, BusError> {
        Ok(self.consumer_info(name).await?.map(|info| ConsumerLag {
            pending: info.num_pending,
            ack_pending: info.num_ack_pending as u64,
        }))
    }
}
