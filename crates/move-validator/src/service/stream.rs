//! SubmitMoves: the moves of many games on one stream, each answered as SubmitMove answers it,
//! tagged with the caller's tag, as soon as it is settled.
//!
//! One task reads the stream; each move is handled by a task of its own, at most
//! [`IN_FLIGHT`] at once (the stream is read no further until one is answered, which HTTP/2's
//! flow control passes on to the client). The moves of one game wait for the one sent before
//! them, so that a game is played in the order its moves were sent; moves of different games
//! go on together. Each move counts as one call against the credential's `calls_per_second`,
//! over which it is answered with QUOTA_EXCEEDED when the next call is due, as a unary call's
//! refusal is held (`auth.rs`). Each move has a span of its own and is recorded in the RPC
//! metrics as a SubmitMove call.
//!
//! The stream ends once every move it received is answered: with OK after the client's half
//! ended, with UNAVAILABLE (SHUTTING_DOWN) when the instance drains (no move is read after
//! that), with the error of a message that could not be read. A client that goes away drops
//! the answers of the moves in hand, not the moves: a move taken is played or refused, as a
//! unary call whose client left.

use super::Validator;
use super::queries::stopped;
use crate::auth::Tenant;
use crate::credentials::Limit;
use crate::error::{Error, shutting_down, to_status};
use arbiter_telemetry::metrics::{self, metrics};
use shogi_proto::v1 as pb;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{Semaphore, mpsc, oneshot};
use tonic::{Code, Status, Streaming};
use tracing::Instrument;

/// How many moves of one stream are handled at once.
const IN_FLIGHT: usize = 64;

/// The stream a SubmitMoves call answers with.
pub(super) type AnswerStream =
    Pin<Box<dyn futures::Stream<Item = Result<pb::SubmitMovesResponse, Status>> + Send>>;

type Answers = mpsc::Sender<Result<pb::SubmitMovesResponse, Status>>;

/// What every move of one stream shares.
struct Caller {
    /// The stream's metadata asked for strict mode.
    strict: bool,
    /// The credential, when the server has credentials.
    tenant: Option<Arc<Tenant>>,
    /// Whether a refusal over the quota was logged on this stream already.
    refusal_logged: AtomicBool,
}

impl Validator {
    /// SubmitMoves: `requests` answered on the returned stream; `strict` from the call's
    /// metadata, `tenant` the caller's credential.
    pub(super) fn submit_moves(
        &self,
        requests: Streaming<pb::SubmitMovesRequest>,
        strict: bool,
        tenant: Option<Arc<Tenant>>,
    ) -> AnswerStream {
        let (tx, rx) = mpsc::channel(IN_FLIGHT);
        let caller = Arc::new(Caller {
            strict,
            tenant,
            refusal_logged: AtomicBool::new(false),
        });
        tokio::spawn(
            self.clone()
                .read_moves(requests, caller, tx)
                .instrument(tracing::Span::current()),
        );
        Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
    }

