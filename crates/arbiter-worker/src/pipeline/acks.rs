//! A worker's acknowledgements: one message for a run of deliveries where the consumer takes an
//! ack for every earlier delivery too ([`AckMode::Cumulative`], JetStream's ack policy `all`),
//! each on its own otherwise (issue 38: one ack a move and a role was a third of the NATS
//! messages a move cost).
//!
//! A cumulative ack acknowledges every delivery of the consumer at or below its stream
//! sequence, whoever it was delivered to. So a worker sends one only when both hold:
//!
//! - **Everything before it is done here**: every delivery of the partition this worker
//!   received at or below the acknowledged sequence was judged, and what it caused is on the
//!   bus (a verdict's announcement settled). A delivery whose judging failed, or whose
//!   announcement failed, stays open until it comes again and is done; nothing past it is
//!   acknowledged meanwhile.
//! - **Every delivery pending is this worker's** (the partition is *exclusive*): nothing the
//!   server delivered to another subscriber (two instances on one partition during a rolling
//!   update, a lease handed over, an instance killed before it judged what it was given) is
//!   waiting. The worker learns it from the consumer itself: it reads the consumer's position
//!   (its pending count, its latest delivery's consumer sequence, its ack floor), and the
//!   partition is exclusive when, once this worker has received every delivery up to that
//!   consumer sequence, the deliveries it holds open above the floor are as many as the server
//!   counts pending, and its deliveries since that sequence follow one another with no gap; or,
//!   before it has (the server spends consumer sequences on deliveries it never sends), when
//!   the deliveries it holds open are all the server counts pending.
//!   From then on every delivery must carry the next consumer sequence: a gap means another
//!   subscriber was given one, and the partition is not exclusive again until a new reading
//!   says so. While it is not, nothing is acknowledged: what another subscriber held comes
//!   again after the ack wait, to whoever consumes then, and the reading is taken again.
//!
//! Without that second condition (tried first, 2026-12-06), the crash test lost a verdict: a
//! restarted worker's first cumulative ack covered the deciding move a killed one had been
//! delivered and never judged.

use arbiter_bus::{AckMode, Bus, BusError, ConsumerPosition, Delivery};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// At most this many deliveries of a partition done and not yet acknowledged...
const BATCH: usize = 128;
/// ... for at most this long: far below the ack wait, so that nothing comes again for want of
/// an ack, and a crash judges again at most this much (without effect).
const DELAY: Duration = Duration::from_millis(50);
/// How soon a partition that is not exclusive reads its consumer's position again.
const PROBE_EVERY: Duration = Duration::from_millis(250);
/// How long a partition with deliveries done may stay not exclusive before its bookkeeping is
/// started afresh ([`Partition::reset`]): far above the ack wait (5 s), after which what another
/// subscriber held comes again.
const RESET_AFTER: Duration = Duration::from_secs(20);
/// The consumer sequences of the deliveries received since the last ack, kept for a reading of
/// the consumer's position; past this many, the oldest are forgotten (a reading older than
/// them tells nothing, and another is taken).
const RECENT_MAX: usize = 1 << 16;

/// How an announcement made in the background ended, for the partition's acks.
#[derive(Debug)]
pub(crate) enum Settled {
    /// On the bus: its delivery is done and may be acknowledged.
    Announced(Delivery),
    /// Failed: the delivery at this sequence comes again; nothing after it is acknowledged
    /// until it has and is done.
    Failed(u64),
}

/// The acknowledgements of one worker's partitions.
#[derive(Debug)]
pub(crate) struct Acks {
    partitions: HashMap<u32, Partition>,
    /// The durable consumer of each partition, by partition number.
    consumers: Vec<String>,
    settled_tx: mpsc::UnboundedSender<(u32, Settled)>,
    /// How the announcements in the background ended.
    pub(crate) settled_rx: mpsc::UnboundedReceiver<(u32, Settled)>,
}

