//! The one shared state of a front end: who is logged in, who waits for which game
//! ([`Matcher`]), and the games proposed or played. Every connection's request that touches
//! another connection walks through here; the lock is held for no await.

use crate::conn::{self, ToConn};
use crate::game::{self, GameLink, GamePlayer};
use crate::record::RecordPlayer;
use crate::time::Stamp;
use crate::{Arbiter, Config, Error};
use csa_protocol::server::{self, GameSummary};
use csa_protocol::{Command, GameKind, GameName, Login, Matcher, Pairing, Status, Turn, WhoEntry};
use shogi_rules::{Color, Position};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc};

/// A logged-in player.
#[derive(Debug)]
struct Player {
    name: String,
    x1: bool,
    /// shogi-server's player id (`<name>+<md5>`), for a player who gave a password.
    record: RecordPlayer,
    tx: mpsc::UnboundedSender<ToConn>,
    status: Status,
    game: Option<(String, Turn)>,
}

#[derive(Debug, Default)]
struct State {
    next_key: u64,
    /// By key, in login order.
    players: BTreeMap<u64, Player>,
    names: HashMap<String, u64>,
    matcher: Matcher<u64>,
    /// The ids of the games proposed or played.
    games: BTreeMap<String, mpsc::UnboundedSender<game::GameMsg>>,
    coin: bool,
    /// The last game id's time stamp, as a number: each game's is greater
    /// (`Game#issue_current_time`), so that two games never share an id or a record file.
    last_stamp: u64,
}

/// The shared state.
#[derive(Debug)]
pub struct Lobby {
    /// The settings.
    pub config: Arc<Config>,
    /// The arbiter's client.
    pub arbiter: Arbiter,
    state: Mutex<State>,
}

