//! The one error type of the readers.

/// Why a record could not be read: where (1-based line and column, in characters), the token
/// found there, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {reason} (found {token:?})")]
pub struct RecordError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters (not bytes).
    pub column: u32,
    /// The offending text (at most 40 characters of it).
    pub token: String,
    /// What is wrong, lower case.
    pub reason: String,
}

impl RecordError {
    pub(crate) fn new(line: u32, column: u32, token: &str, reason: impl Into<String>) -> Self {
        RecordError {
            line,
            column,
            token: token.chars().take(40).collect(),
            reason: reason.into(),
        }
    }
}

/// Converts a byte offset within `line` to a 1-based character column.
pub(crate) fn column_of(line: &str, byte_offset: usize) -> u32 {
    let end = byte_offset.min(line.len());
    // Clamp to a char boundary so that a bad offset cannot panic.
    let mut end = end;
    while end > 0 && !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].chars().count() as u32 + 1
}

/// Why a record could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// A character of the text has no code in the encoding asked for (Shift_JIS covers JIS X
    /// 0208, not every Unicode character).
    #[error("line {line}, column {column}: {token:?} cannot be written in {encoding}")]
    Unencodable {
        /// 1-based line of the written text.
        line: u32,
        /// 1-based column, in characters.
        column: u32,
        /// The character.
        token: String,
        /// The encoding's name.
        encoding: &'static str,
    },
    /// The record cannot be said in this format at all (USI has no way to write a board
    /// diagram's move that is not legal, KI2 no way to write an illegal move).
    #[error("ply {ply}: {reason}")]
    Unwritable {
        /// The 1-based ply that cannot be written (0 for the record as a whole).
        ply: u32,
        /// Why, lower case.
        reason: String,
    },
}
