//! A call without the bearer token is refused with UNAUTHENTICATED, and the refusal is logged
//! (peer and reason, never the token) and counted: the real server on 127.0.0.1:0 against a
//! real nats-server.
//!
//! The test runs on a current-thread runtime, so the server's tasks log on the test's thread,
//! where the test's subscriber collects them.

use move_validator::{Config, RefusalReason, Refusals};
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::io::Write;
use std::sync::{Arc, Mutex};
use test_support::NatsServer;
use tonic::Code;
use tonic::transport::Endpoint;

const TOKEN: &str = "the-right-token";

#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn validate(
    client: &mut MoveValidatorClient<tonic::transport::Channel>,
    authorization: Option<&str>,
) -> Result<bool, tonic::Status> {
    let mut request = tonic::Request::new(pb::ValidateMoveRequest {
        sfen: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1".into(),
        usi: "7g7f".into(),
    });
    if let Some(value) = authorization {
        request
            .metadata_mut()
            .insert("authorization", value.parse().unwrap());
    }
    client
        .validate_move(request)
        .await
        .map(|r| r.into_inner().legal)
}

#[tokio::test]
async fn calls_without_the_token_are_refused_logged_and_counted() {
    let logs = Logs::default();
    let writer = logs.clone();
    let _guard = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish(),
    );
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.auth_token = Some(TOKEN.into());
    let refusals: Refusals = config.refusals.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(move_validator::run(listener, config, async {
        let _ = stopped.await;
    }));
    let channel = Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    let mut client = MoveValidatorClient::new(channel);

    // The right token: served, nothing counted.
    let right = format!("Bearer {TOKEN}");
    assert!(validate(&mut client, Some(&right)).await.unwrap());
    assert_eq!(refusals.total(), 0);

    // No credentials: UNAUTHENTICATED, one more refusal for that reason.
    let status = validate(&mut client, None).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(refusals.count(RefusalReason::MissingToken), 1);
    assert_eq!(refusals.total(), 1);

    // A wrong token, and something that is not a bearer token.
    let status = validate(&mut client, Some("Bearer a-guessed-token"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(refusals.count(RefusalReason::WrongToken), 1);
    let status = validate(&mut client, Some("Basic dXNlcjpwdw=="))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(refusals.count(RefusalReason::Malformed), 1);
    assert_eq!(refusals.total(), 3);

    let _ = stop.send(());
    server.await.unwrap().unwrap();
    drop(_guard);
    let text = String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned();
    let refused: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("refused a call"))
        .collect();
    assert_eq!(refused.len(), 3, "{text}");
    for (line, reason) in refused
        .iter()
        .zip(["missing_token", "wrong_token", "malformed"])
    {
        assert!(line.contains("WARN"), "{line}");
        assert!(line.contains(&format!("reason=\"{reason}\"")), "{line}");
        // The peer is the client's loopback address.
        assert!(line.contains("peer=\"127.0.0.1:"), "{line}");
    }
    for secret in [TOKEN, "a-guessed-token", "dXNlcjpwdw=="] {
        assert!(!text.contains(secret), "{secret} logged: {text}");
    }
}
