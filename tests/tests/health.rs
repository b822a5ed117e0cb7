//! The watcher and the judge binaries: grpc.health.v1 SERVING once consuming, and a clean exit
//! on SIGTERM.

use arbiter_tests::{Nats, Proc, bin, free_port};
use std::time::Duration;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

const DEADLINE: Duration = Duration::from_secs(20);

async fn serving(port: u16, service: &str) -> bool {
    let Ok(channel) = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .expect("an endpoint")
        .connect()
        .await
    else {
        return false;
    };
    let mut client = HealthClient::new(channel);
    client
        .check(HealthCheckRequest {
            service: service.to_owned(),
        })
        .await
        .is_ok_and(|r| r.into_inner().status == ServingStatus::Serving as i32)
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
        let deadline = tokio::time::Instant::now() + DEADLINE;
        while !serving(port, name).await {
            assert!(tokio::time::Instant::now() < deadline, "{name} not SERVING");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let status = tokio::task::block_in_place(|| p.terminate(DEADLINE));
        assert!(status.is_some_and(|s| s.success()), "{name}: {status:?}");
    }
}
