//! Partition leases: the instances of a role share the partitions among the live ones, and the
//! partitions of an instance that dies are taken over, with nothing but the bus.
//!
//! The protocol, run by every instance once per tick (a third of the lease time):
//!
//! 1. It says it is alive: a [`pb::Member`] on `shogi.lease.<role>.member.<holder>`, valid
//!    for one lease time.
//! 2. It reads the live members (every member subject, one message kept per subject) and gives
//!    each partition to one of them by rendezvous hashing (the member with the highest hash of
//!    member and partition), with bounded loads so that the shares differ by one at most
//!    ([`assignment`]): every instance that reads the same members computes the same
//!    assignment, and a member joining or leaving moves mostly its own share.
//! 3. For each partition it reads the lease, a [`pb::PartitionLease`] on
//!    `shogi.lease.<role>.<partition>`. A partition assigned to it is taken or renewed when
//!    the lease is free (none, released or expired) or its own; one it holds but is not
//!    assigned is stopped first and then released. Every write expects the subject's last
//!    sequence as read, so two instances cannot both take a partition from the same state.
//!
//! Invariants:
//! - An instance consumes a partition only while it holds its lease, and stops consuming when
//!   it cannot renew it in time (it fences itself: after a lease time without a renewal it
//!   stops, whatever the bus says).
//! - Leases make one holder per partition the rule, not the guard of correctness: two
//!   instances consuming one partition at once (a paused process that wakes up) still announce
//!   each verdict once, because every announcement is a guarded write (see [`crate::pipeline`]).
//! - The consumer of a partition is durable and shared by its holders: a new holder carries on
//!   where the last one stopped, and what the last one had not acknowledged comes again.

use crate::pipeline::config::{Error, Stats, WorkerConfig};
use crate::pipeline::judge::Worker;
use arbiter_bus::{Bus, Published};
use shogi_proto::event::{Envelope, decode_lease, decode_member};
use shogi_proto::{PARTITIONS, subject, v1 as pb};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How an instance takes part in the leases.
#[derive(Debug, Clone)]
pub struct LeaseConfig {
    /// The bus of the lease stream (`SHOGI_LEASES`: one message kept per subject).
    pub bus: Bus,
    /// This instance's name, unique among the live instances of the role; one subject token.
    pub holder: String,
    /// How long a lease or a membership lasts unrenewed; renewed every third of it.
    pub ttl: Duration,
}

impl LeaseConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), Error> {
        check(&self.holder, self.ttl)
    }
}

/// Checks a holder name and a lease time, before anything is connected.
pub fn check(holder: &str, ttl: Duration) -> Result<(), Error> {
    let token_ok = !holder.is_empty()
        && holder.len() <= 64
        && holder
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !token_ok {
        return Err(Error::Config(format!(
            "holder {holder:?} is not 1 to 64 letters, digits, '-' or '_'"
        )));
    }
    if ttl < Duration::from_millis(300) {
        return Err(Error::Config("lease time under 300 ms".into()));
    }
    Ok(())
}

/// A default holder name: the host's name (a pod's name in Kubernetes) and the process id,
/// reduced to one subject token.
pub fn default_holder() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .unwrap_or_else(|| "host".into());
    let name: String = format!("{}-{}", host.trim(), std::process::id())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    name
}

pub use arbiter_runtime::streams::side_streams;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The rendezvous score of `member` for `partition`: FNV-1a 64 of `member/partition`, mixed.
fn score(member: &str, partition: u32) -> u64 {
    let mut h = shogi_proto::Fnv1a64::new()
        .write(member.as_bytes())
        .write(b"/")
        .write(&partition.to_le_bytes())
        .finish();
    // A final mix, so that names differing in their last byte spread well.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h
}

