//! The time column of a KIF move, `( 0:12/00:01:30)`: this move's time and the side's total,
//! and what else may follow a move (the `+` mark of a move with variations).

use crate::MoveTime;
use crate::decode::trim_start;

/// A KIF clock, `m:ss` or `h:mm:ss` (any number of `:`-separated fields, blanks around
/// them), in milliseconds.
fn clock_ms(s: &[u8]) -> Option<u64> {
    // Plain integers and a flag rather than an `Option` a byte: this runs twice a move.
    let mut total = 0u64;
    let mut field = 0u64;
    let mut digits = false;
    for &b in s {
        if b.is_ascii_digit() {
            field = field.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            digits = true;
        } else if b == b':' && digits {
            total = total.checked_mul(60)?.checked_add(field)?;
            field = 0;
            digits = false;
        } else if b != b' ' {
            return None;
        }
    }
    if !digits {
        return None;
    }
    total.checked_mul(60)?.checked_add(field)?.checked_mul(1000)
}

/// The time column as nearly every exporter writes it, ` m:ss/hh:mm:ss` or `mm:ss/hh:mm:ss`
/// (the text between the parentheses), read at fixed places; `None` for any other shape, which
/// the general reading ([`clock_ms`]) then reads to the same value. A time column follows
/// nearly every move of an archive, and reading it a byte at a time cost more than the move.
fn usual_time_column(inner: &[u8]) -> Option<MoveTime> {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The separators' bytes (2 and 5 of each word below), and '0' in their place.
    const SEPS: u64 = 0xFF << 16 | 0xFF << 40;
    const ZEROS: u64 = 0x30 << 16 | 0x30 << 40;
    let inner: &[u8; 14] = inner.try_into().ok()?;
    // Two words, eight bytes at a time rather than fourteen tests: `m1 m2 : s1 s2 / h1 h2`
    // and `h1 h2 : n1 n2 : t1 t2`.
    let mut a = u64::from_le_bytes(inner[..8].try_into().expect("eight bytes"));
    let b = u64::from_le_bytes(inner[6..].try_into().expect("eight bytes"));
    if a & SEPS != (u64::from(b':') << 16 | u64::from(b'/') << 40)
        || b & SEPS != (u64::from(b':') << 16 | u64::from(b':') << 40)
    {
        return None;
    }
    // A clock under ten minutes may be written ` 9:59`: the blank reads as '0'.
    if inner[0] == b' ' {
        a ^= 0x10;
    }
    // Every other byte a digit: for a byte below 0x80, adding 0x50 sets its high bit exactly
    // when it is at least '0', adding 0x46 exactly when it is above '9', and neither carries
    // into the next byte.
    let (a, b) = ((a & !SEPS) | ZEROS, (b & !SEPS) | ZEROS);
    let digits = |x: u64| {
        x & HIGHS == 0
            && (x.wrapping_add(0x5050_5050_5050_5050) & !x.wrapping_add(0x4646_4646_4646_4646))
                & HIGHS
                == HIGHS
    };
    if !digits(a) || !digits(b) {
        return None;
    }
    // Each byte's digit, then each pair's number at its first byte (at most 99: no byte
    // overflows).
    let (a, b) = (a - 0x3030_3030_3030_3030, b - 0x3030_3030_3030_3030);
    let (a, b) = (a * 10 + (a >> 8), b * 10 + (b >> 8));
    let at = |x: u64, byte: u32| (x >> (8 * byte)) & 0xFF;
    let spent = at(a, 0) * 60 + at(a, 3);
    let total = (at(a, 6) * 60 + at(b, 3)) * 60 + at(b, 6);
    Some(MoveTime {
        spent_ms: spent * 1000,
        total_ms: Some(total * 1000),
    })
}

/// What may follow a KIF move: blanks, a time column `( 0:01/00:00:01)`, the `+` mark of a
/// move with variations. Returns the time column's time, if it has one.
///
/// The column is read in one pass over its bytes (checked, and split at its first `/`): it
/// follows nearly every move of an archive, and searching it for `)` and `/` as chars cost
/// more than the move itself.
#[inline]
pub(super) fn kif_trailer(s: &str) -> Result<Option<MoveTime>, (usize, &'static str)> {
    let b = s.as_bytes();
    // Nearly every move: ASCII blanks, the usual column, nothing after it. Answered here,
    // inlined into the move's reading, as the general reading answers it.
    let mut at = 0;
    while b.get(at) == Some(&b' ') {
        at += 1;
    }
    if b.len() == at + 16
        && b[at] == b'('
        && b[at + 15] == b')'
        && let Some(t) = usual_time_column(&b[at + 1..at + 15])
    {
        return Ok(Some(t));
    }
    kif_trailer_general(s)
}

