//! The pipeline end to end in one process: the validator (gRPC on loopback), the watcher and
//! the judge over the embedded bus, and over JetStream on a real nats-server with two instances
//! of each.

use arbiter_bus::{Bus, JetStreamBus, MemoryBus, Outgoing};
use arbiter_runtime::compose::{self, Composition};
use arbiter_stack::BusConfig;
use arbiter_worker::{Role, Stats, Worker, WorkerConfig};
use futures::StreamExt;
use prost::Message as _;
use shogi_proto::subject;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::Channel;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(20);

struct Arbiter {
    bus: Bus,
    client: MoveValidatorClient<Channel>,
    watchers: Vec<Arc<Stats>>,
    judges: Vec<Arc<Stats>>,
    _stack: arbiter_stack::Stack,
}

/// The arbiter as `shogi-arbiter serve` assembles it, with `instances` fixed-share instances
/// of each worker.
async fn start(bus: Bus, instances: u32) -> Arbiter {
    start_with(bus.into(), instances, None).await
}

/// [`start`] over `bus` with its lease stream, the workers sharing the partitions by lease
/// when `leases` is given, as the binaries' `--leases` runs them.
async fn start_with(
    bus: arbiter_stack::Opened,
    instances: u32,
    leases: Option<arbiter_worker::LeaseSettings>,
) -> Arbiter {
    start_roles(bus, &[Role::Watcher, Role::Judge], instances, leases).await
}

/// [`start_with`] with `instances` of each of `roles`: the first role's counters are the
/// watchers', the second's the judges'.
async fn start_roles(
    bus: arbiter_stack::Opened,
    roles: &[Role],
    instances: u32,
    leases: Option<arbiter_worker::LeaseSettings>,
) -> Arbiter {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut config = arbiter_stack::StackConfig {
        leases,
        ..Default::default()
    };
    config.workers.clear();
    for &role in roles {
        for instance in 0..instances {
            let mut w = WorkerConfig::new(role);
            w.instance = instance;
            w.instances = instances;
            w.ack_wait = Duration::from_secs(2);
            config.workers.push(w);
        }
    }
    let stack = arbiter_stack::Stack::start(listener, bus.clone(), config)
        .await
        .unwrap();
    let bus = bus.bus;
    let stats = stack.worker_stats().to_vec();
    let (watchers, judges) = stats.split_at(instances as usize);
    let client = MoveValidatorClient::connect(format!("http://{}", stack.addr()))
        .await
        .unwrap();
    Arbiter {
        bus,
        client,
        watchers: watchers.to_vec(),
        judges: judges.to_vec(),
        _stack: stack,
    }
}

struct Fixture {
    id: String,
    sfen: String,
    moves: Vec<String>,
    result: String,
    ply: u32,
}

fn repetition_fixtures() -> Vec<Fixture> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/rules/repetition.tsv"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Fixture {
                id: f[0].to_owned(),
                sfen: f[1].to_owned(),
                moves: f[2].split_whitespace().map(str::to_owned).collect(),
                result: f[3].to_owned(),
                ply: f[5].parse().unwrap(),
            }
        })
        .collect()
}

