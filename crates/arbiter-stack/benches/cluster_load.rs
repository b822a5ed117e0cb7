//! The arbiter under load on a 3-node NATS cluster ("Run it at scale"): SubmitMove throughput
//! and latency, and the time from a game's last SubmitMove to its verdict as a platform hears it
//! (`shogi.verdict.*`), with one and with two instances of each service (validator, watcher,
//! judge), the stream R3.
//!
//! Each run starts a fresh cluster (test-support's `NatsCluster`: three nats-server processes
//! on loopback) and the services in this process, each instance with its own NATS connection
//! (instance `i` connects to node `i mod 3`) and, for validators, its own gRPC listener. A
//! single server with an R1 stream and one instance of each is measured too, as the reference
//! for what replication costs.
//!
//! The load is closed-loop: `--inflight` games at once (default 32), each played move by move
//! (a SubmitMove waits for the answer before the next), games spread round robin over the
//! validators. The games are random legal games of 100 plies under the `online` rules with a
//! move cap of 100 plies, so that each ends at its last move with a verdict the impasse-judge
//! announces (a cap is the judge's ending). Configurations take turns for `--rounds` rounds
//! (default 3), so that a burst of load from other processes falls on all of them alike; the
//! table gives the medians of the rounds, and the ratio of two instances to one per round.
//! "Under load" leaves out the last `--inflight` games of a run, whose verdicts come while the
//! load drains, to tell a tail that the end of a burst causes from one under steady load.
//!
//! `cargo bench -p arbiter-stack --bench cluster_load [-- --games N --inflight K
//! --rounds R --consumer-replicas C --consumer-storage auto|file|memory --configs
//! single,cluster1,cluster2 --servers BIN,BIN --trace-dir DIR]` (default 200 games, 20,000
//! moves, per run; the durable consumers as many replicas as the stream, their state where
//! the services' default puts it (`auto`: memory from three replicas on 2.11+; the flag sets the
//! workers' 32, the validator's `verdict-check` stays `auto`); every configuration; the server
//! `NATS_SERVER_BIN` or the pinned current one).
//!
//! `--servers` runs every configuration on each of several nats-server binaries in turn within
//! a round, so that versions are compared under the same load from the machine's other work.
//!
//! `--trace-dir DIR` keeps what the servers saw, for a slow verdict's timeline
//! (`tools/tail-timeline.py DIR/<run>` builds it): each cluster node runs with `debug` and
//! `trace` on and its log goes to `DIR/<run>/n<i>.log` (UTC, microseconds); every node's
//! `/jsz?consumers=true` (each consumer's delivered and ack floor sequences, pending, ack
//! pending, redelivered, waiting pulls and Raft leader, as that node sees them) is sampled every
//! 100 ms into `DIR/<run>/jsz.jsonl`; and `DIR/<run>/games.tsv` has each game's last SubmitMove
//! (sent, answered) and its verdict's arrival, in UTC microseconds. Tracing slows the servers:
//! compare traced runs with traced runs.

use arbiter_bus::NatsOptions;
use arbiter_runtime::compose::{self, Composition, Running};
use arbiter_runtime::streams::BusConfig;
use arbiter_worker::{Role, WorkerConfig};
use futures::StreamExt;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use shogi_rules::Move;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use std::time::{Duration, Instant};
use test_support::{ClusterOptions, NatsCluster, NatsServer};
use tonic::transport::Channel;

mod common;
use common::{PLIES, Rng, last_stored, pct};

/// How long a verdict may take before the run fails.
const VERDICT_DEADLINE: Duration = Duration::from_secs(60);

/// A random game as USI moves, capped under the online rules at its last ply.
fn random_game(rng: &mut Rng) -> Vec<String> {
    common::random_game(rng)
        .iter()
        .map(Move::to_string)
        .collect()
}

/// Where the services' NATS is.
enum Nats {
    /// One server, the stream R1.
    Single(NatsServer),
    /// Three nodes, the stream R3 (shared with the `/jsz` sampler of a traced run).
    Cluster(Arc<NatsCluster>),
}

