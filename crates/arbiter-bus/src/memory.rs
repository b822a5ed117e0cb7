//! [`EventBus`] in process: one stream in memory with JetStream's semantics as the services use
//! them (one sequence counter, per-subject last sequences, a duplicate window for message ids,
//! conflicts on a wrong expected sequence, durable consumers with acks and redelivery).
//!
//! It keeps every message for the life of the process: it is the bus of a single-process
//! arbiter (`shogi-arbiter serve` without `--nats-url`) and of tests, not a store.

use crate::{
    Acker, BusError, ConsumerLag, Delivery, DurableConfig, EventBus, Message, Outgoing, Published,
    StreamState, subject_matches,
};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// An embedded bus; clones share it.
#[derive(Debug, Clone)]
pub struct MemoryBus {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    /// The last stream sequence, for waiters.
    last_seq: watch::Sender<u64>,
    duplicate_window: Duration,
    /// The timer of each subject's pending message schedule, which a later schedule on the
    /// same subject replaces (as nats-server keeps one schedule a subject).
    schedules: Mutex<HashMap<String, tokio::task::AbortHandle>>,
}

#[derive(Debug, Default)]
struct State {
    /// `log[s - 1]` is sequence `s`.
    log: Vec<Message>,
    /// The sequences of each subject, ascending.
    by_subject: HashMap<String, Vec<u64>>,
    /// Message id -> (sequence, when stored).
    msg_ids: HashMap<String, (u64, Instant)>,
    /// The ids of the guarded writes (the bus's own header on JetStream), by sequence.
    guarded_ids: HashMap<u64, String>,
    consumers: HashMap<String, Arc<Mutex<Consumer>>>,
}

