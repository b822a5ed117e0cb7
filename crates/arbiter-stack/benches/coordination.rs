//! Our partition leases against what nats-server 2.11+ offers for the same job, a consumer
//! priority group with a pinned client (issue 11: "what the server now does better than our
//! code"), on the pinned current nats-server, measured the same way:
//!
//! - balance: four instances of a role start 20 ms apart, as a rolling start does; how many of
//!   the 16 partitions each ends up consuming;
//! - takeover: the instance holding the most is killed (its runtime dropped with every task of
//!   it, its connections closed, nothing released); how long until each of its partitions is
//!   consumed by another.
//!
//! Our instances start as the worker binaries start them, through the one composition
//! (`arbiter_runtime::compose::run` with `arbiter_worker::part` and a lease holder), each in a
//! thread with a runtime of its own.
//!
//! Both use the same expiry, 3 s: the leases' TTL (the workers' default, renewed every second)
//! and the pinned client's `priority_timeout`.
//!
//! `cargo bench -p arbiter-stack --bench coordination`. Prints one line a measure.

use arbiter_bus::NatsOptions;
use arbiter_runtime::compose::{self, Composition};
use arbiter_runtime::streams::{self, BusConfig};
use arbiter_worker::{LeaseSettings, Role, WorkerConfig};
use async_nats::jetstream::{self, consumer};
use futures::StreamExt as _;
use shogi_proto::{PARTITIONS, subject};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use test_support::NatsServer;

const INSTANCES: usize = 4;
const TTL: Duration = Duration::from_secs(3);
const DEADLINE: Duration = Duration::from_secs(30);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let nats = NatsServer::start();
    let version = test_support::server_version(&test_support::nats_server_binary());
    println!(
        "nats-server {version}; {INSTANCES} instances, {PARTITIONS} partitions, expiry {TTL:?}"
    );
    leases(nats.url()).await;
    pinned(nats.url()).await;
}

fn spread(holders: &BTreeMap<u32, String>) -> Vec<usize> {
    let mut per: HashMap<&str, usize> = HashMap::new();
    for h in holders.values() {
        *per.entry(h.as_str()).or_default() += 1;
    }
    let mut counts: Vec<usize> = per.into_values().collect();
    counts.resize(INSTANCES.max(counts.len()), 0);
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts
}

fn report(what: &str, before: &BTreeMap<u32, String>, takeovers: &mut [Duration]) {
    takeovers.sort();
    let ms = |d: &Duration| d.as_millis();
    println!(
        "{what}: partitions per instance {:?}; takeover of the killed one's {} partitions: min {} ms, median {} ms, max {} ms",
        spread(before),
        takeovers.len(),
        takeovers.first().map(ms).unwrap_or_default(),
        takeovers
            .get(takeovers.len() / 2)
            .map(ms)
            .unwrap_or_default(),
        takeovers.last().map(ms).unwrap_or_default(),
    );
}

