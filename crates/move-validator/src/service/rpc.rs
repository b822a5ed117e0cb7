//! The `MoveValidator` trait: each method takes its request apart, records the game and the
//! ply on the call's span, and the method that does the work answers. The span, the caller's
//! trace and the RPC metrics are the layer's around the service ([`crate::calls`]).

use super::Validator;
use super::moves::{legal_moves, validate_move};
use super::queries::EventStream;
use super::stream::AnswerStream;
use crate::auth::Tenant;
use arbiter_telemetry::metrics;
use shogi_proto::convert;
use shogi_proto::v1::{self as pb, move_validator_server::MoveValidator};
use std::sync::Arc;
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

/// Records `field` on the call's span, which the layer around the service opened
/// ([`crate::calls`]): what only the request body names.
fn record(field: &'static str, value: impl tracing::Value) {
    tracing::Span::current().record(field, value);
}

#[tonic::async_trait]
impl MoveValidator for Validator {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let strict = strict_requested(request.metadata()) || request.get_ref().strict;
        // The caller's credential, which the credentials layer put there (`auth.rs`).
        let creator = request.extensions().get::<Arc<Tenant>>().cloned();
        let req = request.into_inner();
        if !req.game_id.is_empty() {
            record("game_id", req.game_id.as_str());
        }
        let game = Validator::create_game(self, req, strict, creator.as_deref()).await?;
        Ok(Response::new(pb::CreateGameResponse { game: Some(game) }))
    }

    async fn submit_move(
        &self,
        request: Request<pb::SubmitMoveRequest>,
    ) -> Result<Response<pb::SubmitMoveResponse>, Status> {
        let strict = strict_requested(request.metadata()) || request.get_ref().strict;
        let req = request.into_inner();
        record("game_id", req.game_id.as_str());
        record("ply", req.ply);
        Ok(Response::new(
            Validator::submit_move(self, req, strict).await?,
        ))
    }

    type SubmitMovesStream = AnswerStream;

    async fn submit_moves(
        &self,
        request: Request<tonic::Streaming<pb::SubmitMovesRequest>>,
    ) -> Result<Response<Self::SubmitMovesStream>, Status> {
        let strict = strict_requested(request.metadata());
        let tenant = request.extensions().get::<Arc<Tenant>>().cloned();
        Ok(Response::new(Validator::submit_moves(
            self,
            request.into_inner(),
            strict,
            tenant,
        )))
    }

    async fn validate_move(
        &self,
        request: Request<pb::ValidateMoveRequest>,
    ) -> Result<Response<pb::ValidateMoveResponse>, Status> {
        let answer = validate_move(request.get_ref())?;
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
        let req = request.into_inner();
        record("game_id", req.game_id.as_str());
        Ok(Response::new(Validator::declare(self, req).await?))
    }

    async fn evaluate_impasse(
        &self,
        request: Request<pb::EvaluateImpasseRequest>,
    ) -> Result<Response<pb::EvaluateImpasseResponse>, Status> {
        let req = request.into_inner();
        if let Some(pb::evaluate_impasse_request::Target::GameId(id)) = &req.target {
            record("game_id", id.as_str());
        }
        Ok(Response::new(Validator::evaluate_impasse(self, req).await?))
    }

    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::GetGameResponse>, Status> {
        let req = request.into_inner();
        record("game_id", req.game_id.as_str());
        Ok(Response::new(Validator::get_game(self, req).await?))
    }

    type WatchGameStream = EventStream;

    async fn watch_game(
        &self,
        request: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        let req = request.into_inner();
        record("game_id", req.game_id.as_str());
        Ok(Response::new(Validator::watch_game(self, req).await?))
    }

    async fn end_game(
        &self,
        request: Request<pb::EndGameRequest>,
    ) -> Result<Response<pb::EndGameResponse>, Status> {
        let req = request.into_inner();
        record("game_id", req.game_id.as_str());
        Ok(Response::new(Validator::end_game(self, req).await?))
    }

    async fn legal_moves(
        &self,
        request: Request<pb::LegalMovesRequest>,
    ) -> Result<Response<pb::LegalMovesResponse>, Status> {
        Ok(Response::new(legal_moves(request.get_ref())?))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        Ok(Response::new(
            Validator::list_games(self, request.into_inner()).await?,
        ))
    }

    async fn analyze_game(
        &self,
        request: Request<pb::AnalyzeGameRequest>,
    ) -> Result<Response<pb::AnalyzeGameResponse>, Status> {
        let req = request.into_inner();
        record("game_id", req.game_id.as_str());
        Ok(Response::new(Validator::analyze_game(self, req).await?))
    }
}
