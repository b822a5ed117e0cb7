//! Client lines parsed into typed commands, in the order shogi-server's `Command.factory` tries
//! them (so that a line means here what it means there).

use crate::game_name::{GameName, GameNameError, IdentifierError, check_identifier};
use crate::moves::{CsaMove, MoveError};
use std::fmt;

/// The longest line accepted, in bytes, without its line ending. shogi-server has no limit; a
/// move with floodgate's evaluation and principal variation comment is a few hundred bytes.
pub const MAX_LINE_LEN: usize = 8192;

/// The line ending a client used (shogi-server answers `LOGIN:incorrect` with the client's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Eol {
    /// `\n`.
    Lf,
    /// `\r\n`.
    CrLf,
    /// `\r`.
    Cr,
    /// None: the last bytes before the connection closed.
    None,
}

impl Eol {
    /// The ending's bytes.
    pub const fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
            Eol::Cr => "\r",
            Eol::None => "",
        }
    }
}

/// A line without its ending (Ruby's `chomp`: one `\r\n`, `\n` or `\r`), and the ending.
pub fn chomp(line: &[u8]) -> (&[u8], Eol) {
    if let Some(l) = line.strip_suffix(b"\r\n") {
        (l, Eol::CrLf)
    } else if let Some(l) = line.strip_suffix(b"\n") {
        (l, Eol::Lf)
    } else if let Some(l) = line.strip_suffix(b"\r") {
        (l, Eol::Cr)
    } else {
        (line, Eol::None)
    }
}

/// The turn a player asks for in `%%GAME` and `%%CHALLENGE`: `+`, `-` or `*` (either).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Turn {
    /// `+`: Black (先手).
    Black,
    /// `-`: White (後手).
    White,
    /// `*`: either.
    Any,
}

impl Turn {
    /// `+`, `-` or `*`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Turn::Black => "+",
            Turn::White => "-",
            Turn::Any => "*",
        }
    }
}

/// `LOGIN <name> <password> [x1]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    /// The player's name, an identifier.
    pub name: String,
    /// The password token as sent; see [`Login::csa_request`] for what CSA mode reads in it.
    pub password: String,
    /// `x1`: the extended mode, with the `%%` commands and several games a connection.
    pub x1: bool,
}

/// What a CSA-mode (not x1) login asks for: shogi-server reads a game name, a turn and a
/// password (the trip) out of the password token (`LoginCSA#parse_password`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsaLoginRequest {
    /// The game to wait for at once: the token's game name, else `default-1500-0`.
    pub game: GameName,
    /// `+`/`-` from a `-B`/`-W` suffix of the game name (`game-300-10-B`), else `*`.
    pub turn: Turn,
    /// The password proper, stripped; `None` when empty (an unrated player).
    pub password: Option<String>,
}

impl Login {
    /// The CSA-mode reading of the password token: `<game name>` alone (no password),
    /// `<game name>,<trip>` (floodgate's form; the trip is the password, commas after the first
    /// kept), or a password alone (the default game). A game name that is not a good one falls
    /// back to the default game.
    pub fn csa_request(&self) -> CsaLoginRequest {
        let token = self.password.as_str();
        let (game, password) = if GameName::parse(token).is_ok() || turn_suffix(token).is_some() {
            (token, None)
        } else if let Some((game, trip)) = split_trip(token) {
            (game, Some(trip))
        } else {
            ("", Some(token))
        };
        let (game, turn) = match turn_suffix(game) {
            Some((g, t)) => (g, t),
            None => (game, Turn::Any),
        };
        let password = password
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned);
        CsaLoginRequest {
            game: GameName::parse(game).unwrap_or_else(|_| GameName::default_name()),
            turn,
            password,
        }
    }
}

/// `game,trip` split at the first comma as Ruby's `split(",")` with more than one field (so
/// trailing empty fields do not count: `pass,` is a password alone).
fn split_trip(token: &str) -> Option<(&str, &str)> {
    let (game, trip) = token.split_once(',')?;
    if trip.trim_end_matches(',').is_empty() {
        return None;
    }
    Some((game, trip))
}