#[derive(Debug)]
struct Consumer {
    filter: String,
    ack_wait: Duration,
    max_ack_pending: usize,
    /// Deliveries of one message at most, if limited.
    max_deliver: Option<u64>,
    /// The next sequence not yet delivered.
    cursor: u64,
    /// Messages matching the filter at or after the cursor (kept by every publish, so that a
    /// delivery tells the lag without a scan).
    backlog: u64,
    /// Delivered, not acknowledged: sequence -> (redelivery deadline, deliveries so far).
    pending: BTreeMap<u64, (Instant, u64)>,
    /// Deliveries made so far, redeliveries included: the last one's consumer sequence.
    delivered: u64,
    /// Woken by each ack, so that a consumer at its pending limit goes on at once.
    acked: Arc<tokio::sync::Notify>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Default for MemoryBus {
    fn default() -> MemoryBus {
        MemoryBus::new(Duration::from_secs(120))
    }
}

impl MemoryBus {
    /// An empty bus whose message ids are deduplicated within `duplicate_window`.
    pub fn new(duplicate_window: Duration) -> MemoryBus {
        MemoryBus {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                last_seq: watch::channel(0).0,
                duplicate_window,
                schedules: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Arms the schedule stored at `seq` on `subject`: at `at_unix_ms` (the system's clock) it
    /// publishes `fired` with the schedule's headers but its own, and `Nats-Scheduler` naming
    /// `subject`, replacing the subject's pending schedule, as nats-server does.
    fn arm(
        &self,
        seq: u64,
        at_unix_ms: i64,
        mut fired: Outgoing,
        subject: String,
        headers: Vec<(String, String)>,
    ) {
        fired.msg_id = format!("{subject}:{seq}:fired");
        fired.headers = headers
            .into_iter()
            .filter(|(k, _)| !k.starts_with(crate::SCHEDULE_HEADER) && k != crate::SCHEDULER_HEADER)
            .chain([(crate::SCHEDULER_HEADER.to_owned(), subject.clone())])
            .collect();
        let bus = MemoryBus {
            inner: self.inner.clone(),
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let wait = Duration::from_millis(u64::try_from(at_unix_ms - now).unwrap_or(0));
        let task = tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            if let Err(e) = bus.store(fired) {
                tracing::warn!(error = %e, "a message schedule of the embedded bus did not fire");
            }
        });
        if let Some(earlier) = lock(&self.inner.schedules).insert(subject, task.abort_handle()) {
            earlier.abort();
        }
    }

    /// How many messages the bus holds.
    pub fn len(&self) -> usize {
        lock(&self.inner.state).log.len()
    }

    /// Whether the bus holds no message.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl MemoryBus {
    /// Stores `out` (a publish, without its span).
    fn store(&self, out: Outgoing) -> Result<Published, BusError> {
        let now = Instant::now();
        let mut state = lock(&self.inner.state);
        let window = self.inner.duplicate_window;
        let seq = state.log.len() as u64 + 1;
        let mut headers = out.headers;
        if let Some(expected) = out.expected_subject_seq {
            // Guarded, as JetStream publishes it: no duplicate window; a refused copy is ours
            // when the subject's entry after the expected one carries its id.
            let seqs = state.by_subject.get(&out.subject);
            if seqs.and_then(|s| s.last().copied()).unwrap_or(0) != expected {
                let after = seqs
                    .and_then(|s| s.iter().find(|&&s| s > expected))
                    .copied();
                return Ok(match after {
                    Some(s) if state.guarded_ids.get(&s) == Some(&out.msg_id) => {
                        Published::Duplicate(s)
                    }
                    _ => Published::Conflict,
                });
            }
            state.guarded_ids.insert(seq, out.msg_id);
        } else {
            if let Some(&(seq, at)) = state.msg_ids.get(&out.msg_id)
                && now.duration_since(at) < window
            {
                return Ok(Published::Duplicate(seq));
            }
            if state.msg_ids.len() > 4096 && state.msg_ids.len().is_power_of_two() {
                state
                    .msg_ids
                    .retain(|_, (_, at)| now.duration_since(*at) < window);
            }
            state.msg_ids.insert(out.msg_id, (seq, now));
        }
        state
            .by_subject
            .entry(out.subject.clone())
            .or_default()
            .push(seq);
        for consumer in state.consumers.values() {
            let mut c = lock(consumer);
            if subject_matches(&c.filter, &out.subject) {
                c.backlog += 1;
            }
        }
        headers.sort();
        state.log.push(Message {
            subject: out.subject,
            sequence: seq,
            message_type: Some(out.message_type.to_owned()),
            headers,
            time: Some(std::time::SystemTime::now()),
            payload: out.payload,
        });
        drop(state);
        self.inner.last_seq.send_replace(seq);
        Ok(Published::Stored(seq))
    }
}

impl State {
    /// The messages from `from_seq` on whose subject matches `filter`, in order: a subject's
    /// own list for a literal filter, the log scanned for a wildcard (no allocation: `next`
    /// runs for every delivery of the embedded bus).
    fn matching<'a: 'f, 'f>(
        &'a self,
        filter: &'f str,
        from_seq: u64,
    ) -> impl Iterator<Item = &'a Message> + 'f {
        let from = from_seq.max(1);
        let wildcard = filter.contains(['*', '>']);
        let listed = (!wildcard).then(|| {
            let seqs = self.by_subject.get(filter).map_or(&[][..], Vec::as_slice);
            let i = seqs.partition_point(|&s| s < from);
            seqs[i..].iter().map(|&s| &self.log[s as usize - 1])
        });
        let scanned = wildcard.then(|| {
            self.log
                .iter()
                .skip(from as usize - 1)
                .filter(move |m| subject_matches(filter, &m.subject))
        });
        listed
            .into_iter()
            .flatten()
            .chain(scanned.into_iter().flatten())
    }

    /// Up to `max` (at least one) messages from `from_seq` on matching `filter`, in order.
    fn batch(&self, filter: &str, from_seq: u64, max: usize) -> Vec<Message> {
        self.matching(filter, from_seq)
            .take(max.max(1))
            .cloned()
            .collect()
    }

    fn next(&self, filter: &str, from_seq: u64) -> Option<&Message> {
        self.matching(filter, from_seq).next()
    }
}

struct MemAcker(Arc<Mutex<Consumer>>);

#[async_trait::async_trait]
impl Acker for MemAcker {
    async fn ack(&self, sequence: u64) -> Result<(), BusError> {
        let acked = {
            let mut c = lock(&self.0);
            c.pending.remove(&sequence);
            c.acked.clone()
        };
        acked.notify_one();
        Ok(())
    }
}

#[async_trait::async_trait]
impl EventBus for MemoryBus {
    async fn publish(&self, out: Outgoing) -> Result<Published, BusError> {
        let schedule = out.schedule().map(|(at, target)| {
            let fired = Outgoing {
                subject: target.to_owned(),
                message_type: out.message_type,
                msg_id: String::new(),
                expected_subject_seq: None,
                headers: Vec::new(),
                payload: out.payload.clone(),
            };
            (at, fired, out.subject.clone(), out.headers.clone())
        });
        let published = crate::traced_publish(out, |out| async move { self.store(out) }).await?;
        if let (Published::Stored(seq), Some((at, fired, subject, headers))) = (published, schedule)
        {
            self.arm(seq, at, fired, subject, headers);
        }
        Ok(published)
    }

    fn schedules(&self) -> Result<(), String> {
        Ok(())
    }

    async fn next(&self, filter: &str, from_seq: u64) -> Result<Option<Message>, BusError> {
        Ok(lock(&self.inner.state).next(filter, from_seq).cloned())
    }

    async fn next_batch(
        &self,
        filter: &str,
        from_seq: u64,
        max: usize,
    ) -> Result<Vec<Message>, BusError> {
        Ok(lock(&self.inner.state).batch(filter, from_seq, max))
    }

    async fn last(&self, subject: &str) -> Result<Option<Message>, BusError> {
        let state = lock(&self.inner.state);
        Ok(state
            .by_subject
            .get(subject)
            .and_then(|s| s.last())
            .map(|&s| state.log[s as usize - 1].clone()))
    }

    async fn state(&self) -> Result<StreamState, BusError> {
        // Nothing is ever removed from the embedded bus.
        Ok(StreamState {
            last_sequence: lock(&self.inner.state).log.len() as u64,
            removed: 0,
            bytes: 0,
            max_bytes: None,
        })
    }