impl Nats {
    fn url(&self, i: usize) -> String {
        match self {
            Nats::Single(s) => s.url().to_owned(),
            Nats::Cluster(c) => c.url(i % 3),
        }
    }

    fn replicas(&self) -> usize {
        match self {
            Nats::Single(_) => 1,
            Nats::Cluster(_) => 3,
        }
    }
}

/// One configuration's result in one round.
#[derive(Debug, Clone)]
struct Run {
    moves_per_sec: f64,
    submit_p50: Duration,
    submit_p99: Duration,
    verdict_p50: Duration,
    verdict_p99: Duration,
    /// The same, over the games that ended while `inflight` games were still being played:
    /// without the last `inflight` games, whose verdicts come while the load drains.
    loaded_verdict_p99: Duration,
    /// Where the Raft leaders were (cluster only).
    leaders: String,
    /// Each game's timings, slowest verdict first.
    games: Vec<GameTimes>,
}

/// When a game's last SubmitMove was sent and answered, and when its verdict was heard.
#[derive(Debug, Clone)]
struct GameTimes {
    id: String,
    sent: SystemTime,
    answered: SystemTime,
    verdict: SystemTime,
    latency: Duration,
    /// The stream sequence and store time of the last move and of the verdict, when looked up
    /// (a traced run).
    stored: Option<[(u64, SystemTime); 2]>,
}

/// Microseconds since the Unix epoch.
fn micros(t: SystemTime) -> u128 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or_default()
}

/// A process of `parts` connected to node `i` as `name`, started as the binaries start: the one
/// composition, opening the bus as they open it.
async fn start(nats: &Nats, i: usize, name: &str, part: Box<dyn compose::Part>) -> Running {
    compose::start(Composition {
        bus: BusConfig::Nats {
            options: Box::new(NatsOptions::new(nats.url(i))),
            stream: shogi_proto::STREAM.to_owned(),
            replicas: nats.replicas(),
        },
        client_name: name.to_owned(),
        parts: vec![part],
        health: None,
        grace_period: Duration::from_secs(10),
    })
    .await
    .expect("connect to NATS")
}

/// The workers' durable consumers: their replicas (`None`: as the stream), delivery mode and
/// storage.
#[derive(Clone, Copy)]
struct Consumers {
    replicas: Option<usize>,
    delivery: arbiter_bus::DeliveryMode,
    storage: arbiter_bus::ConsumerStorage,
}

