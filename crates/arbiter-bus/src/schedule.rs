//! Message schedules (nats-server 2.12+): a message published with `Nats-Schedule: @at <time>`
//! and `Nats-Schedule-Target: <subject>` is kept by the stream and, at that time, published
//! again on the target subject (of the same stream), with `Nats-Scheduler` naming the schedule's
//! subject; a later schedule on the same subject replaces it, and one whose time has passed
//! fires at once. The in-memory bus keeps them the same way, with a timer each.
//!
//! The time is written as RFC 3339 in UTC with milliseconds (`2026-12-06T03:01:44.123Z`), which
//! nats-server reads (Go's `time.RFC3339` accepts a fractional second).

use crate::{Outgoing, SCHEDULE_HEADER, SCHEDULE_TARGET_HEADER};

impl Outgoing {
    /// The same message as a schedule: at `at_unix_ms` (Unix milliseconds) the bus publishes a
    /// copy of it on `target`.
    pub fn schedule_at(mut self, at_unix_ms: i64, target: impl Into<String>) -> Outgoing {
        self.headers.push((
            SCHEDULE_HEADER.to_owned(),
            format!("@at {}", rfc3339_ms(at_unix_ms)),
        ));
        self.headers
            .push((SCHEDULE_TARGET_HEADER.to_owned(), target.into()));
        self
    }

    /// When and where a schedule fires, if the message is one this bus wrote.
    pub(crate) fn schedule(&self) -> Option<(i64, &str)> {
        let header = |name: &str| {
            self.headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let at = parse_rfc3339_ms(header(SCHEDULE_HEADER)?.strip_prefix("@at ")?)?;
        Some((at, header(SCHEDULE_TARGET_HEADER)?))
    }
}

/// `unix_ms` as RFC 3339 in UTC with milliseconds; a time before 1970 is 1970.
pub fn rfc3339_ms(unix_ms: i64) -> String {
    let ms = unix_ms.max(0);
    let (days, in_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let (h, rest) = (in_day / 3_600_000, in_day % 3_600_000);
    let (min, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

/// The Unix milliseconds of a time as [`rfc3339_ms`] writes it.
fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[23] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let days = days_from_civil(num(0..4)?, num(5..7)?, num(8..10)?);
    let in_day = num(11..13)? * 3_600_000 + num(14..16)? * 60_000 + num(17..19)? * 1000;
    Some(days * 86_400_000 + in_day + num(20..23)?)
}

/// The civil date (year, month, day) of `days` since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days since 1970-01-01 of the civil date (inverse of [`civil_from_days`]).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_rfc3339_in_utc_with_milliseconds() {
        for (ms, text) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400_001, "2000-02-29T00:00:00.001Z"),
            (1_796_526_104_123, "2026-12-06T03:01:44.123Z"),
            (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
        ] {
            assert_eq!(rfc3339_ms(ms), text);
            assert_eq!(parse_rfc3339_ms(text), Some(ms), "{text}");
        }
        assert_eq!(parse_rfc3339_ms("2026-12-06T03:01:44Z"), None);
    }
}
