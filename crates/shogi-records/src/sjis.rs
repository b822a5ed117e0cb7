//! Shift_JIS to UTF-8 through tables taken from encoding_rs, for the records that are valid
//! Shift_JIS (every `.kif` of the corpus): encoding_rs's decoder cost some 77 instructions a
//! two-byte character with its ASCII switching, a sixth of re-judging an archive (issue #24).
//!
//! The tables are filled once from encoding_rs itself, one byte or byte pair at a time, so the
//! mapping is exactly its mapping (WHATWG's Shift_JIS decoder). A byte or pair without a
//! character in them, or a lead byte at the end of the text, makes [`decode_into`] give up, and
//! the caller decodes the text with encoding_rs, whose answer or error stands: the fast path
//! only ever answers for a text that encoding_rs decodes without replacement, with the same
//! text.

use std::sync::OnceLock;

/// An entry's top byte when its byte is a lead byte: the low byte is the lead's row in
/// [`Tables::pairs`].
const LEAD: u32 = 0xFF << 24;

/// Room for the rows of lead bytes.
const ROWS: usize = 64;

/// A character as an entry: its UTF-8 bytes (at most three: Shift_JIS maps into the BMP) in
/// the low bytes, little-endian, and its length in the top byte; 0 for no character.
struct Tables {
    /// Bytes 0x80 to 0xFF alone: a character, [`LEAD`] with a row, or 0.
    single: [u32; 128],
    /// Byte pairs: `pairs[row][trail]`, where `row` is the lead byte's row (60 lead bytes:
    /// 0x81 to 0x9F and 0xE0 to 0xFC). A fixed size, so that a row's index, masked, needs no
    /// bounds check.
    pairs: Box<[[u32; 256]; ROWS]>,
}

fn entry(text: &str) -> u32 {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.len_utf8() <= 3 => {
            let mut b = [0u8; 4];
            c.encode_utf8(&mut b);
            b[3] = c.len_utf8() as u8;
            u32::from_le_bytes(b)
        }
        // Not one character of at most three bytes: left to encoding_rs.
        _ => 0,
    }
}

fn decode_alone(bytes: &[u8]) -> Option<String> {
    encoding_rs::SHIFT_JIS
        .decode_without_bom_handling_and_without_replacement(bytes)
        .map(|t| t.into_owned())
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut single = [0u32; 128];
        let mut pairs = Box::new([[0u32; 256]; ROWS]);
        let mut rows = 0;
        for b in 0x80..=0xFFu8 {
            let slot = &mut single[usize::from(b - 0x80)];
            if let Some(text) = decode_alone(&[b]) {
                *slot = entry(&text);
                continue;
            }
            // A byte that is no character alone but starts one with some trail byte.
            let mut row = [0u32; 256];
            for (t, e) in (0..=0xFFu8).zip(&mut row) {
                *e = decode_alone(&[b, t]).map_or(0, |text| entry(&text));
            }
            if row.iter().any(|&e| e != 0) {
                assert!(rows < ROWS, "more lead bytes than rows");
                *slot = LEAD | rows as u32;
                pairs[rows] = row;
                rows += 1;
            }
        }
        Tables { single, pairs }
    })
}

