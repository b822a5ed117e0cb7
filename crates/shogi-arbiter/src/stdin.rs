//! Standard input read line by line with a bound on each line, so that one endless line neither
//! exhausts memory nor stops the lines after it, and a line that is not UTF-8 is that line's
//! problem alone.

use std::io::{self, BufRead};

/// Lines of a reader as bytes, each at most `max` bytes (without its `\n` or `\r\n`).
#[derive(Debug)]
pub struct Lines<R> {
    reader: R,
    max: usize,
    no: usize,
    done: bool,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `reader`, each at most `max` bytes.
    pub fn new(reader: R, max: usize) -> Lines<R> {
        Lines {
            reader,
            max,
            no: 0,
            done: false,
        }
    }

    /// The next line and its 1-based number: its bytes, or why it is not given (longer than
    /// the bound; the rest of it is skipped). `None` at the end; an IO error is an error.
    #[allow(clippy::type_complexity)]
    pub fn next_line(&mut self) -> io::Result<Option<(usize, Result<Vec<u8>, String>)>> {
        if self.done {
            return Ok(None);
        }
        let mut line = Vec::new();
        let mut too_long = false;
        let mut any = false;
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                self.done = true;
                break;
            }
            any = true;
            let (chunk, used, end) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            if !too_long {
                if line.len() + chunk.len() > self.max {
                    too_long = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            self.reader.consume(used);
            if end {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.no += 1;
        if too_long {
            return Ok(Some((
                self.no,
                Err(format!("line longer than {} bytes", self.max)),
            )));
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(Some((self.no, Ok(line))))
    }
}