/// Who consumes each partition (indexed by partition): rendezvous hashing with bounded loads.
/// Every (member, partition) pair is scored; the pairs are taken from the highest score down,
/// each partition going to the first member it meets that still has room, where room is
/// `PARTITIONS / members` partitions, and one more for as many members as the division leaves
/// over. So every member holds the same number of partitions to within one (plain rendezvous
/// hashing spread 16 over four members 6/4/4/2, and the busiest one set the pace), every
/// instance that reads the same members computes the same assignment, and a member joining or
/// leaving moves mostly its own share (the test below counts it). Ties go to the smaller name.
pub fn assignment(members: &[String]) -> Vec<Option<&str>> {
    let mut owners: Vec<Option<&str>> = vec![None; PARTITIONS as usize];
    if members.is_empty() {
        return owners;
    }
    let n = members.len() as u32;
    let (base, mut extra) = (PARTITIONS / n, PARTITIONS % n);
    let mut pairs: Vec<(u64, &str, u32)> = members
        .iter()
        .flat_map(|m| (0..PARTITIONS).map(move |p| (score(m, p), m.as_str(), p)))
        .collect();
    pairs.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)).then(a.2.cmp(&b.2)));
    let mut load: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for (_, m, p) in pairs {
        if owners[p as usize].is_some() {
            continue;
        }
        let held = load.entry(m).or_insert(0);
        if *held < base || (*held == base && extra > 0) {
            if *held == base {
                extra -= 1;
            }
            *held += 1;
            owners[p as usize] = Some(m);
        }
    }
    owners
}

/// A partition this instance consumes.
struct Held {
    /// The lease subject's last sequence, as written by this instance.
    seq: u64,
    /// When the lease was last renewed.
    renewed: Instant,
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<Result<(), Error>>,
}

/// Runs the leases of one instance until `shutdown`: consumes the partitions it holds, each in a
/// worker task of its own, and releases them all on the way out.
pub(crate) async fn run_leased(
    bus: Bus,
    config: WorkerConfig,
    leases: LeaseConfig,
    stats: Arc<Stats>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), Error> {
    config.validate()?;
    leases.validate()?;
    let role = config.role.name();
    let mut held: BTreeMap<u32, Held> = BTreeMap::new();
    // Whether this instance has said it is alive, and so has a membership to withdraw.
    let mut joined = false;
    let tick = leases.ttl / 3;
    tokio::pin!(shutdown);
    loop {
        match round(&bus, &config, &leases, &stats, &mut held, &mut joined).await {
            Ok(()) => {}
            Err(e) => {
                tracing::warn!(role, holder = %leases.holder, error = %e, "lease round failed")
            }
        }
        // Fencing: a partition not renewed within the lease time is no longer this
        // instance's, whatever the reason.
        let expired: Vec<u32> = held
            .iter()
            .filter(|(_, h)| h.renewed.elapsed() >= leases.ttl)
            .map(|(&p, _)| p)
            .collect();
        for p in expired {
            tracing::warn!(role, partition = p, "lease not renewed in time, stopping");
            stop(&mut held, p, &stats).await;
        }
        tokio::select! {
            () = tokio::time::sleep(tick) => {}
            () = &mut shutdown => break,
        }
    }
    // Hand everything back at once, so that the others take over without waiting for expiry.
    // The workers are ended together (join_all starts every `end` at once), so that their
    // in-flight deliveries finish within one grace period, then each lease is released.
    let released =
        futures::future::join_all(std::mem::take(&mut held).into_iter().map(|(p, h)| {
            let (bus, stats) = (&leases.bus, &stats);
            async move {
                let seq = h.seq;
                end(h, stats).await;
                let _ = write_lease(bus, role, p, "", 0, seq).await;
            }
        }));
    released.await;
    if joined {
        let _ = write_member(&leases, role, 0).await;
    }
    Ok(())
}

/// Stops consuming partition `p` and waits (briefly) for its in-flight delivery.
async fn stop(held: &mut BTreeMap<u32, Held>, p: u32, stats: &Stats) {
    if let Some(h) = held.remove(&p) {
        end(h, stats).await;
    }
}