/// A delivery received and not yet covered by an ack this worker sent.
#[derive(Debug)]
struct Open {
    /// The consumer sequence of its first delivery to this worker.
    first: u64,
    /// Done: judged, and what it caused is on the bus; the delivery to acknowledge.
    done: Option<Delivery>,
}

#[derive(Debug, Default)]
struct Partition {
    /// By stream sequence, every delivery received and not covered by an ack sent.
    open: BTreeMap<u64, Open>,
    /// How many of `open` are done.
    done: usize,
    /// When the done ones are acknowledged at the latest (or the position read, if not
    /// exclusive).
    due: Option<Instant>,
    /// Whether every delivery pending on the consumer is known to be this worker's.
    exclusive: bool,
    /// The consumer sequence of the latest delivery received.
    last: Option<u64>,
    /// The consumer sequences received since the last ack, in order.
    recent: VecDeque<u64>,
    /// Whether `recent` lost its oldest entries.
    truncated: bool,
    /// The stream sequences of the deliveries whose announcement is in flight, with how many
    /// announcements of each are: open until they settle, even when one comes again meanwhile
    /// and is held, and even across [`Partition::reset`].
    announcing: HashMap<u64, u32>,
    /// A reading of the consumer's position not yet decided: this worker has not received
    /// every delivery up to its consumer sequence yet.
    reading: Option<ConsumerPosition>,
    /// Since when the partition is not exclusive (or was last started afresh).
    unsure_since: Option<Instant>,
    /// Of the announcements in flight, how many of each sequence were when the bookkeeping was
    /// started afresh: what they settle is not taken (their deliveries come again, and are
    /// judged again), but they stay in `announcing` until they settle, so that a redelivery
    /// held meanwhile is not taken for done.
    stale: HashMap<u64, u32>,
}

impl Partition {
    /// A delivery received, before it is judged.
    fn receive(&mut self, partition: u32, d: &Delivery) {
        let seq = d.consumer_sequence;
        if self.last.is_some_and(|l| seq <= l) {
            // The consumer's sequences went back: its state was restored from an older one
            // (every server lost, a leader that had not heard of the latest deliveries).
            self.reset(partition, "the consumer's delivery sequence went back");
        }
        if self.exclusive && self.last.is_some_and(|l| seq != l + 1) {
            tracing::debug!(
                partition,
                seq,
                last = ?self.last,
                "a delivery of the partition went to another subscriber: acks wait"
            );
            self.exclusive = false;
            self.unsure_since = Some(Instant::now());
            self.due.get_or_insert_with(|| Instant::now() + PROBE_EVERY);
        }
        self.last = Some(self.last.map_or(seq, |l| l.max(seq)));
        if !self.exclusive {
            if self.recent.len() == RECENT_MAX {
                self.recent.pop_front();
                self.truncated = true;
            }
            self.recent.push_back(seq);
        }
        let first = self.open.get(&d.message.sequence).map_or(seq, |o| o.first);
        if let Some(o) = self
            .open
            .insert(d.message.sequence, Open { first, done: None })
            && o.done.is_some()
        {
            // Delivered again after it was done: done again once judged again.
            self.done -= 1;
        }
        if let Some(reading) = self.reading {
            self.decide(partition, reading);
        }
    }

    /// `d` is done: acknowledged with the next cumulative ack that may cover it.
    fn done(&mut self, d: Delivery) {
        let seq = d.message.sequence;
        let first = d.consumer_sequence;
        let o = self.open.entry(seq).or_insert(Open { first, done: None });
        if o.done.replace(d).is_none() {
            self.done += 1;
        }
        self.due.get_or_insert_with(|| Instant::now() + DELAY);
    }

    /// `d` is held, its game's announcement in flight: done, unless it is that announcement's
    /// own delivery come again, whose announcement decides.
    fn held(&mut self, d: Delivery) {
        if !self.announcing.contains_key(&d.message.sequence) {
            self.done(d);
        }
    }

