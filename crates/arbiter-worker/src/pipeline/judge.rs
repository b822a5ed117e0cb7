//! The judging loop: a [`Worker`] consumes its partitions, judges each delivery in its game's
//! order through the one replay of a game log, and announces the verdicts its role owns before
//! the delivery is acknowledged.

use super::acks::{Acks, Settled};
use super::config::{Error, Role, Stats, WorkerConfig};
use crate::telemetry;
use arbiter_bus::{AckMode, Bus, BusError, Delivery, Message};
use arbiter_runtime::games::{Announced, publish_warnings};
use futures::StreamExt;
use shogi_proto::convert::{result_code_from_pb, verdict_pb, warning_pb};
use shogi_proto::log::{Applied, AsideReason, Replay, SetAside};
use shogi_proto::{PARTITIONS, subject, v1 as pb};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};
use tracing::Instrument as _;

/// A pipeline worker: its games, in memory; the truth is on the bus.
#[derive(Debug)]
pub struct Worker {
    bus: Bus,
    config: WorkerConfig,
    /// The partitions this worker consumes, ascending.
    partitions: Vec<u32>,
    games: HashMap<String, Replay>,
    /// Games whose verdict this worker has seen; their later events are void. Forgetting one
    /// only costs a rebuild from the bus, which finds the verdict again.
    finished: HashSet<String>,
    /// The sequences of the events set aside (for a game never created), most recent last.
    set_aside: Vec<u64>,
    stats: Arc<Stats>,
    /// Verdicts judged by the delivery being handled, to announce before its ack.
    pending: Vec<Announcement>,
    /// Games whose verdict is being announced in the background. Their deliveries are held
    /// (not acknowledged) until the announcement settles: acknowledging a redelivery as void
    /// while the announcement could still fail would leave nothing to bring the game back.
    announcing: HashSet<String>,
    /// Whether the delivery being handled is held: not acknowledged, so that it comes again.
    hold: bool,
    /// How each background announcement ended (`true`: on the bus); a failed one's game is
    /// forgotten, so that the redelivery rebuilds it from the bus and announces again.
    settled_tx: tokio::sync::mpsc::UnboundedSender<(String, bool)>,
    settled_rx: tokio::sync::mpsc::UnboundedReceiver<(String, bool)>,
    /// The acknowledgements of its deliveries, one a run where the consumer allows it.
    acks: Acks,
}

/// A verdict to announce on `.verdict`.
#[derive(Debug, Clone)]
struct Announcement {
    game_id: String,
    verdict: pb::Verdict,
    /// When the bus stored the move that decided it, if one did.
    decided_at: Option<SystemTime>,
}

const MAX_FINISHED: usize = 200_000;
const MAX_SET_ASIDE: usize = 1024;

enum Step {
    /// Judged; go on.
    Next,
    /// The game ended here.
    Ended,
}

impl Worker {
    /// A worker over `bus` for the partitions `config` holds fixed.
    pub fn new(bus: Bus, config: WorkerConfig) -> Worker {
        let partitions = config.partitions();
        let stats = Arc::new(Stats::default());
        telemetry::observe(config.role, stats.clone());
        Worker::for_partitions(bus, config, partitions, stats)
    }

    /// A worker over `bus` for `partitions`, counting into `stats`.
    pub fn for_partitions(
        bus: Bus,
        config: WorkerConfig,
        mut partitions: Vec<u32>,
        stats: Arc<Stats>,
    ) -> Worker {
        partitions.sort_unstable();
        partitions.dedup();
        let (settled_tx, settled_rx) = tokio::sync::mpsc::unbounded_channel();
        let consumers = (0..PARTITIONS).map(|p| config.durable(p).name).collect();
        Worker {
            bus,
            config,
            partitions,
            games: HashMap::new(),
            finished: HashSet::new(),
            set_aside: Vec::new(),
            stats,
            pending: Vec::new(),
            announcing: HashSet::new(),
            hold: false,
            settled_tx,
            settled_rx,
            acks: Acks::new(consumers),
        }
    }

    /// The worker's counters.
    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    /// Games in progress held in memory.
    pub fn active_games(&self) -> usize {
        self.games.len()
    }

