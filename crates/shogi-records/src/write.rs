//! One entry point for writing a record in any format, in UTF-8 or Shift_JIS.

use crate::{CsaVersion, Format, Record, WriteError};

/// The text encoding of a written record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// UTF-8 without a BOM (`.kifu`, `.ki2u`, CSA V3.0, JKF, USI).
    #[default]
    Utf8,
    /// Shift_JIS, as Kifu for Windows writes `.kif` and `.ki2` files.
    ShiftJis,
}

impl Encoding {
    /// The encoding's name as the CLI and errors spell it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::ShiftJis => "shift_jis",
        }
    }
}

/// Writes `record` in `format` and `encoding`: the start position, the moves with their times
/// and comments, the ending the way the format says it, and (KIF, JKF) the variations.
///
/// This is the library's one writer, for the CLI's `convert` and for exports of games from
/// elsewhere (build the record with [`Record::from_moves`], then set times, comments and
/// [`Record::ending`]). What a format cannot say is written as a comment where it has comments
/// and otherwise left out: each writer's documentation lists it.
pub fn write(record: &Record, format: Format, encoding: Encoding) -> Result<Vec<u8>, WriteError> {
    write_with(record, format, encoding, WriteOptions::default())
}

/// How [`write_with`] writes a format that has versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteOptions {
    /// The CSA version: V2.2 by default, where the record fits it (see [`CsaVersion`]).
    pub csa_version: CsaVersion,
}

/// [`write()`] with options.
pub fn write_with(
    record: &Record,
    format: Format,
    encoding: Encoding,
    options: WriteOptions,
) -> Result<Vec<u8>, WriteError> {
    let text = match format {
        Format::Csa => crate::csa::write_csa_as(record, None, options.csa_version),
        Format::Kif => crate::write_kif(record),
        Format::Ki2 => crate::write_ki2(record)?,
        Format::Jkf => crate::write_jkf(record),
        Format::Usi => {
            // USI has no way to write a move from a square to itself (a CSA record can hold
            // one, kept as an impossible move): found by the write_any fuzzer.
            if let Some(i) = record
                .moves
                .iter()
                .position(|m| m.mv.from().is_some_and(|from| from == m.mv.to()))
            {
                return Err(WriteError::Unwritable {
                    ply: i as u32 + 1,
                    reason: format!(
                        "USI cannot write {}: a move from a square to itself",
                        m_text(record, i)
                    ),
                });
            }
            crate::write_usi(record)
        }
    };
    encode(text, encoding)
}

/// The bytes of `text` in `encoding`, or where a character has no code in it.
fn encode(text: String, encoding: Encoding) -> Result<Vec<u8>, WriteError> {
    match encoding {
        Encoding::Utf8 => Ok(text.into_bytes()),
        Encoding::ShiftJis => {
            let (bytes, _, unmappable) = encoding_rs::SHIFT_JIS.encode(&text);
            if !unmappable {
                return Ok(bytes.into_owned());
            }
            // Find the first character Shift_JIS cannot say, for the error.
            for (i, line) in crate::decode::lines(&text) {
                for (col, c) in line.chars().enumerate() {
                    let mut buf = [0u8; 4];
                    let (_, _, bad) = encoding_rs::SHIFT_JIS.encode(c.encode_utf8(&mut buf));
                    if bad {
                        return Err(WriteError::Unencodable {
                            line: i,
                            column: col as u32 + 1,
                            token: c.to_string(),
                            encoding: encoding.name(),
                        });
                    }
                }
            }
            Err(WriteError::Unencodable {
                line: 1,
                column: 1,
                token: String::new(),
                encoding: encoding.name(),
            })
        }
    }
}

/// Move `i` of `record` as USI text, for an error message.
fn m_text(record: &Record, i: usize) -> String {
    record.moves[i].mv.to_string()
}
