//! The `shogi.v1` contracts from `proto/shogi/v1/arbiter.proto`: prost messages, the tonic
//! client and server for `shogi.v1.MoveValidator`, the bus subjects, and the encoded descriptor
//! set for gRPC server reflection.
//!
//! Generated at build time by protox and tonic-prost-build; no system `protoc` is needed.

/// Package `shogi.v1`: every message, enum and the `MoveValidator` service.
#[allow(
    missing_docs,
    missing_debug_implementations,
    clippy::all,
    rust_2018_idioms,
    reason = "generated code"
)]
pub mod v1 {
    tonic::include_proto!("shogi.v1");
}

/// The encoded `FileDescriptorSet` of `shogi.v1` (with its imports), for
/// `tonic-reflection`'s `register_encoded_file_descriptor_set`.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/shogi_v1_descriptor.bin"));

/// The JetStream stream that holds every game's events.
pub const STREAM: &str = "SHOGI_GAMES";

/// The subjects of [`STREAM`]: every subject under `shogi.game.`.
pub const STREAM_SUBJECTS: &str = "shogi.game.>";

/// The header every published message carries with its full protobuf type name, so that a
/// reader of a subject that holds more than one type (`.move`: moves, and the verdict that ends
/// the game when it does not follow from the moves) knows how to decode it.
pub const MESSAGE_TYPE_HEADER: &str = "Shogi-Message-Type";

/// [`MESSAGE_TYPE_HEADER`] of a [`v1::GameCreated`].
pub const GAME_CREATED_TYPE: &str = "shogi.v1.GameCreated";
/// [`MESSAGE_TYPE_HEADER`] of a [`v1::MoveAccepted`].
pub const MOVE_ACCEPTED_TYPE: &str = "shogi.v1.MoveAccepted";
/// [`MESSAGE_TYPE_HEADER`] of a [`v1::Declaration`].
pub const DECLARATION_TYPE: &str = "shogi.v1.Declaration";
/// [`MESSAGE_TYPE_HEADER`] of a [`v1::Warning`].
pub const WARNING_TYPE: &str = "shogi.v1.Warning";
/// [`MESSAGE_TYPE_HEADER`] of a [`v1::Verdict`].
pub const VERDICT_TYPE: &str = "shogi.v1.Verdict";

/// The bus subjects of one game, as documented in `arbiter.proto`.
pub mod subject {
    /// `shogi.game.<game_id>.created`: [`crate::v1::GameCreated`].
    pub fn created(game_id: &str) -> String {
        format!("shogi.game.{game_id}.created")
    }

    /// `shogi.game.<game_id>.move`: the game's ordered log, [`crate::v1::MoveAccepted`] for
    /// each move and, when an ending does not follow from the moves, the final
    /// [`crate::v1::Verdict`] (told apart by [`crate::MESSAGE_TYPE_HEADER`]).
    pub fn moves(game_id: &str) -> String {
        format!("shogi.game.{game_id}.move")
    }

    /// `shogi.game.<game_id>.declare`: [`crate::v1::Declaration`].
    pub fn declare(game_id: &str) -> String {
        format!("shogi.game.{game_id}.declare")
    }

    /// `shogi.game.<game_id>.warning`: [`crate::v1::Warning`].
    pub fn warning(game_id: &str) -> String {
        format!("shogi.game.{game_id}.warning")
    }

    /// `shogi.game.<game_id>.verdict`: [`crate::v1::Verdict`].
    pub fn verdict(game_id: &str) -> String {
        format!("shogi.game.{game_id}.verdict")
    }

    /// `shogi.game.<game_id>.>`: every event of one game.
    pub fn all(game_id: &str) -> String {
        format!("shogi.game.{game_id}.>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn descriptor_set_names_the_service() {
        let fds = prost::bytes::Bytes::from_static(FILE_DESCRIPTOR_SET);
        // The descriptor set decodes and mentions the service by its full name.
        assert!(!fds.is_empty());
        let text = String::from_utf8_lossy(FILE_DESCRIPTOR_SET);
        assert!(text.contains("MoveValidator"));
        assert!(text.contains("shogi.v1"));
    }

    #[test]
    fn messages_round_trip() {
        let m = v1::MoveAccepted {
            game_id: "g1".into(),
            ply: 3,
            usi: "7g7f".into(),
            sfen_after: "x".into(),
            gives_check: true,
            position_hash: 42,
        };
        let back = v1::MoveAccepted::decode(m.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back, m);
        assert_eq!(subject::moves("g1"), "shogi.game.g1.move");
    }
}
