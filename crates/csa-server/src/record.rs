//! A finished game's record in shogi-server's layout and format (`game.rb` `Game#propose`,
//! `Game#handle_one_move`, `game_result.rb` `GameResult#log_summary`, `Game#finish`), so that
//! shogi-server's tools that read its records (`mk_game_results`, `mk_rate`) read ours:
//! `DIR/YYYY/MM/DD/<game id>.csa`, dated when the game was proposed, in EUC-JP as shogi-server
//! writes its records (`Kconv.toeuc` for comments; its tools read them as EUC-JP).

use crate::md5::md5_hex;
use crate::time::Stamp;
use csa_protocol::server::position_lines;
use csa_protocol::{CsaMove, GameEnd};
use shogi_adjudication::ResultCode;
use shogi_proto::convert::result_code_from_pb;
use shogi_proto::v1 as pb;
use shogi_rules::{Color, Position};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A player as the record names it.
#[derive(Debug, Clone)]
pub struct RecordPlayer {
    /// The login name.
    pub name: String,
    /// shogi-server's player id, `<name>+<md5 of the password>`, for a player who gave one
    /// (`Player#set_password`): a rated player. The password itself is never kept.
    pub player_id: Option<String>,
}

impl RecordPlayer {
    /// `name`, rated when `password` is not empty.
    pub fn new(name: &str, password: Option<&str>) -> RecordPlayer {
        let player_id = password
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| format!("{name}+{}", md5_hex(p.as_bytes())));
        RecordPlayer {
            name: name.to_owned(),
            player_id,
        }
    }
}

/// What the record of a game holds, collected while it is played.
#[derive(Debug, Clone)]
pub struct Record {
    /// The CSA game id (`$EVENT`).
    pub game_id: String,
    /// Black and White.
    pub players: [RecordPlayer; 2],
    /// `'Max_Moves` (0: none).
    pub max_moves: u32,
    /// `'Least_Time_Per_Move`.
    pub least_time_per_move: u32,
    /// `'Increment`, written when not 0.
    pub increment: u32,
    /// When the game was proposed (`$START_TIME`, and the record's folder).
    pub proposed: Stamp,
    /// The start position.
    pub start: Position,
    /// The lines after the start: moves with their times, comments, illegal moves.
    pub body: String,
    /// Where each move's lines end in `body` (`moves[ply - 1]`), and whether its comment is
    /// there: where a comment that came after its move goes ([`Record::late_comment`]).
    pub(crate) moves: Vec<(usize, bool)>,
}

impl Record {
    /// A move played, with its time and floodgate's comment (`'*<comment>`).
    pub fn played(&mut self, mv: CsaMove, time: u32, comment: Option<&str>) {
        let _ = write!(self.body, "{mv}\nT{time}\n");
        if let Some(c) = comment {
            let _ = writeln!(self.body, "'*{c}");
        }
        self.moves.push((self.body.len(), comment.is_some()));
    }

    /// The comment of the move of `ply`, played already without one: an instance of an earlier
    /// release relays its player's comment apart from the move (`Relay::Comment`), and it can
    /// come after the move. Put after the move's lines, as [`Record::played`] puts it; `false`
    /// (and nothing written) when that move is not played yet or has its comment.
    pub fn late_comment(&mut self, ply: u32, comment: &str) -> bool {
        let Some(i) = (ply as usize).checked_sub(1) else {
            return false;
        };
        let Some(&(end, false)) = self.moves.get(i) else {
            return false;
        };
        let line = format!("'*{comment}\n");
        self.body.insert_str(end, &line);
        self.moves[i].1 = true;
        for later in &mut self.moves[i + 1..] {
            later.0 += line.len();
        }
        true
    }

    /// A line played as an illegal move (`'ILLEGAL_MOVE(<line>)`).
    pub fn illegal(&mut self, line: &str) {
        let _ = writeln!(self.body, "'ILLEGAL_MOVE({line})");
    }

    /// The whole file: header, moves, the ending's line and summary (`verdict` tells a
    /// checkmate and the kind of an illegal move), the last position, `'$END_TIME`.
    pub fn render(
        &self,
        end: GameEnd,
        verdict: Option<&pb::Verdict>,
        last: &Position,
        ended: Stamp,
    ) -> String {
        let [black, white] = &self.players;
        let mut out = String::with_capacity(2048 + self.body.len());
        let _ = writeln!(out, "V2\nN+{}\nN-{}", black.name, white.name);
        let _ = writeln!(out, "'Max_Moves:{}", self.max_moves);
        let _ = writeln!(out, "'Least_Time_Per_Move:{}", self.least_time_per_move);
        if self.increment > 0 {
            let _ = writeln!(out, "'Increment:{}", self.increment);
        }
        let _ = writeln!(out, "$EVENT:{}", self.game_id);
        let _ = writeln!(out, "$START_TIME:{}", self.proposed.record());
        out.push_str(&position_lines(&self.start));
        if let (Some(b), Some(w)) = (&black.player_id, &white.player_id) {
            let _ = writeln!(out, "'rating:{b}:{w}");
        }
        out.push_str(&self.body);
        let (line, summary) = ending_lines(end, verdict);
        if let Some(line) = line {
            let _ = writeln!(out, "{line}");
        }
        for l in position_lines(last).lines() {
            let _ = writeln!(out, "'{l}");
        }
        let (b, w) = match end.outcome(Color::Black) {
            Some(csa_protocol::Outcome::Win) => ("win", "lose"),
            Some(csa_protocol::Outcome::Lose) => ("lose", "win"),
            _ => ("draw", "draw"),
        };
        let _ = writeln!(
            out,
            "'summary:{summary}:{} {b}:{} {w}",
            black.name, white.name
        );
        let _ = writeln!(out, "'$END_TIME:{}", ended.record());
        out
    }

