//! SFEN: no panic; a position that parses formats to an SFEN that parses to the same position.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shogi_rules::Position;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(pos) = Position::from_sfen(text) {
        let sfen = pos.to_sfen();
        let again = Position::from_sfen(&sfen).expect("to_sfen output re-parses");
        assert!(again.same_position(&pos));
        assert_eq!(again.to_sfen(), sfen);
    }
});
