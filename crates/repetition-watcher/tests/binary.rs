//! The `repetition-watcher` binary checks its configuration before it connects or binds
//! anything.

use std::process::Command;

#[test]
fn a_bad_lease_holder_or_lease_time_is_refused_before_anything_starts() {
    for (flag, value, message) in [
        ("--holder", "a.b", "holder \"a.b\""),
        ("--lease-ttl-ms", "10", "lease time under 300 ms"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_repetition-watcher"))
            .args(["--leases", flag, value])
            // Nothing listens there: the check must come first.
            .args(["--nats-url", "nats://127.0.0.1:1"])
            .output()
            .expect("run repetition-watcher");
        assert!(!out.status.success(), "{flag} {value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{flag} {value}: {stderr}");
    }
}
