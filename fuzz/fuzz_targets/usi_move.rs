//! USI moves: no panic; a move that parses prints back as the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shogi_rules::Move;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(mv) = Move::from_usi(text) {
        assert_eq!(mv.to_string(), text);
        assert_eq!(Move::from_usi(&mv.to_string()), Ok(mv));
    }
});
