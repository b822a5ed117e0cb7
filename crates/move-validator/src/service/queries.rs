//! The calls that read games: GetGame, ListGames, AnalyzeGame, and WatchGame's stream of a
//! game's events.

use super::Validator;
use crate::error::Error;
use crate::pages::{self, Page};
use futures::StreamExt;
use shogi_proto::convert::check_game_id;
use shogi_proto::event::{decode_created, decode_verdict};
use shogi_proto::log::{Applied, Replay};
use shogi_proto::subject;
use shogi_proto::v1 as pb;
use std::pin::Pin;
use tokio::sync::watch;
use tonic::Status;
use tracing::Instrument;

/// ListGames' default and largest page.
const LIST_PAGE: u32 = 50;
const LIST_PAGE_MAX: u32 = 100;

/// The stream a WatchGame call answers with.
pub(super) type EventStream =
    Pin<Box<dyn futures::Stream<Item = Result<pb::WatchGameResponse, Status>> + Send>>;

impl Validator {
    /// GetGame: the game brought up to date with the bus, with all its moves or a page of them.
    pub(super) async fn get_game(
        &self,
        req: pb::GetGameRequest,
    ) -> Result<pb::GetGameResponse, Error> {
        check_game_id("game_id", &req.game_id)?;
        let page = Page::parse(req.from_ply, req.max_plies)?;
        let guard = self.fresh(&req.game_id).await?;
        let replay = guard
            .as_ref()
            .ok_or_else(|| Error::NotFound(req.game_id.clone()))?;
        pages::game(replay, page, self.inner.max_answer_bytes)
    }

    /// ListGames: the games created on the bus from the page token on, each with the verdict
    /// stored on its `.verdict` subject, if any, answered from the index once it has read what
    /// the bus stored since the last call (`index.rs`).
    pub(super) async fn list_games(
        &self,
        req: pb::ListGamesRequest,
    ) -> Result<pb::ListGamesResponse, Error> {
        let asked = std::time::Instant::now();
        let size = match req.page_size {
            0 => LIST_PAGE,
            n if n <= LIST_PAGE_MAX => n,
            n => {
                return Err(Error::invalid(
                    "page_size",
                    format!("{n} is more than {LIST_PAGE_MAX}"),
                ));
            }
        } as usize;
        let from: u64 = if req.page_token.is_empty() {
            1
        } else {
            req.page_token
                .parse()
                .ok()
                .filter(|&seq| seq > 0)
                .ok_or_else(|| Error::invalid("page_token", "not a token of a ListGames answer"))?
        };
        let mut index = self.inner.index.lock().await;
        index
            .catch_up(self.inner.bus.inner.as_ref(), asked)
            .await
            .map_err(Error::unavailable)?;
        let page = index.page(from, size, req.live_only);
        Ok(pb::ListGamesResponse {
            games: page.games,
            next_page_token: page.next.to_string(),
        })
    }

    /// AnalyzeGame: the game brought up to date with the bus, analysed, with all its positions
    /// or a page of them.
    pub(super) async fn analyze_game(
        &self,
        req: pb::AnalyzeGameRequest,
    ) -> Result<pb::AnalyzeGameResponse, Error> {
        check_game_id("game_id", &req.game_id)?;
        let page = Page::parse(req.from_ply, req.max_plies)?;
        let guard = self.fresh(&req.game_id).await?;
        let replay = guard
            .as_ref()
            .ok_or_else(|| Error::NotFound(req.game_id.clone()))?;
        pages::analysis(replay, page, self.inner.max_answer_bytes)
    }