/// [`kif_trailer`] for any shape of trailer.
#[inline(never)]
fn kif_trailer_general(s: &str) -> Result<Option<MoveTime>, (usize, &'static str)> {
    let b = s.as_bytes();
    let mut at = s.len() - trim_start(s).len();
    let mut time = None;
    // The usual column, ` m:ss/hh:mm:ss` between parentheses, holds no `)`: the one after it is
    // the first, as the search below would find.
    let usual = b
        .get(at + 15)
        .filter(|&&c| b[at] == b'(' && c == b')')
        .and_then(|_| usual_time_column(&b[at + 1..at + 15]));
    if let Some(t) = usual {
        time = Some(t);
        at += 16;
        at += s[at..].len() - trim_start(&s[at..]).len();
    } else if b.get(at) == Some(&b'(') {
        let open = at;
        let inner_at = open + 1;
        let close = memchr::memchr(b')', &b[inner_at..]).ok_or((open, "unclosed time column"))?;
        let inner = &b[inner_at..inner_at + close];
        if let Some(t) = usual_time_column(inner) {
            time = Some(t);
        } else if !inner
            .iter()
            .all(|&b| b.is_ascii_digit() || matches!(b, b'/' | b':' | b' ' | b'.'))
        {
            return Err((open, "a time column holds only digits, ':' and '/'"));
        } else {
            let (now, total) = match memchr::memchr(b'/', inner) {
                Some(i) => (&inner[..i], &inner[i + 1..]),
                None => (inner, &b""[..]),
            };
            time = clock_ms(now).map(|spent_ms| MoveTime {
                spent_ms,
                total_ms: clock_ms(total),
            });
        }
        at = inner_at + close + 1;
        at += s[at..].len() - trim_start(&s[at..]).len();
    }
    let ok = match b.get(at) {
        None => true,
        Some(b'+') => trim_start(&s[at + 1..]).is_empty(),
        Some(_) => false,
    };
    if ok {
        Ok(time)
    } else {
        Err((at, "unexpected text after the move"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general reading of a time column: split at the first `/`, each side a clock.
    fn general(inner: &[u8]) -> Option<MoveTime> {
        let (now, total) = match inner.iter().position(|&b| b == b'/') {
            Some(i) => (&inner[..i], &inner[i + 1..]),
            None => (inner, &b""[..]),
        };
        clock_ms(now).map(|spent_ms| MoveTime {
            spent_ms,
            total_ms: clock_ms(total),
        })
    }

    /// The reading of the usual time column before it was read eight bytes at a time.
    /// 200,000 copies of the usual time column ` 0:01/00:00:01`, each byte replaced one time in
    /// `one_in` by a byte of `alphabet`, from a xorshift generator seeded with `seed`.
    fn time_columns_mutated(
        alphabet: &'static [u8],
        seed: u64,
        one_in: u64,
    ) -> impl Iterator<Item = [u8; 14]> {
        let mut state = seed;
        (0..200_000).map(move |_| {
            let mut inner = *b" 0:01/00:00:01";
            for b in inner.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if state.is_multiple_of(one_in) {
                    *b = alphabet[(state >> 8) as usize % alphabet.len()];
                }
            }
            inner
        })
    }

    fn usual_time_column_bytewise(inner: &[u8]) -> Option<MoveTime> {
        let &[
            m1,
            m2,
            b':',
            s1,
            s2,
            b'/',
            h1,
            h2,
            b':',
            n1,
            n2,
            b':',
            t1,
            t2,
        ] = inner
        else {
            return None;
        };
        let d = |b: u8| b.is_ascii_digit().then(|| u64::from(b - b'0'));
        let m1 = if m1 == b' ' { 0 } else { d(m1)? };
        let spent = (m1 * 10 + d(m2)?) * 60 + d(s1)? * 10 + d(s2)?;
        let total =
            ((d(h1)? * 10 + d(h2)?) * 60 + d(n1)? * 10 + d(n2)?) * 60 + d(t1)? * 10 + d(t2)?;
        Some(MoveTime {
            spent_ms: spent * 1000,
            total_ms: Some(total * 1000),
        })
    }

    /// The usual time column read eight bytes at a time answers as it did a byte at a time:
    /// for every byte at every place of usual columns, and for random columns.
    #[test]
    fn the_usual_time_column_reads_as_it_did_a_byte_at_a_time() {
        for base in [*b" 0:01/00:00:01", *b"59:59/99:59:59", *b"10:00/12:34:56"] {
            for at in 0..14 {
                for v in 0..=255u8 {
                    let mut inner = base;
                    inner[at] = v;
                    assert_eq!(
                        usual_time_column(&inner),
                        usual_time_column_bytewise(&inner),
                        "{inner:?}"
                    );
                }
            }
        }
        for inner in time_columns_mutated(b" 0123456789:/.x(\xff", 0x9e37_79b9_7f4a_7c15, 3) {
            assert_eq!(
                usual_time_column(&inner),
                usual_time_column_bytewise(&inner),
                "{inner:?}"
            );
        }
        for len in 0..20 {
            let inner = vec![b'1'; len];
            assert_eq!(
                usual_time_column(&inner),
                usual_time_column_bytewise(&inner)
            );
        }
    }

    /// Whenever the fixed-place reading of a time column answers, the general one answers the
    /// same; it answers for the usual shapes.
    #[test]
    fn the_usual_time_column_reads_as_the_general_reading() {
        for usual in [
            " 0:01/00:00:01",
            "10:59/12:34:56",
            "00:00/00:00:00",
            " 9:99/99:99:99",
        ] {
            let got = usual_time_column(usual.as_bytes());
            assert!(got.is_some(), "{usual}");
            assert_eq!(got, general(usual.as_bytes()), "{usual}");
        }
        for inner in time_columns_mutated(b" 0159:/.x", 0x2545_f491_4f6c_dd1d, 4) {
            if let Some(t) = usual_time_column(&inner) {
                assert_eq!(
                    Some(t),
                    general(&inner),
                    "{:?}",
                    std::str::from_utf8(&inner)
                );
            }
        }
    }
}
