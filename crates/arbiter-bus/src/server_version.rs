//! What depends on the nats-server's version (its INFO `version`): the delivery mode and the
//! storage a durable consumer is made with on that server.

use crate::{AckMode, ConsumerStorage, DeliveryMode};

impl ConsumerStorage {
    /// The storage of a consumer configured as `self` with `replicas` copies of its state, on
    /// the nats-server of version `server`: [`ConsumerStorage::Auto`] is memory from three
    /// replicas on 2.11 or later, a file below three replicas or on an older server.
    ///
    /// On 2.10.26, after every server of a cluster was killed and started again, one node kept
    /// its replicas of all three streams behind for minutes in 4 of 32 runs with the consumers
    /// in memory, and in none of 12 with them in files (`tests/tests/cluster.rs`,
    /// `every_game_gets_its_one_verdict_after_every_server_is_lost_at_once`, 2026-12-05); on
    /// 2.15.1 it passed every run with them in memory.
    pub fn for_replicas(self, replicas: usize, server: &str) -> ConsumerStorage {
        match self {
            ConsumerStorage::Auto if replicas >= 3 && at_least_2_11(server) => {
                ConsumerStorage::Memory
            }
            ConsumerStorage::Auto => ConsumerStorage::File,
            chosen => chosen,
        }
    }
}

impl DeliveryMode {
    /// The mode a durable consumer configured as `self` is made in on the nats-server of
    /// version `server` (its INFO `version`, `2.10.26` say): as configured, except that a
    /// server older than 2.11, or one whose version cannot be read, gets pull consumers.
    ///
    /// On nats-server 2.10.26, a push consumer whose only subscriber was killed lost
    /// deliveries: in the crash test (`tests/tests/crash.rs`, instances killed every 250 ms,
    /// each process held to 0.3 to 0.4 of a core) 4 runs of 9 left a game without its verdict.
    /// The judge's consumer had moved past the deciding move without sending it to the judge
    /// (never pending, never redelivered), or held it pending after one redelivery and never sent it
    /// again. The same runs with pull consumers, and with push on 2.15.1, lost nothing
    /// (deploy/STREAMS.md, "Delivery modes and server versions").
    pub fn on_server(self, server: &str) -> DeliveryMode {
        match self {
            DeliveryMode::Pull => DeliveryMode::Pull,
            DeliveryMode::Push if push_keeps_deliveries(server) => DeliveryMode::Push,
            DeliveryMode::Push => DeliveryMode::Pull,
        }
    }
}

impl AckMode {
    /// What one ack of a durable consumer configured as `self` acknowledges on the nats-server
    /// of version `server`: as configured on 2.11 or later; each delivery on its own on an
    /// older server, or one whose version cannot be read.
    ///
    /// A worker sends a cumulative ack only once the consumer's info says every pending
    /// delivery is its own (`arbiter-worker`'s `pipeline::acks`). On nats-server 2.10.26, after
    /// every server of a cluster was killed and started again, or through a rolling upgrade,
    /// the consumer's info named a delivered sequence behind the deliveries its worker had
    /// received, for minutes: the worker was never sure, and 268 to 285 deliveries stayed
    /// unacknowledged in 3 runs of 6 (`tests/tests/cluster.rs`, 2026-12-06); on 2.15.1 every
    /// run acknowledged everything.
    pub fn on_server(self, server: &str) -> AckMode {
        match self {
            AckMode::Cumulative if at_least_2_11(server) => AckMode::Cumulative,
            _ => AckMode::Each,
        }
    }
}

/// Whether push consumers keep every delivery on nats-server `version` (see
/// [`DeliveryMode::on_server`]): 2.11 or later.
pub fn push_keeps_deliveries(version: &str) -> bool {
    at_least_2_11(version)
}

/// Whether nats-server `version` (its INFO `version`) is 2.11 or later; `false` when it
/// cannot be read.
fn at_least_2_11(version: &str) -> bool {
    at_least(version, (2, 11))
}

