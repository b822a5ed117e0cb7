//! Wall-clock stamps as shogi-server writes them (`YYYYMMDDHHMMSS` in game ids,
//! `YYYY/MM/DD HH:MM:SS` in records), in UTC: shogi-server writes its host's local time, so a
//! front end that must match a server's folders runs with the same zone (UTC in the tests).

use std::time::{SystemTime, UNIX_EPOCH};

/// A moment, to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    secs: i64,
}

impl Stamp {
    /// Now.
    pub fn now() -> Stamp {
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        Stamp { secs }
    }

    /// The moment `secs` after the Unix epoch.
    pub fn from_secs(secs: i64) -> Stamp {
        Stamp { secs }
    }

    /// Seconds after the Unix epoch.
    pub fn secs(self) -> i64 {
        self.secs
    }

    /// The civil date (year, month, day).
    pub fn date(self) -> (i64, u32, u32) {
        civil(self.secs.div_euclid(86_400))
    }

    fn hms(self) -> (i64, i64, i64) {
        let s = self.secs.rem_euclid(86_400);
        (s / 3600, s / 60 % 60, s % 60)
    }

    /// `YYYYMMDDHHMMSS`.
    pub fn compact(self) -> String {
        let (y, mo, d) = self.date();
        let (h, mi, s) = self.hms();
        format!("{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}")
    }

    /// `YYYY/MM/DD HH:MM:SS`.
    pub fn record(self) -> String {
        let (y, mo, d) = self.date();
        let (h, mi, s) = self.hms();
        format!("{y:04}/{mo:02}/{d:02} {h:02}:{mi:02}:{s:02}")
    }
}

/// Days since 1970-01-01 as a proleptic Gregorian date (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_written_as_shogi_server_writes_them() {
        let s = Stamp {
            secs: 1_796_533_505,
        };
        assert_eq!(s.compact(), "20261206050505");
        assert_eq!(s.record(), "2026/12/06 05:05:05");
        assert_eq!(Stamp { secs: 951_782_400 }.date(), (2000, 2, 29));
        assert_eq!(Stamp { secs: 0 }.record(), "1970/01/01 00:00:00");
    }
}
