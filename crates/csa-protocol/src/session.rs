//! One connection's session, as a pure state machine: client lines and the server's events in,
//! the lines to send and the requests for the rest of the server out.
//!
//! The states are shogi-server's player statuses (`Player#status`): before `LOGIN`, then
//! `connected`, `game_waiting`, `agree_waiting`, `start_waiting`, `game`, and back to
//! `connected` after a game (x1) or closed (CSA mode). The quirks of shogi-server an engine
//! meets are kept, each named on the method that does it and listed in docs/csa.md:
//!
//! - a line out of turn is held and played in turn ([`Session::line`]);
//! - the same move sent twice in a row is ignored ([`Session::line`]);
//! - `%CHUDAN` (or any other `%` line, or a malformed move) in play is an illegal move
//!   ([`Action::Illegal`]);
//! - a disconnect or `LOGOUT` in play resigns ([`Session::disconnected`], [`Action::Abandon`]);
//! - `%KACHI,T<n>` is echoed before the result ([`Event::KachiTimed`]);
//! - a CSA-mode login asks for its game at once and the connection closes after the game.

use crate::command::{Command, Login, ParseError, ParseErrorKind, Turn, chomp};
use crate::game_name::{GameKind, GameName, GameNameError};
use crate::matcher::SeekRefusal;
use crate::moves::CsaMove;
use crate::server::{self, GameEnd, GameSummary, Status, TimedMove};
use shogi_rules::Color;
use std::collections::VecDeque;

/// What the player asks the game of: the front end checks, times and plays it, then answers
/// with [`Event::Played`], [`Event::KachiTimed`] or [`Event::Ended`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A move, with floodgate's comment if any (for the record).
    Move {
        /// The move.
        mv: CsaMove,
        /// The text after `,'`.
        comment: Option<String>,
    },
    /// `%TORYO`.
    Resign,
    /// `%KACHI`: the front end judges the declaration ([`GameEnd::Kachi`] or
    /// [`GameEnd::IllegalKachi`], after [`Event::KachiTimed`]).
    Kachi,
    /// A line that shogi-server plays as an illegal move: `%CHUDAN`, another `%` line, a `+`
    /// or `-` line that is no move. The player loses ([`GameEnd::IllegalMove`]).
    Illegal(String),
    /// The player disconnected or logged out. shogi-server ends the game at once when it is the
    /// leaver's turn, and otherwise after the opponent's next move (echoed first), with
    /// [`GameEnd::Abandon`].
    Abandon,
}

/// A request from the session to the rest of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Bytes to write: whole lines.
    Send(String),
    /// A well-formed `LOGIN`: the server accepts it ([`Event::LoginAccepted`]) or refuses a
    /// name already connected ([`Event::LoginRefused`]).
    Login(Login),
    /// Look for an opponent ([`crate::Matcher::seek`]); replaces an earlier seek.
    Seek {
        /// The game.
        game: GameName,
        /// The turn asked for.
        turn: Turn,
        /// `%%CHALLENGE`: do not wait.
        challenge: bool,
    },
    /// Stop waiting.
    CancelSeek,
    /// The player agreed to the game proposed.
    Agree,
    /// The player refused it (or left before it started): the server sends
    /// [`Event::Rejected`] to both players.
    Reject,
    /// The player's action in play, in turn.
    Play(Action),
    /// A command answered from the server's state (`%%WHO`, `%%LIST`, `%%SHOW`, the monitors,
    /// `%%RATING`, `%%CHAT`, the buoy commands, `%%FORK`), with [`crate::server`]'s renderers.
    Query(Command),
    /// Close the connection once what was sent is written.
    Close,
}

/// What the server tells a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The `LOGIN` asked for ([`Output::Login`]) is accepted.
    LoginAccepted,
    /// The name is connected already.
    LoginRefused,
    /// Paired: the game summary, and this player's side.
    Paired {
        /// The summary, the same for both players.
        summary: Box<GameSummary>,
        /// This player's side.
        me: Color,
    },
    /// `%%CHALLENGE` found nobody.
    NoRival,
    /// The seek was refused.
    SeekRefused(SeekRefusal),
    /// The opponent sent `AGREE`.
    OpponentAgreed,
    /// The game proposed was rejected, by a player's name or `the Server (timed out)` (after
    /// 120 s without both agreeing, shogi-server's `WAITING_EXPIRATION`).
    Rejected {
        /// Who.
        by: String,
    },
    /// A move was played (either side's), with the time the clock counted.
    Played(TimedMove),
    /// A `%KACHI` was timed; its result follows in [`Event::Ended`].
    KachiTimed {
        /// The time counted.
        time: u32,
    },
    /// The game ended.
    Ended(GameEnd),
}