    /// Where the record goes under `dir`: `YYYY/MM/DD/<game id>.csa`.
    pub fn path(&self, dir: &Path) -> PathBuf {
        let (y, m, d) = self.proposed.date();
        dir.join(format!("{y:04}"))
            .join(format!("{m:02}"))
            .join(format!("{d:02}"))
            .join(format!("{}.csa", self.game_id))
    }
}

/// The ending's line in the record and its `'summary` type, as `game_result.rb` writes them.
/// A checkmate, which shogi-server never finds, is CSA's `%TSUMI` (summary `tsumi`).
fn ending_lines(
    end: GameEnd,
    verdict: Option<&pb::Verdict>,
) -> (Option<&'static str>, &'static str) {
    let code = verdict.and_then(|v| result_code_from_pb(v.code));
    if matches!(code, Some(ResultCode::Checkmate | ResultCode::NoLegalMoves)) {
        return (Some("%TSUMI"), "tsumi");
    }
    let illegal_cause = match verdict.map(|v| &v.evidence) {
        Some(Some(pb::verdict::Evidence::IllegalMove(e)))
            if e.kind == pb::IllegalKind::PawnDropMate as i32 =>
        {
            Some("uchifuzume")
        }
        Some(Some(pb::verdict::Evidence::IllegalMove(e)))
            if e.kind == pb::IllegalKind::LeavesKingInCheck as i32 =>
        {
            Some("oute_kaihimore")
        }
        _ => None,
    };
    match end {
        GameEnd::Resign { .. } => (Some("%TORYO"), "toryo"),
        GameEnd::Abandon { .. } => (Some("%TORYO"), "abnormal"),
        GameEnd::TimeUp { .. } => (Some("%TIME_UP"), "time up"),
        GameEnd::Kachi { .. } => (Some("%KACHI"), "kachi"),
        GameEnd::IllegalKachi { .. } => (Some("%KACHI"), "illegal kachi"),
        GameEnd::IllegalMove { .. } => (None, illegal_cause.unwrap_or("illegal move")),
        GameEnd::OuteSennichite { .. } => (None, "oute_sennichite"),
        GameEnd::Sennichite => (Some("%SENNICHITE"), "sennichite"),
        GameEnd::MaxMoves => (None, "max_moves"),
        GameEnd::Chudan => (Some("%CHUDAN"), "chudan"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            game_id: "g".into(),
            players: [RecordPlayer::new("b", None), RecordPlayer::new("w", None)],
            max_moves: 0,
            least_time_per_move: 0,
            increment: 0,
            proposed: Stamp::now(),
            start: Position::startpos(),
            body: String::new(),
            moves: Vec::new(),
        }
    }

    fn mv(text: &str) -> CsaMove {
        CsaMove::parse(text).expect("a CSA move")
    }

    /// A comment relayed after its move (an instance of an earlier release) goes after that
    /// move's lines, once; one for a move not played yet, or with its comment, is refused.
    #[test]
    fn a_late_comment_goes_with_its_move() {
        let mut r = record();
        r.played(mv("+7776FU"), 1, None);
        r.played(mv("-3334FU"), 2, Some("* -30 +2726FU"));
        r.illegal("%CHUDAN");
        r.played(mv("+2726FU"), 3, None);
        assert!(r.late_comment(1, "* 12 -3334FU"));
        assert!(!r.late_comment(1, "again"), "the first is kept");
        assert!(!r.late_comment(2, "* 0"), "ply 2 has its comment");
        assert!(!r.late_comment(4, "* 0"), "ply 4 is not played");
        assert!(!r.late_comment(0, "* 0"));
        assert!(r.late_comment(3, "* 40"));
        assert_eq!(
            r.body,
            "+7776FU\nT1\n'** 12 -3334FU\n-3334FU\nT2\n'** -30 +2726FU\n'ILLEGAL_MOVE(%CHUDAN)\n+2726FU\nT3\n'** 40\n"
        );
    }

    #[test]
    fn a_rated_players_id_is_the_md5_of_the_password() {
        let p = RecordPlayer::new("atmark_B@p1", Some("dummy"));
        assert_eq!(
            p.player_id.as_deref(),
            Some("atmark_B@p1+275876e34cf609db118f3d84b799a790")
        );
        assert_eq!(RecordPlayer::new("a", Some("")).player_id, None);
        assert_eq!(RecordPlayer::new("a", None).player_id, None);
    }
}