    /// WatchGame: the game's events as the bus stores them, from its creation, until its
    /// verdict, the client going away or the service shutting down; with `verdict_only`, the
    /// verdict alone (its subject is the one followed).
    pub(super) async fn watch_game(&self, req: pb::WatchGameRequest) -> Result<EventStream, Error> {
        check_game_id("game_id", &req.game_id)?;
        // Unknown games are NOT_FOUND before the stream starts.
        drop(self.cached(&req.game_id).await?);
        let followed = if req.verdict_only {
            subject::result(&req.game_id)
        } else {
            subject::all(&req.game_id)
        };
        let mut messages = self
            .inner
            .bus
            .inner
            .follow(&followed)
            .await
            .map_err(Error::unavailable)?;
        let mut shutdown = self.inner.shutdown.clone();
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        tokio::spawn(
            async move {
                // The log is read through the one replay, as every reader reads it: a move is
                // sent once the replay has played it, an entry it sets aside is not sent.
                let mut replay: Option<Replay> = None;
                loop {
                    let next = tokio::select! {
                        next = messages.next() => next,
                        // The client went away: the stream (and its consumer on the bus) is
                        // dropped now, not at the game's next event.
                        () = tx.closed() => return,
                        () = stopped(&mut shutdown) => {
                            let _ = tx.send(Err(crate::error::shutting_down())).await;
                            return;
                        }
                    };
                    let msg = match next {
                        Some(Ok(msg)) => msg,
                        Some(Err(e)) => {
                            let _ = tx.send(Err(Error::unavailable(e).into())).await;
                            return;
                        }
                        None => return,
                    };
                    let event = match watch_event(&mut replay, &msg, req.from_ply) {
                        Ok(Some(event)) => event,
                        Ok(None) => continue,
                        Err(e) => {
                            tracing::warn!(seq = msg.sequence, subject = %msg.subject, error = %e, "event not sent to a watcher");
                            continue;
                        }
                    };
                    let last = matches!(event, pb::watch_game_response::Event::Verdict(_));
                    let event = pb::WatchGameResponse {
                        sequence: msg.sequence,
                        event: Some(event),
                    };
                    if tx.send(Ok(event)).await.is_err() || last {
                        return;
                    }
                }
            }
            // In the call's span (the layer's, `crate::calls`), which names the game and lasts
            // as long as the stream.
            .instrument(tracing::Span::current()),
        );
        Ok(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)))
    }
}

/// Completes once the shutdown flag is set (or its sender is gone).
pub(super) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// One bus message as a [`pb::WatchGameResponse`] payload; `None` for a move or warning before
/// `from_ply`, for a log entry the replay sets aside, for the log's record of an ending and for
/// an announcement on `.verdict` (the checked verdict on `.result` is sent instead).
fn watch_event(
    replay: &mut Option<Replay>,
    msg: &arbiter_bus::Message,
    from_ply: u32,
) -> Result<Option<pb::watch_game_response::Event>, String> {
    use pb::watch_game_response::Event;
    use shogi_proto::event::{decode_declaration, decode_warning};
    use shogi_proto::subject::Kind;
    let Some((id, kind)) = subject::parse(&msg.subject) else {
        return Ok(None);
    };
    let payload = &msg.payload[..];
    Ok(match kind {
        Kind::Created => {
            let created = decode_created(payload)?;
            *replay = Some(Replay::new(id, msg.sequence, payload).map_err(|e| e.to_string())?);
            Some(Event::Created(created))
        }
        Kind::Log => {
            let Some(replay) = replay.as_mut() else {
                return Err("a log entry before the game's creation".into());
            };
            // Applied, not copied aside: the entries a watcher meets are the validator's to
            // set aside when it reads the game, once, not once per watcher.
            match replay.apply(msg.entry()) {
                Applied::Played { entry, .. } => {
                    (entry.ply >= from_ply).then_some(Event::Move(*entry))
                }
                _ => None,
            }
        }
        Kind::Declare => Some(Event::Declaration(decode_declaration(payload)?)),
        Kind::Warning => {
            let w = decode_warning(payload)?;
            (w.ply >= from_ply).then_some(Event::Warning(w))
        }
        // An announcement is not yet the verdict: the validator's check records the one the
        // log decides on `.result`, and only that one is sent (issue 20).
        Kind::Verdict => None,
        Kind::Result => Some(Event::Verdict(decode_verdict(
            msg.message_type.as_deref(),
            payload,
        )?)),
        // A clock's schedule and its flag wake the validator; the time-up they may bring is
        // sent as the verdict.
        Kind::Aside | Kind::Clock | Kind::Flag => None,
    })
}
