//! KIF and KI2 readers (with encoding detection): no panic on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shogi_records::read_kif(data);
    let _ = shogi_records::read_ki2(data);
    let _ = shogi_records::read_any("record", data);
});