    /// Starts the bookkeeping afresh, not exclusive, with nothing open: what the consumer still
    /// has pending comes again (after the ack wait at the latest) and is judged again, without
    /// effect, and the partition is exclusive again once every delivery pending is one received
    /// since. For a consumer whose state went back (restored from an older one), or a partition
    /// that stayed not exclusive for [`RESET_AFTER`] with deliveries done: whatever went wrong
    /// in the count, it costs one more delivery of what is pending, never an ack too many.
    ///
    /// The announcements in flight stay in flight: a delivery of one of their games that comes
    /// again before they settle is held, and stays open (the crash test's lost verdict of
    /// 2026-12-06, nats-server restarted: its deciding move came again while the announcement
    /// waited for the server, was taken for done, and was acknowledged before the instance
    /// was killed with the announcement still unwritten). What they settle is not taken.
    fn reset(&mut self, partition: u32, why: &str) {
        tracing::info!(
            partition,
            open = self.open.len(),
            announcing = self.announcing.len(),
            why,
            "acks: the partition's deliveries are counted afresh"
        );
        let announcing = std::mem::take(&mut self.announcing);
        let mut stale = std::mem::take(&mut self.stale);
        stale.extend(&announcing);
        *self = Partition {
            announcing,
            stale,
            unsure_since: Some(Instant::now()),
            ..Partition::default()
        };
    }

    /// One announcement of the delivery at stream sequence `seq` settled: whether it was
    /// in flight when the bookkeeping was started afresh (then what it settled is not taken).
    fn settled(&mut self, seq: u64) -> bool {
        take_one(&mut self.announcing, seq);
        take_one(&mut self.stale, seq)
    }

    /// The announcement of the delivery at stream sequence `seq` failed: open again, whatever
    /// happened to it meanwhile (delivered again while the announcement was in flight, it was
    /// held as done), so that no ack covers it until it comes again and is judged.
    fn fail(&mut self, seq: u64) {
        if let Some(o) = self.open.get_mut(&seq)
            && o.done.take().is_some()
        {
            self.done -= 1;
        }
    }

    /// Decides whether `reading` makes the partition exclusive: once this worker has received
    /// every delivery up to its consumer sequence, or before, when the deliveries it holds are
    /// all the consumer has pending; keeps it for later otherwise.
    fn decide(&mut self, partition: u32, reading: ConsumerPosition) {
        let last = self.last.unwrap_or(0);
        if reading.delivered < last {
            // The consumer has delivered less than this worker received: restored from an
            // older state.
            self.reset(
                partition,
                "the consumer's position is behind its deliveries",
            );
            return;
        }
        // Deliveries at or below the floor were acknowledged by someone: nothing to send.
        let kept = self.open.split_off(&(reading.ack_floor + 1));
        let dropped = std::mem::replace(&mut self.open, kept);
        self.done -= dropped.values().filter(|o| o.done.is_some()).count();
        if last < reading.delivered {
            // The consumer counted deliveries this worker has not received: in flight to it,
            // given to another subscriber, or never sent (a replicated consumer queues a
            // delivery until its replicas have it, and a redelivery of the same message
            // replaces the one queued: nats-server 2.11 and later spend a consumer sequence on
            // each; seen after every server was lost at once, under load, where this reading
            // waited for ever and the partition's acks with it). Those still pending are in the
            // reading's count, and every delivery this worker holds was made before the
            // reading: when they are as many, every pending delivery is one of them, and the
            // consumer sequences up to the reading's are accounted for.
            let mine = self.open.len() as u64;
            if mine == reading.ack_pending {
                tracing::debug!(
                    partition,
                    ?reading,
                    last,
                    "every pending delivery is this worker's, the consumer's sequence ahead"
                );
                self.last = Some(reading.delivered);
                self.exclusive_from_here();
            } else {
                tracing::debug!(
                    partition,
                    ?reading,
                    last,
                    mine,
                    "the consumer delivered past this worker's deliveries: the reading waits"
                );
                self.reading = Some(reading);
            }
            return;
        }
        self.reading = None;
        let mine = self
            .open
            .values()
            .filter(|o| o.first <= reading.delivered)
            .count() as u64;
        let since = self
            .recent
            .iter()
            .rev()
            .take_while(|&&s| s > reading.delivered);
        let unbroken = since.count() as u64 == last - reading.delivered
            && !(self.truncated
                && self
                    .recent
                    .front()
                    .is_none_or(|&f| f > reading.delivered + 1));
        if mine == reading.ack_pending && unbroken {
            tracing::debug!(
                partition,
                ?reading,
                "every pending delivery is this worker's"
            );
            self.exclusive_from_here();
        } else {
            tracing::debug!(
                partition,
                ?reading,
                mine,
                unbroken,
                "deliveries pending elsewhere: acks wait"
            );
            self.due = (self.done > 0).then(|| Instant::now() + PROBE_EVERY);
        }
    }