#[derive(Debug, Clone)]
struct Player {
    name: String,
    x1: bool,
}

#[derive(Debug, Clone)]
struct Play {
    game_id: String,
    me: Color,
    to_move: Color,
    /// An action of ours is with the front end, not yet answered.
    pending: bool,
    /// The game's last move (or our pending one), for the repeated-move rule.
    last_move: Option<CsaMove>,
    /// Lines received out of turn, played in turn.
    held: VecDeque<Vec<u8>>,
}

#[derive(Debug, Clone)]
enum Phase {
    /// Before `LOGIN`.
    Connecting,
    /// `LOGIN` sent to the server; lines received meanwhile.
    LoggingIn {
        login: Login,
        held: VecDeque<Vec<u8>>,
    },
    Connected,
    Waiting {
        game: GameName,
        turn: Turn,
    },
    Proposed {
        game: GameName,
        turn: Turn,
        game_id: String,
        me: Color,
        to_move: Color,
        agreed: bool,
        opponent_agreed: bool,
    },
    Playing {
        game: GameName,
        turn: Turn,
        play: Play,
    },
    Closed,
}

/// One connection's protocol state.
#[derive(Debug, Clone)]
pub struct Session {
    phase: Phase,
    player: Option<Player>,
    revision: String,
}

impl Session {
    /// A new connection; `revision` is what `%%VERSION` answers.
    pub fn new(revision: &str) -> Session {
        Session {
            phase: Phase::Connecting,
            player: None,
            revision: revision.to_owned(),
        }
    }

    /// The player's name once logged in.
    pub fn name(&self) -> Option<&str> {
        self.player.as_ref().map(|p| p.name.as_str())
    }

    /// Whether the player logged in with `x1`.
    pub fn is_x1(&self) -> bool {
        self.player.as_ref().is_some_and(|p| p.x1)
    }

    /// The status `%%WHO` shows (`connected` before and while logging in too).
    pub fn status(&self) -> Status {
        match &self.phase {
            Phase::Connecting | Phase::LoggingIn { .. } | Phase::Connected => Status::Connected,
            Phase::Waiting { .. } => Status::GameWaiting,
            Phase::Proposed { agreed: false, .. } => Status::AgreeWaiting,
            Phase::Proposed { agreed: true, .. } => Status::StartWaiting,
            Phase::Playing { .. } => Status::Game,
            Phase::Closed => Status::Finished,
        }
    }

    /// The game asked for and the turn, while waiting, proposed or playing.
    pub fn game(&self) -> Option<(&GameName, Turn)> {
        match &self.phase {
            Phase::Waiting { game, turn }
            | Phase::Proposed { game, turn, .. }
            | Phase::Playing { game, turn, .. } => Some((game, *turn)),
            _ => None,
        }
    }

    /// The id of the game proposed or played.
    pub fn game_id(&self) -> Option<&str> {
        match &self.phase {
            Phase::Proposed { game_id, .. } => Some(game_id),
            Phase::Playing { play, .. } => Some(&play.game_id),
            _ => None,
        }
    }

    /// One line from the client, with or without its line ending.
    ///
    /// In play, a move, `%TORYO`, `%KACHI` or other `%` line that comes out of turn (or while
    /// the player's previous action is still being judged) is held and played when the turn
    /// comes, in the order received: shogi-server defers it (`Game#handle_one_move`, "Deferred
    /// a move") into the player's socket buffer, which `Player#run` drains first once it is the
    /// player's turn. A move equal to the game's last move is ignored, before it would be held
    /// (`MoveCommand#call`, "Received two sequencial identical moves"): an engine that sends its
    /// move twice plays it once.
    pub fn line(&mut self, line: &[u8]) -> Vec<Output> {
        let mut out = Vec::new();
        self.on_line(line, &mut out);
        out
    }

    /// The server's event.
    pub fn event(&mut self, event: Event) -> Vec<Output> {
        let mut out = Vec::new();
        self.on_event(event, &mut out);
        out
    }