/// `game-300-10-B` (or `-b`, `-W`, `-w`): the game name and the turn it asks for.
fn turn_suffix(name: &str) -> Option<(&str, Turn)> {
    let (game, letter) = name.rsplit_once('-')?;
    let turn = match letter {
        "b" | "B" => Turn::Black,
        "w" | "W" => Turn::White,
        _ => return None,
    };
    // `^(.+)-\d+-\d+F?-(\w)$`: the shape of a game name, the base not yet checked.
    let clock = game.strip_suffix('F').unwrap_or(game);
    let (rest, byo) = clock.rsplit_once('-')?;
    let (base, total) = rest.rsplit_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (!base.is_empty() && digits(total) && digits(byo)).then_some((game, turn))
}

/// A client line, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `LOGIN <name> <password> [x1]`.
    Login(Login),
    /// `LOGOUT`.
    Logout,
    /// `AGREE [game id]`; shogi-server ignores the id.
    Agree(Option<String>),
    /// `REJECT [game id]`; shogi-server ignores the id.
    Reject(Option<String>),
    /// A move, with the comment after `,'` (floodgate's evaluation and principal variation).
    Move {
        /// The move.
        mv: CsaMove,
        /// The comment's text after `'`, when the line has `,'...`.
        comment: Option<String>,
    },
    /// `%TORYO`: resign (投了).
    Resign,
    /// `%KACHI`: declare a win by entering king (入玉宣言).
    Kachi,
    /// `%CHUDAN`: the CSA protocol's request to interrupt; shogi-server has no such command and
    /// plays it as an illegal move.
    Chudan,
    /// Any other `%` line (`%FOO`): shogi-server plays it as an illegal move too.
    OtherSpecial(String),
    /// The empty line: keep-alive, answered with an empty line.
    KeepAlive,
    /// One space: keep-alive without an answer (shogi-server's extension).
    QuietKeepAlive,
    /// Other blank lines (spaces, tabs): ignored.
    Blank,
    /// `%%GAME <name> <+|-|*>`: wait for an opponent asking for the same game.
    Game {
        /// The game.
        name: GameName,
        /// The turn asked for.
        turn: Turn,
    },
    /// `%%CHALLENGE <name> <+|-|*>`: play someone already waiting, or give up.
    Challenge {
        /// The game.
        name: GameName,
        /// The turn asked for.
        turn: Turn,
    },
    /// `%%GAME` alone: stop waiting.
    CancelGame,
    /// `%%WHO`.
    Who,
    /// `%%LIST`.
    List,
    /// `%%SHOW <game id>`.
    Show(String),
    /// `%%MONITORON <game id>`.
    MonitorOn(String),
    /// `%%MONITOROFF <game id>`.
    MonitorOff(String),
    /// `%%MONITOR2ON <game id>`.
    Monitor2On(String),
    /// `%%MONITOR2OFF <game id>`.
    Monitor2Off(String),
    /// `%%HELP`.
    Help,
    /// `%%RATING`.
    Rating,
    /// `%%VERSION`.
    Version,
    /// `%%CHAT <message>`.
    Chat(String),
    /// `CHALLENGE`: the CSA test server's greeting, answered `CHALLENGE ACCEPTED`.
    ChallengeAccepted,
    /// `%%SETBUOY <game> <moves> [count]`.
    SetBuoy {
        /// A `buoy_` game name, unchecked.
        game: String,
        /// The moves, `+7776FU-3334FU` with optional `,T<n>`, unchecked.
        moves: String,
        /// How many games may start from it (default 1).
        count: u32,
    },
    /// `%%DELETEBUOY <game>`.
    DeleteBuoy(String),
    /// `%%GETBUOYCOUNT <game>`.
    GetBuoyCount(String),
    /// `%%FORK <source game id> [<new buoy game> [n]]`.
    Fork {
        /// The game forked.
        source: String,
        /// The new buoy game's name; shogi-server makes one up when absent.
        new_game: Option<String>,
        /// The move to fork after (1-based).
        nth: Option<u32>,
    },
    /// `%%%...`: 81Dojo's commands, ignored.
    Ignored,
}

