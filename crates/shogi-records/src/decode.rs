//! Text encodings of record files.

use crate::RecordError;
use std::borrow::Cow;

/// Calls `f` with the text of a record file ([`decode`]), Shift_JIS decoded into this
/// thread's buffer, which is kept from one record to the next: allocating and zeroing a buffer
/// for each record cost some 4,000 instructions a record in the archive benchmark. A buffer
/// grown past 1 MiB by a large record is let go.
pub(crate) fn with_decoded<R>(bytes: &[u8], f: impl FnOnce(&str) -> R) -> Result<R, RecordError> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with(|cell| {
        // Only a reader called while another holds the buffer (none does) gets its own.
        let mut own = Vec::new();
        let mut held = cell.try_borrow_mut();
        let buf = match held.as_mut() {
            Ok(b) => &mut **b,
            Err(_) => &mut own,
        };
        let out = decode(bytes, buf).map(|text| f(&text));
        if buf.capacity() > 1 << 20 {
            *buf = Vec::new();
        }
        out
    })
}

/// Decodes a record file: a UTF-8 BOM or valid UTF-8 is UTF-8; otherwise Shift_JIS (the KIF
/// default, also common in CSA files from Kifu for Windows); otherwise EUC-JP (old CSA files
/// from Unix tools). Bytes that none of these accept are an error at the first bad byte.
///
/// Shift_JIS text is decoded into `buf`, which the text borrows.
pub(crate) fn decode<'a>(
    bytes: &'a [u8],
    buf: &'a mut Vec<u8>,
) -> Result<Cow<'a, str>, RecordError> {
    check_size(bytes)?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // simdutf8's validation is the standard library's, vectorised: every UTF-8 record (KIFU,
    // CSA, JKF) is checked in full before it is read.
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return Ok(Cow::Borrowed(text));
    }
    // Valid Shift_JIS through encoding_rs's own mapping in tables (`sjis`), its output checked
    // as UTF-8 by simdutf8 and borrowed from the buffer (the only way to text from bytes
    // without `unsafe`; `String::from_utf8`, the standard library's check, cost an earlier
    // table walk 23,000 instructions a record). Anything else goes to encoding_rs below, whose
    // answer stands.
    if let Some(len) = crate::sjis::decode_into(bytes, buf) {
        let text = simdutf8::basic::from_utf8(&buf[..len])
            .expect("the tables hold the UTF-8 of single characters");
        debug_assert_eq!(
            Some(text),
            encoding_rs::SHIFT_JIS
                .decode_without_bom_handling_and_without_replacement(bytes)
                .as_deref()
        );
        return Ok(Cow::Borrowed(text));
    }
    if let Some(text) =
        encoding_rs::SHIFT_JIS.decode_without_bom_handling_and_without_replacement(bytes)
    {
        return Ok(text);
    }
    if let Some(text) =
        encoding_rs::EUC_JP.decode_without_bom_handling_and_without_replacement(bytes)
    {
        return Ok(text);
    }
    // Report where Shift_JIS decoding first fails.
    let (lossy, _) = encoding_rs::SHIFT_JIS.decode_without_bom_handling(bytes);
    let at = lossy.find('\u{fffd}').unwrap_or(0);
    let line_start = lossy[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_no = lossy[..at].matches('\n').count() as u32 + 1;
    let line = &lossy[line_start..];
    let line = line.split('\n').next().unwrap_or("");
    Err(RecordError::new(
        line_no,
        crate::error::column_of(line, at - line_start),
        line,
        "text is not valid utf-8, shift_jis or euc-jp",
    ))
}

/// The lines of a text with their 1-based numbers, without line terminators or a leading BOM.
/// A line ends at `\n` or `\r\n`, or, in a file without `\n`, at `\r` (classic Mac OS files,
/// which some KIF exporters still write).
pub(crate) fn lines(text: &str) -> Lines<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // A file with `\n` ends its lines at `\n` (a `\r` before it is dropped); only a file
    // without any `\n` is split at `\r`. One separator byte, found with memchr's vector search:
    // the standard library's search for a char costs some 200 instructions a line, which was a
    // tenth of reading a record (the archive benchmark's profile).
    let bytes = text.as_bytes();
    let sep = if memchr::memchr(b'\n', bytes).is_none() && memchr::memchr(b'\r', bytes).is_some() {
        b'\r'
    } else {
        b'\n'
    };
    Lines {
        rest: Some(text),
        no: 0,
        sep,
    }
}

