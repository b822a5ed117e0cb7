//! One connection: lines from the socket into its [`Session`], the session's outputs to the
//! socket, the lobby and the game. Each connection is a task of its own, so a client that
//! stalls (sends nothing, reads nothing) stalls nothing but itself; its writes are bounded in
//! time, its lines in length ([`crate::lines`]).

use crate::game::{GameLink, GameMsg};
use crate::lines::LineReader;
use crate::lobby::Lobby;
use csa_protocol::server::GameSummary;
use csa_protocol::{Event, Output, Session, Status};
use shogi_rules::Color;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio::time::Instant;

/// What the rest of the server tells a connection.
#[derive(Debug)]
pub enum ToConn {
    /// An event for the session.
    Event(Event),
    /// A game proposed: its summary, this player's side and the game to talk to.
    Paired {
        /// The game.
        link: GameLink,
        /// The summary.
        summary: Box<GameSummary>,
        /// This player's side.
        me: Color,
    },
    /// Lines to send as they are (`%%CHAT`).
    Send(String),
    /// The same name logged in again with the same password while this connection waited for
    /// no game (shogi-server's "login forcibly, nudging the former player"): it closes, its
    /// player already out of the lobby.
    Nudged,
}

struct Conn {
    session: Session,
    lobby: Arc<Lobby>,
    tx: mpsc::UnboundedSender<ToConn>,
    key: Option<u64>,
    game: Option<GameLink>,
    /// The id of the game proposed, while it is.
    proposed: Option<String>,
    /// The id of the game proposed or played, until it ends (`%%LIST` of a shared lobby).
    playing: Option<String>,
    /// The player left a game proposed (`LOGOUT`): its `REJECT` is still to come.
    rejecting: bool,
    out: String,
    close: bool,
}

/// Answers a connection over the limit and closes it.
pub async fn refuse(mut stream: TcpStream, write_timeout: Duration) {
    let line = csa_protocol::server::error("too many connections");
    let _ = tokio::time::timeout(write_timeout, stream.write_all(line.as_bytes())).await;
}

/// Serves one connection until it closes; `_slot` is its place under the connection limit.
pub async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    lobby: Arc<Lobby>,
    _slot: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let (rd, mut wr) = stream.into_split();
    let mut reader = LineReader::new(rd);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = lobby.config.clone();
    let mut c = Conn {
        session: Session::new(&config.revision),
        lobby,
        tx,
        key: None,
        game: None,
        proposed: None,
        playing: None,
        rejecting: false,
        out: String::new(),
        close: false,
    };
    let login_deadline = Instant::now() + config.login_timeout;
    let mut last_line = Instant::now();
    tracing::debug!(%peer, "connected");
    loop {
        let deadline = match (c.key, c.session.status()) {
            (None, _) => Some(login_deadline),
            (Some(_), Status::Connected | Status::GameWaiting) => {
                Some(last_line + config.idle_timeout)
            }
            _ => None,
        };
        let mut ended = false;
        tokio::select! {
            line = reader.next_line() => match line {
                Ok(Some(line)) => {
                    last_line = Instant::now();
                    let outs = c.session.line(&crate::lines::comment_to_utf8(line));
                    c.handle(outs).await;
                }
                Ok(None) => ended = true,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "read failed");
                    ended = true;
                }
            },
            Some(msg) = rx.recv() => c.on_message(msg).await,
            () = sleep_until(deadline) => {
                tracing::info!(%peer, name = c.session.name(), "connection closed: silent too long");
                ended = true;
            }
        }
        if ended {
            let outs = c.session.disconnected();
            c.handle(outs).await;
            c.close = true;
        }
        // The name is free before the client hears `LOGOUT:completed` or sees the connection
        // close, so that it may log in again at once (on another instance of a shared lobby).
        if c.close
            && let Some(key) = c.key.take()
        {
            c.lobby.leave(key).await;
        }
        if !c.out.is_empty() {
            let out = std::mem::take(&mut c.out);
            let written =
                tokio::time::timeout(config.write_timeout, wr.write_all(out.as_bytes())).await;
            if !matches!(written, Ok(Ok(()))) {
                tracing::info!(%peer, name = c.session.name(), "connection dropped: a write failed or blocked");
                if !ended {
                    let outs = c.session.disconnected();
                    c.handle(outs).await;
                }
                break;
            }
        }
        if c.close {
            if c.rejecting && !ended {
                c.await_reject(&mut rx, config.write_timeout).await;
                let out = std::mem::take(&mut c.out);
                let _ =
                    tokio::time::timeout(config.write_timeout, wr.write_all(out.as_bytes())).await;
            }
            let _ = wr.shutdown().await;
            break;
        }
    }
    if let Some(key) = c.key {
        c.lobby.leave(key).await;
    }
    tracing::debug!(%peer, "disconnected");
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

