//! Server lines, rendered byte for byte as shogi-server writes them. Every function returns
//! whole lines, each ending in `\n`.

use crate::command::{Eol, Turn};
use crate::game_name::TimeControl;
use crate::moves::CsaMove;
use shogi_rules::{Color, PieceKind, Position, Square};
use std::fmt::Write as _;

/// The protocol version shogi-server announces in every game summary (`Protocol_Version:1.2`).
pub const PROTOCOL_VERSION: &str = "1.2";

/// `+` for Black, `-` for White.
pub const fn sign(color: Color) -> char {
    match color {
        Color::Black => '+',
        Color::White => '-',
    }
}

/// A position as shogi-server writes one (`Board#to_s`): `P1` to `P9`, each square `+FU`,
/// `-KY` or ` * ` from file 9 to file 1; `P+` and `P-` with `00XX` for each piece in hand when
/// a hand is not empty; then the side to move. shogi-server lists hands in the order the
/// pieces were taken; a [`Position`] does not keep that order, so hands are written rook,
/// bishop, gold, silver, knight, lance, pawn.
pub fn position_lines(position: &Position) -> String {
    let mut out = String::with_capacity(300);
    for rank in 1..=9u8 {
        let _ = write!(out, "P{rank}");
        for file in (1..=9u8).rev() {
            let sq = Square::new(file, rank).expect("files and ranks 1..=9 are squares");
            match position.piece_at(sq) {
                Some(p) => {
                    out.push(sign(p.color));
                    out.push_str(p.kind.csa_name());
                }
                None => out.push_str(" * "),
            }
        }
        out.push('\n');
    }
    for color in Color::ALL {
        let hand = position.hand(color);
        if hand.is_empty() {
            continue;
        }
        let _ = write!(out, "P{}", sign(color));
        for kind in PieceKind::HAND.iter().rev() {
            for _ in 0..hand.count(*kind) {
                out.push_str("00");
                out.push_str(kind.csa_name());
            }
        }
        out.push('\n');
    }
    out.push(sign(position.side_to_move()));
    out.push('\n');
    out
}

/// A move played, with its time in the game's time unit: `+7776FU,T3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedMove {
    /// The move.
    pub mv: CsaMove,
    /// Seconds (or minutes, in a stop-watch game) it took, as the clock counted them.
    pub time: u32,
}

/// What a game summary says, shogi-server's `Game#propose_message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameSummary {
    /// `Game_ID`.
    pub game_id: String,
    /// `Name+`.
    pub black: String,
    /// `Name-`.
    pub white: String,
    /// `To_Move`: the side to move after [`GameSummary::moves`].
    pub to_move: Color,
    /// `Max_Moves` (0: none).
    pub max_moves: u32,
    /// `BEGIN Time`'s unit, total, byoyomi and increment.
    pub time: TimeControl,
    /// `Least_Time_Per_Move`: 0 (CSA's rule since November 2014, shogi-server's default) or 1.
    pub least_time_per_move: u32,
    /// The start, before [`GameSummary::moves`].
    pub position: Position,
    /// Moves already played (a buoy game's), written after the position with their times.
    pub moves: Vec<TimedMove>,
}

impl GameSummary {
    /// The summary as sent to the player of `your_turn`.
    pub fn render(&self, your_turn: Color) -> String {
        let mut out = String::with_capacity(1024);
        out.push_str("BEGIN Game_Summary\n");
        self.header(&mut out, Some(your_turn), self.to_move);
        out.push_str("BEGIN Time\n");
        self.time_lines(&mut out);
        out.push_str("END Time\n");
        out.push_str("BEGIN Position\n");
        out.push_str(&position_lines(&self.position));
        for m in &self.moves {
            let _ = writeln!(out, "{},T{}", m.mv, m.time);
        }
        out.push_str("END Position\nEND Game_Summary\n");
        out
    }

    /// The answer to `%%SHOW` (`Game#show`), every line prefixed `##[SHOW] ` and ending with
    /// `##[SHOW] +OK`: the summary without `Your_Turn` and with `To_Move:+` whatever the start
    /// (as shogi-server writes it), the clocks, the last move and the current position.
    pub fn render_show(&self, state: &ShowState) -> String {
        let mut body = String::with_capacity(1024);
        body.push_str("BEGIN Game_Summary\n");
        self.header(&mut body, None, Color::Black);
        body.push_str("BEGIN Time\n");
        self.time_lines(&mut body);
        let _ = writeln!(body, "Remaining_Time+:{}", state.remaining[0]);
        let _ = writeln!(body, "Remaining_Time-:{}", state.remaining[1]);
        body.push_str("Last_Move:");
        if let Some(m) = state.last_move {
            let _ = write!(body, "{},T{}", m.mv, m.time);
        }
        body.push('\n');
        let _ = writeln!(body, "Current_Turn:{}", state.current_turn);
        body.push_str("END Time\nBEGIN Position\n");
        body.push_str(&position_lines(&state.position));
        body.push_str("END Position\nEND Game_Summary\n");
        prefixed("##[SHOW] ", &body) + "##[SHOW] +OK\n"
    }

