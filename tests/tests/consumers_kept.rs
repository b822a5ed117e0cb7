//! The workers' durable consumers, as a careless operator meets them: consumers in memory on
//! fewer than three servers are refused (a restart of their servers loses them); a consumer
//! missing in bind mode (`ARBITER_STREAMS=bind`: the service never makes one) makes the
//! worker NOT_SERVING with one ERROR line, instead of a WARN every 250 ms a partition, until
//! `shogi-arbiter streams apply` makes it again.

use arbiter_tests::{Nats, Proc, bin, free_port};
use std::process::Command;
use std::time::Duration;
use tonic_health::pb::health_check_response::ServingStatus;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(30);

/// The ERROR a worker logs once when one of its consumers is missing.
const MISSING: &str = "a durable consumer of this service is missing or refused";
/// The WARN a worker logged for each try of a consumer it could not open.
const RETRYING: &str = "consumer unavailable, retrying";
/// The debug line of each quiet try of a missing consumer.
const QUIET_TRY: &str = "consumer unavailable for good";

#[test]
fn memory_consumers_below_three_replicas_are_refused_by_the_workers() {
    for name in ["repetition-watcher", "impasse-judge"] {
        for extra in [
            vec![],
            vec!["--stream-replicas", "3", "--consumer-replicas", "1"],
        ] {
            // Nothing listens there: the check comes before anything connects, and a worker
            // that did not check would wait for a server for ever.
            let mut child = Command::new(bin(name))
                .args([
                    "--nats-url",
                    "nats://127.0.0.1:1",
                    "--consumer-storage",
                    "memory",
                ])
                .args(&extra)
                .env_remove("NATS_STREAM_REPLICAS")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start the worker");
            let until = std::time::Instant::now() + DEADLINE.get();
            while child.try_wait().expect("wait").is_none() {
                if std::time::Instant::now() > until {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("{name} {extra:?}: still running after {DEADLINE:?}");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let out = child.wait_with_output().expect("the worker's output");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{name} {extra:?}");
            assert!(
                stderr.contains("memory needs three replicas or more, not 1")
                    && stderr.contains("restart"),
                "{name} {extra:?}: {stderr}"
            );
            assert_eq!(
                stderr.matches("three replicas").count(),
                1,
                "one error: {stderr}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_missing_in_bind_mode_makes_the_worker_not_serving_with_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let nats = Nats::start(&dir.path().join("store"));
    let url = nats.url();
    let apply = || {
        let out = Command::new(bin("shogi-arbiter"))
            .args(["streams", "apply", "--nats-url", &url])
            .output()
            .expect("run streams apply");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // The CSA front ends' lobby is made with the streams, once (docs/csa.md).
    for made in ["created", "present"] {
        let stdout = apply();
        let line = format!("stream KV_CSA_LOBBY: {made}");
        assert!(stdout.lines().any(|l| l == line), "{stdout}");
    }
    let port = free_port();
    let log = dir.path().join("impasse-judge.log");
    let _judge = Proc::start_with_env(
        "impasse-judge",
        &bin("impasse-judge"),
        &[
            "--nats-url".into(),
            url.clone(),
            "--health-listen".into(),
            format!("127.0.0.1:{port}"),
        ],
        &log,
        &[
            ("ARBITER_STREAMS", "bind"),
            ("RUST_LOG", "warn,arbiter_worker=debug"),
        ],
    );
    let addr = format!("127.0.0.1:{port}");
    arbiter_tests::wait_serving(&addr, DEADLINE.get()).await;

    // One partition's consumer goes, as a restart does to consumers kept in memory.
    let js = async_nats::jetstream::new(async_nats::connect(&url).await.unwrap());
    js.get_stream(shogi_proto::STREAM)
        .await
        .unwrap()
        .delete_consumer("impasse-judge-p3")
        .await
        .unwrap();
    let text = || std::fs::read_to_string(&log).unwrap_or_default();
    let until = tokio::time::Instant::now() + DEADLINE.get();
    loop {
        let status = arbiter_tests::health(&addr, "").await;
        // Looked for again, quietly, more than once.
        if status == Some(ServingStatus::NotServing) && text().matches(QUIET_TRY).count() >= 2 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "{status:?} after the consumer went; log:\n{}",
            text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let said = text();
    assert_eq!(said.matches(MISSING).count(), 1, "{said}");
    assert!(said.contains("impasse-judge-p3"), "{said}");
    assert_eq!(said.matches(RETRYING).count(), 0, "{said}");

    // Made again: the worker finds it and serves.
    let _ = apply();
    arbiter_tests::wait_serving(&addr, DEADLINE.get()).await;
    assert_eq!(text().matches(MISSING).count(), 1, "{}", text());
}