    /// The stream sequences of the last events set aside.
    pub fn set_aside(&self) -> &[u64] {
        &self.set_aside
    }

    /// Consumes its partitions until `shutdown` completes. Bus failures are logged and
    /// retried; they never end the loop.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        self.config.validate()?;
        tokio::pin!(shutdown);
        let role = self.config.role.name();
        let consumers: Vec<String> = (0..PARTITIONS)
            .map(|p| self.config.durable(p).name)
            .collect();
        // Held while this worker's consumers are missing or refused for good (see below).
        let mut unavailable: Option<Unavailable> = None;
        loop {
            let streams = futures::future::try_join_all(
                self.partitions
                    .iter()
                    .map(|&p| self.config.durable(p))
                    .map(|durable| {
                        let bus = self.bus.clone();
                        async move { bus.consume(&durable).await }
                    }),
            );
            let mut deliveries = tokio::select! {
                got = streams => match got {
                    Ok(d) => futures::stream::select_all(d),
                    // A consumer that does not exist in bind mode, or that the configuration
                    // refuses, stays so until an operator acts (`streams apply`): said once at
                    // ERROR, health NOT_SERVING meanwhile, and tried again quietly.
                    Err(e @ (BusError::Missing { .. } | BusError::Config(_))) => {
                        if unavailable.is_none() {
                            unavailable = Some(Unavailable::new(&self.stats, role, &e));
                        }
                        tracing::debug!(role, error = %e, "consumer unavailable for good");
                        tokio::select! {
                            () = tokio::time::sleep(UNAVAILABLE_RETRY) => continue,
                            () = &mut shutdown => return Ok(()),
                        }
                    }
                    Err(e) => {
                        tracing::warn!(role, error = %e, "consumer unavailable, retrying");
                        tokio::select! {
                            () = tokio::time::sleep(Duration::from_millis(250)) => continue,
                            () = &mut shutdown => return Ok(()),
                        }
                    }
                },
                () = &mut shutdown => return Ok(()),
            };
            if unavailable.take().is_some() {
                tracing::info!(role, partitions = ?self.partitions, "consumer found again");
            }
            tracing::info!(role, partitions = ?self.partitions, "consuming");
            let _consuming = Consuming::new(&self.stats, self.partitions.len());
            loop {
                let due = self.acks.due();
                let next = tokio::select! {
                    next = deliveries.next() => next,
                    Some((p, settled)) = self.acks.settled_rx.recv() => {
                        self.acks.settle(p, settled).await;
                        continue;
                    }
                    () = until(due) => {
                        self.acks.flush_due(&self.bus).await;
                        continue;
                    }
                    () = &mut shutdown => {
                        self.acks.flush_all().await;
                        return Ok(());
                    }
                };
                match next {
                    Some(Ok(d)) => {
                        // The consumer is the partition's, the subject's last token.
                        let consumer = d
                            .message
                            .subject
                            .rsplit('.')
                            .next()
                            .and_then(|p| p.parse::<usize>().ok())
                            .and_then(|p| consumers.get(p))
                            .map_or(role, String::as_str);
                        let handling = telemetry::Handling::start(consumer, self.config.role, &d);
                        if let Err(e) = handling.run(self.handle_in_background(d)).await {
                            // Not acknowledged: it comes again after the ack wait.
                            tracing::warn!(role, error = %e, "delivery not judged, will come again");
                        }
                    }
                    // A missed heartbeat, mostly: a pull request lost with a consumer leader
                    // that changed (or whose interest had not reached this server yet) is sent
                    // again by async-nats only after its expiry plus 5 s, so the consumers are
                    // opened again now, with a fresh pull (docs/benchmarks-history.md, "The
                    // verdict tail on a cluster: its cause").
                    Some(Err(e)) => {
                        tracing::warn!(role, error = %e, "consumer error; consuming again");
                        break;
                    }
                    None => break,
                }
            }
        }
    }

    /// Judges one delivery and everything before it in its game's log, announces the verdict
    /// it decided if any, then acknowledges it.
    pub async fn handle(&mut self, d: Delivery) -> Result<(), Error> {
        let pending = self.judge(&d).await?;
        if self.hold {
            return Ok(());
        }
        for a in &pending {
            if let Err(e) = announce(&self.bus, &self.stats, self.config.role, a).await {
                self.forget(&a.game_id);
                return Err(e);
            }
        }
        d.ack().await?;
        Ok(())
    }

    /// As [`Worker::handle`], but a delivery that decided a verdict is announced and
    /// acknowledged in a task of its own, so that the other games' events do not wait for the
    /// announcement's round trips. The game is finished at once (its later events are void);
    /// if the announcement fails, the game is forgotten and the unacknowledged delivery comes
    /// again to a worker that rebuilds it from the bus.
    async fn handle_in_background(&mut self, d: Delivery) -> Result<(), Error> {
        let partition = partition_of(&d.message.subject);
        // Open until done: a delivery whose judging fails below stays open, and no cumulative
        // ack passes it until it comes again and is judged.
        self.acks.received(partition, &d);
        let pending = self.judge(&d).await?;
        if self.hold {
            tracing::debug!(
                seq = d.message.sequence,
                "held until the game's announcement settles"
            );
            self.acks.held(partition, d);
            return Ok(());
        }
        if pending.is_empty() {
            self.acks.handled(partition, d).await?;
            return Ok(());
        }
        let (bus, stats, role) = (self.bus.clone(), self.stats.clone(), self.config.role);
        for a in &pending {
            self.announcing.insert(a.game_id.clone());
        }
        let settled = self.settled_tx.clone();
        // With cumulative acks, the worker acknowledges it once nothing before it waits.
        let acks = (d.acks == AckMode::Cumulative)
            .then(|| self.acks.announcing(partition, d.message.sequence));
        let announcing = async move {
            let mut failed = false;
            for a in &pending {
                let ok = match announce(&bus, &stats, role, a).await {
                    Ok(()) => !failed,
                    Err(e) => {
                        tracing::warn!(game_id = %a.game_id, error = %e, "verdict not announced, will come again");
                        false
                    }
                };
                failed |= !ok;
                let _ = settled.send((a.game_id.clone(), ok));
            }
            match acks {
                Some(acks) => {
                    let settled = if failed {
                        Settled::Failed(d.message.sequence)
                    } else {
                        Settled::Announced(d)
                    };
                    let _ = acks.send((partition, settled));
                }
                None if failed => {}
                None => {
                    if let Err(e) = d.ack().await {
                        tracing::warn!(error = %e, "ack failed; the delivery will come again");
                    }
                }
            }
        };
        // In the delivery's span and trace context: the verdict continues the move's trace.
        tokio::spawn(opentelemetry::context::FutureExt::with_current_context(
            announcing.instrument(tracing::Span::current()),
        ));
        Ok(())
    }

    /// Judges a delivery; the verdicts it decided, to announce before acknowledging it.
    async fn judge(&mut self, d: &Delivery) -> Result<Vec<Announcement>, Error> {
        while let Ok((game_id, announced)) = self.settled_rx.try_recv() {
            self.announcing.remove(&game_id);
            if !announced {
                self.forget(&game_id);
            }
        }
        self.hold = false;
        Stats::bump(&self.stats.deliveries);
        let judged = self.judge_delivery(&d.message).await;
        let pending = std::mem::take(&mut self.pending);
        match judged {
            Ok(()) => Ok(pending),
            Err(e) => {
                for a in &pending {
                    self.forget(&a.game_id);
                }
                Err(e)
            }
        }
    }

    /// Drops what this worker knows of a game; the bus has it all.
    fn forget(&mut self, game_id: &str) {
        self.finished.remove(game_id);
        self.games.remove(game_id);
    }

    async fn judge_delivery(&mut self, msg: &Message) -> Result<(), Error> {
        let Some(game_id) = subject::game_of_log(&msg.subject).map(str::to_owned) else {
            Stats::bump(&self.stats.garbage);
            tracing::warn!(subject = %msg.subject, seq = msg.sequence, "not a game log subject");
            return Ok(());
        };
        telemetry::record_game(&game_id, None);
        if self
            .partitions
            .binary_search(&subject::partition(&game_id))
            .is_err()
        {
            Stats::bump(&self.stats.foreign);
            return Ok(());
        }
        if self.announcing.contains(&game_id) {
            self.hold = true;
            return Ok(());
        }
        if self.finished.contains(&game_id) {
            Stats::bump(&self.stats.void);
            tracing::debug!(seq = msg.sequence, "void: the game is finished");
            return Ok(());
        }
        if !self.games.contains_key(&game_id) && !self.load(&game_id, msg).await? {
            return Ok(());
        }
        let last = self.games.get(&game_id).map_or(0, Replay::last_seq);
        if msg.sequence <= last {
            Stats::bump(&self.stats.duplicates);
            tracing::debug!(seq = msg.sequence, last, "judged already");
            return Ok(());
        }
        // The fast path: the delivered event is the game's next ply (or an ending): nothing
        // can sit between it and the last judged event, because writers append only after
        // the log's last event and nothing follows an ending.
        if self.is_next(&game_id, msg) {
            return self.judge_event(&game_id, msg).await.map(|_| ());
        }
        // A gap, or a duplicate of a ply already played: read the log in order up to this
        // delivery.
        let log = subject::moves(&game_id);
        let mut from = last + 1;
        let mut stopped = false;
        while let Some(m) = self.bus.next(&log, from).await? {
            if m.sequence > msg.sequence {
                stopped = true;
                break;
            }
            if m.sequence < msg.sequence {
                Stats::bump(&self.stats.gap_filled);
            }
            from = m.sequence + 1;
            if let Step::Ended = self.judge_event(&game_id, &m).await? {
                stopped = true;
                break;
            }
        }
        tracing::debug!(
            seq = msg.sequence,
            read_to = from - 1,
            "log read up to the delivery"
        );
        // The read found the log's end before the delivered entry, which the stream holds: a
        // read answered by a server behind the one that delivered it. Acknowledged, the
        // delivery would be lost with whatever it decides; left, it comes again.
        if !stopped && from <= msg.sequence {
            return Err(Error::Bus(arbiter_bus::BusError::Read {
                filter: format!("{log} from {from}"),
                reason: format!(
                    "the log ended before the delivered entry {}: not acknowledged, it comes again",
                    msg.sequence
                ),
            }));
        }
        Ok(())
    }

    /// Whether `msg` is the game's next log entry by its ply: a move for the next ply, or an
    /// ending recorded at the ply the game has reached (a forfeit: at the next one). Writers
    /// append only after the log's last entry, so nothing valid can sit between it and the
    /// last entry judged.
    fn is_next(&self, game_id: &str, msg: &Message) -> bool {
        self.games
            .get(game_id)
            .is_some_and(|g| g.is_next(msg.entry()))
    }

    /// Reads the game's creation event; `false` when there is none (the event is set aside)
    /// or it is unreadable.
    async fn load(&mut self, game_id: &str, msg: &Message) -> Result<bool, Error> {
        let seq = msg.sequence;
        let game_log = self.config.role.game_log();
        match game_log.load(&self.bus, game_id).await {
            Ok(Some(replay)) => {
                let over = replay.game().is_over();
                self.games.insert(game_id.to_owned(), replay);
                if over {
                    // Decided at the start: no move reaches the pipeline, so the validator
                    // announces it when it creates the game.
                    self.finish(game_id);
                    Stats::bump(&self.stats.void);
                    return Ok(false);
                }
                Ok(true)
            }
            Ok(None) => {
                Stats::bump(&self.stats.unknown_game);
                if self.set_aside.len() >= MAX_SET_ASIDE {
                    self.set_aside.remove(0);
                }
                self.set_aside.push(seq);
                let aside = SetAside {
                    sequence: seq,
                    reason: AsideReason::UnknownGame,
                    detail: "the game was never created".into(),
                };
                game_log.aside().put(&self.bus, game_id, msg, &aside).await;
                Ok(false)
            }
            Err(arbiter_runtime::games::ReadError::Bus(e)) => Err(Error::Bus(e)),
            Err(arbiter_runtime::games::ReadError::Unreadable(u)) => {
                Stats::bump(&self.stats.garbage);
                tracing::warn!(game_id, seq = u.sequence, reason = %u.reason, "unreadable game creation");
                Ok(false)
            }
        }
    }

    fn finish(&mut self, game_id: &str) {
        self.games.remove(game_id);
        if self.finished.len() >= MAX_FINISHED {
            self.finished.clear();
        }
        self.finished.insert(game_id.to_owned());
    }

    /// Judges the game's next log entry `m` through the one replay of a game log.
    async fn judge_event(&mut self, game_id: &str, m: &Message) -> Result<Step, Error> {
        let Some(replay) = self.games.get_mut(game_id) else {
            return Ok(Step::Ended);
        };
        Stats::bump(&self.stats.judged);
        let role = self.config.role;
        let applied = role.game_log().apply(&self.bus, replay, m).await;
        let (verdict, decided_at) = match applied {
            Applied::Duplicate => {
                Stats::bump(&self.stats.duplicates);
                tracing::debug!(seq = m.sequence, "a duplicate entry");
                return Ok(Step::Next);
            }
            Applied::SetAside(_) => {
                Stats::bump(&self.stats.garbage);
                return Ok(Step::Next);
            }
            Applied::EndingCopy => {
                tracing::debug!(seq = m.sequence, "an ending's copy");
                self.finish(game_id);
                return Ok(Step::Ended);
            }
            // An ending recorded in the log (a report, a declaration, a forfeit): its owner
            // announces it (again, if it did already: the notice is guarded).
            Applied::Ended(verdict) => (verdict, None),
            Applied::Played { outcome, .. } => {
                let ply = outcome.ply;
                telemetry::record_game(game_id, Some(ply));
                if role.warns() && !outcome.warnings.is_empty() {
                    let warnings: Vec<_> = outcome
                        .warnings
                        .iter()
                        .map(|w| warning_pb(game_id, w))
                        .collect();
                    let stored = publish_warnings(&self.bus, warnings).await?;
                    if stored > 0 {
                        self.stats.warnings.fetch_add(stored, Ordering::Relaxed);
                        tracing::info!(game_id, ply, stored, "warning");
                    }
                }
                let Some(verdict) = outcome.verdict else {
                    return Ok(Step::Next);
                };
                (verdict, m.time)
            }
        };
        tracing::debug!(seq = m.sequence, code = ?verdict.code, owned = role.owns(verdict.code), "decided");
        if role.owns(verdict.code) {
            self.pending.push(Announcement {
                game_id: game_id.to_owned(),
                verdict: verdict_pb(game_id, &verdict),
                decided_at,
            });
        }
        self.finish(game_id);
        Ok(Step::Ended)
    }
}