/// Starts `instances` of each service on `nats`, plays `games`, and measures.
async fn run(
    nats: &Nats,
    instances: usize,
    games: &[Vec<String>],
    inflight: usize,
    consumers: Consumers,
    look_up: bool,
) -> Run {
    let mut running = Vec::new();
    let mut channels = Vec::new();
    for i in 0..instances {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut config = move_validator::Config::new(nats.url(i));
        config.announcements = move_validator::Announcements::ByOwners;
        let part = move_validator::part(listener, config);
        running.push(start(nats, i, "bench-validator", part).await);
        channels.push(
            Channel::from_shared(format!("http://{addr}"))
                .unwrap()
                .connect_lazy(),
        );
    }
    let mut workers = Vec::new();
    for role in [Role::Watcher, Role::Judge] {
        for i in 0..instances {
            let mut config = WorkerConfig::new(role);
            config.instance = i as u32;
            config.instances = instances as u32;
            config.consumer_replicas = consumers.replicas;
            config.consumer_delivery = consumers.delivery;
            config.consumer_storage = consumers.storage;
            let stats = Arc::new(arbiter_worker::Stats::default());
            workers.push((stats.clone(), config.partitions().len() as u64));
            // As the binaries run them: a task per partition.
            let part = arbiter_worker::part(config, None, stats);
            running.push(start(nats, i + 1, role.name(), part).await);
        }
    }
    // The load starts once every worker consumes each of its partitions and every consumer
    // has a Raft leader, as after `shogi-arbiter streams apply` and a rolling start: what is
    // measured is the verdicts under steady load, not the consumers' creation (seconds for 32
    // replicated consumers on a loaded machine), unless `--no-warm-up`.
    if !std::env::args().any(|a| a == "--no-warm-up") {
        let ready = Instant::now();
        loop {
            let consuming = workers
                .iter()
                .all(|(stats, n)| arbiter_worker::Stats::get(&stats.consuming) >= *n);
            let led =
                consuming && consumers_led(nats).await >= 2 * shogi_proto::PARTITIONS as usize;
            if led {
                break;
            }
            assert!(
                ready.elapsed() < VERDICT_DEADLINE,
                "the workers did not start consuming"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    // Verdicts as they reach the bus, by game id.
    let verdicts: Arc<Mutex<HashMap<String, (Instant, SystemTime)>>> = Arc::default();
    let (verdict_count_tx, mut verdict_count) = tokio::sync::watch::channel(0usize);
    let sub_client = async_nats::connect(nats.url(2)).await.unwrap();
    let mut sub = sub_client
        .subscribe(shogi_proto::VERDICT_NOTICES)
        .await
        .unwrap();
    // The subscription is registered once a round trip to the server is done.
    sub_client.flush().await.unwrap();
    {
        let verdicts = verdicts.clone();
        tokio::spawn(async move {
            while let Some(m) = sub.next().await {
                let at = (Instant::now(), SystemTime::now());
                let id = m.subject.split('.').nth(2).unwrap_or_default().to_owned();
                let n = {
                    let mut v = verdicts.lock().unwrap();
                    v.entry(id).or_insert(at);
                    v.len()
                };
                verdict_count_tx.send_replace(n);
            }
        });
    }

    let ruleset = pb::Ruleset {
        preset: "online".into(),
        overrides: Some(pb::RulesetOverrides {
            move_cap: Some(PLIES as u32),
            cap_mode: pb::CapMode::Plain as i32,
            ..Default::default()
        }),
    };
    let next_game = Arc::new(AtomicUsize::new(0));
    let games: Arc<Vec<Vec<String>>> = Arc::new(games.to_vec());
    let run_id = format!("{:x}", rand_id());
    let started = Instant::now();
    let tasks: Vec<_> = (0..inflight)
        .map(|_| {
            let (next_game, games, channels) = (next_game.clone(), games.clone(), channels.clone());
            let (ruleset, run_id) = (ruleset.clone(), run_id.clone());
            tokio::spawn(async move {
                let mut submits = Vec::new();
                let mut last_sent = Vec::new();
                loop {
                    let g = next_game.fetch_add(1, Ordering::Relaxed);
                    if g >= games.len() {
                        break;
                    }
                    let mut client = MoveValidatorClient::new(channels[g % channels.len()].clone());
                    let id = format!("load-{run_id}-{g}");
                    client
                        .create_game(pb::CreateGameRequest {
                            ruleset: Some(ruleset.clone()),
                            start: None,
                            game_id: id.clone(),
                            strict: false,
                        })
                        .await
                        .expect("create");
                    for (i, usi) in games[g].iter().enumerate() {
                        let sent = Instant::now();
                        let sent_at = SystemTime::now();
                        let answer = client
                            .submit_move(pb::SubmitMoveRequest {
                                game_id: id.clone(),
                                ply: i as u32 + 1,
                                usi: usi.clone(),
                                strict: false,
                                comment: String::new(),
                            })
                            .await
                            .expect("submit")
                            .into_inner();
                        submits.push(sent.elapsed());
                        assert_eq!(answer.outcome, pb::MoveOutcome::Accepted as i32, "{id}");
                        if i + 1 == games[g].len() {
                            last_sent.push((id.clone(), sent, sent_at, SystemTime::now()));
                        }
                    }
                }
                (submits, last_sent)
            })
        })
        .collect();
    let mut submits = Vec::new();
    let mut last_sent = Vec::new();
    for t in tasks {
        let (s, l) = t.await.expect("a client task");
        submits.extend(s);
        last_sent.extend(l);
    }
    let elapsed = started.elapsed();
    let _ = tokio::time::timeout(
        VERDICT_DEADLINE,
        verdict_count.wait_for(|&n| n >= games.len()),
    )
    .await;
    let verdicts = verdicts.lock().unwrap().clone();
    assert_eq!(
        verdicts.len(),
        games.len(),
        "every game gets its verdict within {VERDICT_DEADLINE:?}"
    );
    last_sent.sort_by_key(|(_, sent, _, _)| *sent);
    let mut to_verdict: Vec<Duration> = last_sent
        .iter()
        .map(|(id, sent, _, _)| verdicts[id].0.saturating_duration_since(*sent))
        .collect();
    let mut times: Vec<GameTimes> = last_sent
        .iter()
        .zip(&to_verdict)
        .map(|((id, _, sent, answered), &latency)| GameTimes {
            id: id.clone(),
            sent: *sent,
            answered: *answered,
            verdict: verdicts[id].1,
            latency,
            stored: None,
        })
        .collect();
    times.sort_by_key(|t| std::cmp::Reverse(t.latency));
    if look_up {
        let js = async_nats::jetstream::new(sub_client.clone());
        if let Ok(stream) = js.get_stream(shogi_proto::STREAM).await {
            for t in &mut times {
                let moved = last_stored(&stream, &shogi_proto::subject::moves(&t.id)).await;
                let verdict = last_stored(&stream, &shogi_proto::subject::verdict(&t.id)).await;
                if let (Some(m), Some(v)) = (moved, verdict) {
                    t.stored = Some([m, v]);
                }
            }
        }
    }
    let mut loaded: Vec<Duration> =
        to_verdict[..to_verdict.len().saturating_sub(inflight).max(1)].to_vec();
    loaded.sort();
    to_verdict.sort();
    submits.sort();
    let leaders = if nats.replicas() > 1 {
        raft_leaders(&sub_client).await
    } else {
        String::new()
    };
    for r in running {
        tokio::spawn(r.shutdown());
    }
    Run {
        moves_per_sec: submits.len() as f64 / elapsed.as_secs_f64(),
        submit_p50: pct(&submits, 0.5),
        submit_p99: pct(&submits, 0.99),
        verdict_p50: pct(&to_verdict, 0.5),
        verdict_p99: pct(&to_verdict, 0.99),
        loaded_verdict_p99: pct(&loaded, 0.99),
        leaders,
        games: times,
    }
}

/// How many durable consumers of the games' stream have a leader (all of them on one server).
async fn consumers_led(nats: &Nats) -> usize {
    let Ok(client) = async_nats::connect(nats.url(0)).await else {
        return 0;
    };
    let js = async_nats::jetstream::new(client);
    let Ok(stream) = js.get_stream(shogi_proto::STREAM).await else {
        return 0;
    };
    let mut consumers = stream.consumers();
    let mut led = 0;
    while let Some(Ok(c)) = consumers.next().await {
        if nats.replicas() == 1 || c.cluster.and_then(|c| c.leader).is_some() {
            led += 1;
        }
    }
    led
}

/// Where the Raft leaders of the stream and of the durable consumers were in a run, as
/// `stream n1, impasse-judge-0-of-1 n2, ...`: a slow verdict may depend on them.
async fn raft_leaders(client: &async_nats::Client) -> String {
    let js = async_nats::jetstream::new(client.clone());
    let Ok(mut stream) = js.get_stream(shogi_proto::STREAM).await else {
        return "stream info unavailable".into();
    };
    let leader = |c: Option<async_nats::jetstream::stream::ClusterInfo>| {
        c.and_then(|c| c.leader).unwrap_or_else(|| "?".into())
    };
    let mut out = match stream.info().await {
        Ok(info) => format!("stream {}", leader(info.cluster.clone())),
        Err(e) => format!("stream ? ({e})"),
    };
    let mut consumers = stream.consumers();
    let mut found = Vec::new();
    while let Some(Ok(c)) = consumers.next().await {
        found.push(format!("{} {}", c.name, leader(c.cluster.clone())));
    }
    found.sort();
    for f in found {
        out.push_str(", ");
        out.push_str(&f);
    }
    out
}

/// Game ids unique to a run, so that runs never meet on a stream.
fn rand_id() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

fn arg(name: &str, default: usize) -> usize {
    arg_text(name)
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} {v}: not a number"))
        })
        .unwrap_or(default)
}

