//! The shogi rules core: board, legal moves, SFEN/USI, Zobrist hashing and perft.
//!
//! Pure: no IO, no async runtime, no serde, no clock. It fails only through typed errors
//! ([`SfenError`], [`ParseUsiError`], [`IllegalMove`]). The position keeps no history; repetition,
//! impasse and move caps belong to the adjudication layer above.
//!
//! Text comes in two steps, as in shakmaty: a move is parsed from USI first
//! ([`Move::from_usi`], [`ParseUsiError`]) and checked against a position second
//! ([`Position::check_move`], [`IllegalMove`] with one [`IllegalKind`] per rule of docs/rules.md
//! section 1).

pub mod attacks;
mod bitboard;
mod color;
mod cpu;
mod hand;
mod movegen;
mod moves;
mod perft;
mod piece;
mod position;
mod sfen;
mod square;
pub mod zobrist;

pub use bitboard::Bitboard;
pub use color::Color;
pub use hand::Hand;
pub use movegen::MoveList;
pub use moves::{Move, ParseUsiError, UsiErrorReason};
pub use perft::{PerftMode, divide, perft};
pub use piece::{Piece, PieceKind};
pub use position::{IllegalKind, IllegalMove, Position};
pub use sfen::{STARTPOS, SfenError, SfenErrorReason};
pub use square::Square;