    /// Every delivery pending is this worker's: exclusive until a delivery's consumer sequence
    /// does not follow the last one's.
    fn exclusive_from_here(&mut self) {
        self.reading = None;
        self.exclusive = true;
        self.unsure_since = None;
        self.recent.clear();
        self.truncated = false;
        self.due.get_or_insert_with(|| Instant::now() + DELAY);
    }

    /// Sends the cumulative ack that may go: at the latest done delivery below the first one
    /// not done, when the partition is exclusive.
    async fn flush(&mut self, partition: u32) {
        if !self.exclusive {
            return;
        }
        let target = self
            .open
            .iter()
            .take_while(|(_, o)| o.done.is_some())
            .map(|(&s, _)| s)
            .last();
        let Some(target) = target else {
            self.due = None;
            return;
        };
        let kept = self.open.split_off(&(target + 1));
        let mut covered = std::mem::replace(&mut self.open, kept);
        self.done -= covered.len();
        self.due = (self.done > 0).then(|| Instant::now() + DELAY);
        let d = covered
            .remove(&target)
            .and_then(|o| o.done)
            .expect("the target is done");
        if let Err(e) = d.ack().await {
            tracing::warn!(partition, seq = target, error = %e, "ack failed; the deliveries will come again");
        } else {
            tracing::debug!(partition, seq = target, "acknowledged up to here");
        }
    }
}

/// Takes one from `seq`'s count in `counts`, dropping it at zero; whether there was one.
fn take_one(counts: &mut HashMap<u64, u32>, seq: u64) -> bool {
    let Some(n) = counts.get_mut(&seq) else {
        return false;
    };
    *n -= 1;
    if *n == 0 {
        counts.remove(&seq);
    }
    true
}

impl Acks {
    /// The acknowledgements of a worker whose partition `p` is consumed by `consumers[p]`.
    pub(crate) fn new(consumers: Vec<String>) -> Acks {
        let (settled_tx, settled_rx) = mpsc::unbounded_channel();
        Acks {
            partitions: HashMap::new(),
            consumers,
            settled_tx,
            settled_rx,
        }
    }

    /// `d` of `partition` was received and is about to be judged.
    pub(crate) fn received(&mut self, partition: u32, d: &Delivery) {
        if d.acks == AckMode::Cumulative {
            self.partitions
                .entry(partition)
                .or_default()
                .receive(partition, d);
        }
    }

    /// `d` of `partition` is handled, nothing of it to announce: acknowledged now, or with the
    /// next cumulative ack of its partition.
    pub(crate) async fn handled(&mut self, partition: u32, d: Delivery) -> Result<(), BusError> {
        if d.acks == AckMode::Each {
            return d.ack().await;
        }
        let p = self.partitions.entry(partition).or_default();
        p.done(d);
        if p.done >= BATCH {
            p.flush(partition).await;
        }
        Ok(())
    }