impl Lobby {
    /// An empty lobby.
    pub fn new(config: Arc<Config>, arbiter: Arbiter) -> Arc<Lobby> {
        Arc::new(Lobby {
            config,
            arbiter,
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere never leaves the state half-changed in a way that matters more than
        // stopping every connection would.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A `LOGIN`: the player's key, or `None` when the name is connected already.
    pub fn login(&self, login: &Login, tx: mpsc::UnboundedSender<ToConn>) -> Option<u64> {
        let password = if login.x1 {
            Some(login.password.clone())
        } else {
            login.csa_request().password
        };
        let mut s = self.state();
        if s.names.contains_key(&login.name) {
            return None;
        }
        s.next_key += 1;
        let key = s.next_key;
        s.names.insert(login.name.clone(), key);
        s.players.insert(
            key,
            Player {
                name: login.name.clone(),
                x1: login.x1,
                record: RecordPlayer::new(&login.name, password.as_deref()),
                tx,
                status: Status::Connected,
                game: None,
            },
        );
        Some(key)
    }

    /// The connection of `key` closed.
    pub fn leave(&self, key: u64) {
        let mut s = self.state();
        s.matcher.cancel(&key);
        if let Some(p) = s.players.remove(&key) {
            s.names.remove(&p.name);
        }
    }

    /// What `%%WHO` shows of `key`, after each line.
    pub fn update(&self, key: u64, status: Status, game: Option<(String, Turn)>) {
        if let Some(p) = self.state().players.get_mut(&key) {
            p.status = status;
            p.game = game;
        }
    }

    /// `%%GAME` / `%%CHALLENGE`: a pairing proposes the game to both players (through their
    /// connections' channels), the seeker included.
    pub fn seek(
        self: &Arc<Self>,
        key: u64,
        game: &GameName,
        turn: Turn,
        challenge: bool,
    ) -> Pairing<u64> {
        let mut s = self.state();
        let Some(name) = s.players.get(&key).map(|p| p.name.clone()) else {
            return Pairing::Waiting;
        };
        s.coin = !s.coin;
        let coin = s.coin;
        let pairing = s.matcher.seek(key, &name, game, turn, challenge, || {
            if coin { Color::Black } else { Color::White }
        });
        if let Pairing::Paired { black, white } = &pairing {
            self.propose(&mut s, game, *black, *white);
        }
        pairing
    }

    fn propose(self: &Arc<Self>, s: &mut State, game: &GameName, black: u64, white: u64) {
        let (Some(b), Some(w)) = (s.players.get(&black), s.players.get(&white)) else {
            return;
        };
        let position = match game.kind() {
            GameKind::Handicap(h) => {
                Position::from_sfen(h.sfen()).unwrap_or_else(|_| Position::startpos())
            }
            _ => Position::startpos(),
        };
        let proposed = Stamp::now();
        let stamp = proposed
            .compact()
            .parse::<u64>()
            .unwrap_or(0)
            .max(s.last_stamp + 1);
        s.last_stamp = stamp;
        let summary = GameSummary {
            game_id: server::game_id(
                &self.config.event,
                game.as_str(),
                &b.name,
                &w.name,
                &stamp.to_string(),
            ),
            black: b.name.clone(),
            white: w.name.clone(),
            to_move: position.side_to_move(),
            max_moves: self.config.max_moves,
            time: game.time(),
            least_time_per_move: self.config.least_time_per_move,
            position,
            moves: Vec::new(),
        };
        let players = [
            GamePlayer {
                tx: b.tx.clone(),
                record: b.record.clone(),
            },
            GamePlayer {
                tx: w.tx.clone(),
                record: w.record.clone(),
            },
        ];
        let tx = game::spawn(self.clone(), summary.clone(), players, proposed);
        s.games.insert(summary.game_id.clone(), tx.clone());
        for (p, me) in [(b, Color::Black), (w, Color::White)] {
            let _ = p.tx.send(ToConn::Paired {
                link: GameLink { tx: tx.clone(), me },
                summary: Box::new(summary.clone()),
                me,
            });
        }
    }

    /// The player stops waiting.
    pub fn cancel(&self, key: u64) {
        self.state().matcher.cancel(&key);
    }

    /// The game ended or was rejected.
    pub fn game_over(&self, game_id: &str) {
        self.state().games.remove(game_id);
    }

    /// The answer to an x1 query.
    pub fn query(&self, key: u64, cmd: Command) -> String {
        let s = self.state();
        match cmd {
            Command::Who => {
                let entries: Vec<WhoEntry> = s
                    .players
                    .values()
                    .map(|p| WhoEntry {
                        id: p.record.player_id.clone().unwrap_or_else(|| p.name.clone()),
                        x1: p.x1,
                        status: p.status,
                        game: p.game.clone(),
                    })
                    .collect();
                server::who(&entries)
            }
            Command::List => server::list(s.games.keys().map(String::as_str)),
            Command::Chat(text) => {
                let name = s.players.get(&key).map_or("", |p| p.name.as_str());
                let line = format!("##[CHAT][{name}] {text}\n");
                for p in s.players.values().filter(|p| p.x1) {
                    let _ = p.tx.send(ToConn::Send(line.clone()));
                }
                String::new()
            }
            Command::Show(_) => server::show_unknown().to_owned(),
            other => server::error(&format!(
                "not supported by this server: {}",
                query_name(&other)
            )),
        }
    }
}

fn query_name(cmd: &Command) -> &'static str {
    match cmd {
        Command::MonitorOn(_) => "%%MONITORON",
        Command::MonitorOff(_) => "%%MONITOROFF",
        Command::Monitor2On(_) => "%%MONITOR2ON",
        Command::Monitor2Off(_) => "%%MONITOR2OFF",
        Command::Rating => "%%RATING",
        Command::SetBuoy { .. } => "%%SETBUOY",
        Command::DeleteBuoy(_) => "%%DELETEBUOY",
        Command::GetBuoyCount(_) => "%%GETBUOYCOUNT",
        Command::Fork { .. } => "%%FORK",
        _ => "this command",
    }
}

/// How many refusals may be written at once; a connection over the limit beyond them is closed
/// without a word, so that a flood of connections holds no more than this many sockets past the
/// limit.
const REFUSALS_AT_ONCE: usize = 64;

/// How long a refusal may take to write: a client that does not read it is not waited for.
const REFUSAL_WRITE: std::time::Duration = std::time::Duration::from_secs(1);

/// How often a run of refusals is logged: one line a period, with the count, not one a
/// connection (a flood would write the log full).
const REFUSAL_LOG_PERIOD: std::time::Duration = std::time::Duration::from_secs(1);

/// Accepts connections until `shutdown`: at most `max_connections` at once, one more is told
/// so and closed (at most [`REFUSALS_AT_ONCE`] told at once, the rest closed at once), and the
/// refusals are logged one line a second.
pub async fn accept(
    listener: TcpListener,
    lobby: Arc<Lobby>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let limit = lobby.config.max_connections;
    let slots = Arc::new(Semaphore::new(limit));
    let refusals = Arc::new(Semaphore::new(REFUSALS_AT_ONCE));
    let mut refused = Refused::default();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => return Ok(()),
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => match slots.clone().try_acquire_owned() {
                Ok(permit) => {
                    tokio::spawn(conn::serve(stream, peer, lobby.clone(), permit));
                }
                Err(_) => {
                    refused.one(peer, limit);
                    if let Ok(permit) = refusals.clone().try_acquire_owned() {
                        let bound = lobby.config.write_timeout.min(REFUSAL_WRITE);
                        tokio::spawn(async move {
                            conn::refuse(stream, bound).await;
                            drop(permit);
                        });
                    }
                }
            },
            Err(e) => {
                // Out of descriptors, most likely: the connections that hold them end by
                // themselves; a pause rather than a spin.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

/// The refusals since the last line logged.
#[derive(Debug, Default)]
struct Refused {
    count: u64,
    logged: Option<tokio::time::Instant>,
}

impl Refused {
    fn one(&mut self, peer: std::net::SocketAddr, limit: usize) {
        self.count += 1;
        let now = tokio::time::Instant::now();
        if self
            .logged
            .is_none_or(|at| now.duration_since(at) >= REFUSAL_LOG_PERIOD)
        {
            tracing::warn!(%peer, limit, refused = self.count, "connections refused: too many connections");
            self.count = 0;
            self.logged = Some(now);
        }
    }
}
