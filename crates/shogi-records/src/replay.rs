//! Following the moves of a record as they are read.

use crate::{Ending, EndingKind, Format, MoveTime, Record, RecordError, RecordMove, Replayed};
use shogi_rules::{Color, IllegalKind, IllegalMove, Move, Position};

/// The moves read so far, the position they lead to, and the ending once read.
pub(crate) struct Replay {
    /// The position before the first move.
    pub start: Position,
    pos: Position,
    pub moves: Vec<RecordMove>,
    /// For each move played on `pos` (the legal moves before any illegal one): the hash of the
    /// position after it and whether it gave check ([`crate::Record::replayed`]).
    played: Vec<(u64, bool)>,
    /// Whether the side to move in `pos` is in check: found for the start once, then as each
    /// move is played, and told to the checker of the next move.
    in_check: bool,
    /// The line of the first illegal move; the position is not followed past it.
    broken: Option<u32>,
    pub ending: Option<Ending>,
    /// Ending lines after the first one, as `later_ending` header values (`line N: raw`).
    pub later_endings: Vec<String>,
    /// The comment before the first move.
    pub comment: Option<String>,
    /// The destination of the move before the first one (a variation's parent line), for `同`.
    pub before_to: Option<shogi_rules::Square>,
}

impl Replay {
    pub fn new(start: Position) -> Replay {
        Replay {
            in_check: start.in_check(),
            pos: start.clone(),
            start,
            // Most games end within 160 plies: one allocation instead of six growths.
            moves: Vec::with_capacity(160),
            played: Vec::new(),
            broken: None,
            ending: None,
            later_endings: Vec::new(),
            comment: None,
            before_to: None,
        }
    }

    /// Attaches a comment to what was read last: the ending, else the last move, else the
    /// record (a comment before the first move).
    pub fn comment(&mut self, text: &str) {
        let slot = match (&mut self.ending, self.moves.last_mut()) {
            (Some(e), _) => &mut e.comment,
            (None, Some(m)) => &mut m.comment,
            (None, None) => &mut self.comment,
        };
        crate::add_comment(slot, text);
    }

    /// Sets the time of what was read last (the ending, else the last move); `false` when
    /// nothing was read yet.
    pub fn set_time(&mut self, time: MoveTime) -> bool {
        match (&mut self.ending, self.moves.last_mut()) {
            (Some(e), _) => e.time = Some(time),
            (None, Some(m)) => m.time = Some(time),
            (None, None) => return false,
        }
        true
    }

    /// Records `mv` by `color` whatever came before: checked while the position can be
    /// followed, marked [`IllegalKind::Impossible`] after an illegal move (it cannot be checked
    /// there).
    pub fn push_any(&mut self, mv: Move, color: Color, line: u32) {
        let forced = self.broken.map(|_| IllegalKind::Impossible);
        self.push(mv, color, line, forced);
    }

    /// The current position, if a move can be read here: [`Replay::position_for_move`]
    /// without the error, whose column is worth computing only when there is one.
    pub fn position(&self) -> Option<&Position> {
        (self.ending.is_none() && self.broken.is_none()).then_some(&self.pos)
    }

    /// The current position, or an error naming why a move at `line` cannot be read here
    /// (the game has ended, or an earlier move was illegal).
    pub fn position_for_move(
        &self,
        line: u32,
        column: u32,
        token: &str,
    ) -> Result<&Position, RecordError> {
        if let Some(end) = &self.ending {
            return Err(RecordError::new(
                line,
                column,
                token,
                format!(
                    "move after the end of the game ({} on line {})",
                    end.raw, end.line
                ),
            ));
        }
        if let Some(at) = self.broken {
            return Err(RecordError::new(
                line,
                column,
                token,
                format!(
                    "move after an illegal move cannot be replayed (illegal move on line {at})"
                ),
            ));
        }
        Ok(&self.pos)
    }

    /// The side to move now (before an illegal move; the side after it otherwise).
    pub fn side_to_move(&self) -> Color {
        match self.moves.last() {
            Some(m) if m.legal.is_err() => !m.color,
            _ => self.pos.side_to_move(),
        }
    }

    /// The destination of the last move (for KIF/KI2 `同`).
    pub fn last_to(&self) -> Option<shogi_rules::Square> {
        self.moves.last().map(|m| m.mv.to()).or(self.before_to)
    }

