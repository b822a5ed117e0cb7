//! The `move-validator` binary: config checked before binding, clean stop on SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use test_support::NatsServer;

const BIN: &str = env!("CARGO_BIN_EXE_move-validator");

#[test]
fn bad_config_exits_with_a_message_before_binding() {
    let out = Command::new(BIN)
        .args(["--listen", "127.0.0.1:0", "--nats-url", "http://example"])
        .env_remove("NATS_URL")
        .output()
        .expect("run move-validator");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("invalid configuration"), "{stderr}");
    assert!(stderr.contains("nats url"), "{stderr}");
    let out = Command::new(BIN)
        .args(["--listen", "not-an-address"])
        .output()
        .expect("run move-validator");
    assert!(!out.status.success());
    // The server's request timeout is a setting, and a zero one is refused.
    let out = Command::new(BIN)
        .args(["--listen", "127.0.0.1:0", "--request-timeout-secs", "0"])
        .env_remove("NATS_URL")
        .output()
        .expect("run move-validator");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("request timeout must be positive"),
        "{stderr}"
    );
    // A TLS certificate without its key is refused by the flags themselves.
    let out = Command::new(BIN)
        .args(["--listen", "127.0.0.1:0", "--tls-cert", "server.pem"])
        .env_remove("MOVE_VALIDATOR_TLS_KEY")
        .output()
        .expect("run move-validator");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--tls-key"), "{stderr}");
}

#[test]
fn serves_then_stops_on_sigterm() {
    let nats = NatsServer::start();
    let mut child = Command::new(BIN)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--nats-url",
            nats.url(),
            "--grace-secs",
            "5",
        ])
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn move-validator");
    // Readiness from the log line, not a sleep.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Duration::from_secs(30);
    loop {
        let line = rx
            .recv_timeout(deadline)
            .expect("the server logs that it serves");
        if line.contains("move-validator serving") {
            break;
        }
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(status.success());
    let mut saw_drain = false;
    while let Ok(line) = rx.recv_timeout(deadline) {
        saw_drain |= line.contains("shutting down");
    }
    let exit = child.wait().expect("wait");
    assert!(exit.success(), "{exit:?}");
    assert!(saw_drain, "the drain is logged");
}

/// No secret is a flag's value (the process list shows every flag), `--help` prints no secret
/// taken from the environment, and credentials written in the NATS URL are refused with what
/// to set instead.
#[test]
fn secrets_come_from_the_environment_or_files_only() {
    for flag in ["--auth-token", "--nats-token", "--nats-password"] {
        let out = Command::new(BIN)
            .args([flag, "hunter2"])
            .output()
            .expect("run move-validator");
        assert!(!out.status.success(), "{flag} is accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("unexpected argument"), "{flag}: {stderr}");
    }
    let out = Command::new(BIN)
        .arg("--help")
        .env("MOVE_VALIDATOR_AUTH_TOKEN", "hunter2-token")
        .env("NATS_TOKEN", "hunter2-nats")
        .env("NATS_PASSWORD", "hunter2-password")
        .output()
        .expect("run move-validator --help");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(!help.contains("hunter2"), "{help}");
    assert!(help.contains("MOVE_VALIDATOR_AUTH_TOKEN") && help.contains("NATS_PASSWORD"));
    let out = Command::new(BIN)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--nats-url",
            "nats://arbiter:hunter2@127.0.0.1:1",
        ])
        .env_remove("NATS_URL")
        .output()
        .expect("run move-validator");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("carries credentials"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}