/// Decodes `bytes` as Shift_JIS into the start of `out` (grown as needed, never shrunk, its
/// old contents overwritten: a buffer kept from one record to the next is not zeroed again)
/// and says how many bytes of it the text takes: exactly the UTF-8 that encoding_rs's
/// `decode_without_bom_handling_and_without_replacement` gives. `None`: `out` holds nothing of
/// use and the text is encoding_rs's to decode (it may be invalid Shift_JIS).
pub(crate) fn decode_into(bytes: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let t = tables();
    // Room for the text as it is read: at every step, `out.len() - o` is at least 1.5 times
    // the bytes left plus 8. ASCII takes a byte out for a byte in, kanji and kana 3 bytes for 2,
    // so only half-width katakana and U+0080 (up to 3 bytes for 1) need more, which they add.
    let room = bytes.len() + bytes.len() / 2 + 16;
    if out.len() < room {
        out.resize(room, 0);
    }
    let (mut i, mut o) = (0, 0);
    while let Some(&b) = bytes.get(i) {
        if b < 0x80 {
            // A run of ASCII, eight bytes at a time; the bytes after the run are copied too,
            // and overwritten by what they decode to.
            // Sixteen bytes when there are: a move line's time column and blanks are a run of
            // some thirty.
            if let Some(chunk) = bytes.get(i..i + 16) {
                out[o..o + 16].copy_from_slice(chunk);
                let w = u64::from_le_bytes(chunk[..8].try_into().expect("eight bytes"));
                let v = u64::from_le_bytes(chunk[8..].try_into().expect("eight bytes"));
                let ascii = if w & HIGHS != 0 {
                    ((w & HIGHS).trailing_zeros() / 8) as usize
                } else if v & HIGHS != 0 {
                    8 + ((v & HIGHS).trailing_zeros() / 8) as usize
                } else {
                    16
                };
                i += ascii;
                o += ascii;
                continue;
            }
            match bytes.get(i..i + 8) {
                Some(chunk) => {
                    out[o..o + 8].copy_from_slice(chunk);
                    let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
                    let high = w & HIGHS;
                    let ascii = if high == 0 {
                        8
                    } else {
                        (high.trailing_zeros() / 8) as usize
                    };
                    i += ascii;
                    o += ascii;
                }
                None => {
                    out[o] = b;
                    i += 1;
                    o += 1;
                }
            }
            continue;
        }
        // One character of one byte or two: kanji and kana follow each other here without
        // the ASCII step.
        let e = t.single[usize::from(b - 0x80)];
        let e = if e & LEAD == LEAD {
            let &trail = bytes.get(i + 1)?;
            i += 2;
            t.pairs[(e as usize) & (ROWS - 1)][usize::from(trail)]
        } else {
            i += 1;
            let grown = out.len() + 2;
            out.resize(grown, 0);
            e
        };
        if e == 0 {
            return None;
        }
        out[o..o + 4].copy_from_slice(&e.to_le_bytes());
        o += (e >> 24) as usize;
    }
    Some(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What encoding_rs makes of `bytes`, as [`decode_into`] must answer it: the text, or
    /// `None` where `decode_into` may give up.
    fn check(bytes: &[u8]) {
        let want =
            encoding_rs::SHIFT_JIS.decode_without_bom_handling_and_without_replacement(bytes);
        // A buffer with old contents, as one kept from an earlier record is.
        let mut out = vec![b'?'; 37];
        if let Some(len) = decode_into(bytes, &mut out) {
            let want = want.unwrap_or_else(|| panic!("{bytes:x?}: encoding_rs refuses it"));
            assert_eq!(&out[..len], want.as_bytes(), "{bytes:x?}");
        } else {
            // Giving up is right only where encoding_rs refuses the text too: every valid
            // byte and pair is in the tables.
            assert!(want.is_none(), "{bytes:x?}: encoding_rs decodes it");
        }
    }

    /// Every byte and every pair of bytes, alone and between ASCII on either side (at every
    /// offset of the eight-byte ASCII step), decodes as encoding_rs decodes it.
    #[test]
    fn every_byte_and_pair_decodes_as_encoding_rs() {
        for a in 0..=0xFFu8 {
            check(&[a]);
            check(&[b'x', a]);
            for b in 0..=0xFFu8 {
                check(&[a, b]);
                check(&[a, b, b'z']);
                let mut s = b"0123456789abcdef".to_vec();
                let at = usize::from(b) % 9;
                s.splice(at..at, [a, b]);
                check(&s);
            }
        }
    }

    /// Whole texts: a KIF move line, runs of kanji and of half-width katakana (three bytes out
    /// for one in, past the buffer's first size), long ASCII, and every pair in one text.
    #[test]
    fn texts_decode_as_encoding_rs() {
        let (kif, _, _) = encoding_rs::SHIFT_JIS
            .encode("   1 ７六歩(77)        ( 0:01/00:00:01)\r\n*コメント\r\n");
        check(&kif);
        check(&kif.repeat(300));
        check(&[0xB1; 1000]);
        check(&[0xB1, b'a'].repeat(500));
        check(&[b'a'; 1000]);
        check(&[]);
        let mut all = Vec::new();
        for a in 0x81..=0xFCu8 {
            for b in 0x40..=0xFCu8 {
                let pair = [a, b];
                if encoding_rs::SHIFT_JIS
                    .decode_without_bom_handling_and_without_replacement(&pair)
                    .is_some()
                {
                    all.extend(pair);
                    all.push(b' ');
                }
            }
        }
        check(&all);
        // A lead byte at the end, or before a byte that is no trail.
        check(&[b'a', 0x88]);
        check(&[0x88, b'\n', b'a']);
    }

    proptest! {
        #[test]
        fn random_bytes_decode_as_encoding_rs(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            check(&bytes);
        }

        #[test]
        fn random_japanese_decodes_as_encoding_rs(
            parts in proptest::collection::vec(
                prop_oneof![Just(&b"\x82\xa0"[..]), Just(&b"\x88\x9f"[..]), Just(&b"\xb1"[..]),
                    Just(&b" "[..]), Just(&b"12345678"[..]), Just(&b"\r\n"[..]), Just(&b"\x81\x40"[..])],
                0..100,
            )
        ) {
            check(&parts.concat());
        }
    }
}
