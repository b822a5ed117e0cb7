//! A durable consumer's configuration: its settings, where each server keeps its state, and
//! how its messages reach the process. What a server of a given version makes of the last two
//! is [`crate::server_version`]'s.

use std::time::Duration;

/// A durable consumer's settings.
#[derive(Debug, Clone)]
pub struct DurableConfig {
    /// Its name: a consumer with the same name carries on where the last one stopped.
    pub name: String,
    /// The subject filter (wildcards allowed).
    pub filter: String,
    /// A delivery not acknowledged within this time is delivered again.
    pub ack_wait: Duration,
    /// At most this many deliveries unacknowledged at once.
    pub max_ack_pending: usize,
    /// At most this many deliveries of one message (0 is taken as 1); after the last, the
    /// consumer gives the message up and moves on. `None`: no limit, a message not
    /// acknowledged comes again until it is. (`deploy/STREAMS.md` says why the workers set
    /// none.)
    pub max_deliver: Option<u64>,
    /// Servers that keep the consumer's state on a cluster; `None`: as many as the stream
    /// (the in-memory bus has no servers and ignores it).
    pub replicas: Option<usize>,
    /// How its messages reach the consumer (the in-memory bus ignores it).
    pub delivery: DeliveryMode,
    /// Where each server holding the consumer keeps its state (the in-memory bus ignores it).
    pub storage: ConsumerStorage,
    /// What one ack acknowledges (the in-memory bus acknowledges each delivery on its own).
    pub acks: AckMode,
}

/// What one acknowledgement of a durable consumer acknowledges.
///
/// One ack a delivery was one NATS message a move for each role (and on a cluster a Raft
/// proposal of the consumer's group). A consumer whose deliveries are judged in order needs
/// only the last of a run acknowledged: JetStream's ack policy `all` takes an ack as one for
/// every earlier delivery too, so a worker acks a batch with one message (issue 38). The
/// server cannot change a consumer's ack policy: one found with the other policy is consumed
/// as it is, and `shogi-arbiter streams apply` replaces it, starting after its ack floor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AckMode {
    /// Each delivery is acknowledged on its own (ack policy `explicit`): the default.
    #[default]
    Each,
    /// An ack acknowledges every earlier delivery of the consumer too (ack policy `all`).
    Cumulative,
}

/// Where a JetStream durable consumer keeps its state (its delivered and acknowledged
/// positions, and on a cluster its Raft log) on each server that holds it.
///
/// On a file-backed stream a consumer's state is a file by default, rewritten (a new file
/// renamed over the old) up to ten times a second under load, and a replicated consumer's Raft
/// log is a file too. With the workers' 32 consumers that was about 320 renames a second per
/// server, and on a virtual disk the stream's own writes waited behind them
/// (docs/benchmarks-history.md, "What stalls the tail"). A consumer in memory writes nothing to
/// the disk: with three or more replicas its acknowledged position still survives the loss of
/// any one server (the others hold it, and a restarted server catches up from them), but not
/// the loss of every server at once, after which the consumer itself is gone until
/// `shogi-arbiter streams apply` makes it again, from the first event of the stream
/// (deploy/STREAMS.md, "Consumer storage"); below three replicas it is refused
/// ([`ConsumerStorage::check_for_replicas`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ConsumerStorage {
    /// Memory when the consumer has three or more replicas on nats-server 2.11 or later, a file
    /// otherwise: the default.
    #[default]
    Auto,
    /// A file beside the stream's (with a file-backed stream).
    File,
    /// Memory only.
    Memory,
}

impl ConsumerStorage {
    /// Refuses memory for a consumer whose state `replicas` servers keep, when they are fewer
    /// than three: a restart of its servers loses a consumer in memory (its position, and the
    /// consumer itself, which a service that only binds cannot make again), and a single
    /// server's restart is routine. [`ConsumerStorage::Auto`] never makes one.
    pub fn check_for_replicas(self, replicas: usize) -> Result<(), String> {
        if self == ConsumerStorage::Memory && replicas < 3 {
            return Err(format!(
                "consumer storage memory needs three replicas or more, not {replicas}: a \
                 restart of the server{} holding a consumer in memory loses it, its position \
                 and the consumer itself; use auto or file",
                if replicas == 1 { "" } else { "s" }
            ));
        }
        Ok(())
    }

    /// `auto`, `file` or `memory`, as the command-line flags spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ConsumerStorage::Auto => "auto",
            ConsumerStorage::File => "file",
            ConsumerStorage::Memory => "memory",
        }
    }
}

impl std::str::FromStr for ConsumerStorage {
    type Err = String;

    fn from_str(s: &str) -> Result<ConsumerStorage, String> {
        match s {
            "auto" => Ok(ConsumerStorage::Auto),
            "file" => Ok(ConsumerStorage::File),
            "memory" => Ok(ConsumerStorage::Memory),
            other => Err(format!(
                "consumer storage {other:?} is not auto, file or memory"
            )),
        }
    }
}

/// How a JetStream durable consumer's messages reach the process consuming it.
///
/// The choice matters on a cluster with replicated (R3) consumers. Since nats-server 2.11
/// (pull request 6792) a replicated pull consumer sends a message only once the Raft group has
/// agreed that it was delivered, so a pull consumer's messages wait whenever its Raft group
/// does; and each such group writes a snapshot with an fsync under its Raft lock every 1,024
/// entries (one per delivery, one per ack), which on a busy disk held deliveries for up to 3 s
/// (docs/benchmarks-history.md, "The verdict tail on a cluster: its cause"). A push consumer
/// with flow control sends at once and replicates the delivered state after (nats-server's
/// `replicateDeliveries`), and it has no pull request to lose when its leader changes. Acks are
/// replicated the same way in both: an acknowledged position survives the loss of a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DeliveryMode {
    /// Pull requests (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`).
    Pull,
    /// Pushed with flow control to `shogi.deliver.<consumer>`, to a queue group of the
    /// consumer's name, so that one subscriber at a time gets each message: the default.
    #[default]
    Push,
}

impl DeliveryMode {
    /// `pull` or `push`, as the command-line flags spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryMode::Pull => "pull",
            DeliveryMode::Push => "push",
        }
    }
}