/// What is wrong with a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    /// Longer than [`MAX_LINE_LEN`].
    #[error("line of {len} bytes, longer than {MAX_LINE_LEN}")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// Not UTF-8.
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// A line shogi-server does not know (`##[ERROR] unknown command`).
    #[error("unknown command")]
    Unknown,
    /// `LOGIN` without a name and a password, or with a fourth word other than `x1`.
    #[error("type 'LOGIN name password' or 'LOGIN name password x1'")]
    LoginShape,
    /// `LOGIN` with a name that is no identifier.
    #[error("bad player name: {0}")]
    PlayerName(IdentifierError),
    /// A line starting with `+` or `-` that is not a move.
    #[error("bad move: {0}")]
    Move(MoveError),
    /// `%%GAME <name>` or `%%CHALLENGE <name>` without `+`, `-` or `*`.
    #[error("A turn identifier is required")]
    TurnRequired,
    /// `%%GAME` or `%%CHALLENGE` with a name that is no game name.
    #[error("bad game name: {name}: {error}")]
    GameName {
        /// The name as sent.
        name: String,
        /// Why.
        error: GameNameError,
    },
    /// `%%SETBUOY`'s count or `%%FORK`'s move number is not a number that fits.
    #[error("bad number")]
    Number,
}

/// A line that is not a command: what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {kind}")]
pub struct ParseError {
    /// 1-based byte column where the fault starts (1 for the whole line).
    pub column: usize,
    /// What.
    pub kind: ParseErrorKind,
}

impl ParseError {
    fn at(column: usize, kind: ParseErrorKind) -> ParseError {
        ParseError { column, kind }
    }
}

/// Ruby's `\s`: space, tab, newline, vertical tab, form feed, carriage return.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// `^<prefix>\s+(\S+)`: the first word after the prefix and some space.
fn word_after<'a>(line: &'a str, prefix: &str) -> Option<(&'a str, &'a str)> {
    let rest = line.strip_prefix(prefix)?;
    let trimmed = rest.trim_start_matches(is_space);
    if trimmed.len() == rest.len() || trimmed.is_empty() {
        return None;
    }
    let end = trimmed.find(is_space).unwrap_or(trimmed.len());
    Some((&trimmed[..end], &trimmed[end..]))
}

impl Command {
    /// Parses one line, with or without its line ending, as shogi-server's `Command.factory`
    /// does after `LOGIN` (and `LOGIN` itself, which shogi-server reads before the others).
    /// Never panics, whatever the bytes.
    pub fn parse(line: &[u8]) -> Result<Command, ParseError> {
        let (line, _) = chomp(line);
        if line.len() > MAX_LINE_LEN {
            return Err(ParseError::at(
                MAX_LINE_LEN + 1,
                ParseErrorKind::TooLong { len: line.len() },
            ));
        }
        let line = std::str::from_utf8(line)
            .map_err(|e| ParseError::at(e.valid_up_to() + 1, ParseErrorKind::InvalidUtf8))?;
        Command::parse_str(line)
    }

