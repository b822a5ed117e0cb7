//! Server lines read back, as a client (an engine's bridge, a test) meets them.

use crate::moves::CsaMove;
use crate::server::{Outcome, TimedMove};

/// A line shogi-server sends, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerLine {
    /// `LOGIN:<name> OK`.
    LoginOk(String),
    /// `LOGIN:incorrect`.
    LoginIncorrect,
    /// `type 'LOGIN name password' or 'LOGIN name password x1'` or `username <name> is already
    /// connected`, after `LOGIN:incorrect`.
    LoginHint(String),
    /// `LOGOUT:completed`.
    LogoutCompleted,
    /// `BEGIN <section>` (`Game_Summary`, `Time`, `Position`).
    Begin(String),
    /// `END <section>`.
    End(String),
    /// `<key>:<value>` inside a game summary.
    Field {
        /// `Game_ID`, `Total_Time`, ...
        key: String,
        /// What follows the first colon.
        value: String,
    },
    /// A board row `P1`..`P9`, or a hand `P+`/`P-`, as sent.
    Board(String),
    /// The side to move after the board: `+` or `-`.
    SideToMove(char),
    /// `START:<game id>`.
    Start(String),
    /// `REJECT:<game id> by <name>`.
    Reject {
        /// The game.
        game_id: String,
        /// Who.
        by: String,
    },
    /// A move echo, `+7776FU,T3`, or a move of the position section (`+7776FU,T1`).
    Move(TimedMove),
    /// `%KACHI,T<n>`: a declaration's echo.
    KachiTimed(u32),
    /// `%TORYO` or `%KACHI` before the reason of an ending.
    Special(String),
    /// `#RESIGN`, `#TIME_UP`, `#JISHOGI`, `#ILLEGAL_MOVE`, `#SENNICHITE`, `#OUTE_SENNICHITE`,
    /// `#MAX_MOVES`, `#CHUDAN`.
    Reason(String),
    /// `#WIN`, `#LOSE`, `#DRAW`, `#CENSORED`.
    Outcome(Outcome),
    /// An x1 answer, `##[<tag>] <text>` (`##[MONITOR2][<id>] <text>` has the tag
    /// `MONITOR2][<id>`).
    X1 {
        /// `WHO`, `LIST`, `SHOW`, `ERROR`, ...
        tag: String,
        /// The rest, after one space.
        text: String,
    },
    /// `CHALLENGE ACCEPTED`.
    ChallengeAccepted,
    /// The empty line: the answer to a keep-alive.
    Empty,
}

/// A line that is not one of shogi-server's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {reason}: {line:?}")]
pub struct ServerLineError {
    /// 1-based byte column.
    pub column: usize,
    /// What is wrong.
    pub reason: &'static str,
    /// The line.
    pub line: String,
}

const REASONS: [&str; 8] = [
    "#RESIGN",
    "#TIME_UP",
    "#JISHOGI",
    "#ILLEGAL_MOVE",
    "#SENNICHITE",
    "#OUTE_SENNICHITE",
    "#MAX_MOVES",
    "#CHUDAN",
];

impl ServerLine {
    /// Parses one line, without its `\n`.
    pub fn parse(line: &str) -> Result<ServerLine, ServerLineError> {
        let err = |column, reason| ServerLineError {
            column,
            reason,
            line: line.to_owned(),
        };
        if line.is_empty() {
            return Ok(ServerLine::Empty);
        }
        if let Some(rest) = line.strip_prefix("LOGIN:") {
            return match rest {
                "incorrect" => Ok(ServerLine::LoginIncorrect),
                _ => rest
                    .strip_suffix(" OK")
                    .map(|n| ServerLine::LoginOk(n.to_owned()))
                    .ok_or(err(7, "LOGIN: is followed by incorrect or <name> OK")),
            };
        }
        if line.starts_with("type 'LOGIN") || line.starts_with("username ") {
            return Ok(ServerLine::LoginHint(line.to_owned()));
        }
        match line {
            "LOGOUT:completed" => return Ok(ServerLine::LogoutCompleted),
            "CHALLENGE ACCEPTED" => return Ok(ServerLine::ChallengeAccepted),
            "+" | "-" => return Ok(ServerLine::SideToMove(line.as_bytes()[0] as char)),
            "%TORYO" | "%KACHI" => return Ok(ServerLine::Special(line.to_owned())),
            _ => {}
        }
        if let Some(section) = line.strip_prefix("BEGIN ") {
            return Ok(ServerLine::Begin(section.to_owned()));
        }
        if let Some(section) = line.strip_prefix("END ") {
            return Ok(ServerLine::End(section.to_owned()));
        }
        if let Some(id) = line.strip_prefix("START:") {
            return Ok(ServerLine::Start(id.to_owned()));
        }
        if let Some(rest) = line.strip_prefix("REJECT:") {
            let (game_id, by) = rest
                .split_once(" by ")
                .ok_or(err(8, "REJECT:<id> is followed by ' by <name>'"))?;
            return Ok(ServerLine::Reject {
                game_id: game_id.to_owned(),
                by: by.to_owned(),
            });
        }
        if let Some(rest) = line.strip_prefix("##[") {
            let (tag, text) = rest
                .split_once("] ")
                .filter(|(t, _)| !t.is_empty())
                .ok_or(err(4, "##[<tag>] <text>"))?;
            return Ok(ServerLine::X1 {
                tag: tag.to_owned(),
                text: text.to_owned(),
            });
        }
        if let Some(time) = line.strip_prefix("%KACHI,T") {
            return time
                .parse()
                .map(ServerLine::KachiTimed)
                .map_err(|_| err(9, "a time in seconds"));
        }
        if REASONS.contains(&line) {
            return Ok(ServerLine::Reason(line.to_owned()));
        }
        for o in [
            Outcome::Win,
            Outcome::Lose,
            Outcome::Draw,
            Outcome::Censored,
        ] {
            if line == o.as_str() {
                return Ok(ServerLine::Outcome(o));
            }
        }
        if line.starts_with(['+', '-']) {
            let (mv, time) = line
                .split_once(",T")
                .ok_or(err(8, "a move echo is <move>,T<seconds>"))?;
            let mv = CsaMove::parse(mv).map_err(|_| err(1, "not a CSA move"))?;
            let time = time.parse().map_err(|_| err(10, "a time in seconds"))?;
            return Ok(ServerLine::Move(TimedMove { mv, time }));
        }
        if let Some(rest) = line.strip_prefix('P')
            && rest.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-')
        {
            let ok = match rest.as_bytes().first() {
                Some(b'1'..=b'9') => rest.len() == 1 + 27,
                Some(b'+' | b'-') => (rest.len() - 1) % 4 == 0,
                _ => false,
            };
            return if ok {
                Ok(ServerLine::Board(line.to_owned()))
            } else {
                Err(err(
                    2,
                    "a board row P1..P9 of nine squares, or a hand P+/P-",
                ))
            };
        }
        if let Some((key, value)) = line.split_once(':')
            && !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-'))
        {
            return Ok(ServerLine::Field {
                key: key.to_owned(),
                value: value.to_owned(),
            });
        }
        Err(err(1, "not a line shogi-server sends"))
    }
}