    async fn follow(
        &self,
        filter: &str,
    ) -> Result<BoxStream<'static, Result<Message, BusError>>, BusError> {
        let inner = self.inner.clone();
        let rx = inner.last_seq.subscribe();
        let filter = filter.to_owned();
        Ok(futures::stream::unfold(
            (inner, rx, filter, 1u64),
            |(inner, mut rx, filter, cursor)| async move {
                loop {
                    rx.borrow_and_update();
                    let found = lock(&inner.state).next(&filter, cursor).cloned();
                    if let Some(m) = found {
                        let next = m.sequence + 1;
                        return Some((Ok(m), (inner, rx, filter, next)));
                    }
                    rx.changed().await.ok()?;
                }
            },
        )
        .boxed())
    }

    async fn consume(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<Delivery, BusError>>, BusError> {
        let consumer = {
            let mut state = lock(&self.inner.state);
            match state.consumers.get(&config.name) {
                Some(c) => c.clone(),
                None => {
                    let backlog = state
                        .log
                        .iter()
                        .filter(|m| subject_matches(&config.filter, &m.subject))
                        .count() as u64;
                    let c = Arc::new(Mutex::new(Consumer {
                        filter: config.filter.clone(),
                        ack_wait: config.ack_wait,
                        max_ack_pending: config.max_ack_pending.max(1),
                        max_deliver: config.max_deliver.map(|n| n.max(1)),
                        cursor: 1,
                        backlog,
                        pending: BTreeMap::new(),
                        delivered: 0,
                        acked: Arc::new(tokio::sync::Notify::new()),
                    }));
                    state.consumers.insert(config.name.clone(), c.clone());
                    c
                }
            }
        };
        let inner = self.inner.clone();
        let rx = inner.last_seq.subscribe();
        Ok(futures::stream::unfold(
            (inner, rx, consumer),
            |(inner, mut rx, consumer)| async move {
                loop {
                    rx.borrow_and_update();
                    let now = Instant::now();
                    let (found, wake) = {
                        let state = lock(&inner.state);
                        let mut c = lock(&consumer);
                        let ack_wait = c.ack_wait;
                        // Messages delivered as often as allowed are given up, as JetStream
                        // gives them up (it then publishes a MAX_DELIVERIES advisory).
                        if let Some(max) = c.max_deliver {
                            c.pending
                                .retain(|_, (deadline, n)| *deadline > now || *n < max);
                        }
                        let due = c
                            .pending
                            .iter()
                            .find(|(_, (deadline, _))| *deadline <= now)
                            .map(|(&s, &(_, n))| (s, n));
                        if let Some((seq, n)) = due {
                            c.delivered += 1;
                            c.pending.insert(seq, (now + ack_wait, n + 1));
                            let m = state.log[seq as usize - 1].clone();
                            (Some((m, n + 1, c.backlog, c.delivered)), None)
                        } else if c.pending.len() < c.max_ack_pending
                            && let Some(m) = state.next(&c.filter, c.cursor).cloned()
                        {
                            c.cursor = m.sequence + 1;
                            c.backlog = c.backlog.saturating_sub(1);
                            c.delivered += 1;
                            c.pending.insert(m.sequence, (now + ack_wait, 1));
                            (Some((m, 1, c.backlog, c.delivered)), None)
                        } else {
                            (None, c.pending.values().map(|(d, _)| *d).min())
                        }
                    };
                    if let Some((message, delivered, pending, consumer_sequence)) = found {
                        let delivery = Delivery {
                            message,
                            delivered,
                            pending,
                            acks: crate::AckMode::Each,
                            consumer_sequence,
                            acker: Box::new(MemAcker(consumer.clone())),
                        };
                        return Some((Ok(delivery), (inner, rx, consumer)));
                    }
                    let wake = wake.unwrap_or_else(|| now + Duration::from_secs(3600));
                    let acked = lock(&consumer).acked.clone();
                    tokio::select! {
                        changed = rx.changed() => changed.ok()?,
                        () = acked.notified() => {}
                        () = tokio::time::sleep_until(wake) => {}
                    }
                }
            },
        )
        .boxed())
    }

    async fn consumer_lag(&self, name: &str) -> Result<Option<ConsumerLag>, BusError> {
        let consumer = lock(&self.inner.state).consumers.get(name).cloned();
        Ok(consumer.map(|c| {
            let c = lock(&c);
            ConsumerLag {
                pending: c.backlog,
                ack_pending: c.pending.len() as u64,
            }
        }))
    }

    async fn consumer_position(
        &self,
        name: &str,
    ) -> Result<Option<crate::ConsumerPosition>, BusError> {
        let consumer = lock(&self.inner.state).consumers.get(name).cloned();
        Ok(consumer.map(|c| {
            let c = lock(&c);
            crate::ConsumerPosition {
                ack_pending: c.pending.len() as u64,
                delivered: c.delivered,
                // Each delivery is acknowledged on its own: the floor is below the first
                // pending one, or below the cursor when none is.
                ack_floor: c
                    .pending
                    .keys()
                    .next()
                    .map_or(c.cursor, |&s| s)
                    .saturating_sub(1),
            }
        }))
    }
}