/// The partition of a delivery's consumer: its subject's last token (each partition's consumer
/// takes the subjects of its partition, `subject::partition_moves`).
fn partition_of(subject: &str) -> u32 {
    subject
        .rsplit('.')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or(u32::MAX)
}

/// Waits until `due`, or for ever when nothing is due.
async fn until(due: Option<tokio::time::Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

/// How often a worker whose consumer is missing or refused looks for it again.
const UNAVAILABLE_RETRY: Duration = Duration::from_secs(5);

/// Counts a worker whose consumers are missing or refused for good ([`Stats::unavailable`])
/// while it lives. The first one of the process logs the one ERROR; the count going back to
/// zero and up again logs another.
struct Unavailable(Arc<Stats>);

impl Unavailable {
    fn new(stats: &Arc<Stats>, role: &str, e: &BusError) -> Unavailable {
        if stats.unavailable.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::error!(
                role,
                error = %e,
                "a durable consumer of this service is missing or refused: its partitions get \
                 no verdict and health is NOT_SERVING until it is there (`shogi-arbiter \
                 streams apply` makes the consumers); looking for it again every 5 s"
            );
        }
        Unavailable(stats.clone())
    }
}

impl Drop for Unavailable {
    fn drop(&mut self) {
        self.0.unavailable.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Counts partitions as consumed while it lives.
struct Consuming(Arc<Stats>, u64);

impl Consuming {
    fn new(stats: &Arc<Stats>, partitions: usize) -> Consuming {
        let n = partitions as u64;
        stats.consuming.fetch_add(n, Ordering::Relaxed);
        Consuming(stats.clone(), n)
    }
}

impl Drop for Consuming {
    fn drop(&mut self) {
        self.0.consuming.fetch_sub(self.1, Ordering::Relaxed);
    }
}

/// Announces the verdict on `.verdict`, guarded (an empty subject expected, so doing this
/// again stores nothing; an entry there that is not this verdict is set aside, never taken
/// for an earlier announcement: `GameLog::announce`). No copy goes into the game's log: a
/// worker writes nothing a reader could take for a move (issue 20; logs written before keep
/// their copies, which the replay reads as before).
async fn announce(bus: &Bus, stats: &Stats, role: Role, a: &Announcement) -> Result<(), Error> {
    let (game_id, verdict) = (a.game_id.as_str(), &a.verdict);
    let ply = verdict.ply;
    let result_code = result_code_from_pb(verdict.code);
    let code = result_code.map(|c| c.as_str()).unwrap_or("?");
    match role.game_log().announce(bus, verdict).await? {
        Announced::Stored(seq) => {
            Stats::bump(&stats.verdicts);
            // Counted under the role of the two that owns the ending, whichever worker ran it.
            let by = result_code.map_or(role, |c| role.announcer_of(c));
            telemetry::verdict_announced(by, code, a.decided_at);
            tracing::info!(game_id, ply, code, seq, role = role.name(), "verdict");
        }
        Announced::Already => {
            tracing::debug!(game_id, ply, code, "verdict already announced");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_bus::{FaultyBus, MemoryBus, Published};
    use shogi_proto::event::{Envelope, LogEntry};

    /// A delivery whose game must be read from the log up to it (a worker that never saw the
    /// game's earlier plies), when the read ends before it: not acknowledged, so that it comes
    /// again, rather than acknowledged with whatever it decides lost. Once the read finds it,
    /// it is judged and acknowledged.
    #[tokio::test]
    async fn a_delivery_the_log_read_does_not_reach_is_not_acknowledged() {
        let faulty = Arc::new(FaultyBus::new(MemoryBus::new(Duration::from_secs(120))));
        let bus: Bus = faulty.clone();
        // An even game at the start position, under the default ruleset.
        let created = pb::GameCreated {
            game_id: "g".into(),
            start_sfen: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1".into(),
            ..Default::default()
        };
        bus.publish(Envelope::created(&created).into())
            .await
            .unwrap();
        let mut last = 0;
        for (ply, usi) in [(1, "7g7f"), (2, "3c3d"), (3, "2g2f")] {
            let entry = LogEntry::Move(pb::MoveAccepted {
                received_unix_ms: 0,
                comment: String::new(),
                game_id: "g".into(),
                ply,
                usi: usi.into(),
                sfen_after: String::new(),
                gives_check: false,
                position_hash: 0,
            });
            match bus.publish(entry.envelope(last).into()).await.unwrap() {
                Published::Stored(seq) => last = seq,
                other => panic!("ply {ply}: {other:?}"),
            }
        }
        let mut config = WorkerConfig::new(Role::Judge);
        config.ack_wait = Duration::from_millis(100);
        let durable = config.durable(subject::partition("g"));
        let mut worker = Worker::new(bus.clone(), config);
        let mut deliveries = bus.consume(&durable).await.unwrap();
        // The third ply, to a worker that has not read the game: a gap to fill from the log.
        let third = loop {
            let d = deliveries.next().await.unwrap().unwrap();
            if d.message.sequence == last {
                break d;
            }
            d.ack().await.unwrap();
        };
        faulty.log_reads_behind.store(true, Ordering::SeqCst);
        let judged = worker.handle(third).await;
        assert!(
            judged.is_err(),
            "a delivery the read did not reach was judged: {judged:?}"
        );
        let lag = bus.consumer_lag(&durable.name).await.unwrap().unwrap();
        assert_eq!(lag.ack_pending, 1, "left unacknowledged: {lag:?}");

        faulty.log_reads_behind.store(false, Ordering::SeqCst);
        let again = loop {
            let d = deliveries.next().await.unwrap().unwrap();
            if d.message.sequence == last {
                break d;
            }
            d.ack().await.unwrap();
        };
        assert!(again.delivered > 1, "{again:?}");
        worker.handle(again).await.unwrap();
        assert_eq!(worker.stats().gap_filled.load(Ordering::Relaxed), 2);
    }
}