/// Tells a held partition's worker to stop, waits up to 2 s for its in-flight delivery, then
/// aborts it; counts the lease dropped.
async fn end(h: Held, stats: &Stats) {
    let _ = h.stop.send(true);
    let mut task = h.task;
    if tokio::time::timeout(Duration::from_secs(2), &mut task)
        .await
        .is_err()
    {
        task.abort();
    }
    stats
        .leases_dropped
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

async fn round(
    bus: &Bus,
    config: &WorkerConfig,
    leases: &LeaseConfig,
    stats: &Arc<Stats>,
    held: &mut BTreeMap<u32, Held>,
    joined: &mut bool,
) -> Result<(), Error> {
    let role = config.role.name();
    let now = now_ms();
    let ttl_ms = i64::try_from(leases.ttl.as_millis()).unwrap_or(i64::MAX);
    write_member(leases, role, now + ttl_ms).await?;
    *joined = true;
    stats
        .joined
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let members = live_members(leases, role, now).await?;
    let reads = futures::future::try_join_all(
        (0..PARTITIONS).map(|p| async move { read_lease(&leases.bus, role, p).await }),
    )
    .await?;
    let owners = assignment(&members);
    for (p, (seq, lease)) in (0..PARTITIONS).zip(reads) {
        let mine = owners[p as usize] == Some(leases.holder.as_str());
        let holder = lease.as_ref().map(|l| l.holder.as_str()).unwrap_or("");
        let live = lease.as_ref().is_some_and(|l| l.expires_unix_ms > now) && !holder.is_empty();
        let held_here = held.get(&p).map(|h| h.seq);
        if held_here.is_some() && held_here != Some(seq) {
            // Someone wrote the lease since this instance did: it is theirs now.
            tracing::warn!(
                role,
                partition = p,
                holder,
                "lease taken by another instance"
            );
            stop(held, p, stats).await;
        }
        let held_here = held.contains_key(&p);
        if mine && (!live || holder == leases.holder) {
            match write_lease(&leases.bus, role, p, &leases.holder, now + ttl_ms, seq).await? {
                Published::Stored(new_seq) | Published::Duplicate(new_seq) => {
                    match held.get_mut(&p) {
                        Some(h) => {
                            h.seq = new_seq;
                            h.renewed = Instant::now();
                        }
                        None => {
                            tracing::info!(role, partition = p, holder = %leases.holder, "partition taken");
                            stats
                                .leases_taken
                                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            held.insert(p, start(bus, config, stats, p, new_seq));
                        }
                    }
                }
                Published::Conflict => {
                    stop(held, p, stats).await;
                }
            }
        } else if held_here && !mine {
            // Handed over: stop first, so that the next holder starts after this one's last
            // delivery, then release.
            tracing::info!(role, partition = p, "partition handed over");
            stop(held, p, stats).await;
            write_lease(&leases.bus, role, p, "", 0, seq).await?;
        }
    }
    Ok(())
}

fn start(bus: &Bus, config: &WorkerConfig, stats: &Arc<Stats>, p: u32, seq: u64) -> Held {
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let worker = Worker::for_partitions(bus.clone(), config.clone(), vec![p], stats.clone());
    let task = tokio::spawn(worker.run(async move {
        let _ = stopped.wait_for(|s| *s).await;
    }));
    Held {
        seq,
        renewed: Instant::now(),
        stop,
        task,
    }
}

async fn read_lease(
    bus: &Bus,
    role: &str,
    p: u32,
) -> Result<(u64, Option<pb::PartitionLease>), Error> {
    Ok(match bus.last(&subject::lease(role, p)).await? {
        // An unreadable lease is a free one: the next write replaces it.
        Some(m) => (m.sequence, decode_lease(&m.payload)),
        None => (0, None),
    })
}

async fn write_lease(
    bus: &Bus,
    role: &str,
    p: u32,
    holder: &str,
    expires_unix_ms: i64,
    expected: u64,
) -> Result<Published, Error> {
    let lease = pb::PartitionLease {
        holder: holder.to_owned(),
        expires_unix_ms,
    };
    Ok(bus
        .publish(Envelope::lease(role, p, expected, &lease).into())
        .await?)
}

/// Writes this instance's membership, valid until `expires_unix_ms`.
async fn write_member(leases: &LeaseConfig, role: &str, expires_unix_ms: i64) -> Result<(), Error> {
    let member = pb::Member {
        holder: leases.holder.clone(),
        expires_unix_ms,
    };
    match leases
        .bus
        .publish(Envelope::member(role, &member).into())
        .await?
    {
        Published::Stored(_) | Published::Duplicate(_) => Ok(()),
        Published::Conflict => Err(Error::Config("membership write conflicted".into())),
    }
}

/// The live members of `role`, sorted.
async fn live_members(leases: &LeaseConfig, role: &str, now: i64) -> Result<Vec<String>, Error> {
    let filter = subject::members(role);
    let mut members = Vec::new();
    let mut from = 0;
    while let Some(m) = leases.bus.next(&filter, from).await? {
        from = m.sequence + 1;
        if let Some(member) = decode_member(&m.payload)
            && member.expires_unix_ms > now
        {
            members.push(member.holder);
        }
    }
    if !members.contains(&leases.holder) {
        members.push(leases.holder.clone());
    }
    members.sort();
    members.dedup();
    Ok(members)
}

#[cfg(test)]
mod tests {
    use super::assignment;
    use shogi_proto::PARTITIONS;
    use std::collections::HashMap;

    fn names(n: usize, seed: &str) -> Vec<String> {
        (0..n).map(|i| format!("{seed}-{i}")).collect()
    }

    fn loads<'a>(owners: &[Option<&'a str>]) -> HashMap<&'a str, u32> {
        let mut loads = HashMap::new();
        for o in owners {
            *loads
                .entry(o.expect("every partition assigned"))
                .or_insert(0) += 1;
        }
        loads
    }

    #[test]
    fn every_member_holds_its_share_to_within_one() {
        for seed in ["pod", "repetition-watcher-7d9f", "x"] {
            for n in 1..=PARTITIONS as usize {
                let members = names(n, seed);
                let owners = assignment(&members);
                let loads = loads(&owners);
                assert_eq!(loads.len(), n, "{seed} x {n}: every member gets partitions");
                let (lo, hi) = (PARTITIONS / n as u32, PARTITIONS.div_ceil(n as u32));
                for (m, l) in &loads {
                    assert!((lo..=hi).contains(l), "{seed} x {n}: {m} holds {l}");
                }
                // The same members in any order give the same assignment.
                let mut reversed = members.clone();
                reversed.reverse();
                assert_eq!(assignment(&reversed), owners);
            }
        }
        // More members than partitions: some hold none, none holds two.
        let many = names(20, "pod");
        assert!(loads(&assignment(&many)).values().all(|&l| l == 1));
        assert!(assignment(&[]).iter().all(Option::is_none));
    }

    /// A member leaving moves its own partitions and, for the balance, a few others: over
    /// every member count and every leaver, at most one partition of someone else's per
    /// remaining member.
    #[test]
    fn a_leaver_moves_little_besides_its_own_share() {
        let mut moved_others = 0;
        let mut cases = 0;
        for n in 2..=8 {
            let members = names(n, "pod");
            let before = assignment(&members);
            for leaver in &members {
                let rest: Vec<String> = members.iter().filter(|m| *m != leaver).cloned().collect();
                let after = assignment(&rest);
                let others = (0..PARTITIONS as usize)
                    .filter(|&p| before[p] != Some(leaver.as_str()) && before[p] != after[p])
                    .count();
                assert!(
                    others < n,
                    "{n} members, {leaver} leaves: {others} others' partitions moved"
                );
                moved_others += others;
                cases += 1;
            }
        }
        println!(
            "others' partitions moved per leave, on average: {:.2}",
            moved_others as f64 / cases as f64
        );
    }
}
