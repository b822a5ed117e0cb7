//! A call without the bearer token is refused with UNAUTHENTICATED, and a TLS client without
//! a client certificate where mutual TLS is required is refused in the handshake; each refusal
//! is logged (peer and reason, never the token) and counted: the real server on 127.0.0.1:0
//! against a real nats-server.
//!
//! The test runs on a current-thread runtime, so the server's tasks log on the test's thread,
//! where the test's subscriber collects them.

use move_validator::{Config, RefusalReason, Refusals, TlsConfig};
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::io::Write;
use std::sync::{Arc, Mutex};
use test_support::{NatsServer, TestPki};
use tonic::Code;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};

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

impl Logs {
    /// Collects the `warn` lines logged on this thread while the guard lives.
    fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let writer = logs.clone();
        let guard = tracing::subscriber::set_default(
            tracing_subscriber::fmt()
                .with_max_level(tracing::Level::WARN)
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .finish(),
        );
        (logs, guard)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test]
async fn calls_without_the_token_are_refused_logged_and_counted() {
    let (logs, _guard) = Logs::capture();
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
    // A client guessing tokens in a loop is counted every time, logged once a second at most.
    for _ in 0..20 {
        let status = validate(&mut client, Some("Bearer another-guess"))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::Unauthenticated);
    }
    assert_eq!(refusals.count(RefusalReason::WrongToken), 21);

    let _ = stop.send(());
    server.await.unwrap().unwrap();
    let text = logs.text();
    let refused: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("refused a call"))
        .collect();
    // The three first refusals, one a reason; the guesses within the second after the first
    // wrong token are not logged (a guess a second later would be, with the count it hid).
    assert!((3..=4).contains(&refused.len()), "{text}");
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

#[tokio::test]
async fn a_tls_client_without_a_certificate_is_refused_logged_and_counted() {
    let (logs, _guard) = Logs::capture();
    let pki = TestPki::new();
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.tls = Some(
        TlsConfig::new(pki.path("server.pem"), pki.path("server.key"))
            .with_client_ca(pki.path("ca.pem")),
    );
    let refusals = config.refusals.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(move_validator::run(listener, config, async {
        let _ = stopped.await;
    }));

    // Trusts the server, has no certificate of its own.
    let tls = ClientTlsConfig::new()
        .domain_name("localhost")
        .ca_certificate(Certificate::from_pem(&pki.ca.pem));
    let endpoint = Endpoint::from_shared(format!("https://{addr}"))
        .unwrap()
        .tls_config(tls)
        .unwrap();
    // The handshake fails at connect, or (TLS 1.3) on the first call.
    if let Ok(channel) = endpoint.connect().await {
        let status = validate(&mut MoveValidatorClient::new(channel), None)
            .await
            .unwrap_err();
        assert_ne!(status.code(), Code::Ok);
    }
    refusals
        .wait_for(RefusalReason::NoClientCertificate, 1)
        .await;

    let _ = stop.send(());
    server.await.unwrap().unwrap();
    let text = logs.text();
    let line = text
        .lines()
        .find(|l| l.contains("refused a connection: tls handshake"))
        .unwrap_or_else(|| panic!("no refusal logged: {text}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("reason=\"no_client_certificate\""), "{line}");
    assert!(line.contains("peer=\"127.0.0.1:"), "{line}");
}
