//! The clock's cost and its flags, one run on a real nats-server (spawned, temporary store), the
//! whole arbiter in this process over JetStream as `shogi-arbiter serve --nats-url` runs it,
//! driven by a gRPC client over loopback:
//!
//! 1. silent sides: `CLOCK_SILENT` (default 200) games with a time control, Black moving once
//!    and White then silent with 2 to 4 s of main time; for each, the delay from White's
//!    deadline to its time-up heard on `shogi.verdict.*` (what a platform hears), p50, p99 and
//!    max, and every game's one verdict checked;
//! 2. live clocks: `CLOCK_LIVE` (default 10,000) games with 10 minutes a side and one move
//!    each, then `CLOCK_IDLE_SECS` (default 20) with nothing played: the CPU a second of this
//!    process and of nats-server while the clocks run, and the memory both hold for them (the
//!    resident sets before the games and after), so that any polling per game would show.
//!
//! `cargo bench -p arbiter-stack --bench clock`.

use futures::StreamExt;
use prost::Message as _;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tonic::transport::Channel;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The resident set of process `pid`, bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

fn clocked(main: Duration) -> Option<pb::Ruleset> {
    Some(pb::Ruleset {
        preset: "online".into(),
        overrides: Some(pb::RulesetOverrides {
            time_main: Some(prost_types::Duration {
                seconds: main.as_secs() as i64,
                nanos: main.subsec_millis() as i32 * 1_000_000,
            }),
            ..Default::default()
        }),
    })
}

/// Creates game `id` with `main` a side and plays Black's first move; White's deadline.
async fn start_game(mut c: MoveValidatorClient<Channel>, id: String, main: Duration) -> i64 {
    c.create_game(pb::CreateGameRequest {
        ruleset: clocked(main),
        start: None,
        game_id: id.clone(),
        strict: false,
    })
    .await
    .expect("create");
    let a = c
        .submit_move(pb::SubmitMoveRequest {
            game_id: id,
            ply: 1,
            usi: "7g7f".into(),
            strict: false,
            comment: String::new(),
        })
        .await
        .expect("move")
        .into_inner();
    a.clock.expect("a clocked answer").deadline_unix_ms
}

#[tokio::main]
async fn main() {
    let silent = env("CLOCK_SILENT", 200) as usize;
    let live = env("CLOCK_LIVE", 10_000) as usize;
    let idle = Duration::from_secs(env("CLOCK_IDLE_SECS", 20));
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_default();
    let nats = test_support::NatsServer::start();
    println!(
        "host: {model}; nats-server {}",
        test_support::server_version(&test_support::nats_server_binary())
    );
    let bus = arbiter_stack::connect(&arbiter_stack::BusConfig::Nats {
        options: Box::new(arbiter_bus::NatsOptions::new(nats.url())),
        stream: shogi_proto::STREAM.to_owned(),
        replicas: 1,
    })
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let _stack = arbiter_stack::Stack::start(listener, bus.clone(), Default::default())
        .await
        .unwrap();
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let client = MoveValidatorClient::new(channel);

    // 1. Silent sides.
    let heard: Arc<Mutex<HashMap<String, (i64, pb::Verdict)>>> = Arc::default();
    let sub = async_nats::connect(nats.url()).await.unwrap();
    let mut notices = sub.subscribe(shogi_proto::VERDICT_NOTICES).await.unwrap();
    {
        let heard = heard.clone();
        tokio::spawn(async move {
            while let Some(m) = notices.next().await {
                let at = unix_ms();
                if let Ok(v) = pb::Verdict::decode(m.payload) {
                    let id = v.game_id.clone();
                    if heard.lock().unwrap().insert(id.clone(), (at, v)).is_some() {
                        panic!("{id}: a second verdict heard");
                    }
                }
            }
        });
    }
    let started = Instant::now();
    let deadlines: Vec<(String, i64)> = futures::stream::iter(0..silent)
        .map(|i| {
            let c = client.clone();
            let id = format!("silent-{i}");
            let main = Duration::from_millis(2000 + (i as u64 * 2000) / silent as u64);
            async move { (id.clone(), start_game(c, id, main).await) }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let last = deadlines.iter().map(|(_, d)| *d).max().unwrap_or(0);
    let until = Instant::now() + Duration::from_millis((last - unix_ms()).max(0) as u64 + 30_000);
    while heard.lock().unwrap().len() < silent && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let heard = heard.lock().unwrap().clone();
    let mut delays: Vec<i64> = Vec::new();
    for (id, deadline) in &deadlines {
        let (at, v) = heard
            .get(id)
            .unwrap_or_else(|| panic!("{id}: no verdict within 30 s of the last deadline"));
        assert_eq!(v.code, pb::ResultCode::Timeout as i32, "{id}: {v:?}");
        assert_eq!(v.winner, pb::Color::Black as i32, "{id}");
        delays.push(at - deadline);
    }
    delays.sort_unstable();
    let pct =
        |p: f64| delays[((delays.len() as f64 * p).ceil() as usize).clamp(1, delays.len()) - 1];
    println!(
        "silent sides: {silent} games flagged in {:.1} s, each one verdict; deadline -> verdict \
         heard on shogi.verdict.*: p50 {} ms, p99 {} ms, max {} ms (min {} ms)",
        started.elapsed().as_secs_f64(),
        pct(0.50),
        pct(0.99),
        delays.last().unwrap(),
        delays[0]
    );

    // 2. Live clocks.
    let me = std::process::id();
    let (rss_before, nats_before) = (rss(me), rss(nats.pid()));
    let started = Instant::now();
    futures::stream::iter(0..live)
        .map(|i| {
            start_game(
                client.clone(),
                format!("live-{i}"),
                Duration::from_secs(600),
            )
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    let created = started.elapsed();
    let (cpu_me, cpu_nats) = (
        test_support::process_cpu(me),
        test_support::process_cpu(nats.pid()),
    );
    let idle_from = Instant::now();
    tokio::time::sleep(idle).await;
    let seconds = idle_from.elapsed().as_secs_f64();
    let busy_me = (test_support::process_cpu(me) - cpu_me).as_secs_f64() / seconds;
    let busy_nats = (test_support::process_cpu(nats.pid()) - cpu_nats).as_secs_f64() / seconds;
    let (rss_after, nats_after) = (rss(me), rss(nats.pid()));
    println!(
        "live clocks: {live} games created and moved in {:.1} s; idle {seconds:.0} s: CPU \
         {:.2} ms/s in the arbiter, {:.2} ms/s in nats-server; memory held: arbiter {:.1} MB \
         ({} B a game), nats-server {:.1} MB ({} B a game)",
        created.as_secs_f64(),
        busy_me * 1000.0,
        busy_nats * 1000.0,
        rss_after.saturating_sub(rss_before) as f64 / 1e6,
        rss_after.saturating_sub(rss_before) / live as u64,
        nats_after.saturating_sub(nats_before) as f64 / 1e6,
        nats_after.saturating_sub(nats_before) / live as u64,
    );
}
