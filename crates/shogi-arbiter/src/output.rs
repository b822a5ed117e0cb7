//! Standard output, the one way every subcommand prints, and what a closed standard output
//! means: the reader wants no more (`shogi-arbiter judge DIR | head -1`), so the command stops
//! where it is and exits 0 without a word, as `cat` and `head` do in a pipeline.
//!
//! Rust ignores SIGPIPE, so a write to a pipe whose reader is gone fails with `BrokenPipe`;
//! `println!` panics on that failure (exit 101). Every line goes through [`stdout`] instead:
//! its writer notes the closed pipe ([`closed`]) and returns the error, each command stops on
//! it as on any write error, and `main` turns the error into exit 0 when [`closed`] says that
//! it came from standard output. A command that meets the error between two steps of its work
//! (a prune between two games) stops there: the step in hand is finished, the rest is not begun.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a write to standard output found its reader gone.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether standard output was closed by its reader during this run.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Standard output, locked, whose writes note a closed pipe ([`closed`]).
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// See [`stdout`].
pub struct Stdout(io::StdoutLock<'static>);

/// Notes `result`'s error if it says that the reader is gone.
fn noted<T>(result: io::Result<T>) -> io::Result<T> {
    if let Err(e) = &result
        && e.kind() == io::ErrorKind::BrokenPipe
    {
        CLOSED.store(true, Ordering::Relaxed);
    }
    result
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        noted(self.0.write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        noted(self.0.write_all(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        noted(self.0.flush())
    }
}

/// Writes one line to standard output and flushes it, so that a reader of a long-running
/// command (`streams prune`) sees each line as it happens.
pub fn line(text: impl std::fmt::Display) -> io::Result<()> {
    let mut out = stdout();
    writeln!(out, "{text}")?;
    out.flush()
}