    fn parse_str(line: &str) -> Result<Command, ParseError> {
        let unknown = || ParseError::at(1, ParseErrorKind::Unknown);
        match line {
            "" => return Ok(Command::KeepAlive),
            " " => return Ok(Command::QuietKeepAlive),
            _ => {}
        }
        let bytes = line.as_bytes();
        if bytes[0] == b'%' && bytes.get(1).is_some_and(|&b| b != b'%') {
            return Ok(parse_special(line));
        }
        if matches!(bytes[0], b'+' | b'-') && bytes.get(1).is_some_and(|&b| b != b'%') {
            return parse_move(line);
        }
        if line.starts_with("LOGIN") && line[5..].starts_with(is_space) {
            return parse_login(line);
        }
        if let Some(rest) = line.strip_prefix("REJECT") {
            return Ok(Command::Reject(game_id_arg(rest)));
        }
        if let Some(rest) = line.strip_prefix("AGREE") {
            return Ok(Command::Agree(game_id_arg(rest)));
        }
        for (prefix, make) in [
            ("%%SHOW", Command::Show as fn(String) -> Command),
            ("%%MONITORON", Command::MonitorOn),
            ("%%MONITOROFF", Command::MonitorOff),
            ("%%MONITOR2ON", Command::Monitor2On),
            ("%%MONITOR2OFF", Command::Monitor2Off),
        ] {
            if let Some((id, _)) = word_after(line, prefix) {
                return Ok(make(id.to_owned()));
            }
        }
        if line.starts_with("%%HELP") {
            return Ok(Command::Help);
        }
        if line.starts_with("%%RATING") {
            return Ok(Command::Rating);
        }
        if line.starts_with("%%VERSION") {
            return Ok(Command::Version);
        }
        if let Some(rest) = line.strip_prefix("%%GAME")
            && rest.chars().all(is_space)
        {
            return Ok(Command::CancelGame);
        }
        for (prefix, challenge) in [("%%GAME", false), ("%%CHALLENGE", true)] {
            if let Some((name, rest)) = word_after(line, prefix) {
                return parse_game(line, name, rest, challenge);
            }
        }
        if let Some(rest) = line.strip_prefix("%%CHAT") {
            let message = rest.trim_start_matches(is_space);
            if message.len() < rest.len() && !message.is_empty() {
                return Ok(Command::Chat(message.to_owned()));
            }
        }
        if line.starts_with("%%LIST") {
            return Ok(Command::List);
        }
        if line.starts_with("%%WHO") {
            return Ok(Command::Who);
        }
        if line.starts_with("LOGOUT") {
            return Ok(Command::Logout);
        }
        if line.starts_with("CHALLENGE") {
            return Ok(Command::ChallengeAccepted);
        }
        if let Some((game, rest)) = word_after(line, "%%SETBUOY")
            && let Some((moves, rest)) = word_after(rest, "")
        {
            // `(.*)` then `^\s+(\d*)`: a count when digits follow some space, 0 for none.
            let count = match rest.trim_start_matches(is_space) {
                t if t.len() == rest.len() => 1,
                t => {
                    let digits: &str = &t[..t.bytes().take_while(u8::is_ascii_digit).count()];
                    if digits.is_empty() {
                        0
                    } else {
                        digits
                            .parse()
                            .map_err(|_| ParseError::at(1, ParseErrorKind::Number))?
                    }
                }
            };
            return Ok(Command::SetBuoy {
                game: game.to_owned(),
                moves: moves.to_owned(),
                count,
            });
        }
        if let Some((game, _)) = word_after(line, "%%DELETEBUOY") {
            return Ok(Command::DeleteBuoy(game.to_owned()));
        }
        if let Some((game, _)) = word_after(line, "%%GETBUOYCOUNT") {
            return Ok(Command::GetBuoyCount(game.to_owned()));
        }
        if let Some((source, rest)) = word_after(line, "%%FORK") {
            if rest.is_empty() {
                return Ok(Command::Fork {
                    source: source.to_owned(),
                    new_game: None,
                    nth: None,
                });
            }
            if let Some((new_game, rest)) = word_after(rest, "") {
                let t = rest.trim_start_matches(is_space);
                let digits = &t[..t.bytes().take_while(u8::is_ascii_digit).count()];
                let nth = if t.len() < rest.len() && !digits.is_empty() {
                    Some(
                        digits
                            .parse()
                            .map_err(|_| ParseError::at(1, ParseErrorKind::Number))?,
                    )
                } else {
                    None
                };
                return Ok(Command::Fork {
                    source: source.to_owned(),
                    new_game: Some(new_game.to_owned()),
                    nth,
                });
            }
        }
        if line.chars().all(is_space) {
            return Ok(Command::Blank);
        }
        if line.starts_with("%%%") && line.as_bytes().get(3).is_some_and(|&b| b != b'%') {
            return Ok(Command::Ignored);
        }
        Err(unknown())
    }
}

