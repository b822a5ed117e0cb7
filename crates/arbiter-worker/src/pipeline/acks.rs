//! A worker's acknowledgements: one message for a run of deliveries where the consumer takes an
//! ack for every earlier delivery too ([`AckMode::Cumulative`], JetStream's ack policy `all`),
//! each on its own otherwise (issue 38: one ack a move and a role was a third of the NATS
//! messages a move cost).
//!
//! A delivery is acknowledged only after what it caused is on the bus. A cumulative ack
//! acknowledges every delivery before it, so it is sent only while nothing before it waits: no
//! announcement of the partition in flight, none failed and not yet delivered again. A
//! delivery held (its game's announcement in flight) or void is covered by a later ack once
//! that announcement is on the bus: its game is finished.

use arbiter_bus::{AckMode, BusError, Delivery};
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// At most this many deliveries of a partition handled and not yet acknowledged...
const BATCH: usize = 128;
/// ... for at most this long: far below the ack wait, so that nothing comes again for want of
/// an ack, and a crash judges again at most this much (without effect).
const DELAY: Duration = Duration::from_millis(50);

/// How an announcement made in the background ended, for the partition's acks.
#[derive(Debug)]
pub(crate) enum Settled {
    /// On the bus: its delivery may be acknowledged.
    Announced(Delivery),
    /// Failed: the delivery at this sequence comes again; nothing after it is acknowledged
    /// until it has.
    Failed(u64),
}

/// The acknowledgements of one worker's partitions.
#[derive(Debug)]
pub(crate) struct Acks {
    partitions: HashMap<u32, Partition>,
    settled_tx: mpsc::UnboundedSender<(u32, Settled)>,
    /// How the announcements in the background ended.
    pub(crate) settled_rx: mpsc::UnboundedReceiver<(u32, Settled)>,
}

#[derive(Debug, Default)]
struct Partition {
    /// The latest delivery handled and not acknowledged: its ack acknowledges every earlier one.
    latest: Option<Delivery>,
    /// Deliveries handled since the last ack.
    unsent: usize,
    /// When `latest` is acknowledged at the latest.
    due: Option<Instant>,
    /// Announcements in flight.
    announcing: usize,
    /// Deliveries whose announcement failed, not yet delivered again.
    failed: BTreeSet<u64>,
}

impl Partition {
    /// Whether a cumulative ack may go now: nothing before it waits.
    fn free(&self) -> bool {
        self.announcing == 0 && self.failed.is_empty()
    }

    /// Takes `d` as the latest delivery handled (a later one than the one held, if any).
    fn take(&mut self, d: Delivery) {
        self.failed.remove(&d.message.sequence);
        if self
            .latest
            .as_ref()
            .is_none_or(|l| l.message.sequence < d.message.sequence)
        {
            self.latest = Some(d);
        }
        self.unsent += 1;
        self.due.get_or_insert_with(|| Instant::now() + DELAY);
    }

    async fn flush(&mut self, partition: u32) {
        let Some(d) = self.latest.take() else {
            return;
        };
        self.unsent = 0;
        self.due = None;
        let seq = d.message.sequence;
        if let Err(e) = d.ack().await {
            tracing::warn!(partition, seq, error = %e, "ack failed; the deliveries will come again");
        } else {
            tracing::debug!(partition, seq, "acknowledged up to here");
        }
    }
}

impl Acks {
    pub(crate) fn new() -> Acks {
        let (settled_tx, settled_rx) = mpsc::unbounded_channel();
        Acks {
            partitions: HashMap::new(),
            settled_tx,
            settled_rx,
        }
    }

    /// `d` of `partition` is handled, nothing of it to announce: acknowledged now, or with the
    /// next cumulative ack of its partition.
    pub(crate) async fn handled(&mut self, partition: u32, d: Delivery) -> Result<(), BusError> {
        if d.acks == AckMode::Each {
            return d.ack().await;
        }
        let p = self.partitions.entry(partition).or_default();
        p.take(d);
        if p.unsent >= BATCH && p.free() {
            p.flush(partition).await;
        }
        Ok(())
    }

    /// `d` of `partition` is held, its game's announcement in flight: with a cumulative ack,
    /// covered by the next one once that announcement is on the bus (its game is finished, so
    /// it is void); otherwise left unacknowledged, to come again.
    pub(crate) fn held(&mut self, partition: u32, d: Delivery) {
        if d.acks == AckMode::Cumulative {
            self.partitions.entry(partition).or_default().take(d);
        }
    }

    /// An announcement of `partition` goes out in the background; what to send its outcome to.
    pub(crate) fn announcing(&mut self, partition: u32) -> mpsc::UnboundedSender<(u32, Settled)> {
        self.partitions.entry(partition).or_default().announcing += 1;
        self.settled_tx.clone()
    }

    /// An announcement of `partition` ended as `settled`.
    pub(crate) async fn settle(&mut self, partition: u32, settled: Settled) {
        let p = self.partitions.entry(partition).or_default();
        p.announcing = p.announcing.saturating_sub(1);
        match settled {
            Settled::Announced(d) => p.take(d),
            Settled::Failed(seq) => {
                p.failed.insert(seq);
            }
        }
        if p.unsent >= BATCH && p.free() {
            p.flush(partition).await;
        }
    }

    /// When the next cumulative ack is due, if one is.
    pub(crate) fn due(&self) -> Option<Instant> {
        self.partitions
            .values()
            .filter(|p| p.free())
            .filter_map(|p| p.due)
            .min()
    }

    /// Sends the cumulative acks that are due.
    pub(crate) async fn flush_due(&mut self) {
        let now = Instant::now();
        for (&partition, p) in &mut self.partitions {
            if p.free() && p.due.is_some_and(|d| d <= now) {
                p.flush(partition).await;
            }
        }
    }

    /// Sends every cumulative ack that may go (on shutdown): what waits on an announcement
    /// still in flight comes again to the next holder.
    pub(crate) async fn flush_all(&mut self) {
        for (&partition, p) in &mut self.partitions {
            if p.free() {
                p.flush(partition).await;
            }
        }
    }
}