    /// `d` of `partition` is held, its game's announcement in flight: with a cumulative ack,
    /// done (the announcement's own delivery, earlier, stays open until it is on the bus);
    /// otherwise left unacknowledged, to come again.
    pub(crate) fn held(&mut self, partition: u32, d: Delivery) {
        if d.acks == AckMode::Cumulative {
            self.partitions.entry(partition).or_default().held(d);
        }
    }

    /// The announcement decided by the delivery at stream sequence `seq` of `partition` goes
    /// out in the background; what to send its outcome to.
    pub(crate) fn announcing(
        &mut self,
        partition: u32,
        seq: u64,
    ) -> mpsc::UnboundedSender<(u32, Settled)> {
        let p = self.partitions.entry(partition).or_default();
        *p.announcing.entry(seq).or_default() += 1;
        self.settled_tx.clone()
    }

    /// An announcement of `partition` ended as `settled`.
    pub(crate) async fn settle(&mut self, partition: u32, settled: Settled) {
        let p = self.partitions.entry(partition).or_default();
        let seq = match &settled {
            Settled::Announced(d) => d.message.sequence,
            Settled::Failed(seq) => *seq,
        };
        if p.settled(seq) {
            // Counted afresh since: the delivery comes again (held meanwhile, it stayed open),
            // and is judged again; a failure keeps it open whatever happened meanwhile.
            if let Settled::Failed(seq) = settled {
                p.fail(seq);
            }
            return;
        }
        match settled {
            Settled::Announced(d) => p.done(d),
            Settled::Failed(seq) => {
                tracing::debug!(partition, seq, "announcement failed: acks wait for it");
                p.fail(seq);
            }
        }
        if p.done >= BATCH {
            p.flush(partition).await;
        }
    }

    /// When the next cumulative ack, or reading of a consumer's position, is due, if one is.
    pub(crate) fn due(&self) -> Option<Instant> {
        self.partitions.values().filter_map(|p| p.due).min()
    }

    /// Sends the cumulative acks that are due, and reads the positions of the consumers whose
    /// partitions are not exclusive.
    pub(crate) async fn flush_due(&mut self, bus: &Bus) {
        let now = Instant::now();
        for (&partition, p) in &mut self.partitions {
            if p.due.is_none_or(|d| d > now) {
                continue;
            }
            if p.exclusive {
                p.flush(partition).await;
                continue;
            }
            if p.done == 0 {
                // Nothing to acknowledge: no reading needed until something is done.
                p.due = None;
                continue;
            }
            if p.unsure_since.get_or_insert(now).elapsed() >= RESET_AFTER {
                p.reset(partition, "not known to be the worker's alone for too long");
                continue;
            }
            p.due = Some(now + PROBE_EVERY);
            let Some(name) = self.consumers.get(partition as usize) else {
                continue;
            };
            match bus.consumer_position(name).await {
                Ok(Some(reading)) => p.decide(partition, reading),
                Ok(None) => tracing::debug!(partition, name, "consumer position: no such consumer"),
                Err(e) => {
                    tracing::debug!(partition, error = %e, "consumer position not read");
                }
            }
        }
    }

