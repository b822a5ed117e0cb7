//! Every writer on whatever any reader accepts: no panic, and each format's output reads back
//! in that format with the same start position (KI2 may refuse an illegal move, Shift_JIS a
//! character it has no code for).
#![no_main]

use libfuzzer_sys::fuzz_target;
use shogi_records::{Encoding, Format, read_any, read_as, write};

fuzz_target!(|data: &[u8]| {
    let Ok(rec) = read_any("record", data) else { return };
    for f in Format::ALL {
        for enc in [Encoding::Utf8, Encoding::ShiftJis] {
            let Ok(bytes) = write(&rec, f, enc) else { continue };
            let back = read_as(f, &bytes).expect("written record reads back");
            assert!(back.start.same_position(&rec.start));
        }
    }
});
