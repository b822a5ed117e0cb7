//! The `MoveValidator` trait: each call gets its span, continues the caller's trace and is
//! counted in the RPC metrics here, in one place, then the method that does the work answers.

use super::Validator;
use super::moves::{legal_moves, validate_move};
use super::queries::EventStream;
use crate::error::Error;
use arbiter_telemetry::{metrics, propagation};
use shogi_proto::convert;
use shogi_proto::v1::{self as pb, move_validator_server::MoveValidator};
use tonic::{Request, Response, Status};

/// The metadata key that asks for strict mode (`shogi-strict: true`), on CreateGame for the
/// whole game or on one SubmitMove call.
pub const STRICT_METADATA: &str = "shogi-strict";

fn strict_requested(metadata: &tonic::metadata::MetadataMap) -> bool {
    metadata
        .get(STRICT_METADATA)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// Declares the span of a call to `MoveValidator/<method>`: a server span in OpenTelemetry's
/// terms, with the game's id and ply (recorded later when the request does not name them), so
/// that every line logged while serving the call names the game.
macro_rules! rpc_span {
    ($name:literal, $method:literal) => {
        tracing::info_span!(
            $name,
            otel.name = concat!("shogi.v1.MoveValidator/", $method),
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            rpc.system = "grpc",
            rpc.method = $method,
            game_id = tracing::field::Empty,
            ply = tracing::field::Empty,
        )
    };
}

/// Serves one call: `work` runs in `span`, continuing the caller's trace (the W3C trace context
/// in `metadata`), and its handling time is recorded by method and status code.
async fn traced<T>(
    method: &'static str,
    metadata: &tonic::metadata::MetadataMap,
    span: tracing::Span,
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Status> {
    let started = std::time::Instant::now();
    let parent = propagation::from_metadata(metadata);
    let result = propagation::within(span.clone(), parent, work)
        .await
        .map_err(Status::from);
    let code = result
        .as_ref()
        .map_or_else(Status::code, |_| tonic::Code::Ok);
    if result.is_err() {
        span.record("otel.status_code", "ERROR");
    }
    metrics().record_rpc(method, code, started.elapsed().as_secs_f64());
    result
}

#[tonic::async_trait]
impl MoveValidator for Validator {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let strict = strict_requested(request.metadata()) || request.get_ref().strict;
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("create_game", "CreateGame");
        if !req.game_id.is_empty() {
            span.record("game_id", req.game_id.as_str());
        }
        let game = traced(
            "CreateGame",
            &metadata,
            span,
            Validator::create_game(self, req, strict),
        )
        .await?;
        Ok(Response::new(pb::CreateGameResponse { game: Some(game) }))
    }

    async fn submit_move(
        &self,
        request: Request<pb::SubmitMoveRequest>,
    ) -> Result<Response<pb::SubmitMoveResponse>, Status> {
        let strict = strict_requested(request.metadata()) || request.get_ref().strict;
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("submit_move", "SubmitMove");
        span.record("game_id", req.game_id.as_str());
        span.record("ply", req.ply);
        let answer = traced(
            "SubmitMove",
            &metadata,
            span,
            Validator::submit_move(self, req, strict),
        )
        .await?;
        Ok(Response::new(answer))
    }

    async fn validate_move(
        &self,
        request: Request<pb::ValidateMoveRequest>,
    ) -> Result<Response<pb::ValidateMoveResponse>, Status> {
        let span = rpc_span!("validate_move", "ValidateMove");
        let answer = traced("ValidateMove", request.metadata(), span, async {
            validate_move(request.get_ref())
        })
        .await?;
        let (outcome, kind) = if answer.legal {
            ("accepted", None)
        } else {
            (
                "rejected",
                Some(convert::illegal_kind_name(answer.illegal_kind)),
            )
        };
        metrics().count_move("ValidateMove", outcome, kind);
        Ok(Response::new(answer))
    }

    async fn declare(
        &self,
        request: Request<pb::DeclareRequest>,
    ) -> Result<Response<pb::DeclareResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("declare", "Declare");
        span.record("game_id", req.game_id.as_str());
        Ok(Response::new(
            traced("Declare", &metadata, span, Validator::declare(self, req)).await?,
        ))
    }

    async fn evaluate_impasse(
        &self,
        request: Request<pb::EvaluateImpasseRequest>,
    ) -> Result<Response<pb::EvaluateImpasseResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("evaluate_impasse", "EvaluateImpasse");
        if let Some(pb::evaluate_impasse_request::Target::GameId(id)) = &req.target {
            span.record("game_id", id.as_str());
        }
        Ok(Response::new(
            traced(
                "EvaluateImpasse",
                &metadata,
                span,
                Validator::evaluate_impasse(self, req),
            )
            .await?,
        ))
    }

    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::GetGameResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("get_game", "GetGame");
        span.record("game_id", req.game_id.as_str());
        Ok(Response::new(
            traced("GetGame", &metadata, span, Validator::get_game(self, req)).await?,
        ))
    }

    type WatchGameStream = EventStream;

    async fn watch_game(
        &self,
        request: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        Ok(Response::new(
            Validator::watch_game(self, request.into_inner()).await?,
        ))
    }

    async fn end_game(
        &self,
        request: Request<pb::EndGameRequest>,
    ) -> Result<Response<pb::EndGameResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("end_game", "EndGame");
        span.record("game_id", req.game_id.as_str());
        Ok(Response::new(
            traced("EndGame", &metadata, span, Validator::end_game(self, req)).await?,
        ))
    }

    async fn legal_moves(
        &self,
        request: Request<pb::LegalMovesRequest>,
    ) -> Result<Response<pb::LegalMovesResponse>, Status> {
        let span = rpc_span!("legal_moves", "LegalMoves");
        Ok(Response::new(
            traced("LegalMoves", request.metadata(), span, async {
                legal_moves(request.get_ref())
            })
            .await?,
        ))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("list_games", "ListGames");
        Ok(Response::new(
            traced(
                "ListGames",
                &metadata,
                span,
                Validator::list_games(self, req),
            )
            .await?,
        ))
    }

    async fn analyze_game(
        &self,
        request: Request<pb::AnalyzeGameRequest>,
    ) -> Result<Response<pb::AnalyzeGameResponse>, Status> {
        let (metadata, _, req) = request.into_parts();
        let span = rpc_span!("analyze_game", "AnalyzeGame");
        span.record("game_id", req.game_id.as_str());
        Ok(Response::new(
            traced(
                "AnalyzeGame",
                &metadata,
                span,
                Validator::analyze_game(self, req),
            )
            .await?,
        ))
    }
}
