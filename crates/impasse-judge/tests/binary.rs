//! The `impasse-judge` binary checks its configuration before it connects or binds anything.

use std::process::Command;

#[test]
fn a_bad_instance_number_is_refused_before_anything_starts() {
    let out = Command::new(env!("CARGO_BIN_EXE_impasse-judge"))
        .args(["--instance", "2", "--instances", "2"])
        // Nothing listens there: the check must come first.
        .args(["--nats-url", "nats://127.0.0.1:1"])
        .output()
        .expect("run impasse-judge");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("instance 2 is not in 0..2"), "{stderr}");
}

#[test]
fn a_replica_count_jetstream_does_not_allow_is_refused_by_the_flags() {
    for replicas in ["0", "6"] {
        let out = Command::new(env!("CARGO_BIN_EXE_impasse-judge"))
            .args(["--stream-replicas", replicas])
            .args(["--nats-url", "nats://127.0.0.1:1"])
            .env_remove("NATS_STREAM_REPLICAS")
            .output()
            .expect("run impasse-judge");
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--stream-replicas") && stderr.contains("1..=5"),
            "{stderr}"
        );
    }
}