/// One instance of the role as the worker binaries run it (the one composition, with leases),
/// in a thread of its own with a runtime of its own, as a process would be: `kill` drops the
/// runtime without the composition's drain, so every task of the instance (the lease rounds,
/// its partitions' workers) ends where it stands and its connections close, nothing released,
/// as `kill -9` leaves a process's leases.
struct Instance {
    kill: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Instance {
    fn start(nats: &BusConfig, i: usize) -> Instance {
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let composition = Composition {
            bus: nats.clone(),
            client_name: format!("watcher-{i}"),
            parts: vec![arbiter_worker::part(
                WorkerConfig::new(Role::Watcher),
                Some(LeaseSettings {
                    holder: format!("watcher-{i}"),
                    ttl: TTL,
                }),
                Arc::default(),
            )],
            health: None,
            grace_period: Duration::from_secs(1),
        };
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                tokio::select! {
                    ran = compose::run(composition, std::future::pending()) => {
                        ran.expect("the instance runs");
                    }
                    _ = killed => {}
                }
            });
            // Every task still on it (the workers, the lease rounds) is dropped unfinished.
            rt.shutdown_background();
        });
        Instance {
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    /// Ends it at once, nothing released.
    fn kill(&mut self) {
        if let Some(k) = self.kill.take() {
            let _ = k.send(());
        }
        if let Some(t) = self.thread.take() {
            t.join().expect("the instance's thread");
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Our leases: instances started through the one composition over the real lease stream (as
/// `repetition-watcher --lease-holder` runs); the holders read from it.
async fn leases(url: &str) {
    let role = Role::Watcher.name();
    // The bus as every process opens it (the games' stream and the side streams).
    let nats = BusConfig::Nats {
        options: Box::new(NatsOptions::new(url)),
        stream: shogi_proto::STREAM.to_owned(),
        replicas: 1,
    };
    let lease_bus = streams::open(&nats, "bench").await.expect("streams").leases;
    let mut instances = Vec::new();
    for i in 0..INSTANCES {
        instances.push(Instance::start(&nats, i));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let holders = || async {
        let mut out = BTreeMap::new();
        for p in 0..PARTITIONS {
            if let Ok(Some(m)) = lease_bus.last(&subject::lease(role, p)).await
                && let Some(l) = shogi_proto::event::decode_lease(&m.payload)
                && !l.holder.is_empty()
            {
                out.insert(p, l.holder);
            }
        }
        out
    };
    // Settled: every partition held, the same holders for two TTLs.
    let start = Instant::now();
    let mut stable = (holders().await, Instant::now());
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = holders().await;
        if now != stable.0 {
            stable = (now, Instant::now());
        } else if stable.0.len() == PARTITIONS as usize && stable.1.elapsed() > 2 * TTL {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "the leases never settled: {:?}",
            stable.0
        );
    }
    let before = stable.0;
    let victim = most(&before);
    let i: usize = victim.trim_start_matches("watcher-").parse().unwrap();
    let killed = Instant::now();
    tokio::task::block_in_place(|| instances[i].kill());
    let mut takeovers = Vec::new();
    let mut waiting: Vec<u32> = before
        .iter()
        .filter(|(_, h)| **h == victim)
        .map(|(p, _)| *p)
        .collect();
    while !waiting.is_empty() {
        let now = holders().await;
        waiting.retain(|p| match now.get(p) {
            Some(h) if *h != victim => {
                takeovers.push(killed.elapsed());
                false
            }
            _ => true,
        });
        assert!(killed.elapsed() < DEADLINE, "no takeover of {waiting:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    report("leases (ours)", &before, &mut takeovers);
    tokio::task::block_in_place(|| drop(instances));
}

fn most(holders: &BTreeMap<u32, String>) -> String {
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    for h in holders.values() {
        *per.entry(h.as_str()).or_default() += 1;
    }
    per.into_iter()
        .max_by_key(|(_, n)| *n)
        .unwrap()
        .0
        .to_owned()
}

/// A pinned-client priority group per partition: every instance pulls from all 16 consumers
/// with the group; the server pins one instance to each consumer.
async fn pinned(url: &str) {
    let client = async_nats::connect(url).await.unwrap();
    let js = jetstream::new(client.clone());
    let stream = js
        .create_stream(jetstream::stream::Config {
            name: "PINNED".into(),
            subjects: vec!["pinned.>".into()],
            ..Default::default()
        })
        .await
        .expect("stream");
    for p in 0..PARTITIONS {
        stream
            .create_consumer(consumer::pull::Config {
                durable_name: Some(format!("pinned-p{p}")),
                filter_subject: format!("pinned.{p}"),
                ack_policy: consumer::AckPolicy::Explicit,
                priority_policy: consumer::PriorityPolicy::PinnedClient,
                priority_groups: vec!["workers".into()],
                priority_timeout: TTL,
                ..Default::default()
            })
            .await
            .expect("a pinned-client consumer (nats-server 2.11 or later)");
    }
    // Who received each partition's messages last, and when.
    let last: Arc<Mutex<BTreeMap<u32, (usize, Instant)>>> = Arc::default();
    let mut instances = Vec::new();
    for i in 0..INSTANCES {
        let c = async_nats::connect(url).await.unwrap();
        let s = jetstream::new(c.clone())
            .get_stream("PINNED")
            .await
            .unwrap();
        let mut tasks = Vec::new();
        for p in 0..PARTITIONS {
            let consumer: consumer::PullConsumer =
                s.get_consumer(&format!("pinned-p{p}")).await.unwrap();
            let last = last.clone();
            tasks.push(tokio::spawn(async move {
                let Ok(mut messages) = consumer
                    .stream()
                    .group("workers")
                    .expires(Duration::from_secs(1))
                    .messages()
                    .await
                else {
                    return;
                };
                while let Some(Ok(m)) = messages.next().await {
                    last.lock().unwrap().insert(p, (i, Instant::now()));
                    let _ = m.ack().await;
                }
            }));
        }
        instances.push((c, tasks));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A message a partition every 20 ms, for as long as it takes.
    let publisher = {
        let js = js.clone();
        tokio::spawn(async move {
            loop {
                for p in 0..PARTITIONS {
                    let _ = js.publish(format!("pinned.{p}"), "x".into()).await;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    tokio::time::sleep(2 * TTL).await;
    let holders: BTreeMap<u32, String> = last
        .lock()
        .unwrap()
        .iter()
        .map(|(p, (i, _))| (*p, format!("instance-{i}")))
        .collect();
    assert_eq!(
        holders.len(),
        PARTITIONS as usize,
        "some partition got nothing: {holders:?}"
    );
    let victim = most(&holders);
    let v: usize = victim.trim_start_matches("instance-").parse().unwrap();
    let (c, tasks) = instances.swap_remove(v);
    for t in tasks {
        t.abort();
    }
    drop(c);
    let killed = Instant::now();
    let mut waiting: Vec<u32> = holders
        .iter()
        .filter(|(_, h)| **h == victim)
        .map(|(p, _)| *p)
        .collect();
    let mut takeovers = Vec::new();
    while !waiting.is_empty() {
        {
            let now = last.lock().unwrap();
            waiting.retain(|p| match now.get(p) {
                Some((i, at)) if *i != v && *at > killed => {
                    takeovers.push(at.duration_since(killed));
                    false
                }
                _ => true,
            });
        }
        assert!(killed.elapsed() < DEADLINE, "no takeover of {waiting:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    report("pinned client (nats-server)", &holders, &mut takeovers);
    publisher.abort();
    for (_, tasks) in instances {
        for t in tasks {
            t.abort();
        }
    }
}