    /// Records `mv` by `color`, checking it unless `forced` already names why it is illegal.
    /// The caller has called [`Replay::position_for_move`] first.
    pub fn push(&mut self, mv: Move, color: Color, line: u32, forced: Option<IllegalKind>) {
        let legal = match forced {
            Some(kind) => Err(IllegalMove { mv, kind }),
            None => self
                .pos
                .check_move_as_knowing_check(color, mv, self.in_check),
        };
        if legal.is_ok() {
            self.pos.play_unchecked(mv);
            if self.played.is_empty() {
                self.played.reserve(160);
            }
            self.in_check = self.pos.in_check();
            self.played.push((self.pos.hash(), self.in_check));
        } else {
            self.broken = Some(line);
        }
        self.moves.push(RecordMove {
            mv,
            color,
            line,
            legal,
            time: None,
            comment: None,
        });
    }

    /// Records the ending. Ending lines after the first (the CSA server echoes a player's
    /// `%KACHI`; some KIF exporters write `中断` after `投了`) do not replace it: they are kept
    /// in [`Replay::later_endings`], so that nothing is dropped silently.
    pub fn end(&mut self, kind: EndingKind, line: u32, raw: &str) {
        if self.ending.is_some() {
            self.later_endings.push(format!("line {line}: {raw}"));
            return;
        }
        self.ending = Some(Ending {
            kind,
            line,
            raw: raw.to_string(),
            time: None,
            comment: None,
        });
    }

    /// Ending lines read so far (each takes a move number in KIF).
    pub fn ending_lines(&self) -> usize {
        usize::from(self.ending.is_some()) + self.later_endings.len()
    }

    /// The headers that record later ending lines.
    pub fn later_ending_headers(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.later_endings
            .iter()
            .map(|v| ("later_ending".to_string(), v.clone()))
    }

    /// The record read: later ending lines become `later_ending` headers after `headers`, and
    /// the comment read before the first move follows `comment` (the one before the position).
    pub fn into_record(
        mut self,
        format: Format,
        mut headers: Vec<(String, String)>,
        max_moves: Option<u32>,
        mut comment: Option<String>,
    ) -> Record {
        headers.extend(self.later_ending_headers());
        if let Some(c) = self.comment.take() {
            crate::add_comment(&mut comment, &c);
        }
        let replayed = Replayed {
            start_hash: self.start.hash(),
            plies: self.played,
            end: self.pos,
        };
        Record {
            format,
            headers,
            start: self.start,
            moves: self.moves,
            ending: self.ending,
            max_moves,
            comment,
            variations: Vec::new(),
            replayed: Some(replayed),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::read_csa;
    use shogi_rules::Position;

    /// A record as read carries, for each legal move before the first illegal one, the hash
    /// and check flag the move leads to, and the position after them; a record whose moves or
    /// start have changed since does not.
    #[test]
    fn a_record_as_read_carries_its_replay() {
        // The fourth move is illegal (White moves a bishop from 2b, where Black's horse now
        // stands): the replay stops before it.
        let text = "V2.2\nPI\n+\n+7776FU\n-3334FU\n+8822UM\n-2231KA\n%TORYO\n";
        let mut record = read_csa(text).unwrap();
        let replayed = record.replayed().expect("a record as read").clone();
        let legal = record.moves.iter().take_while(|m| m.legal.is_ok()).count();
        assert_eq!(legal, 3);
        let mut pos = Position::startpos();
        let mut want = Vec::new();
        for m in &record.moves[..legal] {
            pos.play(m.mv).unwrap();
            want.push((pos.hash(), pos.in_check()));
        }
        assert_eq!(replayed.plies(), &want[..]);
        assert!(replayed.end().same_position(&pos));

        record.moves.truncate(2);
        assert!(record.replayed().is_none(), "fewer legal moves");
        let mut record = read_csa(text).unwrap();
        record.start.play(record.moves[0].mv).unwrap();
        assert!(record.replayed().is_none(), "another start");
        let from_moves = crate::Record::from_moves(crate::Format::Csa, Position::startpos(), &[]);
        assert!(from_moves.replayed().is_none(), "not read");
    }
}