/// The value after `name` on the command line, if given.
fn arg_text(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// A nats-server binary and the version it says it is.
#[derive(Debug, Clone)]
struct Server {
    bin: PathBuf,
    version: String,
}

impl Server {
    fn new(bin: PathBuf) -> Server {
        let out = std::process::Command::new(&bin)
            .arg("--version")
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let version = String::from_utf8_lossy(&out.stdout)
            .trim()
            .trim_start_matches("nats-server: ")
            .to_owned();
        Server { bin, version }
    }
}

/// Samples every node's `/jsz?accounts=true&streams=true&consumers=true` every 100 ms into `path` (one JSON object a
/// line: `{"t_us": <UTC microseconds>, "node": "n0", "jsz": {...}}`) until `stop`.
fn sample_jsz(
    cluster: Arc<NatsCluster>,
    path: PathBuf,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        use std::io::Write as _;
        let file = std::fs::File::create(&path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        let mut out = std::io::BufWriter::new(file);
        let mut next = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            for i in 0..3 {
                let t = micros(SystemTime::now());
                let jsz = cluster
                    .monitor(i, "/jsz?accounts=true&streams=true&consumers=true")
                    .and_then(|body| serde_json::from_str::<serde_json::Value>(&body).ok());
                if let Some(jsz) = jsz {
                    let line =
                        serde_json::json!({"t_us": t as u64, "node": cluster.name(i), "jsz": jsz});
                    let _ = writeln!(out, "{line}");
                }
            }
            next += Duration::from_millis(100);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        let _ = out.flush();
    })
}

