//! What the contract tests share: the validator on loopback against a real nats-server, the
//! requests they send, and the parts of a refusal they read.

// Each test binary uses the part it needs.
#![allow(dead_code)]

use move_validator::Config;
use shogi_proto::v1 as pb;
use shogi_proto::v1::move_validator_client::MoveValidatorClient;
use tonic::Status;
use tonic::transport::Channel;
use tonic_types::StatusExt;

/// The validator with `config` on loopback, a channel to it, and what stops it.
pub async fn serve(config: Config) -> (Channel, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(move_validator::run(listener, config, async {
        let _ = stopped.await;
    }));
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    (channel, stop)
}

/// The validator serving on loopback and a client of it; the validator stops when this is
/// dropped.
pub struct Running {
    pub client: MoveValidatorClient<Channel>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Running {
    /// The validator with `config`, served as [`serve`] does.
    pub async fn start(config: Config) -> Running {
        let (channel, stop) = serve(config).await;
        Running {
            client: MoveValidatorClient::new(channel),
            _stop: stop,
        }
    }
}

/// The ErrorInfo reason of a refusal.
pub fn reason(status: &Status) -> String {
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_else(|| panic!("no ErrorInfo: {status:?}"))
}

/// The field the first BadRequest violation of a refusal names.
pub fn field(status: &Status) -> String {
    let details = status.get_error_details();
    let bad = details.bad_request().expect("a BadRequest");
    bad.field_violations[0].field.clone()
}

/// A CreateGame request.
pub fn create(
    id: &str,
    preset: &str,
    overrides: Option<pb::RulesetOverrides>,
    sfen: Option<&str>,
) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        ruleset: Some(pb::Ruleset {
            preset: preset.into(),
            overrides,
        }),
        start: sfen.map(|s| pb::StartPosition {
            start: Some(pb::start_position::Start::Sfen(s.into())),
        }),
        game_id: id.into(),
        strict: false,
    }
}

/// The game `id` as GetGame answers it whole.
///
/// # Panics
///
/// When the call fails.
pub async fn game(client: &mut MoveValidatorClient<Channel>, id: &str) -> pb::GameState {
    client
        .get_game(pb::GetGameRequest {
            game_id: id.into(),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("GetGame {id}: {e:?}"))
        .into_inner()
        .game
        .expect("a game")
}

/// A SubmitMove request, not strict.
pub fn submit(id: &str, ply: u32, usi: &str) -> pb::SubmitMoveRequest {
    pb::SubmitMoveRequest {
        game_id: id.into(),
        ply,
        usi: usi.into(),
        strict: false,
        comment: String::new(),
    }
}
