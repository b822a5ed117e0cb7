//! What the bus's test files share: the log lines the bus writes, captured.

// Each test file uses a part of this module.
#![allow(dead_code)]

use std::io::Write;
use std::sync::Arc;
use test_support::LogBuffer;

/// The `warn` lines logged on this thread while the guard of [`Logs::capture`] lives (the tests
/// run on a current-thread runtime, so the bus's code logs on the test's thread).
#[derive(Clone, Default)]
pub struct Logs(LogBuffer, Arc<tokio::sync::Notify>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.0.write(buf)?;
        self.1.notify_waiters();
        Ok(written)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    /// Captures this thread's `warn` lines until the guard is dropped.
    pub fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    /// What was logged so far.
    pub fn text(&self) -> String {
        self.0.text()
    }

    /// Waits until the logs say `needle`.
    pub async fn logged(&self, needle: &str) {
        loop {
            let written = self.1.notified();
            tokio::pin!(written);
            // Registered before the text is read, so that a write in between still wakes it.
            written.as_mut().enable();
            if self.text().contains(needle) {
                return;
            }
            written.await;
        }
    }
}