impl Conn {
    /// A player who logs out of a game proposed is sent its `REJECT` too, after
    /// `LOGOUT:completed` (shogi-server's `Game#kill` writes it before the socket closes);
    /// the session, closed by then, has no phase to render it in.
    async fn await_reject(&mut self, rx: &mut mpsc::UnboundedReceiver<ToConn>, bound: Duration) {
        let Some(game_id) = self.proposed.take() else {
            return;
        };
        let until = Instant::now() + bound;
        while let Ok(Some(msg)) = tokio::time::timeout_at(until, rx.recv()).await {
            if let ToConn::Event(Event::Rejected { by }) = msg {
                self.out
                    .push_str(&csa_protocol::server::reject(&game_id, &by));
                return;
            }
        }
    }

    async fn on_message(&mut self, msg: ToConn) {
        match msg {
            ToConn::Nudged => {
                tracing::info!(
                    name = self.session.name(),
                    "connection closed: its name logged in again"
                );
                self.key = None;
                self.close = true;
            }
            ToConn::Event(e) => {
                let game_over = matches!(e, Event::Ended(_) | Event::Rejected { .. });
                if game_over {
                    self.playing = None;
                }
                let outs = self.session.event(e);
                self.handle(outs).await;
                if game_over {
                    self.game = None;
                    self.proposed = None;
                }
            }
            ToConn::Paired { link, summary, me } => {
                self.game = Some(link);
                self.proposed = Some(summary.game_id.clone());
                self.playing = Some(summary.game_id.clone());
                let outs = self.session.event(Event::Paired { summary, me });
                self.handle(outs).await;
            }
            ToConn::Send(s) => self.out.push_str(&s),
        }
    }

    fn to_game(&self, msg: impl FnOnce(Color) -> GameMsg) {
        if let Some(g) = &self.game {
            let _ = g.tx.send(msg(g.me));
        }
    }

    async fn handle(&mut self, outs: Vec<Output>) {
        let mut queue: VecDeque<Output> = outs.into();
        while let Some(o) = queue.pop_front() {
            match o {
                Output::Send(s) => self.out.push_str(&s),
                Output::Login(login) => match self.lobby.login(&login, self.tx.clone()).await {
                    Some(key) => {
                        self.key = Some(key);
                        tracing::info!(name = %login.name, x1 = login.x1, "logged in");
                        queue.extend(self.session.event(Event::LoginAccepted));
                    }
                    None => {
                        tracing::info!(name = %login.name, "login refused: the name is connected");
                        queue.extend(self.session.event(Event::LoginRefused));
                    }
                },
                Output::Seek {
                    game,
                    turn,
                    challenge,
                } => {
                    let Some(key) = self.key else { continue };
                    match self.lobby.seek(key, &game, turn, challenge).await {
                        csa_protocol::Pairing::NoRival => {
                            queue.extend(self.session.event(Event::NoRival));
                        }
                        csa_protocol::Pairing::Refused(r) => {
                            queue.extend(self.session.event(Event::SeekRefused(r)));
                        }
                        // A pairing comes through the channel, as it does to the rival.
                        csa_protocol::Pairing::Paired { .. } | csa_protocol::Pairing::Waiting => {}
                    }
                }
                Output::CancelSeek => {
                    if let Some(key) = self.key {
                        self.lobby.cancel(key).await;
                    }
                }
                Output::Agree => self.to_game(GameMsg::Agree),
                Output::Reject => {
                    self.rejecting = self.session.status() == Status::Finished;
                    self.to_game(GameMsg::Reject);
                }
                Output::Play(action) => {
                    self.proposed = None;
                    self.to_game(|me| GameMsg::Play(me, action));
                }
                Output::Query(cmd) => {
                    let key = self.key.unwrap_or(0);
                    let answer = self.lobby.query(key, cmd).await;
                    self.out.push_str(&answer);
                }
                Output::Close => self.close = true,
            }
        }
        if let Some(key) = self.key {
            let game = self.session.game().map(|(g, t)| (g.as_str().to_owned(), t));
            self.lobby
                .update(key, self.session.status(), game, self.playing.clone())
                .await;
        }
    }
}