    /// The connection closed. In play this resigns ([`Action::Abandon`]; shogi-server's
    /// `Game#kill`); a game proposed and not started is rejected by this player; a seek is
    /// cancelled.
    pub fn disconnected(&mut self) -> Vec<Output> {
        let out = match &self.phase {
            Phase::Waiting { .. } => vec![Output::CancelSeek],
            Phase::Proposed { .. } => vec![Output::Reject],
            Phase::Playing { .. } => vec![Output::Play(Action::Abandon)],
            _ => Vec::new(),
        };
        self.phase = Phase::Closed;
        out
    }

    fn on_line(&mut self, line: &[u8], out: &mut Vec<Output>) {
        match &mut self.phase {
            Phase::Closed => {}
            Phase::Connecting => match Command::parse(line) {
                Ok(Command::Login(login)) => {
                    out.push(Output::Login(login.clone()));
                    self.phase = Phase::LoggingIn {
                        login,
                        held: VecDeque::new(),
                    };
                }
                _ => {
                    let (text, eol) = chomp(line);
                    let words = String::from_utf8_lossy(text).split_whitespace().count();
                    out.push(Output::Send(server::login_incorrect(eol, words)));
                }
            },
            Phase::LoggingIn { held, .. } => held.push_back(line.to_vec()),
            _ => {
                let parsed = Command::parse(line);
                self.command(line, parsed, Origin::Received, out);
            }
        }
    }

    /// A line after login.
    fn command(
        &mut self,
        raw: &[u8],
        parsed: Result<Command, ParseError>,
        origin: Origin,
        out: &mut Vec<Output>,
    ) {
        let text = String::from_utf8_lossy(chomp(raw).0).into_owned();
        let cmd = match parsed {
            Ok(cmd) => cmd,
            Err(e) => {
                if matches!(e.kind, ParseErrorKind::Move(_)) {
                    // shogi-server hands any `+`/`-` line in play to the board, which finds
                    // it illegal; outside play it is dropped.
                    self.play_line(raw, Action::Illegal(text), None, origin, out);
                } else {
                    out.push(Output::Send(parse_error_answer(&e, &text)));
                }
                return;
            }
        };
        match cmd {
            Command::KeepAlive => out.push(Output::Send(server::keep_alive().to_owned())),
            Command::QuietKeepAlive | Command::Blank | Command::Ignored => {}
            Command::Login(_) => out.push(Output::Send(server::unknown_command(
                "unknown command",
                &text,
            ))),
            Command::Logout => {
                out.push(Output::Send(server::logout().to_owned()));
                out.extend(self.disconnected());
                out.push(Output::Close);
            }
            Command::Agree(_) => self.agree(out),
            Command::Reject(_) => match &self.phase {
                Phase::Proposed { agreed: false, .. } => out.push(Output::Reject),
                _ => out.push(Output::Send(self.status_error("REJECT", "agree_waiting"))),
            },
            Command::Move { mv, comment } => {
                self.play_line(raw, Action::Move { mv, comment }, Some(mv), origin, out)
            }
            Command::Resign => self.play_line(raw, Action::Resign, None, origin, out),
            Command::Kachi => self.play_line(raw, Action::Kachi, None, origin, out),
            Command::Chudan | Command::OtherSpecial(_) => {
                self.play_line(raw, Action::Illegal(text), None, origin, out)
            }
            Command::Game { name, turn } => self.seek(name, turn, false, out),
            Command::Challenge { name, turn } => self.seek(name, turn, true, out),
            Command::CancelGame => match &self.phase {
                Phase::Connected => {}
                Phase::Waiting { .. } => {
                    out.push(Output::CancelSeek);
                    self.phase = Phase::Connected;
                }
                _ => out.push(Output::Send(
                    self.status_error("GAME", "connected or game_waiting"),
                )),
            },
            Command::Help => out.push(Output::Send(server::help().to_owned())),
            Command::Version => out.push(Output::Send(server::version(&self.revision))),
            Command::ChallengeAccepted => {
                out.push(Output::Send(server::challenge_accepted().to_owned()))
            }
            query @ (Command::Who
            | Command::List
            | Command::Show(_)
            | Command::MonitorOn(_)
            | Command::MonitorOff(_)
            | Command::Monitor2On(_)
            | Command::Monitor2Off(_)
            | Command::Rating
            | Command::Chat(_)
            | Command::SetBuoy { .. }
            | Command::DeleteBuoy(_)
            | Command::GetBuoyCount(_)
            | Command::Fork { .. }) => out.push(Output::Query(query)),
        }
    }