    /// Sends every cumulative ack that may go (on shutdown): what is not done, or held where
    /// the partition is not exclusive, comes again to the next holder.
    pub(crate) async fn flush_all(&mut self) {
        for (&partition, p) in &mut self.partitions {
            p.flush(partition).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The position after `delivered` deliveries, `ack_pending` of them pending above `floor`.
    fn reading(ack_pending: u64, delivered: u64, ack_floor: u64) -> ConsumerPosition {
        ConsumerPosition {
            ack_pending,
            delivered,
            ack_floor,
        }
    }

    /// A partition that received stream sequences `seqs` with consumer sequences `dseqs`.
    fn received(seqs: &[(u64, u64)]) -> Partition {
        let mut p = Partition::default();
        for &(seq, dseq) in seqs {
            p.last = Some(p.last.map_or(dseq, |l| l.max(dseq)));
            p.recent.push_back(dseq);
            p.open.insert(
                seq,
                Open {
                    first: dseq,
                    done: None,
                },
            );
        }
        p
    }

    #[test]
    fn every_pending_delivery_received_here_makes_the_partition_exclusive() {
        let mut p = received(&[(10, 1), (11, 2), (12, 3)]);
        p.decide(0, reading(3, 3, 9));
        assert!(p.exclusive);
    }

    #[test]
    fn a_delivery_pending_elsewhere_keeps_the_acks_back() {
        // The server counts four pending; this worker holds three (consumer sequence 2 went to
        // a killed instance that never judged it).
        let mut p = received(&[(10, 1), (12, 3), (13, 4)]);
        p.decide(0, reading(4, 4, 9));
        assert!(!p.exclusive);
        // ... even when the counts agree, a gap after the reading is another's delivery.
        let mut p = received(&[(10, 1), (11, 2), (13, 4)]);
        p.decide(0, reading(2, 2, 9));
        assert!(
            !p.exclusive,
            "consumer sequence 3 went elsewhere after the reading"
        );
    }

    #[test]
    fn a_reading_ahead_of_the_deliveries_waits_for_them() {
        let mut p = received(&[(10, 1)]);
        p.decide(0, reading(2, 2, 9));
        assert!(!p.exclusive);
        assert!(
            p.reading.is_some(),
            "kept until consumer sequence 2 arrives"
        );
    }

    /// After every server of a cluster was lost at once, under load, nats-server's consumer
    /// sequence ran ahead of every delivery the worker received (twice as fast: deliveries of
    /// a replicated consumer replaced in its queue before they were sent), and the reading
    /// waited for deliveries that never came: no ack for minutes, the pending deliveries
    /// redelivered every few seconds (the cluster test, 2 runs of 3 beside `tools/busy.sh`).
    /// When what this worker holds is all that is pending, the partition is exclusive from the
    /// reading's sequence on.
    #[test]
    fn a_consumer_sequence_ahead_of_the_deliveries_is_exclusive_when_all_pending_is_here() {
        let mut p = received(&[(10, 1), (11, 2)]);
        p.decide(0, reading(2, 5, 9));
        assert!(p.exclusive);
        assert_eq!(
            p.last,
            Some(5),
            "the sequences up to the reading's are accounted for"
        );
        // A delivery held elsewhere keeps it waiting, as before.
        let mut p = received(&[(10, 1), (11, 2)]);
        p.decide(0, reading(3, 5, 9));
        assert!(!p.exclusive);
        assert!(p.reading.is_some());
        // Deliveries acknowledged meanwhile (below the floor) are not counted.
        let mut p = received(&[(10, 1), (11, 2), (12, 3)]);
        p.decide(0, reading(1, 7, 11));
        assert!(p.exclusive);
        assert_eq!(p.open.len(), 1);
    }

    #[test]
    fn deliveries_acknowledged_by_another_are_not_counted() {
        // Sequence 10 was covered by another subscriber's ack (the floor is 10).
        let mut p = received(&[(10, 1), (11, 2)]);
        p.decide(0, reading(1, 2, 10));
        assert!(p.exclusive);
        assert_eq!(p.open.len(), 1);
    }

    /// Three deliveries of one consumer, consumer sequences 1, 2 and 3 (the in-memory bus).
    async fn three_deliveries() -> Vec<Delivery> {
        use arbiter_bus::{EventBus as _, MemoryBus, Outgoing};
        use futures::StreamExt as _;
        let bus = MemoryBus::default();
        for i in 0..3 {
            let subject = format!("shogi.game.g{i}.move.0");
            bus.publish(Outgoing::new(subject, "test.Move", format!("m{i}"), "m"))
                .await
                .unwrap();
        }
        let config = arbiter_bus::DurableConfig {
            name: "acks".into(),
            filter: "shogi.game.*.move.0".into(),
            ack_wait: Duration::from_secs(60),
            max_ack_pending: 100,
            max_deliver: None,
            replicas: None,
            delivery: arbiter_bus::DeliveryMode::Pull,
            storage: arbiter_bus::ConsumerStorage::Auto,
            acks: AckMode::Cumulative,
        };
        let deliveries = bus.consume(&config).await.unwrap();
        deliveries.take(3).map(Result::unwrap).collect().await
    }

    #[tokio::test]
    async fn a_gap_while_exclusive_ends_it_and_a_done_run_is_acknowledged_up_to_the_first_open() {
        let mut d = three_deliveries().await.into_iter();
        let (d1, d2, d3) = (d.next().unwrap(), d.next().unwrap(), d.next().unwrap());
        assert_eq!(
            [
                d1.consumer_sequence,
                d2.consumer_sequence,
                d3.consumer_sequence
            ],
            [1, 2, 3]
        );
        let mut p = Partition::default();
        p.receive(0, &d1);
        p.decide(0, reading(1, 1, 0));
        assert!(p.exclusive);
        // Consumer sequence 3 after 1: 2 went to another subscriber.
        p.receive(0, &d3);
        assert!(!p.exclusive);

        // Another partition's worker, given all three in order, exclusive, with 1 and 3 done
        // and 2 open: the ack covers 1 only.
        let mut p = Partition::default();
        for d in [&d1, &d2, &d3] {
            p.receive(0, d);
        }
        p.decide(0, reading(3, 3, 0));
        assert!(p.exclusive);
        let (s1, s2, s3) = (
            d1.message.sequence,
            d2.message.sequence,
            d3.message.sequence,
        );
        p.done(d1);
        p.done(d3);
        p.flush(0).await;
        assert_eq!(p.open.keys().copied().collect::<Vec<_>>(), [s2, s3]);
        assert!(!p.open.contains_key(&s1));
        assert_eq!(p.done, 1);
    }

    /// The cluster test's lost verdict (2026-12-06, pull consumers, a node killed): the
    /// deciding move came again while its announcement was in flight, was held as done, and
    /// the announcement then failed; the next ack covered it, and it never came again.
    #[tokio::test]
    async fn a_failed_announcement_reopens_its_delivery_even_when_held_meanwhile() {
        let mut d = three_deliveries().await.into_iter();
        let (d1, d2) = (d.next().unwrap(), d.next().unwrap());
        let (s1, s2) = (d1.message.sequence, d2.message.sequence);
        let mut p = Partition::default();
        p.receive(0, &d1);
        p.decide(0, reading(1, 1, 0));
        assert!(p.exclusive);
        // d1 decided a verdict: its announcement is in flight, d1 open. It comes again
        // meanwhile and is held (d1 stands for its redelivery), as is d2, a later one: d2 is
        // done, d1 stays open for its announcement to decide.
        p.announcing.insert(s1, 1);
        p.receive(0, &d2);
        p.held(d1);
        p.held(d2);
        p.flush(0).await;
        assert_eq!(p.open.keys().copied().collect::<Vec<_>>(), [s1, s2]);
        assert_eq!(p.done, 1);
        // Even held as done (a worker before this), a failed announcement opens it again.
        let mut d = three_deliveries().await.into_iter();
        let d1 = d.next().unwrap();
        p.done(d1);
        p.fail(s1);
        p.flush(0).await;
        assert_eq!(p.open.keys().copied().collect::<Vec<_>>(), [s1, s2]);
    }

    /// The crash test's lost verdict (2026-12-06, nats-server killed and restarted, every core
    /// busy): a move cap's deciding move was being announced when the consumer's position came
    /// back behind the worker's deliveries; the bookkeeping started afresh, the move came again,
    /// was held, and was taken for done; the next ack covered it while the announcement still
    /// waited for the server, and the instance was killed before it wrote it. Held, it stays
    /// open; once the announcement settles it is not taken either, and it is acknowledged when
    /// it comes again and is judged.
    #[tokio::test]
    async fn an_announcement_in_flight_when_counted_afresh_keeps_its_delivery_open() {
        let mut d = three_deliveries().await.into_iter();
        let (d1, d2, d3) = (d.next().unwrap(), d.next().unwrap(), d.next().unwrap());
        let s3 = d3.message.sequence;
        let mut acks = Acks::new(vec!["acks".into()]);
        let p = acks.partitions.entry(0).or_default();
        for d in [&d1, &d2, &d3] {
            p.receive(0, d);
        }
        p.done(d1);
        // d3 decided a verdict; its announcement waits for the server.
        let _in_flight = acks.announcing(0, s3);
        let p = acks.partitions.get_mut(&0).unwrap();
        // The server back on an older state of the consumer: counted afresh.
        p.decide(0, reading(0, 0, 0));
        assert!(p.open.is_empty() && !p.exclusive);
        // d2 and d3 come again (d2 and d3 stand for their redeliveries), both of the game
        // being announced: held.
        p.receive(0, &d2);
        p.receive(0, &d3);
        p.held(d2);
        p.held(d3);
        p.decide(0, reading(2, 3, 0));
        assert!(p.exclusive);
        p.flush(0).await;
        assert_eq!(
            p.open.keys().copied().collect::<Vec<_>>(),
            [s3],
            "d2 acknowledged, d3 open for its announcement"
        );
        assert_eq!(p.done, 0);
        // The announcement settles: not taken (it was in flight when counted afresh).
        let d3_announced = three_deliveries().await.into_iter().nth(2).unwrap();
        acks.settle(0, Settled::Announced(d3_announced)).await;
        let p = acks.partitions.get_mut(&0).unwrap();
        assert!(p.announcing.is_empty() && p.stale.is_empty());
        p.flush(0).await;
        assert_eq!(p.open.keys().copied().collect::<Vec<_>>(), [s3]);
        // It comes again, is judged (void: the game is finished) and acknowledged.
        let d3_again = three_deliveries().await.into_iter().nth(2).unwrap();
        p.done(d3_again);
        p.flush(0).await;
        assert!(p.open.is_empty() && p.done == 0);
    }

    /// A consumer whose state went back (every server lost at once, the cluster test on
    /// nats-server 2.10.26): its delivery sequences repeat, and a worker that kept counting
    /// with the old ones was never exclusive again (267 deliveries left unacknowledged). The
    /// bookkeeping starts afresh, and what the consumer has pending counts from there.
    #[tokio::test]
    async fn a_consumer_whose_sequences_went_back_is_counted_afresh() {
        let mut d = three_deliveries().await.into_iter();
        let (d1, d2, d3) = (d.next().unwrap(), d.next().unwrap(), d.next().unwrap());
        let mut p = Partition::default();
        p.receive(0, &d2);
        p.receive(0, &d3);
        p.announcing.insert(d3.message.sequence, 1);
        p.done(d2);
        // Consumer sequence 1 after 3: counted afresh, d1 alone open, d3's announcement stale.
        p.receive(0, &d1);
        assert_eq!(p.open.len(), 1);
        assert_eq!(p.done, 0);
        assert_eq!(p.last, Some(1));
        assert!(p.stale.contains_key(&d3.message.sequence));
        assert!(
            p.announcing.contains_key(&d3.message.sequence),
            "still in flight"
        );
        // A reading behind what was received does the same.
        p.decide(0, reading(0, 0, 0));
        assert!(p.open.is_empty() && p.last.is_none() && !p.exclusive);
    }
}