    fn header(&self, out: &mut String, your_turn: Option<Color>, to_move: Color) {
        let _ = writeln!(out, "Protocol_Version:{PROTOCOL_VERSION}");
        out.push_str("Protocol_Mode:Server\nFormat:Shogi 1.0\nDeclaration:Jishogi 1.1\n");
        let _ = writeln!(out, "Game_ID:{}", self.game_id);
        let _ = writeln!(out, "Name+:{}", self.black);
        let _ = writeln!(out, "Name-:{}", self.white);
        if let Some(c) = your_turn {
            let _ = writeln!(out, "Your_Turn:{}", sign(c));
        }
        out.push_str("Rematch_On_Draw:NO\n");
        let _ = writeln!(out, "To_Move:{}", sign(to_move));
        let _ = writeln!(out, "Max_Moves:{}", self.max_moves);
    }

    fn time_lines(&self, out: &mut String) {
        let t = &self.time;
        let _ = writeln!(out, "Time_Unit:{}", t.time_unit());
        let _ = writeln!(out, "Total_Time:{}", t.total);
        let _ = writeln!(out, "Byoyomi:{}", t.byoyomi);
        let _ = writeln!(out, "Increment:{}", t.increment);
        let _ = writeln!(out, "Least_Time_Per_Move:{}", self.least_time_per_move);
    }
}

/// A game's state for `%%SHOW`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowState {
    /// Each side's remaining time, Black first (0 before the game starts, as shogi-server).
    pub remaining: [u32; 2],
    /// The last move played.
    pub last_move: Option<TimedMove>,
    /// Moves played so far.
    pub current_turn: u32,
    /// The current position.
    pub position: Position,
}

/// `text`'s lines, each prefixed.
fn prefixed(prefix: &str, text: &str) -> String {
    text.lines().map(|l| format!("{prefix}{l}\n")).collect()
}

/// shogi-server's game id: `<event>+<game name>+<black>+<white>+<YYYYMMDDHHMMSS>`, the time
/// stamp made unique by the server.
pub fn game_id(event: &str, game_name: &str, black: &str, white: &str, stamp: &str) -> String {
    format!("{event}+{game_name}+{black}+{white}+{stamp}")
}

/// `LOGIN:<name> OK`, and for x1 `##[LOGIN] +OK x1`.
pub fn login_ok(name: &str, x1: bool) -> String {
    let mut s = format!("LOGIN:{name} OK\n");
    if x1 {
        s.push_str("##[LOGIN] +OK x1\n");
    }
    s
}

/// A refused login: `LOGIN:incorrect` ending as the client's line did, then, when the client
/// sent four words or more, the reminder of the syntax.
pub fn login_incorrect(eol: Eol, words: usize) -> String {
    let eol = eol.as_str();
    let mut s = format!("LOGIN:incorrect{eol}");
    if words >= 4 {
        s.push_str("type 'LOGIN name password' or 'LOGIN name password x1'");
        s.push_str(eol);
    }
    s
}

/// A login refused because the name is connected already (and playing, or its password
/// differs): `LOGIN:incorrect`, and for an x1 login the reason.
pub fn login_duplicate(name: &str, x1: bool) -> String {
    let mut s = String::from("LOGIN:incorrect\n");
    if x1 {
        let _ = writeln!(s, "username {name} is already connected");
    }
    s
}

/// `LOGOUT:completed`.
pub fn logout() -> &'static str {
    "LOGOUT:completed\n"
}

/// `START:<game id>`.
pub fn start(game_id: &str) -> String {
    format!("START:{game_id}\n")
}

/// `REJECT:<game id> by <name>`.
pub fn reject(game_id: &str, by: &str) -> String {
    format!("REJECT:{game_id} by {by}\n")
}

/// The echo of a move to both players: `+7776FU,T3`.
pub fn move_echo(m: TimedMove) -> String {
    format!("{},T{}\n", m.mv, m.time)
}

