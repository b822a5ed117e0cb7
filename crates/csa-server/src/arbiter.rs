//! The arbiter as the front end calls it: the gRPC `MoveValidator` client, over TLS when
//! configured, with the bearer token on every call, as any platform calls it.
//!
//! A call the arbiter could not take (an instance draining for an upgrade, one restarting,
//! none reachable, a connection lost under the call: [`transient`]) is made again, with a
//! pause that doubles up to a second, for as long as the front end's `arbiter_patience`: every
//! call it makes is safe to repeat (a move at its ply, a declaration or an ending already
//! recorded is answered as the first was; a creation that went through is read back), so that
//! a rolling upgrade of the arbiter interrupts no game. The moving side's time runs on the
//! arbiter meanwhile, as it would while the move was on its way.

use crate::Error;
use crate::mover::Mover;
use shogi_proto::v1 as pb;
use shogi_proto::v1::move_validator_client::MoveValidatorClient;
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Code, Status};

/// The first pause before a call is made again; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
/// The longest pause between two tries of a call.
const MAX_PAUSE: Duration = Duration::from_secs(1);
/// How long a connection to the arbiter may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A client of the arbiter; cheap to clone (one HTTP/2 channel).
#[derive(Debug, Clone)]
pub struct Arbiter {
    client: MoveValidatorClient<Channel>,
    token: Option<MetadataValue<tonic::metadata::Ascii>>,
    /// How long a call the arbiter could not take is tried again.
    patience: Duration,
    /// The moves' SubmitMoves stream; none: a SubmitMove call a move.
    mover: Option<Mover>,
}

/// Whether a call that ended with `status` may have failed to reach the arbiter, or reached an
/// instance that would not take it: UNAVAILABLE (a drain's SHUTTING_DOWN, a connection
/// refused), or a connection that closed under the call, which the transport reports as
/// CANCELLED (the front end cancels none of its calls) or UNKNOWN (which the arbiter never
/// answers itself).
fn transient(status: &Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable | Code::Cancelled | Code::Unknown
    )
}

impl Arbiter {
    /// A client of the arbiter as `config` names it (`arbiter`, over TLS with `tls`, with the
    /// bearer `token`), connected on first use (so that the front end may start before the
    /// arbiter answers); the moves on one SubmitMoves stream with `arbiter_stream` (its task
    /// spawned on the current runtime), else a call each; calls the arbiter could not take made
    /// again for `arbiter_patience`. The connection is pinged every `arbiter_keepalive` and
    /// given up when a ping is not answered within as long (an arbiter whose host went silent:
    /// its calls and the move stream end, and are made again on a new connection), and a
    /// connection that does not open in 5 s is one the arbiter could not take.
    pub fn connect(config: &crate::Config) -> Result<Arbiter, Error> {
        let endpoint = arbiter_runtime::tls::endpoint(&config.arbiter, config.tls.as_ref())?
            .connect_timeout(CONNECT_TIMEOUT)
            .http2_keep_alive_interval(config.arbiter_keepalive)
            .keep_alive_timeout(config.arbiter_keepalive)
            .keep_alive_while_idle(true);
        let token = match config.token.as_deref() {
            Some(t) => Some(
                format!("Bearer {t}")
                    .parse()
                    .map_err(|_| Error::Config("the token is not a header value".into()))?,
            ),
            None => None,
        };
        let client = MoveValidatorClient::new(endpoint.connect_lazy());
        Ok(Arbiter {
            mover: config
                .arbiter_stream
                .then(|| Mover::start(client.clone(), token.clone())),
            client,
            token,
            patience: config.arbiter_patience,
        })
    }