    /// `##[ERROR] you are in <status> status. <COMMAND> is valid in <valid> status`.
    fn status_error(&self, command: &str, valid: &str) -> String {
        server::error(&format!(
            "you are in {} status. {command} is valid in {valid} status",
            self.status().as_str()
        ))
    }

    fn agree(&mut self, out: &mut Vec<Output>) {
        let Phase::Proposed {
            agreed: agreed @ false,
            opponent_agreed,
            ..
        } = &mut self.phase
        else {
            out.push(Output::Send(self.status_error("AGREE", "agree_waiting")));
            return;
        };
        *agreed = true;
        let both = *opponent_agreed;
        out.push(Output::Agree);
        if both {
            self.start(out);
        }
    }

    /// Both agreed: `START:<id>` and play.
    fn start(&mut self, out: &mut Vec<Output>) {
        let phase = std::mem::replace(&mut self.phase, Phase::Closed);
        let Phase::Proposed {
            game,
            turn,
            game_id,
            me,
            to_move,
            ..
        } = phase
        else {
            self.phase = phase;
            return;
        };
        out.push(Output::Send(server::start(&game_id)));
        self.phase = Phase::Playing {
            game,
            turn,
            play: Play {
                game_id,
                me,
                to_move,
                pending: false,
                last_move: None,
                held: VecDeque::new(),
            },
        };
    }

    /// `%%GAME` / `%%CHALLENGE` (and a CSA-mode login's game).
    fn seek(&mut self, game: GameName, turn: Turn, challenge: bool, out: &mut Vec<Output>) {
        if !matches!(self.phase, Phase::Connected | Phase::Waiting { .. }) {
            out.push(Output::Send(
                self.status_error("GAME", "connected or game_waiting"),
            ));
            return;
        }
        let refusal = match game.kind() {
            GameKind::Floodgate if turn != Turn::Any => Some(SeekRefusal::TurnForFloodgate {
                turn,
                game: game.as_str().to_owned(),
            }),
            GameKind::Handicap(_) if turn == Turn::Any => Some(SeekRefusal::RandomTurnForHandicap),
            _ => None,
        };
        if let Some(r) = refusal {
            out.push(Output::Send(server::error(&r.to_string())));
            return;
        }
        out.push(Output::Seek {
            game: game.clone(),
            turn,
            challenge,
        });
        self.phase = Phase::Waiting { game, turn };
    }

    /// A line that plays in the game: submitted in turn, held out of turn, dropped outside
    /// play. `mv` is the move, for the repeated-move rule.
    fn play_line(
        &mut self,
        raw: &[u8],
        action: Action,
        mv: Option<CsaMove>,
        origin: Origin,
        out: &mut Vec<Output>,
    ) {
        let Phase::Playing { play, .. } = &mut self.phase else {
            return;
        };
        let received = origin == Origin::Received;
        if received && mv.is_some() && mv == play.last_move {
            return;
        }
        let queued_before = received && !play.held.is_empty();
        if play.pending || play.to_move != play.me || queued_before {
            play.held.push_back(raw.to_vec());
            return;
        }
        play.pending = true;
        if mv.is_some() {
            play.last_move = mv;
        }
        out.push(Output::Play(action));
    }

    /// In turn with nothing pending: the held lines, in order, until one is submitted.
    fn release_held(&mut self, out: &mut Vec<Output>) {
        loop {
            let Phase::Playing { play, .. } = &mut self.phase else {
                return;
            };
            if play.pending || play.to_move != play.me {
                return;
            }
            let Some(line) = play.held.pop_front() else {
                return;
            };
            // Held lines were checked against the repeated-move rule when they came; played
            // now, they meet the opponent's last move, which they cannot repeat.
            let parsed = Command::parse(&line);
            self.command(&line, parsed, Origin::Released, out);
        }
    }