/// Writes each game's timings to `dir/games.tsv`, slowest verdict first.
fn write_games(dir: &Path, games: &[GameTimes]) {
    let mut text = String::from(
        "game_id\tpartition\tlast_move_sent_us\tanswered_us\tverdict_heard_us\tlatency_ms\t\
         move_seq\tmove_stored_us\tverdict_seq\tverdict_stored_us\n",
    );
    for g in games {
        let [(mseq, mt), (vseq, vt)] = g
            .stored
            .unwrap_or([(0, std::time::UNIX_EPOCH), (0, std::time::UNIX_EPOCH)]);
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{:.3}\t{mseq}\t{}\t{vseq}\t{}\n",
            g.id,
            shogi_proto::subject::partition(&g.id),
            micros(g.sent),
            micros(g.answered),
            micros(g.verdict),
            g.latency.as_secs_f64() * 1e3,
            micros(mt),
            micros(vt),
        ));
    }
    let path = dir.join("games.tsv");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn median_d(xs: impl Iterator<Item = Duration>) -> Duration {
    let mut xs: Vec<Duration> = xs.collect();
    xs.sort();
    xs[xs.len() / 2]
}

#[tokio::main]
async fn main() {
    // The services' own log lines, filtered by RUST_LOG (e.g. `RUST_LOG=warn`), when asked for:
    // what a slow verdict met on its way.
    let _logs = std::env::var_os("RUST_LOG").map(|_| {
        arbiter_telemetry::init(arbiter_telemetry::Config {
            service: "cluster-load",
            log_format: arbiter_telemetry::LogFormat::Text,
            otlp_endpoint: None,
            metrics_addr: None,
            metrics_interval: Duration::from_secs(60),
        })
        .expect("logs")
    });
    let n_games = arg("--games", 200);
    let inflight = arg("--inflight", 32);
    let rounds = arg("--rounds", 3);
    // The durable consumers' replicas on the cluster (0: as the stream, R3).
    let consumer_replicas = Some(arg("--consumer-replicas", 0)).filter(|&r| r > 0);
    // Where the servers keep the workers' consumers' state (auto: memory from R3).
    let storage: arbiter_bus::ConsumerStorage = arg_text("--consumer-storage")
        .map(|s| {
            s.parse()
                .unwrap_or_else(|e| panic!("--consumer-storage: {e}"))
        })
        .unwrap_or_default();
    let trace_dir = arg_text("--trace-dir").map(PathBuf::from);
    let servers: Vec<Server> = match arg_text("--servers") {
        Some(list) => list.split(',').map(|b| Server::new(b.into())).collect(),
        None => vec![Server::new(test_support::nats_server_binary())],
    };
    let mut rng = Rng(0x5EED);
    let games: Vec<Vec<String>> = (0..n_games).map(|_| random_game(&mut rng)).collect();
    println!(
        "{n_games} games of {PLIES} plies per run ({} moves), {inflight} in flight, {rounds} rounds, \
         the workers' consumers' storage {}",
        n_games * PLIES,
        storage.as_str()
    );
    let all: [(&str, &str, bool, usize); 3] = [
        ("single", "1 server, R1, 1 instance each", false, 1),
        ("cluster1", "3-node cluster, R3, 1 instance each", true, 1),
        ("cluster2", "3-node cluster, R3, 2 instances each", true, 2),
    ];
    let chosen = arg_text("--configs").unwrap_or_else(|| "single,cluster1,cluster2".into());
    // How the workers' durable consumers deliver: `pull` (the default), `push` (with flow
    // control), or both in turn (`pull,push`).
    let deliveries: Vec<arbiter_bus::DeliveryMode> = arg_text("--deliveries")
        .unwrap_or_else(|| "pull".into())
        .split(',')
        .map(|d| match d {
            "pull" => arbiter_bus::DeliveryMode::Pull,
            "push" => arbiter_bus::DeliveryMode::Push,
            other => panic!("--deliveries {other}: pull or push"),
        })
        .collect();
    let mut configs = Vec::new();
    for server in &servers {
        for &delivery in &deliveries {
            for key in chosen.split(',') {
                let &(key, name, cluster, instances) =
                    all.iter().find(|c| c.0 == key).unwrap_or_else(|| {
                        panic!("--configs {key}: one of single, cluster1, cluster2")
                    });
                let mut label = name.to_owned();
                if deliveries.len() > 1 {
                    label.push_str(&format!(", {delivery:?}").to_lowercase());
                }
                if servers.len() > 1 {
                    label.push_str(&format!(" ({})", server.version));
                }
                configs.push((key, label, cluster, instances, server.clone(), delivery));
            }
        }
    }
    println!(
        "servers: {}",
        servers
            .iter()
            .map(|s| format!("{} ({})", s.version, s.bin.display()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut results: Vec<Vec<Run>> = vec![Vec::new(); configs.len()];
    for round in 0..rounds {
        for (c, (key, name, cluster, instances, server, delivery)) in configs.iter().enumerate() {
            let run_dir = trace_dir.as_ref().map(|d| {
                d.join(format!(
                    "round{}-{key}-{}-{}",
                    round + 1,
                    format!("{delivery:?}").to_lowercase(),
                    server.version.trim_start_matches('v')
                ))
            });
            // Fresh servers for every run: no run reads another's events.
            let nats = if *cluster {
                let options = ClusterOptions {
                    bin: Some(server.bin.clone()),
                    extra_config: if run_dir.is_some() {
                        "debug: true\ntrace: true\nlogtime_utc: true\n".into()
                    } else {
                        String::new()
                    },
                    log_dir: run_dir.clone(),
                    ..ClusterOptions::default()
                };
                Nats::Cluster(Arc::new(
                    tokio::task::spawn_blocking(move || NatsCluster::start_with(&options))
                        .await
                        .unwrap(),
                ))
            } else {
                Nats::Single(NatsServer::start_with(&server.bin))
            };
            let sampling = match (&nats, &run_dir) {
                (Nats::Cluster(cluster), Some(dir)) => {
                    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
                    let thread = sample_jsz(cluster.clone(), dir.join("jsz.jsonl"), stop.clone());
                    Some((stop, thread))
                }
                _ => None,
            };
            let r = run(
                &nats,
                *instances,
                &games,
                inflight,
                Consumers {
                    replicas: consumer_replicas,
                    delivery: *delivery,
                    storage,
                },
                run_dir.is_some(),
            )
            .await;
            if let Some((stop, thread)) = sampling {
                stop.store(true, Ordering::Relaxed);
                let _ = thread.join();
            }
            println!(
                "round {} {name}: {:.0} moves/s, SubmitMove p50 {:?} p99 {:?}, last move -> verdict p50 {:?} p99 {:?} (under load p99 {:?}, slowest {:?} {})",
                round + 1,
                r.moves_per_sec,
                r.submit_p50,
                r.submit_p99,
                r.verdict_p50,
                r.verdict_p99,
                r.loaded_verdict_p99,
                r.games.first().map(|g| g.latency).unwrap_or_default(),
                r.games.first().map(|g| g.id.as_str()).unwrap_or_default(),
            );
            if !r.leaders.is_empty() {
                println!("  leaders: {}", r.leaders);
            }
            // The nodes' logs are complete once they are stopped.
            drop(nats);
            if let Some(dir) = &run_dir {
                std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
                write_games(dir, &r.games);
                println!("  traced in {}", dir.display());
            }
            results[c].push(r);
        }
    }
    println!(
        "\n{:<40} {:>9} {:>11} {:>11} {:>12} {:>12} {:>12}",
        "configuration (median of rounds)",
        "moves/s",
        "submit p50",
        "submit p99",
        "verdict p50",
        "verdict p99",
        "loaded p99"
    );
    for (c, (_, name, _, _, _, _)) in configs.iter().enumerate() {
        let rs = &results[c];
        println!(
            "{:<40} {:>9.0} {:>11.1?} {:>11.1?} {:>12.1?} {:>12.1?} {:>12.1?}",
            name,
            median(rs.iter().map(|r| r.moves_per_sec).collect()),
            median_d(rs.iter().map(|r| r.submit_p50)),
            median_d(rs.iter().map(|r| r.submit_p99)),
            median_d(rs.iter().map(|r| r.verdict_p50)),
            median_d(rs.iter().map(|r| r.verdict_p99)),
            median_d(rs.iter().map(|r| r.loaded_verdict_p99)),
        );
    }
    // The ratios per round (the two configurations ran back to back), then their median.
    let ratio = |f: &dyn Fn(&Run) -> f64, a: usize, b: usize| {
        median(
            results[a]
                .iter()
                .zip(&results[b])
                .map(|(x, y)| f(x) / f(y))
                .collect(),
        )
    };
    let secs = |d: Duration| d.as_secs_f64();
    for server in &servers {
        let at = |key: &str| {
            configs.iter().position(|(k, _, _, _, s, d)| {
                *k == key && s.bin == server.bin && *d == deliveries[0]
            })
        };
        let on = if servers.len() > 1 {
            format!(" on {}", server.version)
        } else {
            String::new()
        };
        if let (Some(one), Some(two)) = (at("cluster1"), at("cluster2")) {
            println!(
                "\ncluster{on}, 2 instances / 1 instance (median of per-round ratios): moves/s \
                 {:.2}x, submit p99 {:.2}x, verdict p99 {:.2}x (under load {:.2}x)",
                ratio(&|r| r.moves_per_sec, two, one),
                ratio(&|r| secs(r.submit_p99), two, one),
                ratio(&|r| secs(r.verdict_p99), two, one),
                ratio(&|r| secs(r.loaded_verdict_p99), two, one),
            );
        }
        if let (Some(single), Some(one)) = (at("single"), at("cluster1")) {
            println!(
                "cluster R3 / single server R1{on}, 1 instance each: moves/s {:.2}x, submit p99 \
                 {:.2}x, verdict p99 {:.2}x",
                ratio(&|r| r.moves_per_sec, one, single),
                ratio(&|r| secs(r.submit_p99), one, single),
                ratio(&|r| secs(r.verdict_p99), one, single),
            );
        }
    }
}
