//! Horizontal scaling on one machine: N = 1, 2, 4, 8 instances of the repetition-watcher, the
//! impasse-judge and the move-validator, each held to the same fixed CPU share, against the
//! broker's ceiling measured in the same run.
//!
//! Each instance runs as a deployed one does, with a NATS connection of its own, here in a
//! thread of its own with a single-threaded tokio runtime. The thread (and any thread it
//! starts) is put in a cgroup v1 CPU group of its own,
//! `/sys/fs/cgroup/cpu/shogi-scaling-<pid>/<i>`, whose `cpu.cfs_quota_us` is the share times
//! `cpu.cfs_period_us`, and in the same group under `cpuacct`, which counts the CPU time it
//! used. nats-server and the load (publishing, the gRPC clients) are not held.
//!
//! - The workers: the games' move events are published once; each phase starts N instances of
//!   the role with fresh durable consumers, each with its fixed share of the 16 partitions (as
//!   `--instance i --instances N` runs them), and counts events judged per second from the
//!   moment every instance has judged its first event.
//! - The validator: N instances on loopback ports; the client balances the games over them, a
//!   game's moves all going to one instance (client-side balancing with affinity, as a
//!   platform does so that an instance's cache holds its games); 16 games in flight per
//!   instance, each SubmitMove awaited before the game's next.
//! - The broker's ceiling: the same traffic with nothing of ours, not held: raw consumption
//!   (16 durable pull consumers, one a partition, one ack each) for the workers; JetStream
//!   publishes as SubmitMove writes them (message id, expected last subject sequence, the ack
//!   awaited), 64 in flight, for the validator.
//!
//! `cargo bench -p arbiter-stack --bench scaling`; `SCALING_SHARE` (the share of a core of each
//! instance, default 0.125), `SCALING_N` (default `1,2,4,8`), `SCALING_SECONDS` (each
//! measurement, default 3), `SCALING_GAMES` (games of 100 plies published for the workers,
//! default 4000). Where the cgroup controller cannot be written (not root, cgroup v2), it says
//! so and measures nothing.

use arbiter_runtime::compose::{self, Composition};
use arbiter_runtime::streams::BusConfig;
use arbiter_worker::{Role, Stats, WorkerConfig};
use futures::StreamExt;
use prost::Message as _;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use shogi_rules::Move;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod common;
use common::{PLIES, Rng, events, publish_games, random_game};

/// The CFS period of every group (the kernel's default): a held instance runs for its share of
/// each 100 ms.
const PERIOD_US: u64 = 100_000;
/// Games in flight per validator instance.
const DRIVERS_PER_INSTANCE: usize = 16;
/// nats-server's process id, for the windows' CPU accounting.
static BROKER_PID: AtomicU32 = AtomicU32::new(0);

/// A cgroup v1 CPU group, held to a share of one core, with its CPU accounting.
struct CpuGroup {
    cpu: PathBuf,
    acct: PathBuf,
}

impl CpuGroup {
    /// Creates `parent/name` under the cpu and cpuacct controllers; `share` of a core, or no
    /// limit.
    fn create(parent: &str, name: &str, share: Option<f64>) -> std::io::Result<CpuGroup> {
        let cpu = Path::new("/sys/fs/cgroup/cpu").join(parent).join(name);
        let acct = Path::new("/sys/fs/cgroup/cpuacct").join(parent).join(name);
        std::fs::create_dir_all(&cpu)?;
        std::fs::create_dir_all(&acct)?;
        std::fs::write(cpu.join("cpu.cfs_period_us"), PERIOD_US.to_string())?;
        let group = CpuGroup { cpu, acct };
        group.hold(share)?;
        Ok(group)
    }

    /// Holds the group to `share` of a core, or lets it run free.
    fn hold(&self, share: Option<f64>) -> std::io::Result<()> {
        let quota = share.map_or(-1, |s| ((s * PERIOD_US as f64) as i64).max(1000));
        std::fs::write(self.cpu.join("cpu.cfs_quota_us"), quota.to_string())
    }

    /// Moves the calling thread into the group; the threads it starts inherit it.
    fn join_this_thread(&self) -> std::io::Result<()> {
        // /proc/thread-self links to "<pid>/task/<tid>".
        let link = std::fs::read_link("/proc/thread-self")?;
        let tid = link
            .file_name()
            .and_then(|t| t.to_str())
            .ok_or_else(|| std::io::Error::other("no thread id"))?
            .to_owned();
        std::fs::write(self.cpu.join("tasks"), &tid)?;
        std::fs::write(self.acct.join("tasks"), &tid)
    }