    /// Reads the stream's moves, hands each to a task of its own, and ends the stream once
    /// every move read is answered.
    async fn read_moves(
        self,
        mut requests: Streaming<pb::SubmitMovesRequest>,
        caller: Arc<Caller>,
        tx: Answers,
    ) {
        let slots = Arc::new(Semaphore::new(IN_FLIGHT));
        // The last move of each game still in hand on this stream (its task drops the sender
        // when done): the game's next move waits for it.
        let mut last: HashMap<String, oneshot::Receiver<()>> = HashMap::new();
        let mut shutdown = self.inner.shutdown.clone();
        let ended = loop {
            let permit = tokio::select! {
                permit = slots.clone().acquire_owned() => permit.expect("the stream's semaphore is never closed"),
                () = stopped(&mut shutdown) => break Some(shutting_down()),
                () = tx.closed() => break None,
            };
            let next = tokio::select! {
                next = requests.message() => next,
                () = stopped(&mut shutdown) => break Some(shutting_down()),
                () = tx.closed() => break None,
            };
            let request = match next {
                Ok(Some(request)) => request,
                // The client's half ended: OK once the moves in hand are answered.
                Ok(None) => break None,
                Err(status) => break Some(status),
            };
            let game = request
                .r#move
                .as_ref()
                .map(|m| m.game_id.clone())
                .unwrap_or_default();
            let (done, finished) = oneshot::channel::<()>();
            let before = last.insert(game, finished);
            if last.len() > 2 * IN_FLIGHT {
                // Only the moves in hand keep their entry: at most IN_FLIGHT of them.
                last.retain(|_, rx| {
                    matches!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty))
                });
            }
            let (this, caller, tx) = (self.clone(), caller.clone(), tx.clone());
            let span = move_span(&request);
            tokio::spawn(
                async move {
                    if let Some(before) = before {
                        // Sent before: played first, whatever its answer.
                        let _ = before.await;
                    }
                    let answer = this.stream_move(request, &caller).await;
                    let _ = tx.send(Ok(answer)).await;
                    drop(done);
                    drop(permit);
                }
                .instrument(span),
            );
        };
        // Every move read is answered before the stream ends.
        let _ = slots.acquire_many(IN_FLIGHT as u32).await;
        if let Some(status) = ended {
            let _ = tx.send(Err(status)).await;
        }
    }

    /// One move of the stream, answered as SubmitMove answers it.
    async fn stream_move(
        &self,
        request: pb::SubmitMovesRequest,
        caller: &Caller,
    ) -> pb::SubmitMovesResponse {
        let started = std::time::Instant::now();
        let result = match request.r#move {
            None => Err(to_status(Error::invalid(
                "move",
                "unset: the move to submit",
            ))),
            Some(mv) => match self.stream_quota(caller).await {
                Err(status) => Err(status),
                Ok(()) => {
                    let strict = caller.strict || mv.strict;
                    Validator::submit_move(self, mv, strict)
                        .await
                        .map_err(to_status)
                }
            },
        };
        let code = result.as_ref().map_or_else(Status::code, |_| Code::Ok);
        metrics().record_rpc("SubmitMove", code, started.elapsed().as_secs_f64());
        let span = tracing::Span::current();
        span.record("rpc.response.status_code", metrics::status_name(code));
        if code != Code::Ok {
            span.record("otel.status_code", "ERROR");
        }
        pb::SubmitMovesResponse {
            tag: request.tag,
            answer: Some(match result {
                Ok(answer) => pb::submit_moves_response::Answer::Submitted(answer),
                Err(status) => pb::submit_moves_response::Answer::Error(
                    shogi_proto::status::submit_move_error(&status),
                ),
            }),
        }
    }

    /// One call of the caller's `calls_per_second`; over it, the refusal when the next call is
    /// due.
    async fn stream_quota(&self, caller: &Caller) -> Result<(), Status> {
        let Some(tenant) = &caller.tenant else {
            return Ok(());
        };
        match tenant.take_call() {
            Ok(()) => {
                metrics()
                    .count_credential_call(tenant.name(), "/shogi.v1.MoveValidator/SubmitMove");
                Ok(())
            }
            Err(hold) => {
                metrics().count_credential_refused(tenant.name(), Limit::CallsPerSecond.as_str());
                if !caller.refusal_logged.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        credential = tenant.name(),
                        reason = Limit::CallsPerSecond.as_str(),
                        "refused a move of a SubmitMoves stream: over quota (said once a stream)"
                    );
                }
                tokio::time::sleep(hold).await;
                Err(to_status(tenant.over(Limit::CallsPerSecond)))
            }
        }
    }
}

/// The span of one move of a stream, as a SubmitMove call's, its game and ply recorded.
fn move_span(request: &pb::SubmitMovesRequest) -> tracing::Span {
    let span = tracing::info_span!(
        "submit_move",
        otel.name = "shogi.v1.MoveValidator/SubmitMoves",
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        rpc.system = "grpc",
        rpc.method = "SubmitMoves",
        rpc.response.status_code = tracing::field::Empty,
        game_id = tracing::field::Empty,
        ply = tracing::field::Empty,
        tag = request.tag,
    );
    if let Some(mv) = &request.r#move {
        span.record("game_id", mv.game_id.as_str());
        span.record("ply", mv.ply);
    }
    span
}
