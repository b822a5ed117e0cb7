//! The NATS authorization of `deploy/nats/auth.conf`, as it ships, on a real nats-server:
//!
//! - an anonymous client is refused;
//! - the services refuse to start in bind mode (`ARBITER_STREAMS=bind`) before the streams
//!   exist, naming the command that creates them; `shogi-arbiter streams apply`, as the admin
//!   user, creates them;
//! - the validator, the watcher and the judge, each with its own user and in bind mode, judge
//!   every game, and none of them meets a permissions violation on the way;
//! - the platform reader reads every verdict once through its durable consumer, and can write
//!   nothing: not a game event, not another user's replies;
//! - a worker cannot write another role's subjects (leases, consumers, warnings), and the
//!   validator cannot administer the stream.

use arbiter_bus::{Bus, JetStreamBus, NatsOptions};
use arbiter_tests::play::{Clients, assert_one_right_verdict, play, read};
use arbiter_tests::{Proc, bin, free_port, games};
use futures::StreamExt as _;
use shogi_proto::subject;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use test_support::NatsServer;
use tokio::time::Instant;

const DEADLINE: Duration = Duration::from_secs(60);
const USERS: [&str; 5] = ["admin", "validator", "watcher", "judge", "reader"];

fn password(user: &str) -> String {
    format!("{user}-secret-for-the-test")
}

/// nats-server with the shipped authorization, its passwords from the environment as in a
/// deployment.
fn server() -> NatsServer {
    let auth = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/nats/auth.conf"
    ))
    .expect("deploy/nats/auth.conf");
    let env: Vec<(String, String)> = USERS
        .iter()
        .map(|u| (format!("{}_PASSWORD", u.to_ascii_uppercase()), password(u)))
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    NatsServer::start_with_config_env(&auth, &env)
}

/// What a user's connection heard from the server: the permissions violations it was told of.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<String>>>);

