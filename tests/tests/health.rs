//! The watcher and the judge binaries: grpc.health.v1 SERVING once consuming, and a clean exit
//! on SIGTERM.

use arbiter_tests::{Nats, Proc, bin, free_port};
use std::time::Duration;
use tonic_health::pb::health_check_response::ServingStatus;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(20);

async fn serving(port: u16, service: &str) -> bool {
    status(port, service).await == Some(ServingStatus::Serving)
}

/// What the health server on `port` says of `service`; `None` when it does not answer.
async fn status(port: u16, service: &str) -> Option<ServingStatus> {
    arbiter_tests::health(&format!("127.0.0.1:{port}"), service).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watcher_and_judge_report_health_and_stop_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let nats = Nats::start(&dir.path().join("store"));
    for name in ["repetition-watcher", "impasse-judge"] {
        let port = free_port();
        let args = vec![
            "--nats-url".to_owned(),
            nats.url(),
            "--health-listen".to_owned(),
            format!("127.0.0.1:{port}"),
        ];
        let mut p = Proc::start(
            name,
            &bin(name),
            &args,
            &dir.path().join(format!("{name}.log")),
        );
        let deadline = tokio::time::Instant::now() + DEADLINE.get();
        while !serving(port, name).await {
            assert!(tokio::time::Instant::now() < deadline, "{name} not SERVING");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let status = tokio::task::block_in_place(|| p.terminate(DEADLINE.get()));
        assert!(status.is_some_and(|s| s.success()), "{name}: {status:?}");
    }
}

/// A service started while JetStream does not answer (a nats-server without it: every API
/// request goes unanswered) waits, saying so in its log, the workers with their health served
/// and NOT_SERVING; once JetStream answers, each sets its streams up and serves. Before (issue
/// 18), both watchers of the cluster test exited at start on "jetstream request timed out",
/// and a worker's health was not served until its streams were set up. The validator answers
/// nothing until then (calls wait on its listener, as they always did): it is checked to wait,
/// not exit, and then to serve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_started_before_jetstream_answers_waits_then_serves() {
    const WAITING: &str = "JetStream cannot set the stream up yet";
    let dir = tempfile::tempdir().unwrap();
    let mut nats = Nats::start_without_jetstream(&dir.path().join("store"));
    let mut services = Vec::new();
    for (name, service, flag) in [
        (
            "repetition-watcher",
            "repetition-watcher",
            "--health-listen",
        ),
        ("impasse-judge", "impasse-judge", "--health-listen"),
        ("move-validator", move_validator::SERVICE_NAME, "--listen"),
    ] {
        let port = free_port();
        let log = dir.path().join(format!("{name}.log"));
        let args = vec![
            "--nats-url".to_owned(),
            nats.url(),
            flag.to_owned(),
            format!("127.0.0.1:{port}"),
        ];
        let p = Proc::start_with_env(name, &bin(name), &args, &log, &[("RUST_LOG", "info")]);
        services.push((service, port, log, p));
    }
    let text = |log: &std::path::Path| std::fs::read_to_string(log).unwrap_or_default();
    for (service, port, log, p) in &mut services {
        let is_worker = *service != move_validator::SERVICE_NAME;
        let deadline = tokio::time::Instant::now() + DEADLINE.get();
        loop {
            if text(log).contains(WAITING)
                && (!is_worker || status(*port, service).await == Some(ServingStatus::NotServing))
            {
                break;
            }
            assert!(
                p.is_running(),
                "{service} exited while JetStream did not answer:\n{}",
                text(log)
            );
            assert!(
                tokio::time::Instant::now() < deadline,
                "{service}: not waiting within {DEADLINE:?}:\n{}",
                text(log)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    tokio::task::block_in_place(|| nats.enable_jetstream());
    for (service, port, log, p) in &mut services {
        let deadline = tokio::time::Instant::now() + DEADLINE.get();
        while !serving(*port, service).await {
            assert!(
                p.is_running() && tokio::time::Instant::now() < deadline,
                "{service} not SERVING within {DEADLINE:?} of JetStream answering:\n{}",
                text(log)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let status = tokio::task::block_in_place(|| p.terminate(DEADLINE.get()));
        assert!(status.is_some_and(|s| s.success()), "{service}: {status:?}");
    }
}

/// The instance's health address, from its log: `health serving` names it.
fn health_port(log: &std::path::Path) -> Option<u16> {
    let text = std::fs::read_to_string(log).ok()?;
    let line = text.lines().find(|l| l.contains("health serving"))?;
    let addr = line.split("addr=Some(").nth(1)?.split(')').next()?;
    addr.rsplit(':').next()?.parse().ok()
}

/// Health tells the truth: two workers on one host with the default health address both come
/// up (each on a port of its own), each SERVING only while it consumes, NOT_SERVING while the
/// bus is down, and SERVING again once it is back; the validator likewise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_follows_the_bus_and_default_ports_do_not_collide() {
    let dir = tempfile::tempdir().unwrap();
    let mut nats = Nats::start(&dir.path().join("store"));
    let mut procs = Vec::new();
    let mut ports = Vec::new();
    for i in 0..2 {
        let log = dir.path().join(format!("watcher-{i}.log"));
        let args = vec![
            "--nats-url".to_owned(),
            nats.url(),
            "--instance".to_owned(),
            i.to_string(),
            "--instances".to_owned(),
            "2".to_owned(),
        ];
        // ARBITER_TEST_LOG is not needed: the address is logged at INFO, so ask for it.
        let p = Proc::start_with_env(
            "repetition-watcher",
            &bin("repetition-watcher"),
            &args,
            &log,
            &[("RUST_LOG", "info")],
        );
        procs.push(p);
        let deadline = tokio::time::Instant::now() + DEADLINE.get();
        let port = loop {
            if let Some(port) = health_port(&log) {
                break port;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "watcher {i}: no health address logged"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        ports.push(port);
    }
    assert_ne!(ports[0], ports[1], "two instances, two health ports");
    let validator_port = free_port();
    procs.push(Proc::start(
        "move-validator",
        &bin("move-validator"),
        &[
            "--listen".to_owned(),
            format!("127.0.0.1:{validator_port}"),
            "--nats-url".to_owned(),
            nats.url(),
        ],
        &dir.path().join("validator.log"),
    ));
    let checks = [
        (ports[0], "repetition-watcher"),
        (ports[1], "repetition-watcher"),
        (validator_port, "shogi.v1.MoveValidator"),
    ];
    let until = |want: bool| async move {
        let deadline = tokio::time::Instant::now() + DEADLINE.get();
        for (port, service) in checks {
            while serving(port, service).await != want {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{service} on {port}: not {}",
                    if want { "SERVING" } else { "NOT_SERVING" }
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    until(true).await;
    nats.kill();
    until(false).await;
    nats.restart();
    until(true).await;
    for mut p in procs {
        let status = tokio::task::block_in_place(|| p.terminate(DEADLINE.get()));
        assert!(
            status.is_some_and(|s| s.success()),
            "{}: {status:?}",
            p.name()
        );
    }
}