/// The echo of a `%KACHI` declaration, sent before its result: `%KACHI,T3`.
pub fn kachi_echo(time: u32) -> String {
    format!("%KACHI,T{time}\n")
}

/// The answer to the keep-alive empty line: an empty line.
pub fn keep_alive() -> &'static str {
    "\n"
}

/// How a game ended, for both players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameEnd {
    /// `%TORYO`: the loser resigned.
    Resign {
        /// Who resigned.
        loser: Color,
    },
    /// The loser disconnected or logged out: written as a resignation.
    Abandon {
        /// Who left.
        loser: Color,
    },
    /// The loser's clock ran out.
    TimeUp {
        /// Whose clock.
        loser: Color,
    },
    /// `%KACHI` judged a win (入玉宣言勝ち).
    Kachi {
        /// The declarer.
        winner: Color,
    },
    /// `%KACHI` judged wrong: the declarer loses.
    IllegalKachi {
        /// The declarer.
        loser: Color,
    },
    /// An illegal move (or `%CHUDAN`, or any other `%` line in play).
    IllegalMove {
        /// Who played it.
        loser: Color,
    },
    /// Perpetual check (連続王手の千日手): the checker loses.
    OuteSennichite {
        /// The checking side.
        loser: Color,
    },
    /// Fourfold repetition (千日手): a draw.
    Sennichite,
    /// The move cap: `#CENSORED`.
    MaxMoves,
    /// The game interrupted (中断): the CSA protocol's `#CHUDAN`, which shogi-server never
    /// sends.
    Chudan,
}

/// One player's result line: `#WIN`, `#LOSE`, `#DRAW` or `#CENSORED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// `#WIN`.
    Win,
    /// `#LOSE`.
    Lose,
    /// `#DRAW`.
    Draw,
    /// `#CENSORED` (打ち切り).
    Censored,
}

impl Outcome {
    /// `#WIN`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Win => "#WIN",
            Outcome::Lose => "#LOSE",
            Outcome::Draw => "#DRAW",
            Outcome::Censored => "#CENSORED",
        }
    }
}

impl GameEnd {
    /// The player of `me`'s result, `None` for `#CHUDAN`, which has none.
    pub fn outcome(self, me: Color) -> Option<Outcome> {
        let by = |loser: Color| {
            if loser == me {
                Outcome::Lose
            } else {
                Outcome::Win
            }
        };
        Some(match self {
            GameEnd::Resign { loser }
            | GameEnd::Abandon { loser }
            | GameEnd::TimeUp { loser }
            | GameEnd::IllegalKachi { loser }
            | GameEnd::IllegalMove { loser }
            | GameEnd::OuteSennichite { loser } => by(loser),
            GameEnd::Kachi { winner } => by(!winner),
            GameEnd::Sennichite => Outcome::Draw,
            GameEnd::MaxMoves => Outcome::Censored,
            GameEnd::Chudan => return None,
        })
    }

    /// The lines the player of `me` receives (shogi-server's `GameResult*#process`):
    /// `%TORYO` `#RESIGN`, `#TIME_UP`, `%KACHI` `#JISHOGI`, `%KACHI` `#ILLEGAL_MOVE`,
    /// `#ILLEGAL_MOVE`, `#OUTE_SENNICHITE`, `#SENNICHITE`, `#MAX_MOVES`, then the outcome.
    pub fn render(self, me: Color) -> String {
        let reason = match self {
            GameEnd::Resign { .. } | GameEnd::Abandon { .. } => "%TORYO\n#RESIGN\n",
            GameEnd::TimeUp { .. } => "#TIME_UP\n",
            GameEnd::Kachi { .. } => "%KACHI\n#JISHOGI\n",
            GameEnd::IllegalKachi { .. } => "%KACHI\n#ILLEGAL_MOVE\n",
            GameEnd::IllegalMove { .. } => "#ILLEGAL_MOVE\n",
            GameEnd::OuteSennichite { .. } => "#OUTE_SENNICHITE\n",
            GameEnd::Sennichite => "#SENNICHITE\n",
            GameEnd::MaxMoves => "#MAX_MOVES\n",
            GameEnd::Chudan => "#CHUDAN\n",
        };
        match self.outcome(me) {
            Some(o) => format!("{reason}{}\n", o.as_str()),
            None => reason.to_owned(),
        }
    }
}

/// A player's state, as `%%WHO` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Logged in, no game asked for.
    Connected,
    /// Waiting for an opponent.
    GameWaiting,
    /// Paired, its `AGREE` awaited.
    AgreeWaiting,
    /// Agreed, the opponent's `AGREE` awaited.
    StartWaiting,
    /// Playing.
    Game,
    /// Gone.
    Finished,
}

