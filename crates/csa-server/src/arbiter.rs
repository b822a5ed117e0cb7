//! The arbiter as the front end calls it: the gRPC `MoveValidator` client, over TLS when
//! configured, with the bearer token on every call, as any platform calls it.

use crate::Error;
use arbiter_runtime::tls::ClientTls;
use shogi_proto::v1 as pb;
use shogi_proto::v1::move_validator_client::MoveValidatorClient;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;

/// A client of the arbiter; cheap to clone (one HTTP/2 channel).
#[derive(Debug, Clone)]
pub struct Arbiter {
    client: MoveValidatorClient<Channel>,
    token: Option<MetadataValue<tonic::metadata::Ascii>>,
}

impl Arbiter {
    /// A client of the arbiter at `url` (over TLS with `tls`), connected on first use (so
    /// that the front end may start before the arbiter answers).
    pub fn connect(
        url: &str,
        tls: Option<&ClientTls>,
        token: Option<&str>,
    ) -> Result<Arbiter, Error> {
        let endpoint = arbiter_runtime::tls::endpoint(url, tls)?;
        let token = match token {
            Some(t) => Some(
                format!("Bearer {t}")
                    .parse()
                    .map_err(|_| Error::Config("the token is not a header value".into()))?,
            ),
            None => None,
        };
        Ok(Arbiter {
            client: MoveValidatorClient::new(endpoint.connect_lazy()),
            token,
        })
    }

    fn request<T>(&self, msg: T) -> tonic::Request<T> {
        let mut req = tonic::Request::new(msg);
        if let Some(t) = &self.token {
            req.metadata_mut().insert("authorization", t.clone());
        }
        req
    }

    /// CreateGame.
    pub async fn create(&self, req: pb::CreateGameRequest) -> Result<pb::GameState, tonic::Status> {
        let r = self.client.clone().create_game(self.request(req)).await?;
        r.into_inner()
            .game
            .ok_or_else(|| tonic::Status::internal("CreateGame answered no game"))
    }

    /// SubmitMove.
    pub async fn submit(
        &self,
        req: pb::SubmitMoveRequest,
    ) -> Result<pb::SubmitMoveResponse, tonic::Status> {
        Ok(self
            .client
            .clone()
            .submit_move(self.request(req))
            .await?
            .into_inner())
    }

    /// EndGame.
    pub async fn end(&self, req: pb::EndGameRequest) -> Result<pb::EndGameResponse, tonic::Status> {
        Ok(self
            .client
            .clone()
            .end_game(self.request(req))
            .await?
            .into_inner())
    }

    /// Declare.
    pub async fn declare(
        &self,
        req: pb::DeclareRequest,
    ) -> Result<pb::DeclareResponse, tonic::Status> {
        Ok(self
            .client
            .clone()
            .declare(self.request(req))
            .await?
            .into_inner())
    }

    /// GetGame, the whole game.
    pub async fn get(&self, game_id: &str) -> Result<pb::GameState, tonic::Status> {
        let r = self
            .client
            .clone()
            .get_game(self.request(pb::GetGameRequest {
                game_id: game_id.to_owned(),
                ..Default::default()
            }))
            .await?;
        r.into_inner()
            .game
            .ok_or_else(|| tonic::Status::internal("GetGame answered no game"))
    }

    /// WatchGame from the start.
    pub async fn watch(
        &self,
        game_id: &str,
    ) -> Result<tonic::Streaming<pb::WatchGameResponse>, tonic::Status> {
        let r = self
            .client
            .clone()
            .watch_game(self.request(pb::WatchGameRequest {
                game_id: game_id.to_owned(),
                from_ply: 0,
            }))
            .await?;
        Ok(r.into_inner())
    }
}
