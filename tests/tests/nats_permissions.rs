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
//! - a well-formed false verdict written on a game's `.verdict` with the watcher's credential
//!   reaches no platform (neither `shogi.verdict.*` nor `platform-verdicts`): only the verdict
//!   the validator's check finds in the log does (issue 20);
//! - a worker cannot write another role's subjects (leases, consumers, warnings), and the
//!   validator cannot administer the stream.

use arbiter_bus::{Bus, JetStreamBus, NatsOptions};
use arbiter_tests::play::{Clients, assert_one_right_verdict, play, read};
use arbiter_tests::{Proc, bin, free_port, games};
use futures::{FutureExt as _, StreamExt as _};
use shogi_proto::subject;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use test_support::NatsServer;
use tokio::time::Instant;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(60);
const USERS: [&str; 7] = test_support::AUTH_USERS;

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
    NatsServer::start_with_auth(&auth, password)
}

/// A server as [`server`] makes one, with the streams and consumers `streams apply` makes as
/// admin; and its URL.
fn applied_server() -> (NatsServer, String) {
    let nats = server();
    let url = nats.url().to_owned();
    let out = Command::new(bin("shogi-arbiter"))
        .args(["streams", "apply", "--nats-url", &url])
        .envs(user_env("admin"))
        .output()
        .expect("run streams apply");
    assert!(out.status.success(), "streams apply failed");
    (nats, url)
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
        let deadline = Instant::now() + test_support::patience(Duration::from_secs(10));
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

/// The JetStream API prefix of the users outside the streams' account (deploy/nats/auth.conf).
const API_PREFIX: &str = "JS.ARBITER.API";

/// Whether `user` reaches the streams from an account of its own, through `API_PREFIX`.
fn imports_the_api(user: &str) -> bool {
    matches!(user, "watcher" | "judge" | "reader" | "csa")
}

fn user_env(user: &str) -> Vec<(String, String)> {
    let mut env = vec![
        ("NATS_USER".into(), user.into()),
        ("NATS_PASSWORD".into(), password(user)),
        ("ARBITER_STREAMS".into(), "bind".into()),
        ("RUST_LOG".into(), "info".into()),
        ("NO_COLOR".into(), "1".into()),
    ];
    if imports_the_api(user) {
        env.push(("NATS_JS_API_PREFIX".into(), API_PREFIX.into()));
    }
    env
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
        // The workers', the validator's `verdict-check` and `clock-flag`, and
        // `platform-verdicts`.
        assert_eq!(
            consumers,
            2 * shogi_proto::PARTITIONS as usize + 3,
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
    let clients = Clients::new(&[port], DEADLINE.get());
    futures::stream::iter(all.iter().enumerate())
        .for_each_concurrent(8, |(i, g)| {
            let clients = clients.clone();
            async move {
                play(&clients, format!("perm-{i}"), g).await;
            }
        })
        .await;

    // Something on a game's `.verdict` before its end that is not its verdict (the JetStream
    // API's JSON answer, which any user's reply subject could put there before issue 20; now
    // only an allowed writer can): the watcher sets it aside at ERROR and announces the
    // repetition after it, instead of taking it for an earlier announcement.
    let (validator_raw, _) = client(&url, "validator").await;
    let validator_js = async_nats::jetstream::new(validator_raw);
    validator_js
        .publish(
            subject::verdict("perm-forged"),
            br#"{"type":"io.nats.jetstream.api.v1.stream_info_response"}"#
                .to_vec()
                .into(),
        )
        .await
        .unwrap()
        .await
        .expect("the validator writes .verdict");
    // And a well-formed verdict of another ending, written with the watcher's credential (a
    // stolen one, say), before the game's real end: before issue 20's check, the stream
    // republished it at once to `shogi.verdict.perm-forged` and `platform-verdicts` delivered
    // it; now the validator's check finds it is not what the log decides and records nothing.
    let platform_heard = {
        let (reader_raw, _) = client(&url, "reader").await;
        let sub = reader_raw
            .subscribe(subject::verdict_notice("perm-forged"))
            .await
            .unwrap();
        reader_raw.flush().await.unwrap();
        (reader_raw, sub)
    };
    let false_verdict = shogi_proto::v1::Verdict {
        game_id: "perm-forged".into(),
        code: shogi_proto::v1::ResultCode::Resignation as i32,
        winner: shogi_proto::v1::Color::White as i32,
        ply: 1,
        ..Default::default()
    };
    {
        use prost::Message as _;
        let (watcher_raw, _) = client(&url, "watcher").await;
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(shogi_proto::MESSAGE_TYPE_HEADER, shogi_proto::VERDICT_TYPE);
        async_nats::jetstream::with_prefix(watcher_raw, API_PREFIX)
            .publish_with_headers(
                subject::verdict("perm-forged"),
                headers,
                false_verdict.encode_to_vec().into(),
            )
            .await
            .unwrap()
            .await
            .expect("the watcher's credential writes .verdict");
    }
    play(&clients, "perm-forged".into(), &all[0]).await;

    // A strict game: the deciding move waits for the watcher's verdict, which the validator
    // follows with message gets (it holds no consumer rights);
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
            comment: String::new(),
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
                    verdict_only: false,
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

    // Followers leave nothing behind (issue 20): WatchGame opened and cancelled again and
    // again, in bind mode, and the stream still has only the consumers `streams apply` made
    // (each follower's consumer used to stay 10 s: 190 a second reached 2,093).
    for _ in 0..30 {
        let mut stream = clients
            .call(&id, |mut c| {
                let id = id.clone();
                async move {
                    c.watch_game(shogi_proto::v1::WatchGameRequest {
                        game_id: id,
                        from_ply: 0,
                        verdict_only: false,
                    })
                    .await
                }
            })
            .await
            .expect("watch the strict game");
        stream
            .next()
            .await
            .expect("its first event")
            .expect("an event");
    }
    let (admin_raw, _) = client(&url, "admin").await;
    let consumers = async_nats::jetstream::new(admin_raw)
        .get_stream(shogi_proto::STREAM)
        .await
        .unwrap()
        .info()
        .await
        .unwrap()
        .state
        .consumer_count;
    assert_eq!(
        consumers,
        2 * shogi_proto::PARTITIONS as usize + 3,
        "only the durable consumers"
    );

    // The checks read the log as admin: binding a bus asks for the stream's info, which the
    // platform is not exported (a filtered one cost the server its CPU); what the platform
    // reads, its message gets and its consumer, is checked below and in the matrix.
    let mut admin_options = NatsOptions::new(&url);
    admin_options.user = Some("admin".into());
    admin_options.password = Some(password("admin"));
    admin_options.provision = arbiter_bus::Provision::Bind;
    let bus: Bus = Arc::new(
        JetStreamBus::connect(
            &admin_options,
            "checks",
            &arbiter_runtime::streams::games(shogi_proto::STREAM, 1),
        )
        .await
        .expect("admin binds to the games' stream"),
    );
    for i in 0..all.len() {
        let id = format!("perm-{i}");
        let deadline = Instant::now() + DEADLINE.get();
        let verdict = subject::verdict(&id);
        while read(&id, DEADLINE.get(), || bus.last(&verdict))
            .await
            .is_none()
        {
            assert!(Instant::now() < deadline, "{id}: no verdict");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert_one_right_verdict(&bus, "perm", &all).await;
    let forged = subject::verdict("perm-forged");
    let deadline = Instant::now() + DEADLINE.get();
    let announced = loop {
        let last = read("perm-forged", DEADLINE.get(), || bus.last(&forged)).await;
        if let Some(m) =
            last.filter(|m| m.message_type.as_deref() == Some(shogi_proto::VERDICT_TYPE))
        {
            break m;
        }
        assert!(
            Instant::now() < deadline,
            "perm-forged: the repetition was never announced"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    {
        use prost::Message as _;
        let v = shogi_proto::v1::Verdict::decode(announced.payload).unwrap();
        assert_eq!((v.code, v.ply), (all[0].expected.code, all[0].expected.ply));
    }
    // What a platform heard of perm-forged on `shogi.verdict.*`: one notice, the real verdict,
    // never the false one. Its `.result` holds only that verdict.
    let checked = subject::result("perm-forged");
    let deadline = Instant::now() + DEADLINE.get();
    let result = loop {
        if let Some(m) = read("perm-forged", DEADLINE.get(), || bus.last(&checked)).await {
            break m;
        }
        assert!(Instant::now() < deadline, "perm-forged: no checked verdict");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        bus.next(&checked, 1).await.unwrap().map(|m| m.sequence) == Some(result.sequence),
        "perm-forged: more than one entry on .result"
    );
    {
        use prost::Message as _;
        let (reader_raw, mut sub) = platform_heard;
        let notice = tokio::time::timeout(DEADLINE.get(), sub.next())
            .await
            .expect("perm-forged: no notice on shogi.verdict.perm-forged")
            .unwrap();
        let v = shogi_proto::v1::Verdict::decode(notice.payload).unwrap();
        assert_eq!(
            (v.code, v.winner, v.ply),
            (
                all[0].expected.code,
                all[0].expected.winner,
                all[0].expected.ply
            ),
            "the first notice a platform heard of perm-forged is not its verdict"
        );
        assert_ne!((v.code, v.ply), (false_verdict.code, false_verdict.ply));
        // Nothing else comes: a round trip through the server, then no message waiting.
        reader_raw.flush().await.unwrap();
        assert!(
            sub.next().now_or_never().is_none(),
            "perm-forged: a second notice on shogi.verdict.perm-forged"
        );
    }

    // The platform's durable consumer: every verdict once, acknowledged.
    let (reader, reader_heard) = client(&url, "reader").await;
    // Bound by its own info, without the stream's (which the platform is not exported).
    let js = async_nats::jetstream::with_prefix(reader.clone(), API_PREFIX);
    let consumer: async_nats::jetstream::consumer::PullConsumer = js
        .get_consumer_from_stream(shogi_proto::PLATFORM_VERDICTS, shogi_proto::STREAM)
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
        // Each game's checked verdict, once: perm-forged's too, though its `.verdict` holds
        // two entries set aside before its announcement.
        let fresh = seen.insert(m.subject.to_string());
        assert!(fresh, "{} twice", m.subject);
        if m.subject.as_str() == checked {
            use prost::Message as _;
            let v = shogi_proto::v1::Verdict::decode(m.payload.clone()).unwrap();
            assert_eq!((v.code, v.ply), (all[0].expected.code, all[0].expected.ply));
        }
        m.ack().await.expect("ack");
    }
    // Every game's, the strict one's and perm-forged's.
    assert_eq!(seen.len(), all.len() + 2, "the platform read {seen:?}");
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
        "$JS.API.CONSUMER.DELETE.SHOGI_GAMES.verdict-check",
        "$JS.API.CONSUMER.CREATE.SHOGI_GAMES.verdict-check",
        "$JS.API.CONSUMER.DURABLE.CREATE.SHOGI_GAMES.verdict-check",
        "$JS.API.CONSUMER.MSG.NEXT.SHOGI_GAMES.repetition-watcher-p0",
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
        if name == "validator" {
            // Its check refused the forged entries on `.verdict` (a message without a type,
            // then a verdict where the log decides no ending), and said so: at ERROR, at most
            // once a second (the first of the two, the second counted in the next line).
            assert!(
                log.lines().any(|l| l.contains("ERROR")
                    && l.contains("perm-forged")
                    && l.contains("bad_verdict")),
                "the validator said nothing at ERROR of the false verdict on perm-forged:\n{log}"
            );
        }
        if name == "repetition-watcher" {
            assert!(
                log.lines().any(|l| l.contains("ERROR")
                    && l.contains("perm-forged")
                    && l.contains("bad_verdict")),
                "the watcher said nothing at ERROR of perm-forged's .verdict:\n{log}"
            );
        }
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
    for (role, account) in [
        ("repetition-watcher", "WATCHER"),
        ("impasse-judge", "JUDGE"),
    ] {
        for p in 0..shogi_proto::PARTITIONS {
            for api in [
                format!("CONSUMER.INFO.SHOGI_GAMES.{role}-p{p}"),
                format!("CONSUMER.MSG.NEXT.SHOGI_GAMES.{role}-p{p}"),
            ] {
                // Exported to the role's account alone, imported there under the prefix, and
                // allowed to its user under that name.
                let exported = format!("\"$JS.API.{api}\"");
                let local = format!("\"{API_PREFIX}.{api}\"");
                assert_eq!(auth.matches(&exported).count(), 2, "{exported}");
                assert_eq!(auth.matches(&local).count(), 2, "{local}");
                let export = auth
                    .lines()
                    .find(|l| l.contains(&format!("service: {exported}")))
                    .unwrap_or_else(|| panic!("{exported} is not exported"));
                assert!(
                    export.contains(&format!("accounts: [{account}]")),
                    "{export}"
                );
            }
            let ack = format!("\"$JS.ACK.SHOGI_GAMES.{role}-p{p}.>\"");
            assert_eq!(auth.matches(&ack).count(), 3, "{ack}");
            // The push consumer's deliveries (a stream export) and its flow control replies (a
            // service): exported to the role's account alone, imported there, and allowed to
            // its user (to subscribe, to publish).
            for (kind, subject) in [
                ("service", format!("\"$JS.FC.SHOGI_GAMES.{role}-p{p}.*\"")),
                (
                    "stream",
                    format!(
                        "\"{}\"",
                        arbiter_bus::deliver_subject(&format!("{role}-p{p}"))
                    ),
                ),
            ] {
                assert_eq!(auth.matches(&subject).count(), 3, "{subject}");
                let export = auth
                    .lines()
                    .find(|l| l.contains(&format!("{{ {kind}: {subject}")))
                    .unwrap_or_else(|| panic!("{subject} is not exported as a {kind}"));
                assert!(
                    export.contains(&format!("accounts: [{account}]")),
                    "{export}"
                );
                assert!(
                    auth.contains(&format!(
                        "{{ {kind}: {{ account: ARBITER, subject: {subject} }} }}"
                    )),
                    "{subject} is not imported"
                );
            }
        }
        assert!(
            !auth.contains(&format!("{role}-p{}\"", shogi_proto::PARTITIONS)),
            "a partition beyond the last"
        );
    }
}

/// One credential's connection for the matrix: its client, what the server told it, and the
/// JetStream API prefixes it can try (its own account's `$JS.API`, and the one imported from
/// the streams' account when it lives outside it).
struct Probe {
    user: &'static str,
    client: async_nats::Client,
    heard: Heard,
    prefixes: Vec<&'static str>,
}

/// How one attempt settled: answered (with the answer), or refused by the server.
enum Settled {
    Answered(async_nats::Message),
    Refused,
}

impl Heard {
    /// How many violations reported so far mention `what`.
    fn mentioning(&self, what: &str) -> usize {
        self.violations()
            .iter()
            .filter(|v| v.contains(what))
            .count()
    }

    fn count(&self, what: &str) -> usize {
        self.violations()
            .iter()
            .filter(|v| v.contains(&format!("\"{what}\"")))
            .count()
    }
}

impl Probe {
    async fn new(url: &str, user: &'static str) -> Probe {
        let (client, heard) = client(url, user).await;
        let prefixes = if imports_the_api(user) {
            vec![API_PREFIX, "$JS.API"]
        } else {
            vec!["$JS.API"]
        };
        Probe {
            user,
            client,
            heard,
            prefixes,
        }
    }

    /// Publishes `payload` on `subject` as a request and waits until it settles: an answer on
    /// its reply subject, or a permissions violation naming `subject`.
    async fn request(
        &self,
        subject: &str,
        headers: async_nats::HeaderMap,
        payload: &[u8],
    ) -> Settled {
        let before = self.heard.count(subject);
        let inbox = self.client.new_inbox();
        let mut answers = self.client.subscribe(inbox.clone()).await.unwrap();
        self.client
            .publish_with_reply_and_headers(
                subject.to_owned(),
                inbox,
                headers,
                payload.to_vec().into(),
            )
            .await
            .unwrap();
        let deadline = Instant::now() + test_support::patience(Duration::from_secs(10));
        loop {
            if let Ok(Some(m)) =
                tokio::time::timeout(Duration::from_millis(20), answers.next()).await
            {
                return Settled::Answered(m);
            }
            if self.heard.count(subject) > before {
                return Settled::Refused;
            }
            assert!(
                Instant::now() < deadline,
                "{}: {subject} was neither answered nor refused",
                self.user
            );
        }
    }

    /// A JetStream publish of a probe on `subject`: settled (stored or refused).
    async fn write(&self, subject: &str) {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(
            "Nats-Msg-Id",
            format!("probe-{}-{subject}", self.user).as_str(),
        );
        self.request(subject, headers, b"probe").await;
    }

    /// Calls the JetStream API `api` (without its prefix) under every prefix this user has; the
    /// answers that came.
    async fn api(&self, api: &str, body: &[u8]) -> Vec<async_nats::Message> {
        let mut answers = Vec::new();
        for prefix in &self.prefixes {
            if let Settled::Answered(m) = self
                .request(
                    &format!("{prefix}.{api}"),
                    async_nats::HeaderMap::new(),
                    body,
                )
                .await
            {
                answers.push(m);
            }
        }
        answers
    }

    /// Calls `api` naming `reply` as the reply subject (the answer is not this client's to
    /// hear), then a plain call of the same API, whose settling says the first was handled.
    async fn api_replying_to(&self, api: &str, reply: &str) {
        for prefix in &self.prefixes {
            let subject = format!("{prefix}.{api}");
            self.client
                .publish_with_reply(subject.clone(), reply.to_owned(), "".into())
                .await
                .unwrap();
            self.request(&subject, async_nats::HeaderMap::new(), b"")
                .await;
        }
    }

    /// Publishes `payload` on `subject`, then on a subject no user may publish: whether the
    /// server refused the first. The server answers a client's messages in order, so the
    /// second's refusal comes after the first's, if any.
    async fn refused(&self, subject: &str, payload: &str) -> bool {
        let before = self.heard.count(subject);
        let sentinel = format!("shogi.nobody.{}", self.user);
        let sentinels = self.heard.count(&sentinel);
        self.client
            .publish(subject.to_owned(), payload.to_owned().into())
            .await
            .unwrap();
        self.client
            .publish(sentinel.clone(), "".into())
            .await
            .unwrap();
        self.client.flush().await.unwrap();
        let deadline = Instant::now() + test_support::patience(Duration::from_secs(10));
        while self.heard.count(&sentinel) == sentinels {
            assert!(
                Instant::now() < deadline,
                "{}: the publish on {sentinel} was not refused",
                self.user
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.heard.count(subject) > before
    }

    /// Subscribes to the push consumer deliver subject `subject` in queue group `group` (as a
    /// worker does), then has `trigger` store something the consumer matches: whether this
    /// user received a delivery (`true`) or was refused the subscription (`false`).
    async fn receives<F, Fut>(&self, subject: &str, group: &str, trigger: F) -> bool
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let what = format!("Subscription to \"{subject}\"");
        let before = self.heard.mentioning(&what);
        let mut sub = self
            .client
            .queue_subscribe(subject.to_owned(), group.to_owned())
            .await
            .unwrap();
        self.client.flush().await.unwrap();
        let deadline = Instant::now() + test_support::patience(Duration::from_secs(10));
        loop {
            trigger().await;
            if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(100), sub.next()).await
            {
                // A delivery, acknowledged for the next user's turn (a heartbeat has no reply
                // subject, and a flow control request is answered the same way).
                if let Some(reply) = m.reply {
                    let _ = self.client.publish(reply, "".into()).await;
                }
                return true;
            }
            let refused = self.heard.mentioning(&what);
            if refused > before {
                return false;
            }
            assert!(
                Instant::now() < deadline,
                "{}: subscription to {subject} neither received anything nor was refused",
                self.user
            );
        }
    }

    /// Subscribes to `filter`, then has `trigger` publish something it matches: whether this
    /// user heard it (`true`) or was refused the subscription (`false`).
    async fn hears<F, Fut>(&self, filter: &str, trigger: F) -> bool
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let what = format!("Subscription to \"{filter}\"");
        let before = self.heard.mentioning(&what);
        let mut sub = self.client.subscribe(filter.to_owned()).await.unwrap();
        self.client.flush().await.unwrap();
        let deadline = Instant::now() + test_support::patience(Duration::from_secs(10));
        loop {
            trigger().await;
            if let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(50), sub.next()).await {
                return true;
            }
            let refused = self.heard.mentioning(&what);
            if refused > before {
                return false;
            }
            assert!(
                Instant::now() < deadline,
                "{}: subscription to {filter} neither heard anything nor was refused",
                self.user
            );
        }
    }
}

/// Whether an answer of the JetStream API is a success (not an error, not "JetStream not
/// enabled" from the caller's own account); a pull's "no messages" status is one.
fn api_success(m: &async_nats::Message) -> bool {
    let status_ok = m
        .status
        .is_none_or(|s| matches!(s.as_u16(), 404 | 408 | 409) || s.is_success());
    let body = String::from_utf8_lossy(&m.payload);
    status_ok && !body.contains("\"error\"")
}

/// The matrix of deploy/STREAMS.md ("Authorization"): its rows, each with `yes` or `no` for
/// admin, validator, watcher, judge, reader and csa, in that order.
fn documented_matrix() -> Vec<(String, Vec<bool>)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/STREAMS.md"))
        .expect("deploy/STREAMS.md");
    let start = doc
        .find("<!-- permissions matrix -->")
        .expect("deploy/STREAMS.md has the permissions matrix");
    let end = doc[start..]
        .find("<!-- /permissions matrix -->")
        .expect("the matrix ends")
        + start;
    doc[start..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| what") && !l.starts_with("| ---"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let row = cells[1..]
                .iter()
                .map(|c| match *c {
                    "yes" => true,
                    "no" => false,
                    other => panic!("{l}: {other:?} is neither yes nor no"),
                })
                .collect();
            (cells[0].to_owned(), row)
        })
        .collect()
}

/// The push consumers the matrix receives deliveries from, remade push by hand where
/// `streams apply` makes them pull, so that the push rows of the matrix (who may receive,
/// answer flow control, forge a delivery) are checked against the same auth.conf on every
/// server: the validator's `verdict-check` (pulled since it is shared by the instances, push
/// where an earlier version made it), and with `workers` (a nats-server older than 2.11, where
/// every consumer is pulled: deploy/STREAMS.md, "Delivery modes and server versions") the
/// workers' consumers of partition 0.
async fn push_consumers_by_hand(games: &async_nats::jetstream::stream::Stream, workers: bool) {
    use async_nats::jetstream::consumer;
    let mut names = vec![shogi_proto::consumer::VERDICT_CHECK.to_owned()];
    if workers {
        names.push(shogi_proto::consumer::partition("repetition-watcher", 0));
        names.push(shogi_proto::consumer::partition("impasse-judge", 0));
    }
    for name in names {
        let filter = games
            .consumer_info(&name)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .config
            .filter_subject;
        games.delete_consumer(&name).await.unwrap();
        games
            .create_consumer(consumer::push::Config {
                durable_name: Some(name.clone()),
                deliver_subject: arbiter_bus::deliver_subject(&name),
                deliver_group: Some(name.clone()),
                filter_subject: filter,
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait: Duration::from_secs(10),
                flow_control: true,
                idle_heartbeat: Duration::from_secs(2),
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{name} as a push consumer: {e}"));
    }
}

/// Every credential the deployment hands out, tried against every subject and API the arbiter
/// uses: writes on each subject, the JetStream API answer sent to a game's subjects (a reply
/// subject the caller names), reads, subscriptions, pulls of each role's consumers, consumer
/// create/update/delete and stream edits. What took effect is read back as admin, and the
/// whole matrix must be the one deploy/STREAMS.md states (issue 20).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_credential_against_every_subject_is_the_documented_matrix() {
    let (_nats, url) = applied_server();
    let (admin_client, _) = client(&url, "admin").await;
    let version = admin_client.server_info().version;
    let admin = async_nats::jetstream::new(admin_client);
    let games = admin.get_stream(shogi_proto::STREAM).await.unwrap();
    let lobby = admin.get_stream("KV_CSA_LOBBY").await.unwrap();
    push_consumers_by_hand(&games, !arbiter_bus::push_keeps_deliveries(&version)).await;
    let stored = |subject: String| {
        let games = games.clone();
        async move {
            games
                .get_last_raw_message_by_subject(&subject)
                .await
                .is_ok()
        }
    };
    let (validator_client, _) = client(&url, "validator").await;
    let validator = async_nats::jetstream::new(validator_client);
    // A game to read: created by the validator.
    validator
        .publish("shogi.game.matrix.created", "".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let users = USERS;
    let mut observed: Vec<(String, Vec<bool>)> = Vec::new();
    let mut row = |name: &str, user: usize, effect: bool| {
        if user == 0 {
            observed.push((name.to_owned(), Vec::new()));
        }
        let r = observed.iter_mut().find(|(n, _)| n == name).unwrap();
        r.1.push(effect);
    };
    let mut probes = Vec::new();
    for user in users {
        probes.push(Probe::new(&url, user).await);
    }
    let mut by_user: Vec<Vec<(&'static str, bool)>> = vec![Vec::new(); users.len()];
    // The watcher's instance of partition 1, listening to its push consumer's deliveries, to
    // see whether anyone can forge one.
    let watcher_listener = Probe::new(&url, "watcher").await;
    let mut watcher_deliveries = watcher_listener
        .client
        .queue_subscribe(
            arbiter_bus::deliver_subject("repetition-watcher-p1"),
            "repetition-watcher-p1".to_owned(),
        )
        .await
        .unwrap();
    // Admin last: some of what it may do (a purge, a consumer deleted) changes the stream.
    for u in (0..users.len()).rev() {
        let p = &probes[u];
        let user = p.user;
        let mut cells: Vec<(&'static str, bool)> = Vec::new();
        let game = format!("m-{user}");
        for (name, subj) in [
            ("write a game's `.created`", subject::created(&game)),
            ("write a game's `.move.<p>` (a move)", subject::moves(&game)),
            ("write a game's `.declare`", subject::declare(&game)),
            ("write a game's `.warning`", subject::warning(&game)),
            ("write a game's `.verdict`", subject::verdict(&game)),
            ("write a game's `.result`", subject::result(&game)),
            ("write `shogi.aside.<id>`", subject::aside(&game)),
            (
                "write a watcher lease",
                format!("shogi.lease.repetition-watcher.m-{user}"),
            ),
            (
                "write a judge lease",
                format!("shogi.lease.impasse-judge.m-{user}"),
            ),
        ] {
            p.write(&subj).await;
            let effect = if subj.starts_with("shogi.aside.") {
                let aside = admin.get_stream(shogi_proto::ASIDE_STREAM).await.unwrap();
                aside.get_last_raw_message_by_subject(&subj).await.is_ok()
            } else if subj.starts_with("shogi.lease.") {
                let leases = admin.get_stream(shogi_proto::LEASE_STREAM).await.unwrap();
                leases.get_last_raw_message_by_subject(&subj).await.is_ok()
            } else {
                stored(subj.clone()).await
            };
            cells.push((name, effect));
        }
        // The JetStream API's answer, sent where the caller says: onto a game's subjects.
        let trick = format!("t-{user}");
        for (name, reply) in [
            (
                "have an API answer stored as a game's `.verdict` (reply subject)",
                subject::verdict(&trick),
            ),
            (
                "have an API answer stored as a game's `.result` (reply subject)",
                subject::result(&trick),
            ),
            (
                "have an API answer stored in a game's log (reply subject)",
                subject::moves(&trick),
            ),
        ] {
            p.api_replying_to("STREAM.INFO.SHOGI_GAMES", &reply).await;
            // The server answers its API requests from a pool of workers and the stream stores
            // the answer after it is sent (nats-server 2.15: seen stored after the request
            // that followed it was answered), so a stored answer is waited for, with a
            // deadline.
            let deadline = std::time::Instant::now()
                + test_support::patience(std::time::Duration::from_millis(1500));
            let effect = loop {
                if stored(reply.clone()).await {
                    break true;
                }
                if std::time::Instant::now() >= deadline {
                    break false;
                }
                tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            };
            cells.push((name, effect));
        }
        let read = p
            .api(
                "STREAM.MSG.GET.SHOGI_GAMES",
                br#"{"last_by_subj":"shogi.game.matrix.created"}"#,
            )
            .await;
        cells.push((
            "read a game (message get)",
            read.iter()
                .any(|m| String::from_utf8_lossy(&m.payload).contains("\"message\"")),
        ));
        // The validator's batched reads (WatchGame's replay): a direct get, which the stream
        // allows (arbiter-bus `jetstream/direct.rs`).
        let batch = p
            .api(
                "DIRECT.GET.SHOGI_GAMES",
                br#"{"seq":1,"next_by_subj":"shogi.game.matrix.created","batch":1}"#,
            )
            .await;
        cells.push((
            "read games in batches (direct get)",
            batch.iter().any(|m| {
                m.headers
                    .as_ref()
                    .and_then(|h| h.get("Nats-Subject"))
                    .is_some_and(|s| s.as_str() == "shogi.game.matrix.created")
            }),
        ));
        // The stream's info with its subjects listed: every game's subjects, in answers that
        // grow with the stream (170 KB each cost the server its CPU when a platform looped it).
        let info = p
            .api(
                "STREAM.INFO.SHOGI_GAMES",
                br#"{"subjects_filter":"shogi.game.>"}"#,
            )
            .await;
        cells.push((
            "read the stream's info, subjects listed",
            info.iter().any(|m| {
                api_success(m) && String::from_utf8_lossy(&m.payload).contains("\"subjects\"")
            }),
        ));
        let heard_game = p
            .hears("shogi.game.*.>", || async {
                validator
                    .publish(format!("shogi.game.hear-{user}.warning"), "".into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            })
            .await;
        cells.push(("hear the games' raw publishes", heard_game));
        let heard_verdicts = p
            .hears(shogi_proto::VERDICT_NOTICES, || async {
                // A stored (checked) verdict is republished; a new game each time, since
                // `.result` takes one.
                static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let mut h = async_nats::HeaderMap::new();
                h.insert(shogi_proto::MESSAGE_TYPE_HEADER, shogi_proto::VERDICT_TYPE);
                validator
                    .publish_with_headers(format!("shogi.game.v{n}-{user}.result"), h, "".into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            })
            .await;
        cells.push((
            "hear the republished verdicts (`shogi.verdict.*`)",
            heard_verdicts,
        ));
        let other_inbox = if user == "admin" {
            "_INBOX.validator.>"
        } else {
            "_INBOX.admin.>"
        };
        let heard_replies = p
            .hears(other_inbox, || async {
                // Admin's replies: a request of admin's own, answered on its inbox.
                let _ = games.clone().info().await;
            })
            .await;
        cells.push(("hear another user's replies", heard_replies));
        for (name, durable) in [
            ("pull the watcher's consumers", "repetition-watcher-p0"),
            ("pull the judge's consumers", "impasse-judge-p0"),
            ("pull `platform-verdicts`", shogi_proto::PLATFORM_VERDICTS),
            (
                "pull the validator's `verdict-check`",
                shogi_proto::consumer::VERDICT_CHECK,
            ),
        ] {
            let answers = p
                .api(
                    &format!("CONSUMER.MSG.NEXT.SHOGI_GAMES.{durable}"),
                    br#"{"batch":1,"no_wait":true}"#,
                )
                .await;
            cells.push((name, answers.iter().any(api_success)));
        }
        // The workers' push consumers: receiving their deliveries (a queue subscription to
        // the deliver subject, in the consumer's queue group, while the validator stores a
        // move of the partition), answering their flow control, and forging a delivery.
        // The validator's check too: every announcement on `.verdict` is delivered to it.
        let check = shogi_proto::consumer::VERDICT_CHECK;
        for (name, durable, stored) in [
            (
                "receive the watcher's deliveries (push)",
                shogi_proto::consumer::partition("repetition-watcher", 0),
                "move.0",
            ),
            (
                "receive the judge's deliveries (push)",
                shogi_proto::consumer::partition("impasse-judge", 0),
                "move.0",
            ),
            (
                "receive the validator's check deliveries (push)",
                check.to_owned(),
                "verdict",
            ),
        ] {
            let received = p
                .receives(
                    &arbiter_bus::deliver_subject(&durable),
                    &durable,
                    || async {
                        static N: std::sync::atomic::AtomicU32 =
                            std::sync::atomic::AtomicU32::new(0);
                        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        validator
                            .publish(format!("shogi.game.push{n}-{user}.{stored}"), "".into())
                            .await
                            .unwrap()
                            .await
                            .unwrap();
                    },
                )
                .await;
            cells.push((name, received));
        }
        for (name, consumer) in [
            (
                "answer the watcher's flow control (`$JS.FC`)",
                shogi_proto::consumer::partition("repetition-watcher", 0),
            ),
            (
                "answer the judge's flow control (`$JS.FC`)",
                shogi_proto::consumer::partition("impasse-judge", 0),
            ),
            (
                "answer the validator's check flow control (`$JS.FC`)",
                check.to_owned(),
            ),
        ] {
            let fc = format!("$JS.FC.SHOGI_GAMES.{consumer}.ab12");
            cells.push((name, !p.refused(&fc, "").await));
        }
        let forged = format!("forged-by-{user}");
        let sent = !p
            .refused(
                &arbiter_bus::deliver_subject("repetition-watcher-p1"),
                &forged,
            )
            .await;
        // A publish the server let through has reached every subscriber once the listener's
        // own round trip to the server is over.
        watcher_listener.client.flush().await.unwrap();
        let mut heard = false;
        while let Some(Some(m)) = watcher_deliveries.next().now_or_never() {
            heard |= m.payload == forged.as_bytes();
        }
        cells.push(("forge a delivery of the watcher's consumers", sent && heard));
        // Consumers: one of its own on a game, a durable, another role's changed or deleted.
        let name = format!("probe-{user}");
        p.api(
            &format!("CONSUMER.CREATE.SHOGI_GAMES.{name}.shogi.game.matrix.>"),
            format!(
                r#"{{"stream_name":"SHOGI_GAMES","config":{{"name":"{name}","filter_subject":"shogi.game.matrix.>","ack_policy":"none","inactive_threshold":60000000000}}}}"#
            )
            .as_bytes(),
        )
        .await;
        cells.push((
            "create a consumer",
            games.consumer_info(&name).await.is_ok(),
        ));
        let durable = format!("durable-{user}");
        p.api(
            &format!("CONSUMER.DURABLE.CREATE.SHOGI_GAMES.{durable}"),
            format!(
                r#"{{"stream_name":"SHOGI_GAMES","config":{{"durable_name":"{durable}","ack_policy":"explicit"}}}}"#
            )
            .as_bytes(),
        )
        .await;
        cells.push((
            "create a durable consumer",
            games.consumer_info(&durable).await.is_ok(),
        ));
        let target = "repetition-watcher-p3";
        let original = games.consumer_info(target).await.unwrap().config.clone();
        let mut wanted = original.clone();
        let filter = "shogi.game.nosuchgame.move.3";
        wanted.filter_subject = filter.to_owned();
        let body = serde_json::json!({
            "stream_name": "SHOGI_GAMES",
            "config": wanted,
            "action": "update",
        });
        p.api(
            &format!("CONSUMER.CREATE.SHOGI_GAMES.{target}.{filter}"),
            body.to_string().as_bytes(),
        )
        .await;
        let changed = games
            .consumer_info(target)
            .await
            .unwrap()
            .config
            .filter_subject
            == filter;
        cells.push(("change another role's consumer (its filter)", changed));
        if changed {
            // Put back as it was, as admin (only admin can, and it comes last).
            let restore = serde_json::json!({
                "stream_name": "SHOGI_GAMES",
                "config": original,
                "action": "update",
            });
            probes[0]
                .api(
                    &format!("CONSUMER.CREATE.SHOGI_GAMES.{target}.shogi.game.*.move.3"),
                    restore.to_string().as_bytes(),
                )
                .await;
        }
        let victim = "impasse-judge-p5";
        p.api(&format!("CONSUMER.DELETE.SHOGI_GAMES.{victim}"), b"")
            .await;
        cells.push((
            "delete another role's consumer",
            games.consumer_info(victim).await.is_err(),
        ));
        let mut config = games.clone().info().await.unwrap().config.clone();
        config.description = Some(format!("edited by {user}"));
        p.api(
            "STREAM.UPDATE.SHOGI_GAMES",
            serde_json::to_string(&config).unwrap().as_bytes(),
        )
        .await;
        let edited = games.clone().info().await.unwrap().config.description
            == Some(format!("edited by {user}"));
        cells.push(("edit a stream", edited));
        let purged = format!("purge-{user}");
        validator
            .publish(subject::warning(&purged), "".into())
            .await
            .unwrap()
            .await
            .unwrap();
        p.api(
            "STREAM.PURGE.SHOGI_GAMES",
            format!(r#"{{"filter":"shogi.game.{purged}.>"}}"#).as_bytes(),
        )
        .await;
        cells.push(("purge a game", !stored(subject::warning(&purged)).await));
        csa_lobby_cells(p, &lobby, &mut cells).await;
        by_user[u] = cells;
    }
    for (u, cells) in by_user.iter().enumerate() {
        for (name, effect) in cells {
            row(name, u, *effect);
        }
    }
    let table: String = observed
        .iter()
        .map(|(name, cells)| {
            let cells: Vec<&str> = cells
                .iter()
                .map(|&c| if c { "yes" } else { "no" })
                .collect();
            format!("| {name} | {} |\n", cells.join(" | "))
        })
        .collect();
    eprintln!("observed:\n| what | {} |\n{table}", users.join(" | "));
    assert_eq!(
        observed,
        documented_matrix(),
        "the matrix observed is not the one deploy/STREAMS.md states; observed:\n{table}"
    );
}

/// The CSA front end's user (account `CSA`) keeps the shared lobby through its imports alone,
/// as two instances of `csa-server --nats-url` do (deploy/nats/auth.conf): a login, the same
/// name refused to the other instance, a seek and its pairing, `%%WHO`'s read of every login,
/// a logout that frees the name; and no permissions violation on the way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_csa_user_shares_the_lobby_through_its_imports() {
    use csa_server::shared::{NameEntry, SeekEntry, Shared};
    let (_nats, url) = applied_server();
    let open = || async {
        let (client, heard) = client(&url, "csa").await;
        let js = async_nats::jetstream::with_prefix(client, API_PREFIX);
        let shared = Shared::open(js).await.expect("bind the lobby as csa");
        (shared, heard)
    };
    let (a, heard_a) = open().await;
    let (b, heard_b) = open().await;
    let entry = |id: &str, login_ms: u64| NameEntry {
        instance: String::new(),
        beat_ms: 0,
        id: id.to_owned(),
        x1: true,
        status: 0,
        game: None,
        playing: None,
        login_ms,
    };
    let seeker = |sh: &Shared, key: u64, name: &str, turn: char| SeekEntry {
        instance: sh.instance.clone(),
        key,
        name: name.to_owned(),
        player_id: None,
        turn,
        login_ms: key,
    };
    assert!(a.login("alice", entry("alice", 1)).await.unwrap());
    assert!(!b.login("alice", entry("alice", 2)).await.unwrap());
    assert!(b.login("bob", entry("bob", 2)).await.unwrap());
    let game = csa_protocol::GameName::parse("perm-600-10").unwrap();
    let toss = shogi_rules::Color::Black;
    let waiting = a
        .seek(&seeker(&a, 1, "alice", '+'), &game, false, toss)
        .await;
    assert!(matches!(waiting, Ok(csa_protocol::Pairing::Waiting)));
    match b.seek(&seeker(&b, 2, "bob", '-'), &game, false, toss).await {
        Ok(csa_protocol::Pairing::Paired { black, white }) => {
            assert_eq!((black.name.as_str(), white.name.as_str()), ("alice", "bob"));
        }
        other => panic!("not paired: {other:?}"),
    }
    let names: Vec<String> = a.names().await.unwrap().into_iter().map(|n| n.id).collect();
    assert_eq!(names, ["alice", "bob"]);
    a.logout("alice").await;
    assert!(b.login("alice", entry("alice", 3)).await.unwrap());
    for heard in [heard_a, heard_b] {
        assert_eq!(heard.violations(), Vec::<String>::new());
    }
}

/// The rows of the CSA front ends' lobby (the bucket `CSA_LOBBY` in `ARBITER`, imported into
/// `CSA`; docs/csa.md, "Running more than one") for the user of `p`: `lobby` is the bucket's
/// stream as admin sees it.
async fn csa_lobby_cells(
    p: &Probe,
    lobby: &async_nats::jetstream::stream::Stream,
    cells: &mut Vec<(&'static str, bool)>,
) {
    let user = p.user;
    let key = format!("$KV.CSA_LOBBY.probe.{user}");
    for prefix in &p.prefixes {
        // Under the imported API's prefix for the users outside ARBITER, as async-nats puts.
        let subject = if *prefix == "$JS.API" {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        p.request(&subject, async_nats::HeaderMap::new(), b"probe")
            .await;
    }
    let written = lobby
        .clone()
        .get_last_raw_message_by_subject(&key)
        .await
        .is_ok();
    cells.push(("write a key of the CSA lobby", written));
    let read = p
        .api("DIRECT.GET.KV_CSA_LOBBY.$KV.CSA_LOBBY.probe.csa", b"")
        .await;
    cells.push((
        "read a key of the CSA lobby (direct get)",
        read.iter().any(api_success),
    ));
    let info = p.api("STREAM.INFO.KV_CSA_LOBBY", b"").await;
    cells.push(("read the CSA lobby's info", info.iter().any(api_success)));
    let refused = p.refused(&format!("csa.probe.{user}"), "probe").await;
    cells.push(("publish on `csa.>`", !refused));
}

/// Publishes `payload` as `message_type` on `subject` through JetStream, as the client of `js`;
/// its stream sequence.
async fn put(
    js: &async_nats::jetstream::Context,
    subject: String,
    message_type: &str,
    payload: Vec<u8>,
) -> u64 {
    let mut h = async_nats::HeaderMap::new();
    h.insert(shogi_proto::MESSAGE_TYPE_HEADER, message_type);
    js.publish_with_headers(subject.clone(), h, payload.into())
        .await
        .unwrap_or_else(|e| panic!("{subject}: {e}"))
        .await
        .unwrap_or_else(|e| panic!("{subject}: {e}"))
        .sequence
}

/// A game written as the validator writes one: created, two moves and, when `resigned`, the
/// resignation that ends it in its log; with `garbage`, that many undecodable entries in its
/// log between the moves.
async fn write_game(js: &async_nats::jetstream::Context, id: &str, resigned: bool, garbage: usize) {
    use prost::Message as _;
    let created = pb_created(id);
    put(
        js,
        subject::created(id),
        shogi_proto::GAME_CREATED_TYPE,
        created,
    )
    .await;
    for (ply, usi) in [(1, "7g7f"), (2, "3c3d")] {
        let m = shogi_proto::v1::MoveAccepted {
            received_unix_ms: 0,
            comment: String::new(),
            game_id: id.into(),
            ply,
            usi: usi.into(),
            sfen_after: String::new(),
            gives_check: false,
            position_hash: 0,
        };
        put(
            js,
            subject::moves(id),
            shogi_proto::MOVE_ACCEPTED_TYPE,
            m.encode_to_vec(),
        )
        .await;
        if ply == 1 {
            for _ in 0..garbage {
                put(
                    js,
                    subject::moves(id),
                    shogi_proto::MOVE_ACCEPTED_TYPE,
                    vec![0xff, 0x01],
                )
                .await;
            }
        }
    }
    if resigned {
        let v = shogi_proto::convert::verdict_pb(
            id,
            &shogi_adjudication::Verdict::reported(
                shogi_adjudication::ResultCode::Resignation,
                Some(shogi_rules::Color::White),
                2,
                None,
            ),
        )
        .encode_to_vec();
        put(js, subject::moves(id), shogi_proto::VERDICT_TYPE, v.clone()).await;
        put(js, subject::result(id), shogi_proto::VERDICT_TYPE, v).await;
    }
}

fn pb_created(id: &str) -> Vec<u8> {
    use prost::Message as _;
    shogi_proto::v1::GameCreated {
        created_unix_ms: 0,
        game_id: id.into(),
        ruleset: Some(shogi_proto::v1::Ruleset {
            preset: "online".into(),
            overrides: None,
        }),
        start_sfen: shogi_rules::Position::startpos().to_sfen(),
        handicap: String::new(),
        strict: false,
    }
    .encode_to_vec()
}

/// `streams prune` as admin, as deploy/STREAMS.md says to run it (issue 20): a game is
/// finished when the replay of its log says so, not when its `.result` holds something (the
/// games named on `.result` are the candidates, as ListGames reads them); an
/// id read from a subject is checked before it names a file; the records are on disk before
/// the purge; and entries set aside cost no publish it may not make. Before it, `export` as
/// `reader`, with the message gets a platform may make, writes the finished game's record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prune_as_admin_takes_only_finished_games_and_writes_only_into_its_directory() {
    let (_nats, url) = applied_server();
    let (validator, _) = client(&url, "validator").await;
    let js = async_nats::jetstream::new(validator);
    // Finished, with two entries the replay sets aside.
    write_game(&js, "done", true, 2).await;
    // Live, and something that is not its verdict on its `.result`.
    write_game(&js, "live", false, 0).await;
    put(
        &js,
        subject::result("live"),
        "",
        br#"{"type":"io.nats.jetstream.api.v1.stream_info_response"}"#.to_vec(),
    )
    .await;
    // A "game" whose id is a path outside the archive directory.
    let outside = tempfile::Builder::new()
        .prefix("prune-outside-")
        .tempdir_in("/tmp")
        .unwrap();
    let evil = format!("{}/evil", outside.path().display());
    assert!(!evil.contains('.'), "{evil}: one subject token");
    put(
        &js,
        subject::created(&evil),
        shogi_proto::GAME_CREATED_TYPE,
        pb_created(&evil),
    )
    .await;
    put(
        &js,
        subject::result(&evil),
        shogi_proto::VERDICT_TYPE,
        Vec::new(),
    )
    .await;
    export_as_reader_writes_the_records(&url);

    let archive = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = Command::new(bin("shogi-arbiter"))
        .args([
            "streams",
            "prune",
            "--nats-url",
            &url,
            "--finished-before",
            "0",
        ])
        .arg("--archive-dir")
        .arg(archive.path())
        .envs(user_env("admin"))
        .output()
        .expect("run streams prune");
    let took = started.elapsed();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    eprintln!("prune took {took:?}:\n{stdout}{stderr}");
    assert!(stdout.contains("done: pruned"), "{stdout}{stderr}");
    assert!(
        stderr.contains("live: left on the bus"),
        "the live game: {stdout}{stderr}"
    );
    assert!(
        stderr.contains("not a game id"),
        "the path-like id: {stdout}{stderr}"
    );
    assert!(
        !out.status.success(),
        "an id that is not a game's is reported"
    );
    // Two entries set aside, each of which cost a refused publish's 5 s before.
    assert!(took < Duration::from_secs(8), "prune took {took:?}");
    let names: Vec<String> = std::fs::read_dir(archive.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["done.csa"],
        "only the finished game's record, whole"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing written outside --archive-dir"
    );
    let (admin, _) = client(&url, "admin").await;
    let games = async_nats::jetstream::new(admin)
        .get_stream(shogi_proto::STREAM)
        .await
        .unwrap();
    for (id, kept) in [("done", false), ("live", true), (evil.as_str(), true)] {
        assert_eq!(
            games
                .get_last_raw_message_by_subject(&subject::created(id))
                .await
                .is_ok(),
            kept,
            "{id}"
        );
    }
}

/// `shogi-arbiter export` as `reader` (deploy/STREAMS.md, "Authorization": message gets, not
/// the stream's info): the finished game `done` by id on standard output, and with `--archive`
/// every game named on `.result` into a directory, each id checked before it names a file;
/// no permissions violation on the way (which would end it with exit 2).
fn export_as_reader_writes_the_records(url: &str) {
    let export = |args: &[&str]| {
        let out = Command::new(bin("shogi-arbiter"))
            .args(["export", "--nats-url", url])
            .args(args)
            .envs(user_env("reader"))
            .output()
            .expect("run export");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !stderr.contains("ermission"),
            "export as reader met a permissions violation: {stderr}"
        );
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr,
        )
    };
    let (code, stdout, stderr) = export(&["done"]);
    assert_eq!(code, Some(0), "export done as reader: {stderr}");
    assert!(
        stdout.contains("%TORYO"),
        "the resigned game's record: {stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = export(&["--archive", "--out-dir", &dir.path().to_string_lossy()]);
    eprintln!("export --archive as reader:\n{stderr}");
    // The path-like id is refused, and says so with exit 1; the others are written.
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("invalid game_id"), "{stderr}");
    let record = std::fs::read_to_string(dir.path().join("done.csa"))
        .unwrap_or_else(|e| panic!("done.csa: {e}; {stderr}"));
    assert!(record.contains("%TORYO"), "{record}");
}

/// `streams apply` as admin turns the workers' consumers from push (the default) to pull and
/// back: each is replaced, starting after its ack floor, and said so; the validator's
/// `verdict-check` and `platform-verdicts` stay pulled; a second run changes nothing (deploy/STREAMS.md, "Changing the delivery mode").
#[test]
fn streams_apply_replaces_the_workers_consumers_of_the_other_delivery_mode() {
    let (_nats, url) = applied_server();
    let apply = |delivery: &str| {
        let out = Command::new(bin("shogi-arbiter"))
            .args(["streams", "apply", "--nats-url", &url])
            .envs(user_env("admin"))
            .env("ARBITER_CONSUMER_DELIVERY", delivery)
            .output()
            .expect("run streams apply");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "streams apply: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
            .lines()
            .filter(|l| l.starts_with("consumer "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let version = test_support::server_version(&test_support::nats_server_binary());
    if !arbiter_bus::push_keeps_deliveries(&version) {
        // Pull whatever is asked (deploy/STREAMS.md, "Delivery modes and server versions"):
        // `applied_server` made them pull, and asking for push changes nothing.
        for delivery in ["pull", "push"] {
            assert!(
                apply(delivery).iter().all(|l| l.ends_with("unchanged")),
                "{delivery} on {version}"
            );
        }
        return;
    }
    for delivery in ["pull", "push"] {
        let lines = apply(delivery);
        // The workers', in the mode asked; the validator's `verdict-check` and `clock-flag`,
        // and `platform-verdicts`, pulled whatever the mode.
        assert_eq!(lines.len(), 2 * shogi_proto::PARTITIONS as usize + 3);
        for line in &lines {
            let want = if line.contains(shogi_proto::PLATFORM_VERDICTS)
                || line.contains(shogi_proto::consumer::VERDICT_CHECK)
                || line.contains(shogi_proto::consumer::CLOCK_FLAG)
            {
                "unchanged".to_owned()
            } else {
                // Nothing was stored, so nothing acknowledged: from the first sequence.
                // One server: the consumers' state is a file (`auto` below three replicas).
                format!("replaced ({delivery}, file, from stream sequence 1)")
            };
            assert!(line.ends_with(&want), "{line}: not {want}");
        }
        assert!(
            apply(delivery).iter().all(|l| l.ends_with("unchanged")),
            "a second run with {delivery}"
        );
    }
}

/// The `limits` block of `account` in deploy/nats/auth.conf: max connections (account-wide),
/// max subscriptions (a connection) and max payload (bytes, a publish).
fn limits_of(auth: &str, account: &str) -> (usize, usize, usize) {
    let start = auth
        .find(&format!("\n  {account}: {{"))
        .unwrap_or_else(|| panic!("account {account} in auth.conf"));
    let block = &auth[start..];
    let limits = &block[block
        .find("limits: {")
        .unwrap_or_else(|| panic!("{account} has no limits"))..];
    let limits = &limits[..limits.find('}').expect("the limits block ends")];
    let value = |key: &str| -> usize {
        let line = limits
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{key}:")))
            .unwrap_or_else(|| panic!("{account}: no {key}"));
        let v = line.split(':').nth(1).unwrap().trim();
        let (digits, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
        let n: usize = digits
            .parse()
            .unwrap_or_else(|_| panic!("{account}: {line}"));
        n * match unit {
            "" => 1,
            "KB" => 1024,
            "MB" => 1024 * 1024,
            other => panic!("{account}: unit {other:?} in {line}"),
        }
    };
    (
        value("max_connections"),
        value("max_subscriptions"),
        value("max_payload"),
    )
}

/// A client that speaks the NATS protocol itself, so that every refusal the server sends is
/// read in order and none is dropped by a client library's event queue.
struct Wire {
    reader: std::io::BufReader<std::net::TcpStream>,
    writer: std::net::TcpStream,
}

impl Wire {
    /// Connects as `user`: `Ok` once the server answered the first PING, `Err` with the
    /// server's `-ERR` line when it refused the connection.
    fn connect(port: u16, user: &str) -> Result<Wire, String> {
        use std::io::BufRead as _;
        let stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(test_support::patience(Duration::from_secs(10))))
            .unwrap();
        let mut wire = Wire {
            reader: std::io::BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        };
        let mut info = String::new();
        wire.reader.read_line(&mut info).expect("the server's INFO");
        assert!(info.starts_with("INFO "), "{info}");
        let connect = serde_json::json!({
            "verbose": false, "pedantic": false, "protocol": 1, "headers": true,
            "user": user, "pass": password(user),
        });
        // A server at its connection limit may close the connection as soon as it has sent
        // its INFO and `-ERR`, before the CONNECT is written: a refusal too.
        {
            use std::io::Write as _;
            if let Err(e) = wire
                .writer
                .write_all(format!("CONNECT {connect}\r\nPING\r\n").as_bytes())
            {
                let mut said = String::new();
                let _ = wire.reader.read_line(&mut said);
                return Err(format!("closed by the server ({e}) {}", said.trim_end()));
            }
        }
        let errors = wire.until_pong();
        match errors.first() {
            None => Ok(wire),
            Some(e) => Err(e.clone()),
        }
    }

    /// Writes `bytes`; a connection the server closed under the write (a publish over the
    /// payload limit, refused and closed before the rest of it arrived) is left for
    /// [`Wire::until_pong`] to read what the server said before closing.
    fn send(&mut self, bytes: &[u8]) {
        use std::io::Write as _;
        match self.writer.write_all(bytes) {
            Ok(()) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                ) => {}
            Err(e) => panic!("write to the server: {e}"),
        }
    }

    /// Reads until the server's PONG (or the end of the connection): the `-ERR` lines before
    /// it.
    fn until_pong(&mut self) -> Vec<String> {
        use std::io::BufRead as _;
        let mut errors = Vec::new();
        loop {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) => return errors,
                Ok(_) => {}
                // The server closed the connection after its last error.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return errors,
                Err(e) => panic!("no PONG from the server: {e}; errors so far {errors:?}"),
            }
            let line = line.trim_end();
            if line == "PONG" {
                return errors;
            }
            if line == "PING" {
                self.send(b"PONG\r\n");
            } else if line.starts_with("-ERR") {
                errors.push(line.to_owned());
            }
        }
    }
}

/// Every account of deploy/nats/auth.conf is held to its limits (deploy/STREAMS.md,
/// "Limits"): its connections (one account-wide count), each connection's subscriptions and
/// each publish's size; and the streams' account to its streams, consumers and ack pending. A
/// platform's credential opening 400 connections and 20,000 subscriptions (what a probe of
/// the unlimited configuration was let do) is refused past its limits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_account_is_held_to_its_limits() {
    let auth = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/nats/auth.conf"
    ))
    .unwrap();
    let (nats, url) = applied_server();
    let port = nats.port();
    for (account, users) in [
        ("ARBITER", &["admin", "validator"][..]),
        ("WATCHER", &["watcher"][..]),
        ("JUDGE", &["judge"][..]),
        ("PLATFORM", &["reader"][..]),
        ("CSA", &["csa"][..]),
        ("LISTENER", &["listener"][..]),
    ] {
        let (connections, subscriptions, payload) = limits_of(&auth, account);
        let platform = account == "PLATFORM";
        if platform {
            assert!(connections < 400, "reader: {connections} connections");
            assert!(
                connections * subscriptions < 20_000,
                "reader: {connections} x {subscriptions} subscriptions"
            );
        }
        let attempts = if platform { 400 } else { connections + 16 };
        connections_are_limited(port, account, users, connections, attempts).await;
        for user in users {
            let wanted = if platform {
                20_000
            } else {
                subscriptions + 100
            };
            subscriptions_are_limited(port, user, subscriptions, wanted).await;
            payload_is_limited(port, user, payload).await;
        }
    }
    arbiter_jetstream_is_limited(&auth, &url).await;
}

/// Connections as `users` in turn, `attempts` of them: the first `limit` are let in, the rest
/// refused; and once one closes, one more is let in.
async fn connections_are_limited(
    port: u16,
    account: &str,
    users: &[&str],
    limit: usize,
    attempts: usize,
) {
    let mut open = Vec::new();
    let mut refused = Vec::new();
    for i in 0..attempts {
        match Wire::connect(port, users[i % users.len()]) {
            Ok(w) => open.push(w),
            Err(e) => refused.push(e),
        }
    }
    eprintln!(
        "{account}: {} of {attempts} connections let in, {} refused",
        open.len(),
        refused.len()
    );
    assert_eq!(open.len(), limit, "{account}: {refused:?}");
    assert!(
        refused
            .iter()
            .all(|e| e.contains("maximum account active connections exceeded")),
        "{account}: {refused:?}"
    );
    drop(open.pop());
    let again = wire_when_room(port, users[0]).await;
    drop(open);
    drop(again);
}

/// `wanted` subscriptions on one connection as `user` (on its own reply subjects): all but
/// the first `limit` refused, the connection kept.
async fn subscriptions_are_limited(port: u16, user: &str, limit: usize, wanted: usize) {
    let mut w = wire_when_room(port, user).await;
    let mut subs = String::new();
    for i in 0..wanted {
        // Its own replies; the listener, which has none, the verdicts.
        let subject = match user {
            "listener" => shogi_proto::VERDICT_NOTICES.to_owned(),
            _ => format!("_INBOX.{user}.limits.{i}"),
        };
        subs.push_str(&format!("SUB {subject} {i}\r\n"));
    }
    subs.push_str("PING\r\n");
    w.send(subs.as_bytes());
    let errors = w.until_pong();
    eprintln!("{user}: {} of {wanted} subscriptions refused", errors.len());
    assert_eq!(errors.len(), wanted - limit, "{user}");
    assert!(
        errors
            .iter()
            .all(|e| e.contains("maximum subscriptions exceeded")),
        "{user}: {:?}",
        &errors[..errors.len().min(3)]
    );
}

/// A publish of `limit` bytes as `user` (on a subject it may publish on) passes; one of a byte
/// more ends the connection. The listener may publish nothing: its publish of `limit` bytes is
/// refused as a permissions violation, the connection kept.
async fn payload_is_limited(port: u16, user: &str, limit: usize) {
    let subject = match user {
        "admin" => "$JS.API.INFO",
        "reader" => "JS.ARBITER.API.STREAM.MSG.GET.SHOGI_GAMES",
        "csa" => "csa.limits",
        "listener" => "JS.ARBITER.API.STREAM.MSG.GET.SHOGI_GAMES",
        _ => "shogi.aside.limits",
    };
    for (size, accepted) in [(limit, true), (limit + 1, false)] {
        let mut w = wire_when_room(port, user).await;
        let mut publish = format!("PUB {subject} {size}\r\n").into_bytes();
        publish.extend(std::iter::repeat_n(b'x', size));
        publish.extend(b"\r\nPING\r\n");
        w.send(&publish);
        let errors = w.until_pong();
        if accepted && user == "listener" {
            assert!(
                errors.len() == 1 && errors[0].contains("Permissions Violation for Publish"),
                "{user}: {size} bytes: {errors:?}"
            );
        } else if accepted {
            assert!(errors.is_empty(), "{user}: {size} bytes: {errors:?}");
        } else {
            assert!(
                errors
                    .iter()
                    .any(|e| e.contains("Maximum Payload Violation")),
                "{user}: {size} bytes: {errors:?}"
            );
        }
    }
}

/// The streams' account: one stream, one consumer on `SHOGI_GAMES`, and a consumer's ack
/// pending past its JetStream limits are refused to admin.
async fn arbiter_jetstream_is_limited(auth: &str, url: &str) {
    let (admin_client, _) = client(url, "admin").await;
    let admin = async_nats::jetstream::new(admin_client);
    let jetstream_limit = |key: &str| -> usize {
        let block = &auth[auth
            .find("jetstream: {")
            .expect("ARBITER's JetStream limits")..];
        let block = &block[..block.find('}').unwrap()];
        block
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("no {key}"))
            .parse()
            .unwrap()
    };
    let (max_streams, max_consumers, max_ack_pending) = (
        jetstream_limit("max_streams"),
        jetstream_limit("max_consumers"),
        jetstream_limit("max_ack_pending"),
    );
    let mut made = 4; // SHOGI_GAMES, SHOGI_ASIDE, SHOGI_LEASES, KV_CSA_LOBBY
    let refusal = loop {
        let made_now = admin
            .create_stream(async_nats::jetstream::stream::Config {
                name: format!("LIMITS_{made}"),
                subjects: vec![format!("limits.{made}")],
                ..Default::default()
            })
            .await;
        match made_now {
            Ok(_) => made += 1,
            Err(e) => break e.to_string(),
        }
        assert!(made <= max_streams, "more than {max_streams} streams made");
    };
    assert_eq!(made, max_streams, "{refusal}");
    assert!(refusal.contains("maximum number of streams"), "{refusal}");
    let games = admin.get_stream(shogi_proto::STREAM).await.unwrap();
    let mut consumers = games.clone().info().await.unwrap().state.consumer_count;
    let durable = |name: String, ack_pending: i64| async_nats::jetstream::consumer::pull::Config {
        durable_name: Some(name),
        ack_policy: async_nats::jetstream::consumer::AckPolicy::Explicit,
        max_ack_pending: ack_pending,
        ..Default::default()
    };
    let refusal = games
        .create_consumer(durable("limits-ack".into(), max_ack_pending as i64 + 1))
        .await
        .expect_err("a consumer with more than the account's ack pending");
    assert!(refusal.to_string().contains("ack pending"), "{refusal}");
    let refusal = loop {
        match games
            .create_consumer(durable(format!("limits-{consumers}"), 1000))
            .await
        {
            Ok(_) => consumers += 1,
            Err(e) => break e.to_string(),
        }
        assert!(
            consumers <= max_consumers,
            "more than {max_consumers} consumers"
        );
    };
    assert_eq!(consumers, max_consumers, "{refusal}");
    assert!(refusal.contains("maximum consumers limit"), "{refusal}");
    eprintln!(
        "ARBITER: {made} streams, {consumers} consumers on {}, ack pending {max_ack_pending}: \
         one more of each refused",
        shogi_proto::STREAM
    );
}

/// A protocol client as `user`, waiting while the account's connections of a step before are
/// still being closed by the server.
async fn wire_when_room(port: u16, user: &str) -> Wire {
    let deadline = Instant::now() + test_support::patience(Duration::from_secs(10));
    loop {
        match Wire::connect(port, user) {
            Ok(w) => return w,
            Err(e) => assert!(Instant::now() < deadline, "{user}: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A worker's password stolen, and a validator killed at the worst moment: a second client
/// with the judge's password takes the judge's deliveries (in each push consumer's queue
/// group, or pulling each pull consumer, as on nats-server 2.10) and answers every delivery
/// it gets with `+TERM` (the judge never sees those moves, so never announces them), and for half the games the validator that stored the deciding move died before it
/// recorded the verdict on `.result` (the move written into the log as the validator writes
/// it, as the validator's user, and nothing after). Every game's verdict is on `.result` all
/// the same, once: the running validator's sweep records what each log decides (docs/rules.md
/// section 10), with no announcement to check.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thief_on_the_judges_queue_and_a_validator_killed_lose_no_verdict() {
    let (_nats, url) = applied_server();
    let dir = tempfile::Builder::new()
        .prefix("arbiter-thief-")
        .tempdir()
        .unwrap()
        .keep();
    eprintln!("logs in {}", dir.display());
    let (stolen, thief_task) = steal_deliveries(&url, "judge", "impasse-judge").await;

    let port = free_port();
    let mut validator_env = user_env("validator");
    validator_env.push(("MOVE_VALIDATOR_SWEEP_SECS".into(), "1".into()));
    let _validator = Proc::start_with_env(
        "validator",
        &bin("move-validator"),
        &[
            "--listen".into(),
            format!("127.0.0.1:{port}"),
            "--nats-url".into(),
            url.clone(),
        ],
        &dir.join("validator.log"),
        &env_refs(&validator_env),
    );
    let _judge = Proc::start_with_env(
        "impasse-judge",
        &bin("impasse-judge"),
        &[
            "--nats-url".into(),
            url.clone(),
            "--health-listen".into(),
            format!("127.0.0.1:{}", free_port()),
            "--leases".into(),
        ],
        &dir.join("impasse-judge.log"),
        &env_refs(&user_env("judge")),
    );
    let addr = format!("127.0.0.1:{port}");
    arbiter_tests::wait_serving(&addr, DEADLINE.get()).await;
    let mut grpc = shogi_proto::v1::move_validator_client::MoveValidatorClient::new(
        tonic::transport::Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect_lazy(),
    );
    let (validator_raw, _) = client(&url, "validator").await;
    let validator_js = async_nats::jetstream::new(validator_raw);
    // Black mates at once with G*5b.
    let ids: Vec<String> = (0..12).map(|i| format!("kept-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        grpc.create_game(shogi_proto::v1::CreateGameRequest {
            ruleset: None,
            start: Some(shogi_proto::v1::StartPosition {
                start: Some(shogi_proto::v1::start_position::Start::Sfen(
                    "4k4/9/4G4/9/9/9/9/9/4K4 b G 1".into(),
                )),
            }),
            game_id: id.clone(),
            strict: false,
        })
        .await
        .unwrap_or_else(|e| panic!("create {id}: {e:?}"));
        if i % 2 == 0 {
            let answer = grpc
                .submit_move(shogi_proto::v1::SubmitMoveRequest {
                    game_id: id.clone(),
                    ply: 1,
                    usi: "G*5b".into(),
                    strict: false,
                    comment: String::new(),
                })
                .await
                .unwrap_or_else(|e| panic!("{id}: {e:?}"))
                .into_inner();
            assert!(answer.verdict.is_some(), "{id}: {answer:?}");
            continue;
        }
        // The validator that stored this move was killed before `.result`.
        store_as_validator(&validator_js, id, "G*5b").await;
    }

    let (admin, _) = client(&url, "admin").await;
    let games = async_nats::jetstream::new(admin)
        .get_stream(shogi_proto::STREAM)
        .await
        .unwrap();
    let held = |filter: String| {
        let games = games.clone();
        async move {
            let info = games.info_with_subjects(filter).await.unwrap();
            info.map(|r| r.unwrap())
                .filter(|(s, _)| std::future::ready(s.starts_with("shogi.game.kept-")))
                .collect::<Vec<(String, usize)>>()
                .await
        }
    };
    let deadline = Instant::now() + DEADLINE.get();
    let results = loop {
        let results = held(subject::result("*")).await;
        if results.len() == ids.len() || Instant::now() >= deadline {
            break results;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let announced = held(subject::verdict("*")).await.len();
    eprintln!(
        "the thief took {} deliveries; {announced} of {} games announced on .verdict; {} \
         recorded on .result",
        stolen.load(std::sync::atomic::Ordering::SeqCst),
        ids.len(),
        results.len()
    );
    thief_task.abort();
    assert!(
        stolen.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "the thief took no delivery: the test saw no theft"
    );
    for id in &ids {
        let on_result = results
            .iter()
            .find(|(s, _)| *s == subject::result(id))
            .map_or(0, |(_, n)| *n);
        assert_eq!(on_result, 1, "{id}: verdicts on .result");
        let m = games
            .get_last_raw_message_by_subject(&subject::result(id))
            .await
            .unwrap();
        let v = shogi_proto::event::decode_verdict(Some(shogi_proto::VERDICT_TYPE), &m.payload)
            .unwrap();
        assert_eq!(v.code_name, "checkmate", "{id}: {v:?}");
        assert_eq!(
            v.winner,
            shogi_proto::v1::Color::Black as i32,
            "{id}: {v:?}"
        );
    }
}

/// A thief with `user`'s password taking `role`'s deliveries and answering every one with
/// `+TERM`: a member of each push consumer's delivery queue group, or a puller of each pull
/// consumer (nats-server 2.10 keeps the workers' consumers pull: deploy/STREAMS.md, "Delivery
/// modes and server versions"), whichever the consumer is. How many game log entries it took,
/// and its task.
async fn steal_deliveries(
    url: &str,
    user: &str,
    role: &str,
) -> (
    Arc<std::sync::atomic::AtomicUsize>,
    tokio::task::JoinHandle<()>,
) {
    let (thief, _) = client(url, user).await;
    let js = async_nats::jetstream::with_prefix(thief.clone(), API_PREFIX);
    let games = js
        .get_stream(shogi_proto::STREAM)
        .await
        .unwrap_or_else(|e| panic!("stream info as {user}: {e}"));
    let mut deliveries: Vec<futures::stream::BoxStream<'static, async_nats::Message>> = Vec::new();
    for p in 0..shogi_proto::PARTITIONS {
        let name = shogi_proto::consumer::partition(role, p);
        let info = games
            .consumer_info(&name)
            .await
            .unwrap_or_else(|e| panic!("{name}: info as {user}: {e}"));
        if info.config.deliver_subject.is_some() {
            let sub = thief
                .queue_subscribe(arbiter_bus::deliver_subject(&name), name)
                .await
                .unwrap();
            deliveries.push(sub.boxed());
            continue;
        }
        let consumer: async_nats::jetstream::consumer::PullConsumer =
            games.get_consumer(&name).await.unwrap();
        let pulled = consumer
            .messages()
            .await
            .unwrap_or_else(|e| panic!("{name}: pull as {user}: {e}"))
            .filter_map(|m| std::future::ready(m.ok().map(|m| m.message)));
        deliveries.push(pulled.boxed());
    }
    thief.flush().await.unwrap();
    let stolen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let took = stolen.clone();
    let task = tokio::spawn(async move {
        let mut all = futures::stream::select_all(deliveries);
        while let Some(m) = all.next().await {
            let Some(reply) = m.reply else { continue };
            if subject::game_of_log(&m.subject).is_some() {
                took.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            let _ = thief.publish(reply, "+TERM".into()).await;
        }
    });
    (stolen, task)
}

/// Stores ply 1, `usi`, in game `id`'s log as the validator writes it (its message id, type
/// and expected sequence), and nothing after: what a validator killed between the move and
/// `.result` leaves.
async fn store_as_validator(js: &async_nats::jetstream::Context, id: &str, usi: &str) {
    let received_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let entry = shogi_proto::event::LogEntry::Move(shogi_proto::v1::MoveAccepted {
        game_id: id.to_owned(),
        ply: 1,
        usi: usi.into(),
        sfen_after: String::new(),
        gives_check: true,
        position_hash: 0,
        received_unix_ms,
        comment: String::new(),
    })
    .envelope(0);
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-Msg-Id", entry.msg_id.as_str());
    headers.insert("Nats-Expected-Last-Subject-Sequence", "0");
    headers.insert(shogi_proto::MESSAGE_TYPE_HEADER, entry.message_type);
    js.publish_with_headers(entry.subject.clone(), headers, entry.payload.clone().into())
        .await
        .unwrap()
        .await
        .unwrap_or_else(|e| panic!("{id}: the deciding move not stored: {e}"));
}