    fn on_event(&mut self, event: Event, out: &mut Vec<Output>) {
        match event {
            Event::LoginAccepted => {
                let Phase::LoggingIn { login, held } =
                    std::mem::replace(&mut self.phase, Phase::Connected)
                else {
                    return;
                };
                out.push(Output::Send(server::login_ok(&login.name, login.x1)));
                self.player = Some(Player {
                    name: login.name.clone(),
                    x1: login.x1,
                });
                if !login.x1 {
                    // CSA mode: `%%GAME <game> <turn>` from the password, at once
                    // (`LoginCSA#process`, `csa_1st_str`).
                    let request = login.csa_request();
                    self.seek(request.game, request.turn, false, out);
                }
                for line in held {
                    self.on_line(&line, out);
                }
            }
            Event::LoginRefused => {
                if let Phase::LoggingIn { login, .. } = &self.phase {
                    out.push(Output::Send(server::login_duplicate(&login.name, login.x1)));
                    out.push(Output::Close);
                    self.phase = Phase::Closed;
                }
            }
            Event::Paired { summary, me } => {
                let Phase::Waiting { game, turn } =
                    std::mem::replace(&mut self.phase, Phase::Connected)
                else {
                    return;
                };
                out.push(Output::Send(summary.render(me)));
                self.phase = Phase::Proposed {
                    game,
                    turn,
                    game_id: summary.game_id,
                    me,
                    to_move: summary.to_move,
                    agreed: false,
                    opponent_agreed: false,
                };
            }
            Event::NoRival => {
                if let Phase::Waiting { game, .. } = &self.phase {
                    out.push(Output::Send(server::error(&format!(
                        "can't find rival for {game}"
                    ))));
                    self.phase = Phase::Connected;
                }
            }
            Event::SeekRefused(r) => {
                if let Phase::Waiting { .. } = &self.phase {
                    out.push(Output::Send(server::error(&r.to_string())));
                    self.phase = Phase::Connected;
                }
            }
            Event::OpponentAgreed => {
                if let Phase::Proposed {
                    agreed,
                    opponent_agreed,
                    ..
                } = &mut self.phase
                {
                    *opponent_agreed = true;
                    if *agreed {
                        self.start(out);
                    }
                }
            }
            Event::Rejected { by } => {
                if let Phase::Proposed { game_id, .. } = &self.phase {
                    out.push(Output::Send(server::reject(game_id, &by)));
                    self.after_game(out);
                }
            }
            Event::Played(m) => {
                let Phase::Playing { play, .. } = &mut self.phase else {
                    return;
                };
                out.push(Output::Send(server::move_echo(m)));
                if m.mv.color == play.me {
                    play.pending = false;
                }
                play.last_move = Some(m.mv);
                play.to_move = !m.mv.color;
                self.release_held(out);
            }
            Event::KachiTimed { time } => {
                if let Phase::Playing { .. } = &self.phase {
                    out.push(Output::Send(server::kachi_echo(time)));
                }
            }
            Event::Ended(end) => {
                let Phase::Playing { play, .. } = &self.phase else {
                    return;
                };
                out.push(Output::Send(end.render(play.me)));
                self.after_game(out);
            }
        }
    }

    /// After a game or a rejection: x1 players stay, CSA-mode connections close
    /// (`Game#finish`).
    fn after_game(&mut self, out: &mut Vec<Output>) {
        if self.is_x1() {
            self.phase = Phase::Connected;
        } else {
            self.phase = Phase::Closed;
            out.push(Output::Close);
        }
    }
}

/// The x1 answer to a line that does not parse (shogi-server's `ErrorCommand` and
/// `GameChallengeCommand` messages; for the limits shogi-server does not have, ours).
fn parse_error_answer(e: &ParseError, text: &str) -> String {
    match &e.kind {
        ParseErrorKind::TurnRequired => {
            server::unknown_command("A turn identifier is required", text)
        }
        ParseErrorKind::GameName { name, error } => {
            let mut s = server::error(&format!("bad game name: {name}."));
            s.push_str(&server::error(&match error {
                GameNameError::Shape => {
                    "game name should consist of three parts like game-1500-60.".to_owned()
                }
                GameNameError::Base(_) => {
                    "invalid identifiers are found or too many characters are used.".to_owned()
                }
                other => format!("{other}."),
            }));
            s
        }
        ParseErrorKind::TooLong { .. } | ParseErrorKind::InvalidUtf8 => {
            server::error(&e.to_string())
        }
        _ => server::unknown_command("unknown command", text),
    }
}

/// Where a line in play comes from: the client just now, or the lines held out of turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Received,
    Released,
}