impl Status {
    /// shogi-server's name for it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Connected => "connected",
            Status::GameWaiting => "game_waiting",
            Status::AgreeWaiting => "agree_waiting",
            Status::StartWaiting => "start_waiting",
            Status::Game => "game",
            Status::Finished => "finished",
        }
    }
}

/// One `%%WHO` entry (shogi-server's `Player#to_s`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhoEntry {
    /// The name, or for a player with a password `<name>+<md5 of the password>`.
    pub id: String,
    /// `x1` or `CSA`.
    pub x1: bool,
    /// Its state.
    pub status: Status,
    /// The game asked for and the turn, shown while waiting, paired or playing.
    pub game: Option<(String, Turn)>,
}

/// The answer to `%%WHO`.
pub fn who(entries: &[WhoEntry]) -> String {
    let mut s = String::new();
    for e in entries {
        let protocol = if e.x1 { "x1" } else { "CSA" };
        let _ = write!(s, "##[WHO] {} {protocol} {}", e.id, e.status.as_str());
        let shows_game = matches!(
            e.status,
            Status::GameWaiting | Status::AgreeWaiting | Status::StartWaiting | Status::Game
        );
        if shows_game {
            let (name, turn) = e.game.as_ref().map_or(("", "*"), |(n, t)| (n, t.as_str()));
            let _ = write!(s, " {name} {turn}");
        }
        s.push('\n');
    }
    s.push_str("##[WHO] +OK\n");
    s
}

/// The answer to `%%LIST`: the ids of the games being played or prepared.
pub fn list<'a>(game_ids: impl IntoIterator<Item = &'a str>) -> String {
    let mut s: String = game_ids
        .into_iter()
        .map(|id| format!("##[LIST] {id}\n"))
        .collect();
    s.push_str("##[LIST] +OK\n");
    s
}

/// The answer to `%%SHOW` for a game that does not exist.
pub fn show_unknown() -> &'static str {
    "##[SHOW] +OK\n"
}

/// A `%%MONITOR2ON` answer or update: each line of `text` (the game's record so far, or a move
/// and its time, or the result) as `##[MONITOR2][<id>] <line>`, then `+OK`.
pub fn monitor2(game_id: &str, text: &str) -> String {
    let mut s = prefixed(
        &format!("##[MONITOR2][{game_id}] "),
        text.trim_end_matches('\n'),
    );
    let _ = writeln!(s, "##[MONITOR2][{game_id}] +OK");
    s
}

/// The answer to `%%HELP`.
pub fn help() -> &'static str {
    "##[HELP] available commands \"%%WHO\", \"%%CHAT str\", \"%%GAME game_name +\", \"%%GAME game_name -\"\n"
}

/// The answer to `%%VERSION`, with the server's own revision.
pub fn version(revision: &str) -> String {
    format!("##[VERSION] Shogi Server revision {revision}\n##[VERSION] +OK\n")
}

/// The answer to `CHALLENGE`.
pub fn challenge_accepted() -> &'static str {
    "CHALLENGE ACCEPTED\n"
}

/// `##[ERROR] <text>`, the x1 errors (`you are in game status. AGREE is valid in
/// agree_waiting status`, `bad game name: x.`, ...).
pub fn error(text: &str) -> String {
    format!("##[ERROR] {text}\n")
}

/// `##[ERROR] unknown command: <line>`, the password of a `LOGIN` line hidden
/// (`LOGIN name...`), as shogi-server's `ErrorCommand`; `reason` replaces `unknown command`
/// (`A turn identifier is required`).
pub fn unknown_command(reason: &str, line: &str) -> String {
    format!("##[ERROR] {reason}: {}\n", hide_password(line))
}

/// `LOGIN\s*(\w+)\s+.*` (case-insensitive) becomes `LOGIN <name>...`.
fn hide_password(line: &str) -> String {
    let lower = line.to_ascii_lowercase();
    let Some(at) = lower.find("login") else {
        return line.to_owned();
    };
    let after = &line[at + 5..];
    let name_start = after.len() - after.trim_start().len();
    let rest = &after[name_start..];
    let name_len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let tail = &rest[name_len..];
    if name_len == 0 || !tail.starts_with(|c: char| c.is_ascii_whitespace()) {
        return line.to_owned();
    }
    format!("{}LOGIN {}...", &line[..at], &rest[..name_len])
}