/// The iterator of [`lines`]: as `str::split` at one ASCII separator, so the last line is
/// yielded even when empty.
#[derive(Debug, Clone)]
pub(crate) struct Lines<'a> {
    rest: Option<&'a str>,
    no: u32,
    sep: u8,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u32, &'a str);

    // Always inlined: the KIF reader's loop called it (some 15 instructions a line for the
    // call alone).
    #[inline(always)]
    fn next(&mut self) -> Option<(u32, &'a str)> {
        let rest = self.rest?;
        self.no += 1;
        let line = match find_separator(rest.as_bytes(), self.sep) {
            // The separator is ASCII, so both slices end on character boundaries.
            Some(i) => {
                self.rest = Some(&rest[i + 1..]);
                &rest[..i]
            }
            None => {
                self.rest = None;
                rest
            }
        };
        // A byte test: `strip_suffix('\r')` goes through the char pattern machinery.
        let line = match line.as_bytes().last() {
            Some(b'\r') => &line[..line.len() - 1],
            _ => line,
        };
        Some((self.no, line))
    }
}

/// The offset of the first `sep` in `hay`: the first 48 bytes a word at a time, the rest with
/// memchr. Most record lines are shorter than that, and memchr's setup cost some 66
/// instructions a call on them. (32 bytes until the line iterator was inlined into the
/// readers: a KIF move line in UTF-8, some 40 bytes, then went to memchr; 48 bytes cut 2,300
/// instructions a record, 64 and 96 less.) Always inlined, as the line iterator is.
#[inline(always)]
pub(crate) fn find_separator(hay: &[u8], sep: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let pattern = ONES * u64::from(sep);
    for i in (0..48).step_by(8) {
        let Some(chunk) = hay.get(i..i + 8) else {
            return hay[i..].iter().position(|&b| b == sep).map(|p| i + p);
        };
        // A zero byte where `sep` is; the lowest flagged byte is always the first of them.
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes")) ^ pattern;
        let found = w.wrapping_sub(ONES) & !w & HIGHS;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
    }
    memchr::memchr(sep, &hay[48..]).map(|p| 48 + p)
}

/// The byte offset of the first `b` (an ASCII byte) in `s`: `str::find` for one ASCII
/// character, with memchr's vector search.
pub(crate) fn find_byte(s: &str, b: u8) -> Option<usize> {
    debug_assert!(b.is_ascii());
    memchr::memchr(b, s.as_bytes())
}

/// An error for input larger than [`crate::MAX_RECORD_BYTES`].
pub(crate) fn check_size(bytes: &[u8]) -> Result<(), RecordError> {
    if bytes.len() > crate::MAX_RECORD_BYTES {
        return Err(RecordError::new(
            1,
            1,
            "",
            format!(
                "the record is {} bytes, more than the {} bytes a record may have",
                bytes.len(),
                crate::MAX_RECORD_BYTES
            ),
        ));
    }
    Ok(())
}

/// An error for a text with nothing but blanks, or larger than [`crate::MAX_RECORD_BYTES`]:
/// every reader's first check.
pub(crate) fn check_text(text: &str) -> Result<(), RecordError> {
    check_size(text.as_bytes())?;
    if text.trim_start_matches('\u{feff}').trim().is_empty() {
        return Err(RecordError::new(1, 1, "", "empty record"));
    }
    Ok(())
}

/// `s.trim_start()`: the same Unicode blanks (`　`, U+3000, among them), with ASCII blanks
/// skipped a byte at a time. The standard library's trim decodes every character through a
/// generic pattern searcher, which cost some 25 instructions a blank; KIF move lines are padded
/// with runs of blanks, and the readers trim each line several times (the archive benchmark's
/// profile had trimming at a twentieth of reading).
#[inline]
pub(crate) fn trim_start(s: &str) -> &str {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b' ' || (b'\t'..=b'\r').contains(&c) {
            i += 1;
        } else if c < 0x80 || !may_start_blank(c) {
            break;
        } else {
            // A character of two or more bytes that may be a blank: `i` is on its first byte.
            return s[i..].trim_start();
        }
    }
    &s[i..]
}

