//! The one shared state of a front end: who is logged in, who waits for which game, and the
//! games proposed or played. Every connection's request that touches another connection walks
//! through here; the lock is held for no await.
//!
//! Two ways to run: in one process ([`Lobby::new`]: the [`Matcher`] and the names in memory,
//! as shogi-server), or shared by several instances on NATS ([`Lobby::on_nats`]: names and
//! seekers in the bucket of [`crate::shared`], each game played in two halves, one an instance,
//! that talk on `csa.game.<arbiter id>`; docs/csa.md, "Running more than one").

use crate::conn::{self, ToConn};
use crate::game::{self, GameLink, GameMsg, GamePlayer};
use crate::record::RecordPlayer;
use crate::shared::{self, NameEntry, Proposal, Relay, SeekEntry, Shared};
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
    /// When it logged in (Unix milliseconds), for the shared lobby's order.
    login_ms: u64,
    /// The game it waits for in the shared lobby.
    seeking: Option<GameName>,
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

impl State {
    /// Takes the connection of `former` out of the lobby and tells it to close, if it logged in
    /// as `record` (the same name and password) and waits for no game proposed or played.
    fn nudge(&mut self, former: u64, record: &RecordPlayer) -> bool {
        let Some(p) = self.players.get(&former) else {
            return false;
        };
        let idle = matches!(p.status, Status::Connected | Status::GameWaiting);
        if !idle || p.record.player_id != record.player_id {
            return false;
        }
        self.matcher.cancel(&former);
        if let Some(p) = self.players.remove(&former) {
            self.names.remove(&p.name);
            let _ = p.tx.send(ToConn::Nudged);
        }
        true
    }
}

/// The shared state.
#[derive(Debug)]
pub struct Lobby {
    /// The settings.
    pub config: Arc<Config>,
    /// The arbiter's client.
    pub arbiter: Arbiter,
    state: Mutex<State>,
    /// The bucket, when the lobby is shared on NATS.
    shared: Option<Arc<Shared>>,
}

impl Lobby {
    /// An empty lobby.
    pub fn new(config: Arc<Config>, arbiter: Arbiter) -> Arc<Lobby> {
        Arc::new(Lobby {
            config,
            arbiter,
            state: Mutex::new(State::default()),
            shared: None,
        })
    }

