//! The arbiter's time: when a call was received, in milliseconds since the Unix epoch, as the
//! game log records it and the clock charges it (docs/rules.md section 9). The system's clock by
//! default; a test gives one it moves itself.

use std::sync::Arc;

/// Where the validator reads the time a call was received.
#[derive(Clone)]
pub struct TimeSource(Arc<dyn Fn() -> i64 + Send + Sync>);

impl TimeSource {
    /// The system's clock.
    pub fn system() -> TimeSource {
        TimeSource(Arc::new(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        }))
    }

    /// A clock that reads `now` (a test's).
    pub fn from_fn(now: impl Fn() -> i64 + Send + Sync + 'static) -> TimeSource {
        TimeSource(Arc::new(now))
    }

    /// The time now, Unix milliseconds.
    pub fn now_unix_ms(&self) -> i64 {
        (self.0)()
    }
}

impl Default for TimeSource {
    fn default() -> TimeSource {
        TimeSource::system()
    }
}

impl std::fmt::Debug for TimeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TimeSource({} ms)", self.now_unix_ms())
    }
}
