//! Deadlines scaled to the machine: a test waits on a condition, never a fixed sleep, and the
//! longest it waits grows with how busy the machine is when it starts waiting (issue 18: the
//! suite must pass on a 2-core machine with every core busy).

use std::time::{Duration, Instant};

/// `base`, the deadline on an idle machine, times the machine's load: the one-minute load
/// average per core (at least 1, at most 8), times `ARBITER_TEST_PATIENCE` when set (a factor,
/// for a machine slower than the load says, under a sanitizer or an emulator, say).
pub fn patience(base: Duration) -> Duration {
    base.mul_f64(load_factor() * env_factor())
}

/// The one-minute load average per core, clamped to 1..=8; 1 where it cannot be read.
fn load_factor() -> f64 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(1.0, |load| (load / cores).clamp(1.0, 8.0))
}

/// A deadline on an idle machine, read scaled by [`patience`] each time a wait starts, so a
/// test states its deadline once as a constant and never waits a fixed time:
///
/// ```
/// use std::time::{Duration, Instant};
/// use test_support::Deadline;
/// const DEADLINE: Deadline = Deadline::secs(20);
/// let until = Instant::now() + DEADLINE.get();
/// assert!(DEADLINE.get() >= Duration::from_secs(20));
/// ```
///
/// Its `Debug` is the scaled duration, so `"not within {DEADLINE:?}"` says how long the test
/// waited.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Deadline(Duration);

impl Deadline {
    /// `secs` seconds on an idle machine.
    pub const fn secs(secs: u64) -> Deadline {
        Deadline(Duration::from_secs(secs))
    }

    /// `base` on an idle machine.
    pub const fn new(base: Duration) -> Deadline {
        Deadline(base)
    }

    /// The deadline on this machine now: the base scaled by [`patience`].
    pub fn get(self) -> Duration {
        patience(self.0)
    }

    /// The deadline on an idle machine.
    pub const fn base(self) -> Duration {
        self.0
    }
}

impl std::fmt::Debug for Deadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// Polls `f` every 20 ms until it returns `Some`.
///
/// # Panics
///
/// After `deadline`, with `what`.
pub fn wait_for<T>(deadline: Deadline, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + deadline.get();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < until, "{what}: not within {deadline:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn env_factor() -> f64 {
    std::env::var("ARBITER_TEST_PATIENCE")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patience_is_at_least_the_base_and_bounded() {
        let base = Duration::from_millis(100);
        let p = patience(base);
        assert!(p >= base, "{p:?}");
        assert!(p <= base * 8 * env_factor().ceil() as u32, "{p:?}");
    }

    #[test]
    fn a_deadline_is_its_base_scaled_by_the_load() {
        const D: Deadline = Deadline::secs(3);
        assert_eq!(D.base(), Duration::from_secs(3));
        assert!(D.get() >= D.base());
        assert!(D.get() <= D.base() * 8 * env_factor().ceil() as u32);
    }
}
