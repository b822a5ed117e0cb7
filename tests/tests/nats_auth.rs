//! The service binaries against a nats-server that wants credentials: each one refused by it
//! exits at once with the reason (not a retry loop), and one given the nkey seed file connects.

use arbiter_tests::bin;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use test_support::NatsServer;

/// A refused binary must have exited well within this.
const DEADLINE: test_support::Deadline = test_support::Deadline::secs(15);

/// Runs `cmd` to its end, or fails the test if it is still running after [`DEADLINE`]: the
/// output, from a thread, so that a hung binary fails the test instead of hanging it.
fn run_to_exit(name: &str, mut cmd: Command) -> std::process::Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {name}: {e}"));
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(DEADLINE.get()) {
        Ok(output) => output.expect("wait for the binary"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("{name} still running after {DEADLINE:?}: refused, it must exit");
        }
    }
}

fn server_with_nkey_user() -> (NatsServer, nkeys::KeyPair) {
    let user = nkeys::KeyPair::new_user();
    let server = NatsServer::start_with_config(&format!(
        "authorization {{ users: [ {{ nkey: {} }} ] }}\n",
        user.public_key()
    ));
    (server, user)
}

#[test]
fn every_service_refused_by_nats_exits_with_the_reason() {
    let (nats, _user) = server_with_nkey_user();
    let cases: [(&str, &[&str]); 4] = [
        ("move-validator", &["--listen", "127.0.0.1:0"]),
        ("repetition-watcher", &["--health-listen", "127.0.0.1:0"]),
        ("impasse-judge", &["--health-listen", "127.0.0.1:0"]),
        ("shogi-arbiter", &["serve", "--listen", "127.0.0.1:0"]),
    ];
    for (name, args) in cases {
        let mut cmd = Command::new(bin(name));
        cmd.args(args)
            .args(["--nats-url", nats.url()])
            .env("NO_COLOR", "1");
        // A wrong user and password from the environment, for one of them; none for the
        // others.
        if name == "impasse-judge" {
            cmd.env("NATS_USER", "intruder")
                .env("NATS_PASSWORD", "guessed-password");
        }
        let out = run_to_exit(name, cmd);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: {stderr}");
        assert!(
            stderr.contains("refused by") && stderr.contains("(authorization)"),
            "{name}: {stderr}"
        );
        // The log goes to standard output for the services, to standard error for `serve`;
        // its format is the telemetry's, so only the message is looked for.
        let log = format!("{}{stderr}", String::from_utf8_lossy(&out.stdout));
        assert!(log.contains("nats refused the connection"), "{name}: {log}");
        assert!(!log.contains("guessed-password"), "{name}: {log}");
    }
}

#[test]
fn a_service_with_the_nkey_seed_file_connects() {
    let (nats, user) = server_with_nkey_user();
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("user.nk");
    std::fs::write(&seed, user.seed().unwrap()).unwrap();
    // `serve` prints the address it serves on once it is connected and bound.
    let mut child = Command::new(bin("shogi-arbiter"))
        .args(["serve", "--listen", "127.0.0.1:0", "--nats-url", nats.url()])
        .env("NATS_NKEY_SEED_FILE", &seed)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start shogi-arbiter serve");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(DEADLINE.get());
    let _ = child.kill();
    let _ = child.wait();
    let line = line.expect("serve printed its address");
    assert!(line.trim().starts_with("127.0.0.1:"), "{line:?}");
}

#[test]
fn a_bad_seed_file_is_refused_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("bad.nk");
    std::fs::write(&seed, "not a seed\n").unwrap();
    for (name, args) in [
        ("move-validator", &["--listen", "127.0.0.1:0"][..]),
        ("repetition-watcher", &[][..]),
        ("impasse-judge", &[][..]),
        ("shogi-arbiter", &["serve"][..]),
    ] {
        let mut cmd = Command::new(bin(name));
        // Nothing listens on port 1: the check must come before any connection.
        cmd.args(args)
            .args(["--nats-url", "nats://127.0.0.1:1"])
            .arg("--nats-nkey-seed-file")
            .arg(&seed);
        let out = run_to_exit(name, cmd);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name}: {stderr}");
        assert!(stderr.contains("invalid configuration"), "{name}: {stderr}");
        assert!(stderr.contains("bad.nk"), "{name}: {stderr}");
    }
}