    /// CPU time used by the group's threads so far.
    fn usage(&self) -> Duration {
        let ns = std::fs::read_to_string(self.acct.join("cpuacct.usage"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        Duration::from_nanos(ns)
    }

    /// Periods in which the group ran out of its quota, so far.
    fn throttled(&self) -> u64 {
        std::fs::read_to_string(self.cpu.join("cpu.stat"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("nr_throttled "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }

    fn remove(&self) {
        let _ = std::fs::remove_dir(&self.cpu);
        let _ = std::fs::remove_dir(&self.acct);
    }
}

/// The groups of one run, removed (with their parent) when dropped, once their threads ended.
struct Groups {
    parent: String,
    held: Vec<CpuGroup>,
    free: CpuGroup,
}

impl Drop for Groups {
    fn drop(&mut self) {
        for g in self.held.iter().chain(std::iter::once(&self.free)) {
            g.remove();
        }
        for controller in ["cpu", "cpuacct"] {
            let _ = std::fs::remove_dir(
                Path::new("/sys/fs/cgroup")
                    .join(controller)
                    .join(&self.parent),
            );
        }
    }
}

/// An instance: a thread with a runtime of its own in `group`, running `make()`'s future.
fn instance<F, Fut>(group: &CpuGroup, make: F) -> std::thread::JoinHandle<()>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    let (cpu, acct) = (group.cpu.clone(), group.acct.clone());
    std::thread::spawn(move || {
        CpuGroup { cpu, acct }
            .join_this_thread()
            .expect("join the instance's cgroup");
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(make());
    })
}

/// One measurement: a rate, and what each held group used meanwhile.
struct Window {
    rate: f64,
    /// Cores used by nats-server during the window.
    broker: f64,
    /// Cores used by this process's threads outside the groups (the load) during the window.
    load: f64,
    /// Cores left idle on the machine during the window.
    idle: f64,
    /// Cores used by each group during the window.
    cores: Vec<f64>,
    /// Periods throttled per group during the window.
    throttled: Vec<u64>,
}

/// Waits until `started()`, then counts `count()` for `seconds` (or until it reaches `limit`),
/// reading the CPU time of the groups, the broker (`broker_pid`) and this process at both ends.
async fn window(
    count: impl Fn() -> u64,
    started: impl Fn() -> bool,
    limit: u64,
    seconds: f64,
    groups: &[&CpuGroup],
) -> Window {
    let broker_pid = BROKER_PID.load(Ordering::Relaxed);
    let give_up = Instant::now() + Duration::from_secs(60);
    while !started() {
        assert!(
            Instant::now() < give_up,
            "the instances did not start within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (t0, n0) = (Instant::now(), count());
    let used0: Vec<(Duration, u64)> = groups.iter().map(|g| (g.usage(), g.throttled())).collect();
    let (broker0, own0, idle0) = (
        test_support::process_cpu(broker_pid),
        test_support::process_cpu(std::process::id()),
        test_support::machine_idle(),
    );
    let end = t0 + Duration::from_secs_f64(seconds);
    while Instant::now() < end && count() < limit {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (elapsed, n1) = (t0.elapsed().as_secs_f64(), count());
    let broker = (test_support::process_cpu(broker_pid) - broker0).as_secs_f64() / elapsed;
    let own = (test_support::process_cpu(std::process::id()) - own0).as_secs_f64() / elapsed;
    let idle = (test_support::machine_idle() - idle0).as_secs_f64() / elapsed;
    let (cores, throttled): (Vec<f64>, Vec<u64>) = groups
        .iter()
        .zip(used0)
        .map(|(g, (u, t))| ((g.usage() - u).as_secs_f64() / elapsed, g.throttled() - t))
        .unzip();
    Window {
        rate: (n1 - n0) as f64 / elapsed,
        broker,
        load: (own - cores.iter().sum::<f64>()).max(0.0),
        idle,
        cores,
        throttled,
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The bus on the server at `url` as every process opens it: the games' stream with its verdict
/// republish, and the side streams.
fn nats_bus(url: &str) -> BusConfig {
    BusConfig::Nats {
        options: Box::new(arbiter_bus::NatsOptions::new(url)),
        stream: shogi_proto::STREAM.to_owned(),
        replicas: 1,
    }
}

/// `n` instances of `role` over the whole stream, from fresh consumers.
async fn workers(
    js: &async_nats::jetstream::Context,
    url: &str,
    role: Role,
    groups: &[&CpuGroup],
    total: u64,
    seconds: f64,
) -> Window {
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    for p in 0..shogi_proto::PARTITIONS {
        let _ = stream
            .delete_consumer(&WorkerConfig::new(role).durable(p).name)
            .await;
    }
    let n = groups.len() as u32;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let stats: Vec<Arc<Stats>> = (0..n).map(|_| Arc::default()).collect();
    let threads: Vec<_> = (0..n)
        .zip(groups)
        .map(|(i, group)| {
            let (url, stats, mut stopped) =
                (url.to_owned(), stats[i as usize].clone(), stopped.clone());
            instance(group, move || async move {
                let mut config = WorkerConfig::new(role);
                config.instance = i;
                config.instances = n;
                // As the binaries run it: the one composition.
                let composition = Composition {
                    bus: nats_bus(&url),
                    client_name: format!("{}-{i}", role.name()),
                    parts: vec![arbiter_worker::part(config, None, stats)],
                    health: None,
                    grace_period: Duration::from_secs(10),
                };
                compose::run(composition, async move {
                    let _ = stopped.wait_for(|s| *s).await;
                })
                .await
                .expect("the worker runs");
            })
        })
        .collect();
    let w = window(
        || stats.iter().map(|s| Stats::get(&s.judged)).sum(),
        || stats.iter().all(|s| Stats::get(&s.judged) > 0),
        total * 8 / 10,
        seconds,
        groups,
    )
    .await;
    let _ = stop.send(true);
    for t in threads {
        tokio::task::spawn_blocking(move || t.join().unwrap())
            .await
            .unwrap();
    }
    w
}

/// `n` validators, the games balanced over them by the client with affinity.
async fn validators(
    url: &str,
    groups: &[&CpuGroup],
    games: &Arc<Vec<Vec<String>>>,
    seconds: f64,
    phase: &str,
) -> Window {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut threads = Vec::new();
    let mut addrs = Vec::new();
    for group in groups {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        addrs.push(listener.local_addr().unwrap());
        let (url, mut stopped) = (url.to_owned(), stopped.clone());
        threads.push(instance(group, move || async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let mut config = move_validator::Config::new(url);
            config.announcements = move_validator::Announcements::ByOwners;
            move_validator::run(listener, config, async move {
                let _ = stopped.wait_for(|s| *s).await;
            })
            .await
            .expect("the validator runs");
        }));
    }
    let moves = Arc::new(AtomicU64::new(0));
    let running = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let mut drivers = Vec::new();
    for (i, addr) in addrs.iter().enumerate() {
        let endpoint = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap();
        let channel = loop {
            match endpoint.connect().await {
                Ok(c) => break c,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        for d in 0..DRIVERS_PER_INSTANCE {
            let mut client = MoveValidatorClient::new(channel.clone());
            let (games, moves, running, done) =
                (games.clone(), moves.clone(), running.clone(), done.clone());
            let phase = phase.to_owned();
            drivers.push(tokio::spawn(async move {
                let mut first = true;
                for round in 0.. {
                    let id = format!("{phase}-{i}-{d}-{round}");
                    client
                        .create_game(pb::CreateGameRequest {
                            ruleset: Some(pb::Ruleset {
                                preset: "online".into(),
                                overrides: None,
                            }),
                            game_id: id.clone(),
                            ..Default::default()
                        })
                        .await
                        .expect("CreateGame");
                    let game = &games[(i * DRIVERS_PER_INSTANCE + d + round) % games.len()];
                    for (ply, usi) in game.iter().enumerate() {
                        if done.load(Ordering::Relaxed) {
                            return;
                        }
                        let answer = client
                            .submit_move(pb::SubmitMoveRequest {
                                game_id: id.clone(),
                                ply: ply as u32 + 1,
                                usi: usi.clone(),
                                strict: false,
                                comment: String::new(),
                            })
                            .await
                            .expect("SubmitMove")
                            .into_inner();
                        assert_eq!(
                            answer.outcome,
                            pb::MoveOutcome::Accepted as i32,
                            "{id} ply {}",
                            ply + 1
                        );
                        moves.fetch_add(1, Ordering::Relaxed);
                        if first {
                            first = false;
                            running.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }));
        }
    }
    let all = (addrs.len() * DRIVERS_PER_INSTANCE) as u64;
    let w = window(
        || moves.load(Ordering::Relaxed),
        || running.load(Ordering::Relaxed) == all,
        u64::MAX,
        seconds,
        groups,
    )
    .await;
    stop_all(&done, drivers).await;
    let _ = stop.send(true);
    for t in threads {
        tokio::task::spawn_blocking(move || t.join().unwrap())
            .await
            .unwrap();
    }
    w
}

/// Tells the load's tasks to stop and waits for them.
async fn stop_all(done: &AtomicBool, tasks: Vec<tokio::task::JoinHandle<()>>) {
    done.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
}

/// The broker's ceiling for the workers: 16 durable pull consumers, one a partition, one ack
/// each, nothing else.
async fn raw_consumption(js: &async_nats::jetstream::Context, total: u64, seconds: f64) -> Window {
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    let read = Arc::new(AtomicU64::new(0));
    let started = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for p in 0..shogi_proto::PARTITIONS {
        let name = format!("raw-p{p}");
        let _ = stream.delete_consumer(&name).await;
        let consumer = stream
            .create_consumer(async_nats::jetstream::consumer::pull::Config {
                durable_name: Some(name),
                filter_subject: shogi_proto::subject::partition_moves(p),
                ack_policy: async_nats::jetstream::consumer::AckPolicy::Explicit,
                max_ack_pending: 1024,
                ..Default::default()
            })
            .await
            .unwrap();
        let (read, started, done) = (read.clone(), started.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut messages = consumer.messages().await.unwrap();
            let mut first = true;
            while !done.load(Ordering::Relaxed) {
                let Ok(Some(m)) =
                    tokio::time::timeout(Duration::from_millis(200), messages.next()).await
                else {
                    continue;
                };
                m.unwrap().ack().await.unwrap();
                read.fetch_add(1, Ordering::Relaxed);
                if first {
                    first = false;
                    started.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let w = window(
        || read.load(Ordering::Relaxed),
        || started.load(Ordering::Relaxed) == u64::from(shogi_proto::PARTITIONS),
        total * 8 / 10,
        seconds,
        &[],
    )
    .await;
    stop_all(&done, tasks).await;
    w
}

/// The broker's ceiling for the validator: publishes as SubmitMove makes them, 64 in flight.
async fn raw_publish(
    js: &async_nats::jetstream::Context,
    games: &[Vec<Move>],
    seconds: f64,
) -> Window {
    let written = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for t in 0..64 {
        let (js, written, done) = (js.clone(), written.clone(), done.clone());
        let moves = games[t % games.len()].clone();
        tasks.push(tokio::spawn(async move {
            for round in 0.. {
                let id = format!("ceiling-{t}-{round}");
                let mut last = 0;
                for (ply, e) in events(&id, &moves).into_iter().enumerate() {
                    if done.load(Ordering::Relaxed) {
                        return;
                    }
                    let mut headers = async_nats::HeaderMap::new();
                    headers.insert(
                        shogi_proto::MESSAGE_TYPE_HEADER,
                        shogi_proto::MOVE_ACCEPTED_TYPE,
                    );
                    headers.insert("Nats-Msg-Id", format!("{id}/{ply}").as_str());
                    headers.insert(
                        "Nats-Expected-Last-Subject-Sequence",
                        last.to_string().as_str(),
                    );
                    last = js
                        .publish_with_headers(
                            shogi_proto::subject::moves(&id),
                            headers,
                            e.encode_to_vec().into(),
                        )
                        .await
                        .unwrap()
                        .await
                        .unwrap()
                        .sequence;
                    written.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let w = window(
        || written.load(Ordering::Relaxed),
        || true,
        u64::MAX,
        seconds,
        &[],
    )
    .await;
    stop_all(&done, tasks).await;
    w
}

/// The header of the table [`report`] prints.
fn header() {
    println!(
        "{:<19} {:>2} {:>8} {:>9} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6}",
        "what",
        "N",
        "share",
        "per s",
        "per inst",
        "x N*one",
        "x ceil",
        "cores/i",
        "broker",
        "load",
        "thrott"
    );
}

/// One row: the rate, per instance, against N times one held instance and against the
/// broker's ceiling; the cores each instance, the broker and the load used; periods throttled.
fn report(what: &str, n: usize, share: &str, w: &Window, one: f64, ceiling: f64) {
    let cores = if w.cores.is_empty() {
        "-".to_owned()
    } else {
        format!("{:.3}", w.cores.iter().sum::<f64>() / w.cores.len() as f64)
    };
    let throttled: u64 = w.throttled.iter().sum();
    println!(
        "{what:<19} {n:>2} {share:>8} {:>9.0} {:>9.0} {:>7.2} {:>7.2} {cores:>7} {:>7.2} {:>7.2} {:>7.2} {throttled:>6}",
        w.rate,
        w.rate / n as f64,
        w.rate / (n as f64 * one),
        w.rate / ceiling,
        w.broker,
        w.load,
        w.idle,
    );
}

/// Runs `phase(groups)` with one free instance, then with each N of `ns` held to `share`.
async fn series<'g, F, Fut>(
    what: &str,
    groups: &'g Groups,
    ns: &[usize],
    share: f64,
    ceiling: f64,
    mut phase: F,
) where
    F: FnMut(Vec<&'g CpuGroup>, String) -> Fut,
    Fut: Future<Output = Window>,
{
    let free = phase(vec![&groups.free], format!("{what}-free")).await;
    report(what, 1, "no quota", &free, free.rate, ceiling);
    let mut one = 0.0;
    for &n in ns {
        for g in &groups.held {
            g.hold(Some(share)).expect("set the quota");
        }
        let w = phase(groups.held.iter().take(n).collect(), format!("{what}-{n}")).await;
        if n == 1 {
            one = w.rate;
        }
        report(what, n, &share.to_string(), &w, one, ceiling);
    }
}

#[tokio::main]
async fn main() {
    let worker_share: f64 = env_or("SCALING_WORKER_SHARE", 0.03);
    let validator_share: f64 = env_or("SCALING_VALIDATOR_SHARE", 0.0625);
    let seconds: f64 = env_or("SCALING_SECONDS", 3.0);
    let n_games: usize = env_or("SCALING_GAMES", 4000);
    let ns: Vec<usize> = std::env::var("SCALING_N")
        .unwrap_or_else(|_| "1,2,4,8".into())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let max_n = ns.iter().copied().max().unwrap_or(1);
    let parent = format!("shogi-scaling-{}", std::process::id());
    let created: std::io::Result<Vec<CpuGroup>> = (0..max_n)
        .map(|i| CpuGroup::create(&parent, &format!("i{i}"), None))
        .collect();
    let groups = match created.and_then(|held| {
        Ok(Groups {
            free: CpuGroup::create(&parent, "free", None)?,
            held,
            parent: parent.clone(),
        })
    }) {
        Ok(g) => g,
        Err(e) => {
            println!(
                "scaling: skipped, nothing measured: the cgroup v1 cpu and cpuacct controllers under /sys/fs/cgroup cannot be written here ({e}); run it as root on a cgroup v1 host"
            );
            for controller in ["cpu", "cpuacct"] {
                let _ =
                    std::fs::remove_dir(Path::new("/sys/fs/cgroup").join(controller).join(&parent));
            }
            return;
        }
    };
    let nats = test_support::NatsServer::start();
    BROKER_PID.store(nats.pid(), Ordering::Relaxed);
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    // The stream as the services create it.
    arbiter_runtime::streams::open(&nats_bus(nats.url()), "setup")
        .await
        .expect("connect to NATS");
    let mut rng = Rng(0x5CA1E);
    let games: Vec<Vec<Move>> = (0..n_games).map(|_| random_game(&mut rng)).collect();
    let total = publish_games(&js, "s", &games).await as u64;
    println!(
        "scaling: {total} move events in {n_games} games of {PLIES} plies; each worker instance held to {worker_share} of a core, each validator to {validator_share} (cfs period {PERIOD_US} us); nats-server {}; {} cores, load average {}",
        test_support::server_version(&test_support::nats_server_binary()),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    header();
    let ceiling_read = raw_consumption(&js, total, seconds).await;
    report(
        "ceiling: consume",
        16,
        "no quota",
        &ceiling_read,
        ceiling_read.rate,
        ceiling_read.rate,
    );
    for role in [Role::Watcher, Role::Judge] {
        let url = nats.url();
        let js = &js;
        series(
            role.name(),
            &groups,
            &ns,
            worker_share,
            ceiling_read.rate,
            |held, _| async move { workers(js, url, role, &held, total, seconds).await },
        )
        .await;
    }
    let usi: Arc<Vec<Vec<String>>> = Arc::new(
        games
            .iter()
            .map(|g| g.iter().map(Move::to_string).collect())
            .collect(),
    );
    let ceiling_write = raw_publish(&js, &games, seconds).await;
    report(
        "ceiling: publish",
        64,
        "no quota",
        &ceiling_write,
        ceiling_write.rate,
        ceiling_write.rate,
    );
    let (url, usi) = (nats.url(), &usi);
    series(
        "SubmitMove",
        &groups,
        &ns,
        validator_share,
        ceiling_write.rate,
        |held, phase| async move { validators(url, &held, usi, seconds, &phase).await },
    )
    .await;
    drop(groups);
}
