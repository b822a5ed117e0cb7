//! shogi-server, the reference CSA server (floodgate's), from `../shared/third_party`: run by
//! Ruby as a daemon on a port the system picks, in a temporary directory, stopped on drop.

use crate::{Deadline, wait_for};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long shogi-server may take to start and listen, and to stop.
const READY: Deadline = Deadline::secs(30);

/// shogi-server as a daemon in a temporary directory (its records, logs and players file go
/// there), stopped on drop; its log is printed when the test fails.
#[derive(Debug)]
pub struct ShogiServer {
    port: u16,
    pid: u32,
    dir: tempfile::TempDir,
}

impl ShogiServer {
    /// shogi-server with `--max-moves max_moves` (0: no cap), event `test`, listening.
    ///
    /// # Panics
    ///
    /// When Ruby with webrick is missing (saying how to install it), or the server does not
    /// start and listen within its deadline.
    pub fn start(max_moves: u32) -> ShogiServer {
        require_ruby("webrick");
        let script = crate::shared("third_party/shogi-server/shogi-server");
        let dir = tempfile::tempdir().expect("a temporary directory");
        // `--daemon` puts records, logs and players.yaml in the directory given (else beside
        // the script) and detaches. Port 0: the system picks a free one, and WEBrick's start
        // line in the log names it with the daemon's pid.
        let out = Command::new("ruby")
            .arg(&script)
            .arg("--daemon")
            .arg(dir.path())
            .args(["--max-moves", &max_moves.to_string(), "test", "0"])
            .current_dir(dir.path())
            .output()
            .expect("run ruby shogi-server");
        assert!(
            out.status.success(),
            "shogi-server did not start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let log = dir.path().join("shogi-server.log");
        let (pid, port) = wait_for(READY, "shogi-server's start line in its log", || {
            let text = std::fs::read_to_string(&log).ok()?;
            let rest = text.split("GenericServer#start: pid=").nth(1)?;
            let (pid, rest) = rest.split_once(" port=")?;
            let port = rest.lines().next()?.trim();
            Some((pid.parse().ok()?, port.parse().ok()?))
        });
        let server = ShogiServer { port, pid, dir };
        wait_for(READY, "shogi-server listening", || {
            TcpStream::connect(("127.0.0.1", port)).ok()
        });
        server
    }

    /// The port it listens on, on loopback.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for ShogiServer {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // What the server saw, for the failure's report.
            let log = std::fs::read_to_string(self.dir.path().join("shogi-server.log"));
            eprintln!(
                "shogi-server.log:\n{}",
                log.unwrap_or_else(|e| e.to_string())
            );
        }
        let _ = Command::new("kill").arg(self.pid.to_string()).status();
        let proc = PathBuf::from(format!("/proc/{}", self.pid));
        let until = Instant::now() + READY.get();
        while proc_alive(&proc) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        if proc_alive(&proc) {
            let _ = Command::new("kill")
                .args(["-9", &self.pid.to_string()])
                .status();
        }
    }
}

/// Whether the process exists and is not a zombie.
fn proc_alive(proc: &Path) -> bool {
    std::fs::read_to_string(proc.join("stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'))
    })
}

/// Fails, saying how to install it, unless Ruby can load `library` (`webrick` for the server,
/// `test/unit/assertions` for its own tests).
///
/// # Panics
///
/// When it cannot.
pub fn require_ruby(library: &str) {
    let ok = Command::new("ruby")
        .args(["-e", &format!("require '{library}'")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "shogi-server needs Ruby with {library}: run tools/setup.sh, or \
         apt-get install --no-install-recommends ruby ruby-test-unit"
    );
}