/// `AGREE`'s and `REJECT`'s optional id: the first word after them.
fn game_id_arg(rest: &str) -> Option<String> {
    rest.split(is_space)
        .find(|w| !w.is_empty())
        .map(str::to_owned)
}

/// `%TORYO`, `%KACHI` (shogi-server takes any line starting so), `%CHUDAN`, other `%` lines.
fn parse_special(line: &str) -> Command {
    if line.starts_with("%TORYO") {
        Command::Resign
    } else if line.starts_with("%KACHI") {
        Command::Kachi
    } else if line == "%CHUDAN" {
        Command::Chudan
    } else {
        Command::OtherSpecial(line.to_owned())
    }
}

/// `+7776FU`, `+7776FU,'comment`; what follows another comma is ignored, as shogi-server does.
fn parse_move(line: &str) -> Result<Command, ParseError> {
    let (mv, rest) = match line.split_once(',') {
        Some((mv, rest)) => (mv, Some(rest)),
        None => (line, None),
    };
    let mv = CsaMove::parse(mv).map_err(|e| {
        let column = match &e {
            MoveError::Length { .. } | MoveError::Side => 1,
            MoveError::Digit { column } | MoveError::OffBoard { column } => *column,
            MoveError::Piece { .. } => 6,
        };
        ParseError::at(column, ParseErrorKind::Move(e))
    })?;
    let comment = rest.and_then(|r| r.strip_prefix('\'')).map(str::to_owned);
    Ok(Command::Move { mv, comment })
}

/// `LOGIN <name> <password> [x1]` (shogi-server's `Login.good_login?`: three words, or four
/// with `x1` last; the name an identifier).
fn parse_login(line: &str) -> Result<Command, ParseError> {
    let words: Vec<&str> = line.split(is_space).filter(|w| !w.is_empty()).collect();
    let x1 = match words.as_slice() {
        [_, _, _] => false,
        [_, _, _, "x1"] => true,
        _ => return Err(ParseError::at(1, ParseErrorKind::LoginShape)),
    };
    let name = words[1];
    check_identifier(name).map_err(|e| {
        let column = line.find(name).map_or(1, |i| i + 1);
        ParseError::at(column, ParseErrorKind::PlayerName(e))
    })?;
    Ok(Command::Login(Login {
        name: name.to_owned(),
        password: words[2].to_owned(),
        x1,
    }))
}

/// `%%GAME <name> <+|-|*>` and `%%CHALLENGE`: the turn, then nothing but space.
fn parse_game(line: &str, name: &str, rest: &str, challenge: bool) -> Result<Command, ParseError> {
    let column = |s: &str| s.as_ptr() as usize - line.as_ptr() as usize + 1;
    let turn = rest.trim_start_matches(is_space);
    let turn = match turn.trim_end_matches(is_space) {
        "+" if turn.len() < rest.len() => Turn::Black,
        "-" if turn.len() < rest.len() => Turn::White,
        "*" if turn.len() < rest.len() => Turn::Any,
        _ => return Err(ParseError::at(column(turn), ParseErrorKind::TurnRequired)),
    };
    let name = GameName::parse(name).map_err(|error| {
        ParseError::at(
            column(name),
            ParseErrorKind::GameName {
                name: name.to_owned(),
                error,
            },
        )
    })?;
    Ok(if challenge {
        Command::Challenge { name, turn }
    } else {
        Command::Game { name, turn }
    })
}

impl fmt::Display for Turn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