    /// `call` made, and made again while it ends [`transient`]ly and the patience lasts; the
    /// last answer, and whether the call was made more than once.
    async fn again<T, F, Fut>(&self, name: &'static str, call: F) -> (Result<T, Status>, bool)
    where
        F: Fn(MoveValidatorClient<Channel>) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        let until = Instant::now() + self.patience;
        let mut pause = FIRST_PAUSE;
        let mut tries = 0u32;
        loop {
            tries += 1;
            match call(self.client.clone()).await {
                Err(status) if transient(&status) && Instant::now() + pause < until => {
                    tracing::warn!(call = name, tries, error = %status, "the arbiter did not take the call; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(MAX_PAUSE);
                }
                answer => {
                    if tries > 1 {
                        tracing::info!(
                            call = name,
                            tries,
                            ok = answer.is_ok(),
                            "the call went through again"
                        );
                    }
                    return (answer, tries > 1);
                }
            }
        }
    }

    fn request<T>(&self, msg: T) -> tonic::Request<T> {
        let mut req = tonic::Request::new(msg);
        if let Some(t) = &self.token {
            req.metadata_mut().insert("authorization", t.clone());
        }
        req
    }

    /// CreateGame; a creation answered ALREADY_EXISTS on a later try went through on an
    /// earlier one whose answer was lost, and the game is read back.
    pub async fn create(&self, req: pb::CreateGameRequest) -> Result<pb::GameState, Status> {
        let game_id = req.game_id.clone();
        let (answer, retried) = self
            .again("CreateGame", |mut c| {
                let req = self.request(req.clone());
                async move { c.create_game(req).await }
            })
            .await;
        match answer {
            Err(status) if retried && status.code() == Code::AlreadyExists => {
                self.get(&game_id).await
            }
            answer => answer?
                .into_inner()
                .game
                .ok_or_else(|| Status::internal("CreateGame answered no game")),
        }
    }

    /// SubmitMove, on the moves' stream unless there is none or the arbiter has no
    /// SubmitMoves: the same answer either way.
    pub async fn submit(
        &self,
        req: pb::SubmitMoveRequest,
    ) -> Result<pb::SubmitMoveResponse, Status> {
        let (answer, _) = self
            .again("SubmitMove", |mut c| {
                let req = req.clone();
                async move {
                    if let Some(mover) = self.mover.as_ref().filter(|m| !m.unsupported()) {
                        match mover.submit(req.clone()).await {
                            Err(s) if s.code() == Code::Unimplemented && mover.unsupported() => {}
                            answer => return answer,
                        }
                    }
                    let call = self.request(req);
                    c.submit_move(call).await.map(tonic::Response::into_inner)
                }
            })
            .await;
        answer
    }

    /// EndGame.
    pub async fn end(&self, req: pb::EndGameRequest) -> Result<pb::EndGameResponse, Status> {
        let (answer, _) = self
            .again("EndGame", |mut c| {
                let req = self.request(req.clone());
                async move { c.end_game(req).await }
            })
            .await;
        Ok(answer?.into_inner())
    }

    /// Declare.
    pub async fn declare(&self, req: pb::DeclareRequest) -> Result<pb::DeclareResponse, Status> {
        let (answer, _) = self
            .again("Declare", |mut c| {
                let req = self.request(req.clone());
                async move { c.declare(req).await }
            })
            .await;
        Ok(answer?.into_inner())
    }

    /// GetGame, the whole game.
    pub async fn get(&self, game_id: &str) -> Result<pb::GameState, Status> {
        let (answer, _) = self
            .again("GetGame", |mut c| {
                let req = self.request(pb::GetGameRequest {
                    game_id: game_id.to_owned(),
                    ..Default::default()
                });
                async move { c.get_game(req).await }
            })
            .await;
        answer?
            .into_inner()
            .game
            .ok_or_else(|| Status::internal("GetGame answered no game"))
    }

    /// WatchGame from the start; with `verdict_only`, its verdict alone.
    pub async fn watch(
        &self,
        game_id: &str,
        verdict_only: bool,
    ) -> Result<tonic::Streaming<pb::WatchGameResponse>, tonic::Status> {
        let r = self
            .client
            .clone()
            .watch_game(self.request(pb::WatchGameRequest {
                game_id: game_id.to_owned(),
                from_ply: 0,
                verdict_only,
            }))
            .await?;
        Ok(r.into_inner())
    }
}
