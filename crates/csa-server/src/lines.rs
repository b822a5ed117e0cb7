//! Bytes become lines here, and nowhere else: a line ends at `\n` (as shogi-server's `gets`),
//! and is at most [`MAX_LINE_LEN`] bytes. A longer line is handed on cut to
//! `MAX_LINE_LEN + 1` bytes, so that the session answers it with its error (`column 8193: ...`),
//! and the rest of it, up to its end, is dropped unread into memory.
//!
//! A move's comment (`+7776FU,'<text>`, floodgate's evaluations) may come in EUC-JP or
//! Shift_JIS, as engines written for shogi-server send it (it records comments as EUC-JP):
//! such a comment is decoded to UTF-8 here ([`comment_to_utf8`]), so that the session, which
//! takes UTF-8 lines, plays the move. Any other line that is not UTF-8 is refused by the
//! session with its column.

use csa_protocol::MAX_LINE_LEN;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Reads lines from a socket, with a bounded buffer.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Dropping the rest of a line too long, up to its `\n`.
    skipping: bool,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Lines from `inner`.
    pub fn new(inner: R) -> LineReader<R> {
        LineReader {
            inner,
            buf: Vec::with_capacity(256),
            skipping: false,
            eof: false,
        }
    }

    /// The next line with its `\n` (the last one may have none), or `None` at the end.
    /// Cancel-safe: bytes read stay in the buffer.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(line) = self.take_line() {
                return Ok(Some(line));
            }
            if self.eof {
                if self.buf.is_empty() || self.skipping {
                    return Ok(None);
                }
                return Ok(Some(std::mem::take(&mut self.buf)));
            }
            let mut chunk = [0u8; 4096];
            let n = self.inner.read(&mut chunk).await?;
            if n == 0 {
                self.eof = true;
                continue;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn take_line(&mut self) -> Option<Vec<u8>> {
        loop {
            match memchr(&self.buf) {
                Some(i) if self.skipping => {
                    self.buf.drain(..=i);
                    self.skipping = false;
                }
                Some(i) => {
                    if i > MAX_LINE_LEN {
                        let line = self.buf[..=MAX_LINE_LEN].to_vec();
                        self.buf.drain(..=i);
                        return Some(line);
                    }
                    return Some(self.buf.drain(..=i).collect());
                }
                None if self.skipping => {
                    self.buf.clear();
                    return None;
                }
                None if self.buf.len() > MAX_LINE_LEN => {
                    let line = self.buf[..=MAX_LINE_LEN].to_vec();
                    self.buf.clear();
                    self.skipping = true;
                    return Some(line);
                }
                None => return None,
            }
        }
    }
}

/// `line` with a move's comment that is not UTF-8 decoded to it: EUC-JP when it decodes so
/// without error, else Shift_JIS, else with U+FFFD for what neither decodes.
pub fn comment_to_utf8(line: Vec<u8>) -> Vec<u8> {
    let is_move_with_comment =
        line.len() > 9 && matches!(line[0], b'+' | b'-') && &line[7..9] == b",'";
    if !is_move_with_comment || std::str::from_utf8(&line).is_ok() {
        return line;
    }
    let (text, eol) = csa_protocol::chomp(&line);
    let comment = &text[9..];
    let decoded = [encoding_rs::EUC_JP, encoding_rs::SHIFT_JIS]
        .iter()
        .find_map(|enc| enc.decode_without_bom_handling_and_without_replacement(comment))
        .unwrap_or_else(|| String::from_utf8_lossy(comment));
    let mut out = text[..9].to_vec();
    out.extend_from_slice(decoded.as_bytes());
    out.extend_from_slice(eol.as_str().as_bytes());
    out
}

fn memchr(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8]) -> Vec<Vec<u8>> {
        let mut r = LineReader::new(input);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().await.expect("read") {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn lines_end_at_newlines_and_the_last_may_have_none() {
        assert_eq!(
            lines(b"LOGIN a b\r\n\n+7776FU\nlast").await,
            vec![
                b"LOGIN a b\r\n".to_vec(),
                b"\n".to_vec(),
                b"+7776FU\n".to_vec(),
                b"last".to_vec()
            ]
        );
    }

    #[test]
    fn a_comment_in_euc_jp_or_shift_jis_becomes_utf8() {
        let (euc, _, _) = encoding_rs::EUC_JP.encode("+2625FU,'評価値");
        assert_eq!(
            comment_to_utf8([&euc[..], b"\n"].concat()),
            "+2625FU,'評価値\n".as_bytes()
        );
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("+2625FU,'ソフト");
        assert_eq!(comment_to_utf8(sjis.to_vec()), "+2625FU,'ソフト".as_bytes());
        assert_eq!(comment_to_utf8(b"AGREE\xff\n".to_vec()), b"AGREE\xff\n");
    }

    #[tokio::test]
    async fn a_line_too_long_is_cut_and_the_next_one_read_whole() {
        let mut input = vec![b'x'; 1 << 20];
        input.extend_from_slice(b"\nAGREE\n");
        let got = lines(&input).await;
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), MAX_LINE_LEN + 1);
        assert_eq!(got[1], b"AGREE\n");
    }
}
