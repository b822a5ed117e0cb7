//! CSA reader: no panic on any text; whatever reads must write and read back with the same
//! moves.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(rec) = shogi_records::read_csa(text) {
        let written = shogi_records::write_csa(&rec, None);
        let back = shogi_records::read_csa(&written).expect("written CSA reads back");
        if rec.moves.iter().all(|m| m.legal.is_ok()) {
            assert_eq!(back.moves.len(), rec.moves.len());
        }
    }
});