/// Whether nats-server `version` keeps message schedules (`Nats-Schedule`, a stream's
/// `allow_msg_schedules`): 2.12 or later.
pub fn has_message_schedules(version: &str) -> bool {
    at_least(version, (2, 12))
}

/// Whether nats-server `version` answers a direct get with a batch (`batch`, ADR-31): 2.11 or
/// later. An older one answers the first message only.
pub fn has_batched_gets(version: &str) -> bool {
    at_least_2_11(version)
}

/// Whether nats-server `version` is `wanted` (major, minor) or later; `false` when it cannot
/// be read.
fn at_least(version: &str, wanted: (u32, u32)) -> bool {
    let mut parts = version
        .trim()
        .trim_start_matches('v')
        .split(['.', '-', '+']);
    let major = parts.next().and_then(|p| p.parse::<u32>().ok());
    let minor = parts.next().and_then(|p| p.parse::<u32>().ok());
    matches!((major, minor), (Some(major), Some(minor)) if (major, minor) >= wanted)
}

#[cfg(test)]
mod tests {
    use crate::{AckMode, ConsumerStorage, DeliveryMode, push_keeps_deliveries};

    #[test]
    fn cumulative_acks_only_from_2_11() {
        for (server, acks) in [
            ("2.10.26", AckMode::Each),
            ("2.11.0", AckMode::Cumulative),
            ("2.15.1", AckMode::Cumulative),
            ("", AckMode::Each),
        ] {
            assert_eq!(AckMode::Cumulative.on_server(server), acks, "{server:?}");
            assert_eq!(AckMode::Each.on_server(server), AckMode::Each, "{server:?}");
        }
    }

    #[test]
    fn consumers_are_kept_in_memory_from_three_replicas_unless_chosen() {
        use ConsumerStorage::{Auto, File, Memory};
        for (replicas, storage) in [(1, File), (2, File), (3, Memory), (5, Memory)] {
            for server in ["2.11.0", "2.15.1", "v2.12.8"] {
                assert_eq!(Auto.for_replicas(replicas, server), storage, "R{replicas}");
            }
            for server in ["2.10.26", "2.9.10", "", "x.y"] {
                assert_eq!(Auto.for_replicas(replicas, server), File, "{server:?}");
            }
            for server in ["2.10.26", "2.15.1"] {
                assert_eq!(File.for_replicas(replicas, server), File, "R{replicas}");
                assert_eq!(Memory.for_replicas(replicas, server), Memory, "R{replicas}");
            }
        }
        for storage in [Auto, File, Memory] {
            assert_eq!(storage.as_str().parse(), Ok(storage));
        }
        for bad in ["", "mem", "FILE", "disk", "auto "] {
            let e = bad.parse::<ConsumerStorage>().unwrap_err();
            assert!(e.contains("auto, file or memory"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn push_consumers_are_pulled_on_servers_before_2_11() {
        for version in [
            "2.11.0",
            "2.11.9",
            "2.12.8",
            "2.14.6",
            "2.15.1",
            "v2.15.1",
            "3.0.0",
            "2.11.0-RC.1",
        ] {
            assert!(push_keeps_deliveries(version), "{version}");
            assert_eq!(
                DeliveryMode::Push.on_server(version),
                DeliveryMode::Push,
                "{version}"
            );
        }
        for version in [
            "2.10.26", "2.10.25", "2.9.10", "1.4.1", "", "x.y", "2", "2.x",
        ] {
            assert!(!push_keeps_deliveries(version), "{version:?}");
            assert_eq!(
                DeliveryMode::Push.on_server(version),
                DeliveryMode::Pull,
                "{version:?}"
            );
        }
        for version in ["2.10.26", "2.15.1", ""] {
            assert_eq!(DeliveryMode::Pull.on_server(version), DeliveryMode::Pull);
        }
    }
}