impl Heard {
    fn violations(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Waits until the server reported a violation naming `what`.
    async fn wait_for(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if self.violations().iter().any(|v| v.contains(what)) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no permissions violation for {what}; heard {:?}",
                self.violations()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A plain async-nats client as `user`, with its own reply prefix, recording the server's
/// errors.
async fn client(url: &str, user: &str) -> (async_nats::Client, Heard) {
    let heard = Heard::default();
    let h = heard.clone();
    let client = async_nats::ConnectOptions::new()
        .user_and_password(user.into(), password(user))
        .custom_inbox_prefix(format!("_INBOX.{user}"))
        .event_callback(move |e| {
            if let async_nats::Event::ServerError(e) = e {
                h.0.lock().unwrap().push(e.to_string());
            }
            std::future::ready(())
        })
        .connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect as {user}: {e}"));
    (client, heard)
}

fn user_env(user: &str) -> Vec<(String, String)> {
    vec![
        ("NATS_USER".into(), user.into()),
        ("NATS_PASSWORD".into(), password(user)),
        ("ARBITER_STREAMS".into(), "bind".into()),
        ("RUST_LOG".into(), "info".into()),
        ("NO_COLOR".into(), "1".into()),
    ]
}

fn env_refs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_user_does_its_job_and_nothing_else() {
    let nats = server();
    let url = nats.url().to_owned();
    let dir = tempfile::Builder::new()
        .prefix("arbiter-permissions-")
        .tempdir()
        .unwrap()
        .keep();
    eprintln!("logs in {}", dir.display());

    // No anonymous access.
    let anonymous = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(5))
        .connect(&url)
        .await;
    assert!(anonymous.is_err(), "an anonymous client was let in");

    // Bind mode before the streams exist: the validator stops at once and says what to run.
    let out = Command::new(bin("move-validator"))
        .args(["--listen", "127.0.0.1:0", "--nats-url", &url])
        .envs(user_env("validator"))
        .output()
        .expect("run move-validator");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("shogi-arbiter streams apply"),
        "the refusal names no command: {stderr}"
    );

    // The setup job: streams and consumers, as admin; again, nothing to change.
    for round in 0..2 {
        let out = Command::new(bin("shogi-arbiter"))
            .args(["streams", "apply", "--nats-url", &url])
            .envs(user_env("admin"))
            .output()
            .expect("run streams apply");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "streams apply: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let consumers = stdout
            .lines()
            .filter(|l| l.starts_with("consumer "))
            .count();
        assert_eq!(
            consumers,
            2 * shogi_proto::PARTITIONS as usize + 1,
            "{stdout}"
        );
        let fresh = if round == 0 { "created" } else { "unchanged" };
        assert!(
            stdout
                .lines()
                .filter(|l| l.starts_with("consumer "))
                .all(|l| l.ends_with(fresh)),
            "round {round}: {stdout}"
        );
    }

    // The services, each as its own user, binding only; the workers share by lease, so that
    // the lease subjects are used too.
    let port = free_port();
    let mut procs = vec![Proc::start_with_env(
        "validator",
        &bin("move-validator"),
        &[
            "--listen".into(),
            format!("127.0.0.1:{port}"),
            "--nats-url".into(),
            url.clone(),
        ],
        &dir.join("validator.log"),
        &env_refs(&user_env("validator")),
    )];
    for (name, user) in [
        ("repetition-watcher", "watcher"),
        ("impasse-judge", "judge"),
    ] {
        procs.push(Proc::start_with_env(
            name,
            &bin(name),
            &[
                "--nats-url".into(),
                url.clone(),
                "--health-listen".into(),
                format!("127.0.0.1:{}", free_port()),
                "--leases".into(),
            ],
            &dir.join(format!("{name}.log")),
            &env_refs(&user_env(user)),
        ));
    }

    // Games that every role judges: repetition and perpetual check (the watcher), forfeits
    // written by the validator, checkmates and move caps (the judge).
    let mut all = games::repetition();
    all.extend(games::single_moves());
    all.extend(games::corpus(60, 6));
    let clients = Clients::new(&[port], DEADLINE);
    futures::stream::iter(all.iter().enumerate())
        .for_each_concurrent(8, |(i, g)| {
            let clients = clients.clone();
            async move { play(&clients, format!("perm-{i}"), g).await }
        })
        .await;

    // A strict game: the deciding move waits for the watcher's verdict, which the validator
    // follows with an ephemeral consumer of its own (created, never deleted, in bind mode);
    // then WatchGame reads the whole game.
    let strict = &all[0];
    let id = "perm-strict".to_owned();
    let create = shogi_proto::v1::CreateGameRequest {
        ruleset: Some(strict.ruleset.clone()),
        start: Some(shogi_proto::v1::StartPosition {
            start: Some(shogi_proto::v1::start_position::Start::Sfen(
                strict.start_sfen.clone(),
            )),
        }),
        game_id: id.clone(),
        strict: true,
    };
    clients
        .call(&id, |mut c| {
            let r = create.clone();
            async move { c.create_game(r).await }
        })
        .await
        .expect("create a strict game");
    let mut last = None;
    for (i, usi) in strict.moves.iter().enumerate() {
        let req = shogi_proto::v1::SubmitMoveRequest {
            game_id: id.clone(),
            ply: i as u32 + 1,
            usi: usi.clone(),
            strict: true,
        };
        last = Some(
            clients
                .call(&id, |mut c| {
                    let r = req.clone();
                    async move { c.submit_move(r).await }
                })
                .await
                .unwrap_or_else(|s| panic!("strict ply {}: {s}", i + 1)),
        );
    }
    let verdict = last
        .and_then(|a| a.verdict)
        .expect("the strict answer carries the verdict");
    assert_eq!(verdict.code, strict.expected.code);
    assert_eq!(verdict.ply, strict.expected.ply);
    let watched = clients
        .call(&id, |mut c| {
            let id = id.clone();
            async move {
                c.watch_game(shogi_proto::v1::WatchGameRequest {
                    game_id: id,
                    from_ply: 0,
                })
                .await
            }
        })
        .await
        .expect("watch the strict game");
    let events: Vec<_> = watched
        .take_while(|e| {
            let more = e.as_ref().is_ok_and(|e| {
                !matches!(
                    e.event,
                    Some(shogi_proto::v1::watch_game_response::Event::Verdict(_))
                )
            });
            std::future::ready(more)
        })
        .collect()
        .await;
    let logged = events
        .iter()
        .filter(|e| {
            use shogi_proto::v1::watch_game_response::Event;
            matches!(
                e.as_ref().ok().and_then(|e| e.event.as_ref()),
                Some(Event::Created(_) | Event::Move(_))
            )
        })
        .count();
    assert_eq!(logged, 1 + strict.moves.len(), "created and every move");

    // The checks read as the platform reader.
    let mut reader_options = NatsOptions::new(&url);
    reader_options.user = Some("reader".into());
    reader_options.password = Some(password("reader"));
    reader_options.provision = arbiter_bus::Provision::Bind;
    let bus: Bus = Arc::new(
        JetStreamBus::connect(
            &reader_options,
            "platform",
            &arbiter_runtime::streams::games(shogi_proto::STREAM, 1),
        )
        .await
        .expect("the reader binds to the games' stream"),
    );
    for i in 0..all.len() {
        let id = format!("perm-{i}");
        let deadline = Instant::now() + DEADLINE;
        let verdict = subject::verdict(&id);
        while read(&id, DEADLINE, || bus.last(&verdict)).await.is_none() {
            assert!(Instant::now() < deadline, "{id}: no verdict");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert_one_right_verdict(&bus, "perm", &all).await;

    // The platform's durable consumer: every verdict once, acknowledged.
    let (reader, reader_heard) = client(&url, "reader").await;
    let js = async_nats::jetstream::new(reader.clone());
    let stream = js
        .get_stream(shogi_proto::STREAM)
        .await
        .expect("stream info");
    let consumer: async_nats::jetstream::consumer::PullConsumer = stream
        .get_consumer(shogi_proto::PLATFORM_VERDICTS)
        .await
        .expect("the platform's consumer");
    let mut seen = std::collections::BTreeSet::new();
    let mut batch = consumer
        .fetch()
        .max_messages(all.len() + 10)
        .expires(Duration::from_secs(2))
        .messages()
        .await
        .expect("fetch verdicts");
    while let Some(m) = batch.next().await {
        let m = m.expect("a verdict");
        assert!(seen.insert(m.subject.to_string()), "{} twice", m.subject);
        m.ack().await.expect("ack");
    }
    assert_eq!(seen.len(), all.len() + 1, "the platform read {seen:?}");
    eprintln!(
        "{} games judged; the platform read each verdict once",
        all.len()
    );

    // The reader writes nothing: not a game event, not a stream edit, not into another's
    // replies.
    reader
        .publish("shogi.game.perm-0.move.0", "forged".into())
        .await
        .unwrap();
    reader_heard.wait_for("shogi.game.perm-0.move.0").await;
    reader
        .publish("$JS.API.STREAM.PURGE.SHOGI_GAMES", "".into())
        .await
        .unwrap();
    reader_heard
        .wait_for("$JS.API.STREAM.PURGE.SHOGI_GAMES")
        .await;
    let _sub = reader.subscribe("_INBOX.validator.>").await.unwrap();
    reader_heard.wait_for("_INBOX.validator.>").await;
    let _sub = reader.subscribe("shogi.game.>").await.unwrap();
    reader_heard
        .wait_for("Subscription to \"shogi.game.>\"")
        .await;

    // A worker writes only its own role's subjects.
    let (watcher, watcher_heard) = client(&url, "watcher").await;
    for forbidden in [
        "shogi.lease.impasse-judge.0",
        "$JS.API.CONSUMER.MSG.NEXT.SHOGI_GAMES.impasse-judge-p0",
        "$JS.ACK.SHOGI_GAMES.impasse-judge-p3.1.2.3.4.5",
        "shogi.game.perm-0.created",
        "shogi.game.perm-0.declare",
        "$JS.API.CONSUMER.DELETE.SHOGI_GAMES.repetition-watcher-p0",
    ] {
        watcher.publish(forbidden, "".into()).await.unwrap();
        watcher_heard.wait_for(forbidden).await;
    }
    let (judge, judge_heard) = client(&url, "judge").await;
    for forbidden in [
        "shogi.game.perm-0.warning",
        "shogi.lease.repetition-watcher.member.x",
        "$JS.API.CONSUMER.INFO.SHOGI_GAMES.repetition-watcher-p0",
    ] {
        judge.publish(forbidden, "".into()).await.unwrap();
        judge_heard.wait_for(forbidden).await;
    }
    // The validator writes games but administers nothing.
    let (validator, validator_heard) = client(&url, "validator").await;
    for forbidden in [
        "$JS.API.STREAM.DELETE.SHOGI_GAMES",
        "$JS.API.STREAM.PURGE.SHOGI_GAMES",
        "$JS.API.STREAM.UPDATE.SHOGI_GAMES",
        "$JS.API.CONSUMER.DELETE.SHOGI_GAMES.repetition-watcher-p0",
        "shogi.lease.repetition-watcher.0",
    ] {
        validator.publish(forbidden, "".into()).await.unwrap();
        validator_heard.wait_for(forbidden).await;
    }
    // Nothing forged was stored: every game's log still replays to its one right verdict.
    assert_one_right_verdict(&bus, "perm", &all).await;

    // And the services, each with its own credentials, never met a violation.
    for p in &mut procs {
        assert!(p.is_running(), "{} exited", p.name());
    }
    drop(procs);
    for name in ["validator", "repetition-watcher", "impasse-judge"] {
        let log = std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap();
        assert!(
            !log.to_ascii_lowercase().contains("permissions violation"),
            "{name} met a permissions violation:\n{log}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_workers_consumers_are_all_listed_and_no_other_role_is_reachable() {
    let auth = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/nats/auth.conf"
    ))
    .unwrap();
    for role in ["repetition-watcher", "impasse-judge"] {
        for p in 0..shogi_proto::PARTITIONS {
            for api in [
                format!("\"$JS.API.CONSUMER.INFO.SHOGI_GAMES.{role}-p{p}\""),
                format!("\"$JS.API.CONSUMER.MSG.NEXT.SHOGI_GAMES.{role}-p{p}\""),
                format!("\"$JS.ACK.SHOGI_GAMES.{role}-p{p}.>\""),
            ] {
                assert_eq!(auth.matches(&api).count(), 1, "{api}");
            }
        }
        assert!(
            !auth.contains(&format!("{role}-p{}\"", shogi_proto::PARTITIONS)),
            "a partition beyond the last"
        );
    }
}
