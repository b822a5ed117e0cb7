//! A nats-server that can be killed, paused and started again on the same port and store.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A nats-server with JetStream on a fixed loopback port and store directory, so that it can
/// be killed and started again on the same store, as a crashed server restarts.
#[derive(Debug)]
pub struct Nats {
    child: Option<Child>,
    port: u16,
    store: PathBuf,
}

const NATS_READY: Duration = Duration::from_secs(30);

impl Nats {
    /// Starts one on a free port with its store in `store`.
    pub fn start(store: &Path) -> Nats {
        let mut n = Nats {
            child: None,
            port: free_port(),
            store: store.to_owned(),
        };
        n.restart();
        n
    }

    /// The client URL.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// `kill -STOP`: the server stops answering, its connections stay open.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// `kill -CONT` after [`Nats::pause`].
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let child = self.child.as_ref().expect("nats-server running");
        let status = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal}");
    }

    /// `kill -9` of the server.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server (again) on the same port and store, and waits until it says it is
    /// ready (its log, not a sleep).
    ///
    /// # Panics
    ///
    /// When nats-server is not installed or not ready within 30 seconds.
    pub fn restart(&mut self) {
        let bin = std::env::var_os("NATS_SERVER_BIN")
            .map(PathBuf::from)
            .or_else(|| {
                [
                    "/usr/local/bin/nats-server",
                    "/usr/sbin/nats-server",
                    "/usr/bin/nats-server",
                ]
                .iter()
                .map(PathBuf::from)
                .find(|p| p.is_file())
            })
            .unwrap_or_else(|| PathBuf::from("nats-server"));
        let mut child = Command::new(&bin)
            .args([
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-js",
                "-sd",
            ])
            .arg(&self.store)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {}: {e}; install nats-server (apt-get install -y nats-server) \
                     or set NATS_SERVER_BIN: this test is not skipped",
                    bin.display()
                )
            });
        let stderr = child.stderr.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stderr).lines();
            for line in lines.by_ref().map_while(Result::ok) {
                if line.contains("Server is ready") {
                    let _ = tx.send(());
                    break;
                }
            }
            // Keep draining so that the server never blocks on a full pipe.
            for _ in lines {}
        });
        rx.recv_timeout(NATS_READY)
            .unwrap_or_else(|_| panic!("nats-server not ready within {NATS_READY:?}"));
        self.child = Some(child);
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
    }
}
