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
