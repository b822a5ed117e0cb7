//! Helpers for the black-box tests: the workspace's binaries found next to the test, spawned
//! and killed; a nats-server that can be restarted on the same port and store directory; the
//! scripted games with their known endings.
//!
//! The binaries are the ones `cargo test --workspace` builds (every service package has an
//! integration test, so cargo builds its binary first). A missing binary fails the test with
//! what to run; nothing is skipped.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub mod clock;
pub mod engines;
pub mod games;
pub mod hostile;
pub mod play;

pub use test_support::{Nats, free_port};

/// The path of the workspace binary `name`, built by cargo next to this test.
///
/// # Panics
///
/// When it is not built, with the command that builds it.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps/<test>");
    let path = dir.join(name);
    assert!(
        path.is_file(),
        "{} is not built: run `cargo test --workspace` or `cargo build --bins` first",
        path.display()
    );
    path
}

/// Starts two of each service binary against NATS at `url`, each logging to a file in `dir`:
/// two move-validators on free loopback ports, and two each of the repetition-watcher and the
/// impasse-judge. `common` is added to every service's flags; `share(name, i)` gives worker `i`'s
/// way of sharing the partitions (a fixed share or a lease). Returns the processes and the
/// validators' ports.
pub fn start_services(
    dir: &Path,
    url: &str,
    common: &[&str],
    share: impl Fn(&str, usize) -> Vec<String>,
) -> (Vec<Proc>, Vec<u16>) {
    let common: Vec<String> = common.iter().map(|s| (*s).to_owned()).collect();
    let mut procs = Vec::new();
    let mut validator_ports = Vec::new();
    for i in 0..2 {
        let port = free_port();
        validator_ports.push(port);
        let args = [
            vec![
                "--listen".into(),
                format!("127.0.0.1:{port}"),
                "--nats-url".into(),
                url.to_owned(),
                "--grace-secs".into(),
                "1".into(),
            ],
            common.clone(),
        ]
        .concat();
        procs.push(Proc::start(
            &format!("validator-{i}"),
            &bin("move-validator"),
            &args,
            &dir.join(format!("validator-{i}.log")),
        ));
    }
    for name in ["repetition-watcher", "impasse-judge"] {
        for i in 0..2 {
            let args = [
                vec![
                    "--nats-url".into(),
                    url.to_owned(),
                    "--health-listen".into(),
                    format!("127.0.0.1:{}", free_port()),
                    "--ack-wait-ms".into(),
                    "1000".into(),
                ],
                share(name, i),
                common.clone(),
            ]
            .concat();
            procs.push(Proc::start(
                &format!("{name}-{i}"),
                &bin(name),
                &args,
                &dir.join(format!("{name}-{i}.log")),
            ));
        }
    }
    (procs, validator_ports)
}

/// A worker's fixed share of the partitions: instance `i` of 2.
pub fn fixed_share(i: usize) -> Vec<String> {
    vec![
        "--instance".into(),
        i.to_string(),
        "--instances".into(),
        "2".into(),
    ]
}

/// Sends SIGTERM to `child` and waits, polling, for it to exit within `deadline`.
///
/// # Panics
///
/// When it does not exit in time.
pub async fn terminate(child: &mut Child, deadline: Duration) -> std::process::ExitStatus {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = std::time::Instant::now() + deadline;
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no exit after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A spawned process, killed (SIGKILL) on drop.
#[derive(Debug)]
pub struct Proc {
    name: String,
    program: PathBuf,
    args: Vec<String>,
    log: PathBuf,
    env: Vec<(String, String)>,
    child: Option<Child>,
}

impl Proc {
    /// Starts `program args`, its output appended to `log`.
    pub fn start(name: &str, program: &Path, args: &[String], log: &Path) -> Proc {
        Proc::start_with_env(name, program, args, log, &[])
    }

    /// As [`Proc::start`], with environment variables `env` set (over the defaults).
    pub fn start_with_env(
        name: &str,
        program: &Path,
        args: &[String],
        log: &Path,
        env: &[(&str, &str)],
    ) -> Proc {
        let mut p = Proc {
            name: name.to_owned(),
            program: program.to_owned(),
            args: args.to_vec(),
            log: log.to_owned(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            child: None,
        };
        p.restart();
        p
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts it again with the same arguments (after [`Proc::kill`]).
    pub fn restart(&mut self) {
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("open the log");
        let err = out.try_clone().expect("clone the log");
        let child = Command::new(&self.program)
            .args(&self.args)
            // ARBITER_TEST_LOG=info (or debug) when a run must be read afterwards.
            .env(
                "RUST_LOG",
                std::env::var("ARBITER_TEST_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", self.program.display()));
        self.child = Some(child);
    }

    /// `kill -9`, and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Whether it was started and has not exited.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// The value its command line gives `flag` (`--listen`, `--health-listen`), if any.
    pub fn arg(&self, flag: &str) -> Option<&str> {
        let at = self.args.iter().position(|a| a == flag)?;
        self.args.get(at + 1).map(String::as_str)
    }

    /// The process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Sends SIGTERM and waits up to `within` for it to exit; its exit status.
    pub fn terminate(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let mut c = self.child.take()?;
        let _ = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Ok(Some(status)) = c.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() > deadline {
                let _ = c.kill();
                let _ = c.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The first line `out` gives, read on a thread of its own, so that the caller can wait for it
/// with a deadline (`recv_timeout`); empty when `out` ends first.
pub fn first_line(out: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx
}

/// Starts `shogi-arbiter serve` on a free loopback port with `extra` flags; the process and the
/// address it serves on (its first line of output, read within 20 s).
///
/// # Panics
///
/// When it does not start or prints no address.
pub fn serve(extra: &[&str]) -> (std::process::Child, String) {
    let mut child = Command::new(bin("shogi-arbiter"))
        .args(["serve", "--listen", "127.0.0.1:0", "--grace-secs", "2"])
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start shogi-arbiter serve");
    // The first line is the address.
    let addr = first_line(child.stdout.take().expect("piped"))
        .recv_timeout(Duration::from_secs(20))
        .expect("the address line");
    let addr = addr.trim().to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr:?}");
    (child, addr)
}

/// What the grpc.health.v1 server at `addr` (`127.0.0.1:<port>`) says of `service` (`""`: the
/// server as a whole); `None` when it does not answer.
pub async fn health(
    addr: &str,
    service: &str,
) -> Option<tonic_health::pb::health_check_response::ServingStatus> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("an endpoint")
        .connect_timeout(Duration::from_secs(1))
        .timeout(Duration::from_secs(5))
        .connect()
        .await
        .ok()?;
    let answer = tonic_health::pb::health_client::HealthClient::new(channel)
        .check(tonic_health::pb::HealthCheckRequest {
            service: service.to_owned(),
        })
        .await
        .ok()?;
    tonic_health::pb::health_check_response::ServingStatus::try_from(answer.into_inner().status)
        .ok()
}

/// Waits until the health server at `addr` answers SERVING for the server as a whole, as a
/// readiness probe would, polling within `deadline`.
///
/// # Panics
///
/// When it is not SERVING by then.
pub async fn wait_serving(addr: &str, deadline: Duration) {
    let until = tokio::time::Instant::now() + deadline;
    loop {
        let status = health(addr, "").await;
        if status == Some(tonic_health::pb::health_check_response::ServingStatus::Serving) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "{addr} not SERVING within {deadline:?}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
