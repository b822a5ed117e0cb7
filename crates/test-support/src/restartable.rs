//! A nats-server that can be killed, paused and started again on the same port and store.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::free_port;

/// A nats-server with JetStream on a fixed loopback port and store directory, so that it can
/// be killed and started again on the same store, as a crashed server restarts.
#[derive(Debug)]
pub struct Nats {
    child: Option<Child>,
    port: u16,
    store: PathBuf,
    jetstream: bool,
}

const NATS_READY: crate::Deadline = crate::Deadline::secs(30);

impl Nats {
    /// Starts one on a free port with its store in `store`.
    pub fn start(store: &Path) -> Nats {
        Nats::start_with_jetstream(store, true)
    }

    /// Starts one without JetStream: clients connect, and every JetStream API request goes
    /// unanswered, as on a server whose JetStream is not up yet. [`Nats::enable_jetstream`]
    /// turns it on.
    pub fn start_without_jetstream(store: &Path) -> Nats {
        Nats::start_with_jetstream(store, false)
    }

    fn start_with_jetstream(store: &Path, jetstream: bool) -> Nats {
        let mut n = Nats {
            child: None,
            port: free_port(),
            store: store.to_owned(),
            jetstream,
        };
        n.restart();
        n
    }

    /// Restarts the server with JetStream on, on the same port and store.
    pub fn enable_jetstream(&mut self) {
        self.kill();
        self.jetstream = true;
        self.restart();
    }

    /// The server's process id.
    ///
    /// # Panics
    ///
    /// When the server was killed and not started again.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("nats-server running").id()
    }

    /// The state of each of the server's threads now, counted (`T x14` when it is paused):
    /// for a test's message when a paused server seems to have answered.
    ///
    /// # Panics
    ///
    /// When the server was killed and not started again.
    pub fn thread_states(&self) -> String {
        thread_states(self.pid())
    }

    /// The client URL.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// `kill -STOP`: the server stops answering, its connections stay open. Returns once every
    /// thread of the server is stopped.
    ///
    /// `kill` returning is not enough: Linux wakes one thread of a multi-threaded process to
    /// start a group stop, and the others run on until that thread is scheduled. On busy cores
    /// that took tens of milliseconds, in which the "paused" server stored and acknowledged a
    /// write (the process was still in state `R` after `kill` had returned).
    ///
    /// # Panics
    ///
    /// When the server is not stopped within 30 seconds.
    pub fn pause(&self) {
        self.signal("-STOP");
        let pid = self.pid();
        let deadline = std::time::Instant::now() + NATS_READY.get();
        while !all_threads_stopped(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "nats-server {pid} not stopped within {NATS_READY:?} of SIGSTOP"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
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
        // The one every other test server runs: `$NATS_SERVER_BIN`, else the pinned one, never
        // a stale system package (Debian's 2.9.10 answered `cargo test` run without the
        // Makefile's `NATS_SERVER_BIN` in a way async-nats could not read).
        let bin = crate::nats_server_binary();
        // In a process group of its own: a paused server must stay paused. In the test's group,
        // the kernel continued it (SIGHUP then SIGCONT to every member) when the group became
        // orphaned with a stopped member, as when the shell that started the test run exited
        // (a run in the background); the "paused" server then stored and acknowledged a write
        // (`thread_states`: `T x8` when the move was sent, `R x2, S x6` when it was answered).
        let mut child = Command::new(&bin)
            .process_group(0)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .args(if self.jetstream {
                vec!["-js".as_ref(), "-sd".as_ref(), self.store.as_os_str()]
            } else {
                vec![]
            })
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
        rx.recv_timeout(NATS_READY.get())
            .unwrap_or_else(|_| panic!("nats-server not ready within {NATS_READY:?}"));
        self.child = Some(child);
    }
}

/// The state letter of each thread of process `pid` now (`T`: stopped; `?` for a thread whose
/// state could not be read), from `/proc/<pid>/task`; `None` when the process is not there.
fn thread_letters(pid: u32) -> Option<Vec<String>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    Some(
        tasks
            .flatten()
            .map(|task| stat_field(&task.path().join("stat"), 0).unwrap_or_else(|| "?".into()))
            .collect(),
    )
}

/// Field `n` of a `/proc` `stat` file counted from the one after the command name (0: the
/// state, 2: the process group), which is in parentheses and may hold spaces.
fn stat_field(path: &Path, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(path).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(n).map(str::to_owned)
}

/// The state letter of each thread of process `pid` now, counted: `T x14`, or `T x13, R x1`;
/// `gone` when the process is not there.
pub fn thread_states(pid: u32) -> String {
    let Some(letters) = thread_letters(pid) else {
        return "gone".into();
    };
    let mut counts = std::collections::BTreeMap::<String, u32>::new();
    for letter in letters {
        *counts.entry(letter).or_default() += 1;
    }
    let parts: Vec<String> = counts.iter().map(|(s, n)| format!("{s} x{n}")).collect();
    parts.join(", ")
}

/// Whether every thread of process `pid` is stopped (state `T`, from `/proc/<pid>/task`).
pub fn all_threads_stopped(pid: u32) -> bool {
    thread_letters(pid).is_some_and(|letters| letters.iter().all(|l| l == "T"))
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// With every core busy (two spinning threads a core, as `tools/busy.sh` makes), a paused
    /// server is stopped when `pause` returns, every time: the log_integrity test's paused
    /// server acknowledged a write when it was not (issue 18).
    #[test]
    fn a_paused_server_is_stopped_when_pause_returns_on_busy_cores() {
        let dir = tempfile::tempdir().unwrap();
        let nats = Nats::start(&dir.path().join("store"));
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let spinners: Vec<_> = (0..2 * cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        let mut running_after_pause = 0;
        for _ in 0..20 {
            nats.pause();
            if !all_threads_stopped(nats.pid()) {
                running_after_pause += 1;
            }
            nats.resume();
        }
        stop.store(true, Ordering::Relaxed);
        for s in spinners {
            s.join().unwrap();
        }
        assert_eq!(
            running_after_pause, 0,
            "pauses that returned before the server stopped"
        );
        // And it answers again once resumed.
        std::net::TcpStream::connect(("127.0.0.1", nats.port)).expect("resumed server accepts");
    }

    /// A paused server stays paused when the test's process group is continued, as the kernel
    /// continues every member of a group that becomes orphaned with a stopped member (the
    /// shell that started a test run in the background exiting). In the test's group, the
    /// log_integrity test's paused server was so continued, and stored a move it was paused to
    /// leave unanswered (once in 30 rounds beside `tools/busy.sh`, the round that started as
    /// the starting shell exited).
    #[test]
    fn a_paused_server_stays_paused_when_the_tests_process_group_is_continued() {
        let dir = tempfile::tempdir().unwrap();
        let nats = Nats::start(&dir.path().join("store"));
        nats.pause();
        // What the kernel sends an orphaned group with a stopped member, but the SIGHUP (which
        // would stop the run that this test is part of).
        let own_group = stat_field(Path::new("/proc/self/stat"), 2).expect("this process's group");
        let status = Command::new("kill")
            .args(["-CONT", "--", &format!("-{own_group}")])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -CONT -{own_group}");
        // A SIGCONT wakes a stopped process's threads within the `kill` call itself.
        let states = nats.thread_states();
        nats.resume();
        assert!(
            states.split(", ").all(|s| s.starts_with("T ")),
            "the paused server ran again when its test's process group was continued: {states}"
        );
    }
}