fn game_id(prefix: &str, fixture: &str) -> String {
    format!("{prefix}-{fixture}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

async fn play(
    client: &mut MoveValidatorClient<Channel>,
    id: &str,
    sfen: &str,
    ruleset: Option<pb::Ruleset>,
    moves: &[String],
) {
    client
        .create_game(pb::CreateGameRequest {
            ruleset,
            start: Some(pb::StartPosition {
                start: Some(pb::start_position::Start::Sfen(sfen.to_owned())),
            }),
            game_id: id.to_owned(),
            strict: false,
        })
        .await
        .unwrap();
    for (i, usi) in moves.iter().enumerate() {
        let answer = client
            .submit_move(pb::SubmitMoveRequest {
                game_id: id.to_owned(),
                ply: i as u32 + 1,
                usi: usi.clone(),
                strict: false,
                comment: String::new(),
            })
            .await
            .unwrap_or_else(|e| panic!("{id} ply {}: {e}", i + 1))
            .into_inner();
        assert_eq!(
            answer.outcome,
            pb::MoveOutcome::Accepted as i32,
            "{id} ply {}",
            i + 1
        );
    }
}

/// The game's verdict notice, waited for on the bus.
async fn verdict(bus: &Bus, id: &str) -> pb::Verdict {
    let mut follow = bus.follow(&subject::verdict(id)).await.unwrap();
    let m = tokio::time::timeout(DEADLINE.get(), follow.next())
        .await
        .unwrap_or_else(|_| panic!("{id}: no verdict within {DEADLINE:?}"))
        .unwrap()
        .unwrap();
    pb::Verdict::decode(m.payload).unwrap()
}

/// How many messages the subject holds.
async fn count(bus: &Bus, subject: &str) -> usize {
    let mut n = 0;
    let mut from = 1;
    while let Some(m) = bus.next(subject, from).await.unwrap() {
        n += 1;
        from = m.sequence + 1;
    }
    n
}

/// Waits until every worker has judged or set aside what the bus holds: the sum of a
/// counter over `stats` reaches `n`.
async fn wait_for(what: &str, stats: &[Arc<Stats>], get: fn(&Stats) -> u64, n: u64) {
    let deadline = tokio::time::Instant::now() + DEADLINE.get();
    loop {
        let got: u64 = stats.iter().map(|s| get(s)).sum();
        if got >= n {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: {got} of {n} within {DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn code_name(code: i32) -> String {
    pb::ResultCode::try_from(code)
        .unwrap()
        .as_str_name()
        .trim_start_matches("RESULT_CODE_")
        .to_ascii_lowercase()
}

/// The games' stream on `nats`, as the services open it.
async fn jetstream(nats: &test_support::NatsServer) -> Bus {
    Arc::new(
        JetStreamBus::connect(
            &arbiter_bus::NatsOptions::new(nats.url()),
            "pipeline-test",
            &arbiter_bus::StreamSettings::new(shogi_proto::STREAM, shogi_proto::STREAM_SUBJECTS),
        )
        .await
        .unwrap(),
    )
}

/// Plays game `id` from the start position under `csa` with a cap of 10 moves, to the cap.
async fn play_to_the_cap(client: &mut MoveValidatorClient<Channel>, id: &str) {
    let moves: Vec<String> = "7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d"
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let ruleset = pb::Ruleset {
        preset: "csa".into(),
        overrides: Some(pb::RulesetOverrides {
            move_cap: Some(10),
            ..Default::default()
        }),
    };
    let start = shogi_rules::Position::startpos().to_sfen();
    play(client, id, &start, Some(ruleset), &moves).await;
}

async fn fixtures_end_once(arbiter: &mut Arbiter, prefix: &str) {
    let fixtures = repetition_fixtures();
    assert!(fixtures.len() >= 10, "too few fixtures");
    let mut ended = 0;
    for f in &fixtures {
        let id = game_id(prefix, &f.id);
        play(&mut arbiter.client, &id, &f.sfen, None, &f.moves).await;
        if f.result == "none" {
            continue;
        }
        let v = verdict(&arbiter.bus, &id).await;
        assert_eq!(code_name(v.code), f.result, "{}", f.id);
        assert_eq!(v.ply, f.ply, "{}", f.id);
        ended += 1;
    }
    // Everyone has judged everything: the watchers announced every ending, once.
    wait_for(
        "watcher verdicts",
        &arbiter.watchers,
        |s| Stats::get(&s.verdicts),
        ended,
    )
    .await;
    for f in &fixtures {
        let id = game_id(prefix, &f.id);
        let expected = usize::from(f.result != "none");
        assert_eq!(
            count(&arbiter.bus, &subject::verdict(&id)).await,
            expected,
            "{}",
            f.id
        );
    }
    let judged: u64 = arbiter.judges.iter().map(|s| Stats::get(&s.verdicts)).sum();
    assert_eq!(judged, 0, "the judge owns no repetition");
}

#[tokio::test]
async fn repetition_fixtures_end_once_on_the_embedded_bus() {
    let mut arbiter = start(Arc::new(MemoryBus::default()), 1).await;
    fixtures_end_once(&mut arbiter, "mem").await;
    // Third occurrences were warned about, by the watcher.
    let warnings: u64 = arbiter
        .watchers
        .iter()
        .map(|s| Stats::get(&s.warnings))
        .sum();
    assert!(warnings > 0);
}

#[tokio::test]
async fn two_instances_of_each_share_the_games_on_jetstream() {
    let nats = test_support::NatsServer::start();
    let bus = jetstream(&nats).await;
    let mut arbiter = start(bus, 2).await;
    fixtures_end_once(&mut arbiter, "js").await;
    for (i, w) in arbiter.watchers.iter().enumerate() {
        assert!(Stats::get(&w.verdicts) > 0, "watcher {i} judged no game");
        // Each instance reads only its partitions' subjects: nothing of the other's.
        assert_eq!(
            Stats::get(&w.foreign),
            0,
            "watcher {i} was delivered another instance's game"
        );
    }
}

/// Both roles in one worker on one consumer a partition, as `shogi-arbiter serve --nats-url`
/// runs them (issue 38): every repetition and a move cap end once, announced by the one
/// worker, the warnings published, and its consumers (ack policy all from nats-server 2.11, one
/// per partition, no role's own) left with nothing unacknowledged once the games are over.
#[tokio::test]
async fn both_roles_on_one_consumer_end_each_game_once_on_jetstream() {
    let nats = test_support::NatsServer::start();
    let bus = jetstream(&nats).await;
    let mut arbiter = start_roles(bus.clone().into(), &[Role::Both], 1, None).await;
    fixtures_end_once(&mut arbiter, "both").await;
    let both = &arbiter.watchers[0];
    assert!(Stats::get(&both.warnings) > 0, "third occurrences warned");
    let ended = Stats::get(&both.verdicts);
    play_to_the_cap(&mut arbiter.client, "both-cap").await;
    let v = verdict(&arbiter.bus, "both-cap").await;
    assert_eq!(code_name(v.code), "max_moves");
    wait_for(
        "the cap announced",
        &arbiter.watchers,
        |s| Stats::get(&s.verdicts),
        ended + 1,
    )
    .await;
    assert_eq!(count(&arbiter.bus, &subject::verdict("both-cap")).await, 1);

    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    let names: Vec<String> = {
        use futures::TryStreamExt as _;
        stream.consumer_names().try_collect().await.unwrap()
    };
    for role in [Role::Watcher, Role::Judge] {
        assert!(
            !names.iter().any(|n| n.starts_with(role.name())),
            "{role:?}'s own consumer made: {names:?}"
        );
    }
    // Cumulative acks from nats-server 2.11 on, one a delivery before (arbiter_bus::AckMode).
    let server = test_support::server_version(&test_support::nats_server_binary());
    let policy = match arbiter_bus::AckMode::Cumulative.on_server(&server) {
        arbiter_bus::AckMode::Cumulative => async_nats::jetstream::consumer::AckPolicy::All,
        arbiter_bus::AckMode::Each => async_nats::jetstream::consumer::AckPolicy::Explicit,
    };
    let deadline = tokio::time::Instant::now() + DEADLINE.get();
    for p in 0..shogi_proto::PARTITIONS {
        let name = WorkerConfig::new(Role::Both).durable(p).name;
        loop {
            let info = stream.consumer_info(&name).await.unwrap();
            assert_eq!(info.config.ack_policy, policy, "{name} on {server}");
            if info.num_ack_pending == 0 && info.num_pending == 0 {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{name}: left unacknowledged: {info:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A cumulative ack covers every earlier delivery of its consumer, whoever was given it, so a
/// worker sends one only while every delivery pending is its own (`arbiter-worker`'s
/// `pipeline::acks`). An instance is killed holding a capped game's moves (delivered, never
/// judged nor acknowledged); a worker then judges a later game of the same partition, whose
/// acks must not cover them: they come again after the ack wait, and the cap is announced.
/// Before the worker read the consumer's position, its first ack covered them and the first
/// game's cap was never announced (the crash test's lost verdict, 2026-12-06).
#[tokio::test]
async fn a_cumulative_ack_never_covers_what_a_killed_instance_was_delivered() {
    let nats = test_support::NatsServer::start();
    let bus = jetstream(&nats).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = arbiter_stack::StackConfig {
        workers: Vec::new(),
        ..Default::default()
    };
    let stack = arbiter_stack::Stack::start(listener, bus.clone(), config)
        .await
        .unwrap();
    let mut client = MoveValidatorClient::connect(format!("http://{}", stack.addr()))
        .await
        .unwrap();
    let mut worker = WorkerConfig::new(Role::Both);
    worker.ack_wait = Duration::from_secs(2);
    let held = "killed-holds-cap";
    let p = subject::partition(held);
    let later = (0..)
        .map(|i| format!("later-cap-{i}"))
        .find(|id| subject::partition(id) == p)
        .unwrap();

    // The instance that is killed: given the first game's ten moves, gone without a word.
    let mut killed = bus.consume(&worker.durable(p)).await.unwrap();
    play_to_the_cap(&mut client, held).await;
    for ply in 1..=10 {
        let d = tokio::time::timeout(DEADLINE.get(), killed.next())
            .await
            .expect("delivered to the instance to be killed")
            .unwrap()
            .unwrap();
        assert!(d.message.subject.contains(held), "ply {ply}: {d:?}");
    }
    drop(killed);

    let w = Worker::new(bus.clone(), worker);
    let stats = w.stats();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(w.run(async {
        let _ = stopped.await;
    }));
    play_to_the_cap(&mut client, &later).await;
    for id in [later.as_str(), held] {
        let deadline = tokio::time::Instant::now() + DEADLINE.get();
        while count(&bus, &subject::verdict(id)).await == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{id}'s cap never announced ({} verdicts announced)",
                Stats::get(&stats.verdicts)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(count(&bus, &subject::verdict(id)).await, 1, "{id}");
    }
    let _ = stop.send(());
    running.await.unwrap().unwrap();
    stack.shutdown().await;
}

/// The stack with its workers on leases, as the binaries run with `--leases`: each worker
/// joins the leases, holds every partition of its role (it is the only instance), and every
/// game ends once.
#[tokio::test]
async fn the_stack_on_leases_ends_each_game_once_on_jetstream() {
    let nats = test_support::NatsServer::start();
    let opened = arbiter_stack::connect(&arbiter_stack::BusConfig::Nats {
        options: Box::new(arbiter_bus::NatsOptions::new(nats.url())),
        stream: shogi_proto::STREAM.to_owned(),
        replicas: 1,
    })
    .await
    .unwrap();
    let leases = opened.leases.clone();
    let settings = arbiter_worker::LeaseSettings {
        holder: "stack".to_owned(),
        ttl: LEASE_TTL,
    };
    let mut arbiter = start_with(opened, 1, Some(settings)).await;
    // The workers are in the order of the config: the watcher first, then the judge.
    wait_for_holders(&leases, Role::Watcher, &["stack-0"]).await;
    wait_for_holders(&leases, Role::Judge, &["stack-1"]).await;
    fixtures_end_once(&mut arbiter, "leased").await;
    assert!(Stats::get(&arbiter.watchers[0].leases_taken) > 0);
}

#[tokio::test]
async fn move_cap_is_announced_by_the_judge() {
    let mut arbiter = start(Arc::new(MemoryBus::default()), 1).await;
    play_to_the_cap(&mut arbiter.client, "cap-1").await;
    let v = verdict(&arbiter.bus, "cap-1").await;
    assert_eq!(code_name(v.code), "max_moves");
    wait_for(
        "judge verdicts",
        &arbiter.judges,
        |s| Stats::get(&s.verdicts),
        1,
    )
    .await;
    // The game is over for the validator too.
    let refused = arbiter
        .client
        .submit_move(pb::SubmitMoveRequest {
            game_id: "cap-1".into(),
            ply: 11,
            usi: "3a4b".into(),
            strict: false,
            comment: String::new(),
        })
        .await;
    assert_eq!(refused.unwrap_err().code(), tonic::Code::FailedPrecondition);
}

#[tokio::test]
async fn deliveries_out_of_order_and_again_are_judged_once() {
    let bus: Bus = Arc::new(MemoryBus::default());
    let mut arbiter = start(bus.clone(), 0).await;
    let f = repetition_fixtures()
        .into_iter()
        .find(|f| f.result == "perpetual_check")
        .unwrap();
    play(&mut arbiter.client, "ooo", &f.sfen, None, &f.moves).await;
    // A consumer of our own, delivering the whole log, handled last first, then all again.
    let mut config = WorkerConfig::new(Role::Watcher);
    config.ack_wait = Duration::from_secs(60);
    let mut deliveries = bus
        .consume(&config.durable(subject::partition("ooo")))
        .await
        .unwrap();
    let mut got = Vec::new();
    for _ in 0..f.moves.len() {
        got.push(deliveries.next().await.unwrap().unwrap());
    }
    let mut worker = Worker::new(bus.clone(), config);
    let stats = worker.stats();
    while let Some(d) = got.pop() {
        worker.handle(d).await.unwrap();
    }
    assert_eq!(Stats::get(&stats.verdicts), 1);
    assert_eq!(Stats::get(&stats.gap_filled), f.moves.len() as u64 - 1);
    assert_eq!(Stats::get(&stats.void), f.moves.len() as u64 - 1);
    // The worker wrote nothing into the log (issue 20: no copy of the verdict there), and
    // judging the whole log again announces nothing more; one notice only.
    let log = subject::moves("ooo");
    let mut entries = 0;
    let mut from = 1;
    while let Some(m) = bus.next(&log, from).await.unwrap() {
        assert_eq!(
            m.message_type.as_deref(),
            Some(shogi_proto::MOVE_ACCEPTED_TYPE)
        );
        entries += 1;
        from = m.sequence + 1;
    }
    assert_eq!(entries, f.moves.len());
    let mut again = Worker::new(bus.clone(), WorkerConfig::new(Role::Watcher));
    let mut durable = WorkerConfig::new(Role::Watcher).durable(subject::partition("ooo"));
    durable.name = "again".into();
    let mut replay = bus.consume(&durable).await.unwrap();
    let last = loop {
        let d = tokio::time::timeout(DEADLINE.get(), replay.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if d.message.sequence + 1 == from {
            break d;
        }
        again.handle(d).await.unwrap();
    };
    again.handle(last).await.unwrap();
    assert_eq!(Stats::get(&again.stats().verdicts), 0, "announced already");
    assert_eq!(count(&bus, &subject::verdict("ooo")).await, 1);
    let v = verdict(&bus, "ooo").await;
    assert_eq!(code_name(v.code), "perpetual_check");
}

#[tokio::test]
async fn garbage_is_counted_and_stops_no_game() {
    let bus: Bus = Arc::new(MemoryBus::default());
    let mut arbiter = start(bus.clone(), 1).await;
    let fixtures = repetition_fixtures();
    let f = fixtures.iter().find(|f| f.result == "repetition").unwrap();
    let half = f.moves.len() / 2;
    play(&mut arbiter.client, "good", &f.sfen, None, &f.moves[..half]).await;
    // A game never created; bytes that are no message; a ply from the future.
    let raw = |subject: String, id: &str, payload: Vec<u8>| {
        Outgoing::new(subject, shogi_proto::MOVE_ACCEPTED_TYPE, id, payload)
    };
    bus.publish(raw(subject::moves("ghost"), "g1", b"\x01\x02".to_vec()))
        .await
        .unwrap();
    play(&mut arbiter.client, "bad", &f.sfen, None, &f.moves[..2]).await;
    bus.publish(raw(subject::moves("bad"), "b1", vec![0xff, 0xff, 0xff]))
        .await
        .unwrap();
    let future = pb::MoveAccepted {
        game_id: "bad".into(),
        ply: 40,
        usi: "7g7f".into(),
        ..Default::default()
    };
    bus.publish(raw(subject::moves("bad"), "b2", future.encode_to_vec()))
        .await
        .unwrap();
    // The good game goes on to its verdict.
    for (i, usi) in f.moves.iter().enumerate().skip(half) {
        arbiter
            .client
            .submit_move(pb::SubmitMoveRequest {
                game_id: "good".into(),
                ply: i as u32 + 1,
                usi: usi.clone(),
                strict: false,
                comment: String::new(),
            })
            .await
            .unwrap();
    }
    let v = verdict(&bus, "good").await;
    assert_eq!(code_name(v.code), "repetition");
    let w = &arbiter.watchers;
    wait_for("unknown game", w, |s| Stats::get(&s.unknown_game), 1).await;
    wait_for("garbage", w, |s| Stats::get(&s.garbage), 2).await;
    let j = &arbiter.judges;
    wait_for("judge garbage", j, |s| Stats::get(&s.garbage), 2).await;
    // The event for no game is kept aside on the bus, once per role, with where it came from.
    wait_for("set aside", j, |s| Stats::get(&s.unknown_game), 1).await;
    let ghost = bus.last(&subject::moves("ghost")).await.unwrap().unwrap();
    let mut copies = Vec::new();
    let mut from = 1;
    while let Some(m) = bus.next(&subject::aside("ghost"), from).await.unwrap() {
        from = m.sequence + 1;
        copies.push(m);
    }
    assert_eq!(copies.len(), 2, "one copy per role");
    for copy in copies {
        assert_eq!(copy.payload, ghost.payload);
        let header = |name: &str| {
            copy.headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(
            header(shogi_proto::ASIDE_SEQ_HEADER),
            Some(ghost.sequence.to_string())
        );
        assert_eq!(
            header(shogi_proto::ASIDE_REASON_HEADER).as_deref(),
            Some("unknown_game")
        );
    }
}

#[tokio::test]
async fn a_strict_move_is_answered_once_its_verdict_is_recorded() {
    let mut arbiter = start(Arc::new(MemoryBus::default()), 1).await;
    let f = repetition_fixtures()
        .into_iter()
        .find(|f| f.result == "repetition")
        .unwrap();
    let (last, before) = f.moves.split_last().unwrap();
    play(&mut arbiter.client, "strict", &f.sfen, None, before).await;
    let mut request = tonic::Request::new(pb::SubmitMoveRequest {
        game_id: "strict".into(),
        ply: f.moves.len() as u32,
        usi: last.clone(),
        strict: false,
        comment: String::new(),
    });
    request
        .metadata_mut()
        .insert("shogi-strict", "true".parse().unwrap());
    let answer = arbiter
        .client
        .submit_move(request)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(code_name(answer.verdict.unwrap().code), "repetition");
    // What the platforms hear is on the bus before the answer: the verdict on `.result`.
    let result = arbiter.bus.last(&subject::result("strict")).await.unwrap();
    let result = result.expect("strict answer before the verdict was recorded");
    assert_eq!(
        code_name(pb::Verdict::decode(result.payload).unwrap().code),
        "repetition"
    );
    // The watcher announces it as well, once, and its check finds it recorded.
    assert_eq!(
        code_name(verdict(&arbiter.bus, "strict").await.code),
        "repetition"
    );
    wait_for(
        "watcher verdicts",
        &arbiter.watchers,
        |s| Stats::get(&s.verdicts),
        1,
    )
    .await;
    assert_eq!(count(&arbiter.bus, &subject::result("strict")).await, 1);
}

/// Issue 21: in a pipeline the validator records the verdict its replay decides on `.result`
/// when it stores the deciding move, without waiting for the watcher's or the judge's
/// announcement and its check (two more writes in turn on a cluster). With no worker running,
/// nothing announces: the verdict must be on `.result` when the last move is answered, and
/// the strict call that follows (a retry of the ply) answers it at once. Before, `.result`
/// stayed empty until an announcement came.
#[tokio::test]
async fn the_deciding_move_records_the_verdict_without_an_announcement() {
    let bus: Bus = Arc::new(MemoryBus::default());
    let mut arbiter = start(bus.clone(), 0).await;
    let fixtures = repetition_fixtures();
    for result in ["repetition", "perpetual_check"] {
        let f = fixtures.iter().find(|f| f.result == result).unwrap();
        let id = game_id("unannounced", &f.id);
        play(&mut arbiter.client, &id, &f.sfen, None, &f.moves).await;
        let recorded = bus.last(&subject::result(&id)).await.unwrap();
        let recorded =
            recorded.unwrap_or_else(|| panic!("{id}: no .result when the last move was answered"));
        let v = pb::Verdict::decode(recorded.payload).unwrap();
        assert_eq!(
            (code_name(v.code), v.ply),
            (result.to_owned(), f.ply),
            "{id}"
        );
        assert_eq!(
            count(&bus, &subject::verdict(&id)).await,
            0,
            "{id}: nothing announced"
        );
        let mut again = tonic::Request::new(pb::SubmitMoveRequest {
            game_id: id.clone(),
            ply: f.moves.len() as u32,
            usi: f.moves.last().unwrap().clone(),
            strict: false,
            comment: String::new(),
        });
        again
            .metadata_mut()
            .insert("shogi-strict", "true".parse().unwrap());
        let answer = tokio::time::timeout(DEADLINE.get(), arbiter.client.submit_move(again))
            .await
            .expect("the strict retry waits for nothing")
            .unwrap()
            .into_inner();
        assert_eq!(code_name(answer.verdict.unwrap().code), result, "{id}");
        assert_eq!(
            count(&bus, &subject::result(&id)).await,
            1,
            "{id}: recorded once"
        );
    }
}

/// The other half of issue 21's change: when the validator's own recording of the verdict
/// fails (the server lost between the deciding move and `.result`; an instance killed there is
/// the same for the bus), the check of the watcher's announcement records it, once.
#[tokio::test]
async fn a_verdict_whose_recording_failed_is_recorded_by_the_check_of_its_announcement() {
    let faulty = Arc::new(arbiter_bus::FaultyBus::new(MemoryBus::default()));
    let bus: Bus = faulty.clone();
    let mut arbiter = start(bus.clone(), 1).await;
    let f = repetition_fixtures()
        .into_iter()
        .find(|f| f.result == "repetition")
        .unwrap();
    let (last, before) = f.moves.split_last().unwrap();
    play(&mut arbiter.client, "lost", &f.sfen, None, before).await;
    faulty
        .fail_result_writes
        .store(1, std::sync::atomic::Ordering::SeqCst);
    let answer = arbiter
        .client
        .submit_move(pb::SubmitMoveRequest {
            game_id: "lost".into(),
            ply: f.moves.len() as u32,
            usi: last.clone(),
            strict: false,
            comment: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(code_name(answer.verdict.unwrap().code), "repetition");
    assert_eq!(
        faulty
            .fail_result_writes
            .load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the validator tried to record the verdict"
    );
    let mut results = bus.follow(&subject::result("lost")).await.unwrap();
    let recorded = tokio::time::timeout(DEADLINE.get(), results.next())
        .await
        .expect("the check records the verdict")
        .unwrap()
        .unwrap();
    let v = pb::Verdict::decode(recorded.payload).unwrap();
    assert_eq!((code_name(v.code), v.ply), ("repetition".to_owned(), f.ply));
    assert_eq!(count(&bus, &subject::verdict("lost")).await, 1);
    assert_eq!(count(&bus, &subject::result("lost")).await, 1);
}

/// A verdict is settled in one place and written once: the call that stores the deciding move
/// records it on `.result`, and the check of the owner's announcement, on the instance that
/// knows it is there, settles it without writing it again.
#[tokio::test]
async fn a_verdict_recorded_by_its_call_is_not_written_again_by_its_check() {
    use std::sync::atomic::Ordering;
    let faulty = Arc::new(arbiter_bus::FaultyBus::new(MemoryBus::default()));
    let bus: Bus = faulty.clone();
    let mut arbiter = start(bus.clone(), 1).await;
    let f = repetition_fixtures()
        .into_iter()
        .find(|f| f.result == "repetition")
        .unwrap();
    play(&mut arbiter.client, "once", &f.sfen, None, &f.moves).await;
    assert_eq!(count(&bus, &subject::result("once")).await, 1);
    // The watcher's announcement, then its check to the end (acknowledged).
    let deadline = tokio::time::Instant::now() + DEADLINE.get();
    loop {
        let announced = count(&bus, &subject::verdict("once")).await == 1;
        let lag = bus
            .consumer_lag(shogi_proto::consumer::VERDICT_CHECK)
            .await
            .unwrap();
        if announced && lag.is_some_and(|l| l.pending + l.ack_pending == 0) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the announcement was not checked within {DEADLINE:?} (lag {lag:?})"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        faulty.result_writes.load(Ordering::SeqCst),
        1,
        "one write of .result: the deciding call's"
    );
    assert_eq!(count(&bus, &subject::result("once")).await, 1);
}

#[tokio::test]
async fn a_declaration_is_answered_with_its_verdict_and_announced_by_the_judge() {
    let mut arbiter = start(Arc::new(MemoryBus::default()), 1).await;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/rules/declaration.tsv"
    );
    let text = std::fs::read_to_string(path).unwrap();
    // A fixture that wins under the 27-point rule, declared by Black to move.
    let row: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|r| r[2] == "-" && r[3] == "black" && r[7] == "W" && r[1].contains(" b "))
        .expect("a winning black declaration fixture");
    arbiter
        .client
        .create_game(pb::CreateGameRequest {
            ruleset: Some(pb::Ruleset {
                preset: "csa".into(),
                overrides: None,
            }),
            start: Some(pb::StartPosition {
                start: Some(pb::start_position::Start::Sfen(row[1].to_owned())),
            }),
            game_id: "declare".into(),
            strict: false,
        })
        .await
        .unwrap();
    let answer = arbiter
        .client
        .declare(pb::DeclareRequest {
            game_id: "declare".into(),
            declarer: pb::Color::Black as i32,
            has_time: true,
        })
        .await
        .unwrap()
        .into_inner();
    let v = answer.verdict.expect("a verdict");
    assert_eq!(code_name(v.code), "declaration");
    assert_eq!(v.winner, pb::Color::Black as i32);
    // The judge announces it too (in a pipeline the validator records it and leaves the
    // announcement to the judge).
    wait_for(
        "judge verdicts",
        &arbiter.judges,
        |s| Stats::get(&s.verdicts),
        1,
    )
    .await;
    assert_eq!(count(&arbiter.bus, &subject::verdict("declare")).await, 1);
}

/// One instance of a role in a runtime of its own, with its own connection to NATS, so that
/// the test can kill it as a `kill -9` would: every task and the connection gone at once,
/// nothing released, nothing acknowledged.
struct Instance {
    runtime: Option<tokio::runtime::Runtime>,
    stats: Arc<Stats>,
    stop: tokio::sync::watch::Sender<bool>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Instance {
    fn start(url: &str, role: Role, holder: &str) -> Instance {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let stats = Arc::new(Stats::default());
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let (url, holder, s) = (url.to_owned(), holder.to_owned(), stats.clone());
        let task = runtime.spawn(async move {
            let mut config = WorkerConfig::new(role);
            config.ack_wait = Duration::from_secs(1);
            let leases = arbiter_worker::LeaseSettings {
                holder: holder.clone(),
                ttl: LEASE_TTL,
            };
            // As the binary runs it with `--leases`: the one composition.
            let composition = Composition {
                bus: BusConfig::Nats {
                    options: Box::new(arbiter_bus::NatsOptions::new(url)),
                    stream: shogi_proto::STREAM.to_owned(),
                    replicas: 1,
                },
                client_name: holder,
                parts: vec![arbiter_worker::part(config, Some(leases), s)],
                health: None,
                grace_period: DEADLINE.get(),
            };
            let mut stop_rx = stop_rx;
            compose::run(composition, async move {
                let _ = stop_rx.wait_for(|s| *s).await;
            })
            .await
            .unwrap();
        });
        Instance {
            runtime: Some(runtime),
            stats,
            stop,
            task: Some(task),
        }
    }

    /// Stops it as SIGTERM would, and waits until it has stopped.
    async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            tokio::time::timeout(DEADLINE.get(), task)
                .await
                .expect("stopped within the deadline")
                .unwrap();
        }
    }

    fn kill(mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

const LEASE_TTL: Duration = Duration::from_millis(900);

/// The live holders of `role`'s partitions, one entry per partition (`""` for none).
async fn lease_holders(leases: &Bus, role: Role) -> Vec<String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let mut holders = Vec::new();
    for p in 0..shogi_proto::PARTITIONS {
        let lease = leases
            .last(&subject::lease(role.name(), p))
            .await
            .unwrap()
            .and_then(|m| pb::PartitionLease::decode(m.payload).ok())
            .filter(|l| l.expires_unix_ms > now)
            .map(|l| l.holder)
            .unwrap_or_default();
        holders.push(lease);
    }
    holders
}

/// Waits until `role`'s partitions are all held, by exactly the instances `who`.
async fn wait_for_holders(leases: &Bus, role: Role, who: &[&str]) {
    let deadline = tokio::time::Instant::now() + DEADLINE.get();
    loop {
        let holders = lease_holders(leases, role).await;
        let mut distinct: Vec<&str> = holders.iter().map(String::as_str).collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct == who {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{}: partitions held by {holders:?}, not by {who:?}, within {DEADLINE:?}",
            role.name()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Plays every repetition fixture as `prefix-<id>` and checks its verdict.
async fn play_fixtures(client: &mut MoveValidatorClient<Channel>, bus: &Bus, prefix: &str) {
    for f in repetition_fixtures() {
        let id = game_id(prefix, &f.id);
        play(client, &id, &f.sfen, None, &f.moves).await;
        if f.result != "none" {
            let v = verdict(bus, &id).await;
            assert_eq!(code_name(v.code), f.result, "{id}");
            assert_eq!(v.ply, f.ply, "{id}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leased_partitions_are_shared_taken_over_and_handed_back() {
    let nats = test_support::NatsServer::start();
    let js = JetStreamBus::connect(
        &arbiter_bus::NatsOptions::new(nats.url()),
        "lease-test",
        &arbiter_bus::StreamSettings::new(shogi_proto::STREAM, shogi_proto::STREAM_SUBJECTS),
    )
    .await
    .unwrap();
    let leases = arbiter_worker::lease::side_streams(&js, 1).await.unwrap();
    let bus: Bus = Arc::new(js);
    let mut arbiter = start(bus.clone(), 0).await;

    // Two instances of each role share the partitions.
    let watcher_a = Instance::start(nats.url(), Role::Watcher, "watcher-a");
    let watcher_b = Instance::start(nats.url(), Role::Watcher, "watcher-b");
    let judge_a = Instance::start(nats.url(), Role::Judge, "judge-a");
    let judge_b = Instance::start(nats.url(), Role::Judge, "judge-b");
    wait_for_holders(&leases, Role::Watcher, &["watcher-a", "watcher-b"]).await;
    wait_for_holders(&leases, Role::Judge, &["judge-a", "judge-b"]).await;
    play_fixtures(&mut arbiter.client, &bus, "l1").await;
    assert!(
        Stats::get(&watcher_a.stats.verdicts) > 0,
        "watcher a judged none"
    );
    assert!(
        Stats::get(&watcher_b.stats.verdicts) > 0,
        "watcher b judged none"
    );
    for w in [&watcher_a, &watcher_b] {
        assert_eq!(
            Stats::get(&w.stats.foreign),
            0,
            "only its partitions are delivered"
        );
    }

    // One of each dies: the survivors take its partitions over and the games go on.
    watcher_b.kill();
    judge_b.kill();
    play_fixtures(&mut arbiter.client, &bus, "l2").await;
    wait_for_holders(&leases, Role::Watcher, &["watcher-a"]).await;
    wait_for_holders(&leases, Role::Judge, &["judge-a"]).await;

    // A new instance joins: partitions are handed over to it, and the games go on.
    let watcher_c = Instance::start(nats.url(), Role::Watcher, "watcher-c");
    wait_for_holders(&leases, Role::Watcher, &["watcher-a", "watcher-c"]).await;
    play_fixtures(&mut arbiter.client, &bus, "l3").await;
    assert!(Stats::get(&watcher_c.stats.leases_taken) > 0);
    assert!(Stats::get(&watcher_a.stats.leases_dropped) > 0);

    // An instance that stops releases its partitions on the way out: none is left to expire.
    watcher_c.stop().await;
    let holders = lease_holders(&leases, Role::Watcher).await;
    assert!(
        !holders.iter().any(|h| h == "watcher-c"),
        "partitions still held by the stopped instance: {holders:?}"
    );
    wait_for_holders(&leases, Role::Watcher, &["watcher-a"]).await;

    // Exactly one verdict per ended game, whatever moved.
    for prefix in ["l1", "l2", "l3"] {
        for f in repetition_fixtures() {
            let id = game_id(prefix, &f.id);
            let expected = usize::from(f.result != "none");
            assert_eq!(count(&bus, &subject::verdict(&id)).await, expected, "{id}");
        }
    }
    drop((watcher_a, judge_a));
}

/// The embedded bus keeps the clocks' schedules too: in `serve` without NATS, a silent side is
/// flagged at its deadline, its time-up recorded on `.result` once and announced by the
/// impasse-judge from the log.
#[tokio::test]
async fn a_silent_side_is_flagged_on_the_embedded_bus() {
    let bus: Bus = Arc::new(MemoryBus::default());
    let mut arbiter = start(bus.clone(), 1).await;
    let mut results = bus.follow(&subject::result("silent")).await.unwrap();
    arbiter
        .client
        .create_game(pb::CreateGameRequest {
            ruleset: Some(pb::Ruleset {
                preset: "online".into(),
                overrides: Some(pb::RulesetOverrides {
                    time_main: Some(prost_types::Duration {
                        seconds: 0,
                        nanos: 300_000_000,
                    }),
                    ..Default::default()
                }),
            }),
            start: None,
            game_id: "silent".into(),
            strict: false,
        })
        .await
        .unwrap();
    let recorded = tokio::time::timeout(DEADLINE.get(), results.next())
        .await
        .expect("the silent side is flagged")
        .unwrap()
        .unwrap();
    let v = pb::Verdict::decode(recorded.payload).unwrap();
    assert_eq!(code_name(v.code), "timeout");
    assert_eq!(v.winner, pb::Color::White as i32, "Black never moved");
    let mut announced = bus.follow(&subject::verdict("silent")).await.unwrap();
    let a = tokio::time::timeout(DEADLINE.get(), announced.next())
        .await
        .expect("the judge announces the time-up from the log")
        .unwrap()
        .unwrap();
    assert_eq!(
        code_name(pb::Verdict::decode(a.payload).unwrap().code),
        "timeout"
    );
    assert_eq!(count(&bus, &subject::result("silent")).await, 1);
}