    /// A lobby shared with the other instances through the JetStream API `js`: binds to the
    /// bucket, takes proposals on `csa.conn.<instance>` and rewrites its names every
    /// [`shared::BEAT`].
    pub async fn on_nats(
        config: Arc<Config>,
        arbiter: Arbiter,
        js: async_nats::jetstream::Context,
    ) -> Result<Arc<Lobby>, shared::SharedError> {
        let client = js.client();
        let sh = Arc::new(Shared::open(js).await?);
        let proposals = client.subscribe(shared::conn_subject(&sh.instance)).await?;
        let chat = client.subscribe(shared::CHAT_SUBJECT).await?;
        tracing::info!(instance = %sh.instance, "the CSA lobby is shared on NATS");
        let lobby = Arc::new(Lobby {
            config,
            arbiter,
            state: Mutex::new(State::default()),
            shared: Some(sh.clone()),
        });
        tokio::spawn(sh.beat());
        tokio::spawn(serve_proposals(Arc::downgrade(&lobby), proposals));
        tokio::spawn(relay_chat(Arc::downgrade(&lobby), chat));
        Ok(lobby)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere never leaves the state half-changed in a way that matters more than
        // stopping every connection would.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A `LOGIN`: the player's key, or `None` when the name is connected already (here, or on
    /// another instance of a shared lobby). As shogi-server, a name connected here with the
    /// same password and waiting for no game proposed or played is taken over: the former
    /// connection is closed ([`ToConn::Nudged`]) and the new one logged in (a client that
    /// logs out and in again at once, before its `LOGOUT` was read, is not refused). A shared
    /// lobby refuses it, the name's key being the other connection's.
    pub async fn login(&self, login: &Login, tx: mpsc::UnboundedSender<ToConn>) -> Option<u64> {
        let password = if login.x1 {
            Some(login.password.clone())
        } else {
            login.csa_request().password
        };
        let record = RecordPlayer::new(&login.name, password.as_deref());
        let key = {
            let mut s = self.state();
            if let Some(&former) = s.names.get(&login.name) {
                if self.shared.is_some() || !s.nudge(former, &record) {
                    return None;
                }
                tracing::info!(name = %login.name, "login forcibly, nudging the former player");
            }
            s.next_key += 1;
            let key = s.next_key;
            s.names.insert(login.name.clone(), key);
            s.players.insert(
                key,
                Player {
                    name: login.name.clone(),
                    x1: login.x1,
                    record: record.clone(),
                    tx,
                    status: Status::Connected,
                    game: None,
                    login_ms: shared::now_ms(),
                    seeking: None,
                },
            );
            key
        };
        let Some(sh) = &self.shared else {
            return Some(key);
        };
        let entry = NameEntry {
            instance: String::new(),
            beat_ms: 0,
            id: record
                .player_id
                .clone()
                .unwrap_or_else(|| login.name.clone()),
            x1: login.x1,
            status: shared::status_code(Status::Connected),
            game: None,
            playing: None,
            login_ms: shared::now_ms(),
        };
        match sh.login(&login.name, entry).await {
            Ok(true) => Some(key),
            answer => {
                if let Err(e) = answer {
                    tracing::error!(name = %login.name, error = %e, "the shared lobby is unavailable; login refused");
                }
                let mut s = self.state();
                s.players.remove(&key);
                s.names.remove(&login.name);
                None
            }
        }
    }

    /// The connection of `key` closed.
    pub async fn leave(&self, key: u64) {
        let left = {
            let mut s = self.state();
            s.matcher.cancel(&key);
            let p = s.players.remove(&key);
            if let Some(p) = &p {
                s.names.remove(&p.name);
            }
            p
        };
        if let (Some(sh), Some(p)) = (&self.shared, left) {
            if let Some(game) = &p.seeking {
                sh.unseek(game, &sh.instance, key).await;
            }
            sh.logout(&p.name).await;
        }
    }

    /// What `%%WHO` shows of `key`, after each line; `playing` is the CSA id of the game
    /// proposed or played (`%%LIST`).
    pub async fn update(
        &self,
        key: u64,
        status: Status,
        game: Option<(String, Turn)>,
        playing: Option<String>,
    ) {
        let name = {
            let mut s = self.state();
            let Some(p) = s.players.get_mut(&key) else {
                return;
            };
            p.status = status;
            p.game.clone_from(&game);
            p.name.clone()
        };
        if let Some(sh) = &self.shared {
            sh.rewrite(&name, false, |e| {
                e.status = shared::status_code(status);
                e.game = game.map(|(g, t)| (g, shared::turn_char(t)));
                e.playing = playing;
            })
            .await;
        }
    }

    /// `%%GAME` / `%%CHALLENGE`: a pairing proposes the game to both players (through their
    /// connections' channels), the seeker included.
    pub async fn seek(
        self: &Arc<Self>,
        key: u64,
        game: &GameName,
        turn: Turn,
        challenge: bool,
    ) -> Pairing<u64> {
        if let Some(sh) = &self.shared {
            return self.seek_shared(sh, key, game, turn, challenge).await;
        }
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

    /// The next game id's stamp, greater than the last (`Game#issue_current_time`).
    fn next_stamp(s: &mut State, proposed: Stamp) -> u64 {
        let stamp = proposed
            .compact()
            .parse::<u64>()
            .unwrap_or(0)
            .max(s.last_stamp + 1);
        s.last_stamp = stamp;
        stamp
    }

    /// The summary of `game` between `black` and `white`.
    fn summary(&self, game: &GameName, black: &str, white: &str, game_id: String) -> GameSummary {
        let position = match game.kind() {
            GameKind::Handicap(h) => {
                Position::from_sfen(h.sfen()).unwrap_or_else(|_| Position::startpos())
            }
            _ => Position::startpos(),
        };
        GameSummary {
            game_id,
            black: black.to_owned(),
            white: white.to_owned(),
            to_move: position.side_to_move(),
            max_moves: self.config.max_moves,
            time: game.time(),
            least_time_per_move: self.config.least_time_per_move,
            position,
            moves: Vec::new(),
        }
    }

    fn propose(self: &Arc<Self>, s: &mut State, game: &GameName, black: u64, white: u64) {
        let (Some(b), Some(w)) = (s.players.get(&black), s.players.get(&white)) else {
            return;
        };
        let proposed = Stamp::now();
        let (b_name, w_name) = (b.name.clone(), w.name.clone());
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
        let stamp = Self::next_stamp(s, proposed);
        let game_id = server::game_id(
            &self.config.event,
            game.as_str(),
            &b_name,
            &w_name,
            &stamp.to_string(),
        );
        let summary = self.summary(game, &b_name, &w_name, game_id);
        let tx = game::spawn(self.clone(), summary.clone(), players.clone(), proposed);
        s.games.insert(summary.game_id.clone(), tx.clone());
        for (p, me) in players.iter().zip([Color::Black, Color::White]) {
            let _ = p.tx.send(ToConn::Paired {
                link: GameLink { tx: tx.clone(), me },
                summary: Box::new(summary.clone()),
                me,
            });
        }
    }

    /// The player stops waiting.
    pub async fn cancel(&self, key: u64) {
        let seeking = {
            let mut s = self.state();
            s.matcher.cancel(&key);
            s.players.get_mut(&key).and_then(|p| p.seeking.take())
        };
        if let (Some(sh), Some(game)) = (&self.shared, seeking) {
            sh.unseek(&game, &sh.instance, key).await;
        }
    }

    /// Sends a `%%CHAT` line to this instance's x1 players.
    fn chat(s: &State, line: &str) {
        for p in s.players.values().filter(|p| p.x1) {
            let _ = p.tx.send(ToConn::Send(line.to_owned()));
        }
    }

    /// The game ended or was rejected.
    pub fn game_over(&self, game_id: &str) {
        self.state().games.remove(game_id);
    }

    /// The answer to an x1 query.
    pub async fn query(&self, key: u64, cmd: Command) -> String {
        if let (Some(sh), Command::Who | Command::List) = (&self.shared, &cmd) {
            let names = match sh.names().await {
                Ok(n) => n,
                Err(e) => return server::error(&format!("the lobby is unavailable: {e}")),
            };
            if cmd == Command::Who {
                let entries: Vec<WhoEntry> = names.iter().map(shared::who_entry).collect();
                return server::who(&entries);
            }
            let mut ids: Vec<&str> = names.iter().filter_map(|n| n.playing.as_deref()).collect();
            ids.sort_unstable();
            ids.dedup();
            return server::list(ids);
        }
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
                match &self.shared {
                    // Every instance relays it to its x1 players, this one included.
                    Some(sh) => {
                        let client = sh.client.clone();
                        tokio::spawn(async move {
                            if let Err(e) = client.publish(shared::CHAT_SUBJECT, line.into()).await
                            {
                                tracing::warn!(error = %e, "a chat line was not sent");
                            }
                        });
                    }
                    None => Self::chat(&s, &line),
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

    /// A seek in the shared lobby. The later seeker's instance pairs: it proposes the game to
    /// the rival's instance, and plays its own player's half.
    async fn seek_shared(
        self: &Arc<Self>,
        sh: &Arc<Shared>,
        key: u64,
        game: &GameName,
        turn: Turn,
        challenge: bool,
    ) -> Pairing<u64> {
        let (me, previous, coin) = {
            let mut s = self.state();
            s.coin = !s.coin;
            let coin = if s.coin { Color::Black } else { Color::White };
            let Some(p) = s.players.get_mut(&key) else {
                return Pairing::Waiting;
            };
            // Set before the bucket lists it, so that a proposal that comes at once finds it.
            let previous = p.seeking.replace(game.clone());
            let me = SeekEntry {
                instance: sh.instance.clone(),
                key,
                name: p.name.clone(),
                player_id: p.record.player_id.clone(),
                turn: shared::turn_char(turn),
                login_ms: p.login_ms,
            };
            (me, previous, coin)
        };
        if let Some(previous) = previous.filter(|g| g != game) {
            sh.unseek(&previous, &sh.instance, key).await;
        }
        let pairing = match sh.seek(&me, game, challenge, coin).await {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(game = game.as_str(), error = %e, "the shared lobby is unavailable; the seek waits unlisted");
                return Pairing::Waiting;
            }
        };
        if !matches!(pairing, Pairing::Waiting)
            && let Some(p) = self.state().players.get_mut(&key)
        {
            p.seeking = None;
        }
        match pairing {
            Pairing::Paired { black, white } => {
                let (mine, rival) = if black == me {
                    (Color::Black, white)
                } else {
                    (Color::White, black)
                };
                self.propose_shared(sh, game, key, mine, &rival).await;
                Pairing::Waiting
            }
            Pairing::Waiting => Pairing::Waiting,
            Pairing::NoRival => Pairing::NoRival,
            Pairing::Refused(r) => Pairing::Refused(r),
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

/// The shared lobby's proposals, one game a proposal.
impl Lobby {
    /// Proposes the game paired by this instance to the rival's instance (a request on
    /// `csa.conn.<instance>`, [`shared::PROPOSE_DEADLINE`] to answer), and starts this
    /// instance's half. No answer in time, or "gone": the seeker gets the game's `REJECT` by the
    /// rival's name, as for a rival who leaves a proposed game.
    async fn propose_shared(
        self: &Arc<Self>,
        sh: &Arc<Shared>,
        game: &GameName,
        key: u64,
        mine: Color,
        rival: &SeekEntry,
    ) {
        let proposed = Stamp::now();
        let Some((player, name)) = self.state().players.get(&key).map(|p| {
            let player = GamePlayer {
                tx: p.tx.clone(),
                record: p.record.clone(),
            };
            (player, p.name.clone())
        }) else {
            return;
        };
        let me = (name, player.record.player_id.clone());
        let them = (rival.name.clone(), rival.player_id.clone());
        let [black, white] = match mine {
            Color::Black => [me, them],
            Color::White => [them, me],
        };
        let game_id = {
            let mut s = self.state();
            let stamp = Self::next_stamp(&mut s, proposed);
            server::game_id(
                &self.config.event,
                game.as_str(),
                &black.0,
                &white.0,
                &stamp.to_string(),
            )
        };
        let arbiter_id = game::arbiter_id(proposed, Some(&sh.instance));
        let proposal = Proposal {
            key: rival.key,
            name: rival.name.clone(),
            game: game.as_str().to_owned(),
            game_id,
            arbiter_id,
            players: [black, white],
            color: shared::color_char(!mine),
            proposed: proposed.secs(),
        };
        let Some(tx) = self.start_half(sh, &proposal, mine, player).await else {
            return;
        };
        let taken = match serde_json::to_vec(&proposal) {
            Ok(body) => tokio::time::timeout(
                shared::PROPOSE_DEADLINE,
                sh.client
                    .request(shared::conn_subject(&rival.instance), body.into()),
            )
            .await
            .ok()
            .and_then(Result::ok)
            .is_some_and(|m| &m.payload[..] == b"ok"),
            Err(_) => false,
        };
        if !taken {
            tracing::info!(game = %proposal.game_id, rival = %rival.name, "the rival's instance did not take the game");
            let _ = tx.send(GameMsg::Relay(Relay::Reject));
        }
    }

    /// Starts this instance's half of the game `p` for `player`, who plays `me`, and shows it
    /// the summary: `None` when the game's subject could not be followed.
    async fn start_half(
        self: &Arc<Self>,
        sh: &Arc<Shared>,
        p: &Proposal,
        me: Color,
        player: GamePlayer,
    ) -> Option<tokio::sync::mpsc::UnboundedSender<GameMsg>> {
        let game = GameName::parse(&p.game).ok()?;
        let relay = match sh
            .client
            .subscribe(shared::game_subject(&p.arbiter_id))
            .await
        {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(game = %p.game_id, error = %e, "the game's subject could not be followed");
                return None;
            }
        };
        let summary = self.summary(&game, &p.players[0].0, &p.players[1].0, p.game_id.clone());
        let records = p
            .players
            .clone()
            .map(|(name, player_id)| RecordPlayer { name, player_id });
        let half = game::Half {
            me,
            arbiter_id: p.arbiter_id.clone(),
            client: sh.client.clone(),
            relay,
        };
        let tx = game::spawn_half(
            self.clone(),
            summary.clone(),
            records,
            player.clone(),
            half,
            Stamp::from_secs(p.proposed),
        );
        self.state().games.insert(p.game_id.clone(), tx.clone());
        let _ = player.tx.send(ToConn::Paired {
            link: GameLink { tx: tx.clone(), me },
            summary: Box::new(summary),
            me,
        });
        Some(tx)
    }

    /// A proposal from the pairing instance: taken when its player still waits for the game.
    async fn take_proposal(self: &Arc<Self>, p: Proposal) -> bool {
        let Some(sh) = &self.shared else { return false };
        let Ok(game) = GameName::parse(&p.game) else {
            return false;
        };
        let player = {
            let mut s = self.state();
            let Some(pl) = s.players.get_mut(&p.key) else {
                return false;
            };
            if pl.name != p.name || pl.seeking.as_ref() != Some(&game) {
                return false;
            }
            pl.seeking = None;
            GamePlayer {
                tx: pl.tx.clone(),
                record: pl.record.clone(),
            }
        };
        self.start_half(sh, &p, shared::color_from(p.color), player)
            .await
            .is_some()
    }
}

/// Relays the `%%CHAT` lines of every instance to this one's x1 players, until the lobby is
/// gone.
async fn relay_chat(lobby: std::sync::Weak<Lobby>, mut lines: async_nats::Subscriber) {
    use futures::StreamExt as _;
    while let Some(msg) = lines.next().await {
        let Some(lobby) = lobby.upgrade() else { return };
        let line = String::from_utf8_lossy(&msg.payload).into_owned();
        Lobby::chat(&lobby.state(), &line);
    }
}

/// Answers the proposals sent to this instance, until the lobby is gone.
async fn serve_proposals(lobby: std::sync::Weak<Lobby>, mut proposals: async_nats::Subscriber) {
    use futures::StreamExt as _;
    while let Some(msg) = proposals.next().await {
        let Some(lobby) = lobby.upgrade() else { return };
        let taken = match serde_json::from_slice::<Proposal>(&msg.payload) {
            Ok(p) => lobby.take_proposal(p).await,
            Err(e) => {
                tracing::warn!(error = %e, "a proposal that is none");
                false
            }
        };
        if let (Some(reply), Some(sh)) = (msg.reply, &lobby.shared) {
            let answer: &'static [u8] = if taken { b"ok" } else { b"gone" };
            let _ = sh.client.publish(reply, answer.into()).await;
        }
    }
}
