//! Crash safety: at least 200 scripted games with known endings, played through the real
//! binaries (two validators, two watchers, two judges) against a real nats-server, while the
//! instances are killed with SIGKILL and restarted and nats-server is killed and restarted on
//! the same store directory. Every game must get exactly its one right verdict.

use arbiter_bus::{Bus, JetStreamBus};
use arbiter_tests::play::{
    Clients, VerdictSubscriber, assert_one_right_verdict, consumers_of, play, read,
};
use arbiter_tests::{Nats, fixed_share, games, start_services};
use shogi_proto::subject;
use shogi_proto::v1 as pb;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

const GAMES: usize = 200;
const IN_FLIGHT: usize = 16;
const CALL_DEADLINE: test_support::Deadline = test_support::Deadline::secs(60);
const VERDICT_DEADLINE: test_support::Deadline = test_support::Deadline::secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_services_and_a_restarted_nats_lose_and_double_no_verdict() {
    let games = games::at_least(GAMES);
    assert!(games.len() >= GAMES);
    // Kept when the test fails, so that the services' logs can be read; removed when it passes.
    let dir = tempfile::Builder::new()
        .prefix("arbiter-crash-")
        .tempdir()
        .unwrap()
        .keep();
    eprintln!("logs and store in {}", dir.display());
    let (nats, url, bus, subscriber, procs, validator_ports) = arbiter(&dir).await;
    let clients = Clients::new(&validator_ports, CALL_DEADLINE.get());
    let chaos = Chaos::start(procs, nats.clone());
    let started = Instant::now();
    futures::StreamExt::for_each_concurrent(
        futures::stream::iter(games.iter().enumerate()),
        IN_FLIGHT,
        |(i, g)| {
            let clients = clients.clone();
            async move {
                play(&clients, format!("crash-{i}"), g).await;
            }
        },
    )
    .await;
    let played = started.elapsed();
    let (procs, kills) = chaos.stop();
    assert!(
        kills >= 7,
        "only {kills} kills: the run was too short to test anything"
    );

    // Every game gets its verdict...
    for (i, g) in games.iter().enumerate() {
        let id = format!("crash-{i}");
        let deadline = Instant::now() + VERDICT_DEADLINE.get();
        loop {
            let verdict_subject = subject::verdict(&id);
            let last = read(&id, VERDICT_DEADLINE.get(), || bus.last(&verdict_subject)).await;
            if last.is_some() {
                break;
            }
            if Instant::now() >= deadline {
                let consumers = consumers_of(&url, &id).await;
                panic!("{id} ({}): no verdict; {consumers}", g.source);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // ...and once every consumer has judged everything, exactly one, the right one.
    let js = async_nats::jetstream::new(async_nats::connect(&url).await.unwrap());
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    let deadline = Instant::now() + VERDICT_DEADLINE.get();
    for name in ["repetition-watcher", "impasse-judge"] {
        for p in 0..shogi_proto::PARTITIONS {
            let durable = format!("{name}-p{p}");
            loop {
                let info = stream.consumer_info(&durable).await.unwrap();
                if info.num_pending == 0 && info.num_ack_pending == 0 {
                    break;
                }
                assert!(Instant::now() < deadline, "{durable} not drained: {info:?}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    assert_one_right_verdict(&bus, "crash", &games).await;
    let exempt = subscriber
        .assert_each_heard_once(&bus, "crash", games.len(), VERDICT_DEADLINE.get())
        .await;
    eprintln!(
        "core subscriber: each verdict heard once; {exempt} stored while it was away (nats-server restarting)"
    );
    let mut endings = std::collections::BTreeMap::<String, usize>::new();
    for g in &games {
        *endings
            .entry(
                pb::ResultCode::try_from(g.expected.code)
                    .map(|c| c.as_str_name().to_owned())
                    .unwrap_or_default(),
            )
            .or_default() += 1;
    }
    eprintln!(
        "{} games ({endings:?}) played in {played:?} through {kills} kills (one of them nats-server)",
        games.len()
    );
    drop(procs);
    drop(nats);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The clock through the same chaos: games whose side to move goes silent, their deadlines
/// falling while instances are killed and restarted and while nats-server is killed and
/// restarted (a deadline passed while it was down fires when it is back). Every game gets
/// exactly one verdict, the time-up of the silent side, recorded once in its log and on its
/// `.result`. On a nats-server without message schedules (before 2.12) a game with a time
/// control is refused at creation, naming the server's version, and that is what is checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn silent_sides_are_flagged_once_through_killed_services_and_a_restarted_nats() {
    const CLOCKED: usize = 40;
    let dir = tempfile::Builder::new()
        .prefix("arbiter-crash-clock-")
        .tempdir()
        .unwrap()
        .keep();
    eprintln!("logs and store in {}", dir.display());
    let (nats, _url, bus, _subscriber, procs, validator_ports) = arbiter(&dir).await;
    let clients = Clients::new(&validator_ports, CALL_DEADLINE.get());
    // Black has half a minute, White 1 to 3 s: Black moves once, then White is silent. The
    // games are made, their deadlines fall and their flags are judged through the kills and
    // nats-server's restart.
    let chaos = Chaos::start(procs, nats.clone());
    let Some(silent) =
        arbiter_tests::clock::start_silent(&clients, "clock", CLOCKED, Duration::from_secs(30), 3)
            .await
    else {
        chaos.stop();
        return;
    };
    let late = silent
        .assert_each_flagged_once(&bus, VERDICT_DEADLINE.get())
        .await;
    let (procs, kills) = chaos.stop();
    assert!(
        kills >= 7,
        "only {kills} kills: the run was too short to test anything"
    );
    eprintln!(
        "{CLOCKED} silent sides flagged once each through {kills} kills (one of them \
         nats-server); deadline to time-up: median {} ms, max {} ms",
        late[late.len() / 2],
        late[late.len() - 1]
    );
    drop(procs);
    drop(nats);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The arbiter as the crash tests run it: nats-server on a store under `dir` (killed and
/// restarted on it by [`Chaos`]), the games' stream made before the services start, a platform
/// listening to the republished verdicts with core NATS, and two instances of each service
/// binary logging under `dir`; the validators' ports.
async fn arbiter(
    dir: &std::path::Path,
) -> (
    Arc<Mutex<Nats>>,
    String,
    Bus,
    VerdictSubscriber,
    Vec<arbiter_tests::Proc>,
    Vec<u16>,
) {
    let nats = Arc::new(Mutex::new(Nats::start(&dir.join("store"))));
    let url = nats.lock().unwrap().url();
    // The stream, made before the services start.
    let bus: Bus = Arc::new(
        JetStreamBus::connect(
            &arbiter_bus::NatsOptions::new(&url),
            "crash-test",
            &arbiter_runtime::streams::games(shogi_proto::STREAM, 1),
        )
        .await
        .unwrap(),
    );
    // A platform listening to the republished verdicts with core NATS.
    let subscriber = VerdictSubscriber::start(&url).await;

    // The watchers share the partitions by lease (a killed one's are taken over by the other
    // until it is back), the judges by fixed share: both ways are tested.
    let (procs, validator_ports) = start_services(dir, &url, &[], |name, i| {
        if name == "repetition-watcher" {
            vec![
                "--leases".into(),
                "--holder".into(),
                format!("{name}-{i}"),
                "--lease-ttl-ms".into(),
                "900".into(),
            ]
        } else {
            fixed_share(i)
        }
    });
    (nats, url, bus, subscriber, procs, validator_ports)
}

/// Chaos, on a thread of its own: every 250 ms one instance is killed and restarted, in turn;
/// once, at the seventh round, nats-server is killed and restarted on the same store.
struct Chaos {
    procs: Arc<Mutex<Vec<arbiter_tests::Proc>>>,
    stop: Arc<AtomicBool>,
    kills: Arc<AtomicU32>,
    thread: std::thread::JoinHandle<()>,
}

impl Chaos {
    fn start(procs: Vec<arbiter_tests::Proc>, nats: Arc<Mutex<Nats>>) -> Chaos {
        let procs = Arc::new(Mutex::new(procs));
        let stop = Arc::new(AtomicBool::new(false));
        let kills = Arc::new(AtomicU32::new(0));
        let thread = {
            let (procs, stop, kills) = (procs.clone(), stop.clone(), kills.clone());
            std::thread::spawn(move || {
                let mut round = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(250));
                    if round == 6 {
                        let mut n = nats.lock().unwrap();
                        n.kill();
                        n.restart();
                    } else {
                        let mut ps = procs.lock().unwrap();
                        let len = ps.len();
                        let p = &mut ps[round % len];
                        p.kill();
                        p.restart();
                    }
                    kills.fetch_add(1, Ordering::Relaxed);
                    round += 1;
                }
            })
        };
        Chaos {
            procs,
            stop,
            kills,
            thread,
        }
    }

    /// Stops the chaos: the instances (all running) and how many kills there were.
    fn stop(self) -> (Arc<Mutex<Vec<arbiter_tests::Proc>>>, u32) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap();
        (self.procs, self.kills.load(Ordering::Relaxed))
    }
}