/// Whether a character whose UTF-8 encoding starts with `lead` (not ASCII) may be a Unicode
/// blank: U+0085 and U+00A0 start with 0xC2, U+1680 with 0xE1, U+2000..U+205F with 0xE2,
/// U+3000 (the full-width space) with 0xE3. Kanji, kana and full-width digits start with
/// other bytes (0xE3 is also hiragana's), so most characters are told apart by one byte.
#[inline]
fn may_start_blank(lead: u8) -> bool {
    matches!(lead, 0xC2 | 0xE1 | 0xE2 | 0xE3)
}

/// `s.trim_end()`, as [`trim_start`] does it.
#[inline]
pub(crate) fn trim_end(s: &str) -> &str {
    // Most lines and statements end with a visible ASCII character (a KIF move's time column,
    // a CSA move): answered here, without a call (this runs some 200 times a record).
    // So do those that end with a character of three bytes whose first byte no blank has
    // (kanji: a KIF comment or header).
    let b = s.as_bytes();
    match b {
        [.., c] if (b'!'..=0x7F).contains(c) => s,
        [.., lead, 0x80..=0xBF, 0x80..=0xBF]
            if (0xE0..=0xEF).contains(lead) && !may_start_blank(*lead) =>
        {
            s
        }
        _ => trim_end_blanks(s),
    }
}

/// [`trim_end`] of a text that may end with blanks.
#[inline(never)]
fn trim_end_blanks(s: &str) -> &str {
    let b = s.as_bytes();
    let mut end = b.len();
    while end > 0 {
        let c = b[end - 1];
        if c == b' ' || (b'\t'..=b'\r').contains(&c) {
            end -= 1;
        } else if c < 0x80 {
            break;
        } else {
            // The last byte of a character of two or more bytes: `end` is on a boundary.
            let lead = b[..end]
                .iter()
                .rposition(|&b| b & 0xC0 != 0x80)
                .map_or(0, |i| b[i]);
            if !may_start_blank(lead) {
                break;
            }
            return s[..end].trim_end();
        }
    }
    &s[..end]
}

/// `s.trim()`, as [`trim_start`] does it.
#[inline]
pub(crate) fn trim(s: &str) -> &str {
    trim_start(trim_end(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The separator search finds what a byte-by-byte search finds, at every length and place.
    #[test]
    fn separator_search_is_a_byte_search() {
        for len in 0..80 {
            for at in 0..=len {
                for filler in [b'a', 0x8a, 0x0b, 0x09, 0xff] {
                    let mut hay = vec![filler; len];
                    if at < len {
                        hay[at] = b'\n';
                    }
                    // A second separator later does not change the answer.
                    if at + 3 < len {
                        hay[at + 3] = b'\n';
                    }
                    let expected = hay.iter().position(|&b| b == b'\n');
                    assert_eq!(find_separator(&hay, b'\n'), expected, "{len} {at}");
                    assert_eq!(
                        find_separator(&hay, b'\r'),
                        hay.iter().position(|&b| b == b'\r')
                    );
                }
            }
        }
    }

    /// The fast trims agree with the standard library's on ASCII and Unicode blanks.
    #[test]
    fn trims_match_the_standard_library() {
        for s in [
            "",
            " ",
            "\t\r\n \x0b\x0c",
            "  ７六歩(77)   ",
            "　同　歩(76)　 ",
            "\u{85}x\u{a0}",
            " \u{2003}a b\u{3000}\u{2029}",
            "abc",
            "\u{1c}a\u{1f}",
            "歩",
            " é ",
            " ７六歩 ",
            "\u{3000}\u{3001}",
            "\u{1680}x\u{205f}",
            "\u{2060}x\u{2060}",
            "\u{303f} ",
        ] {
            assert_eq!(trim_start(s), s.trim_start(), "{s:?}");
            assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            for s in [
                format!("{c}x{c}"),
                format!(" {c} x {c} "),
                format!("{c}{c}"),
            ] {
                assert_eq!(trim_start(&s), s.trim_start(), "{s:?}");
                assert_eq!(trim_end(&s), s.trim_end(), "{s:?}");
            }
        }
    }
}
