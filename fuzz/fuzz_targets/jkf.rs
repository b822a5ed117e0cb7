//! JKF reader: no panic on any bytes; whatever reads writes as JKF and reads back with the same
//! moves and variations.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(rec) = shogi_records::read_jkf(data) {
        let written = shogi_records::write_jkf(&rec);
        let back = shogi_records::read_jkf(written.as_bytes()).expect("written JKF reads back");
        assert_eq!(back.moves.len(), rec.moves.len());
    }
});
