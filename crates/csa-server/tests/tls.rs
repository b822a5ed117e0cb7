//! The front end against a validator that serves TLS and mutual TLS, with certificates made in
//! the test (`test_support::TestPki`: a CA that signs the validator's certificate and the
//! front end's, and a rogue CA): players play through a front end that trusts the CA, and,
//! under mutual TLS, presents its certificate, with the bearer token on top; a client that trusts another CA,
//! or presents no certificate, is refused; an `https://` URL without a CA is a configuration
//! error.

mod common;

use common::{Client, Front, X1_LOGINS, start_with, started};
use csa_server::Arbiter;
use move_validator::{RefusalReason, TlsConfig};
use test_support::{Deadline, TestPki};

const TOKEN: &str = "s3cret";
/// How long the validator may take to count a refused handshake.
const COUNTED: Deadline = Deadline::secs(10);

/// The arbiter with its validator serving TLS, requiring client certificates signed by the
/// PKI's CA, and the bearer token.
fn mutual_tls(pki: &TestPki) -> arbiter_stack::StackConfig {
    let mut arbiter = arbiter_stack::StackConfig::default();
    arbiter.validator.tls = Some(
        TlsConfig::new(pki.path("server.pem"), pki.path("server.key"))
            .with_client_ca(pki.path("ca.pem")),
    );
    arbiter.validator.auth_token = Some(TOKEN.into());
    arbiter
}

/// TLS trusting the CA file `ca`, presenting the certificate `client` (`client` names
/// `client.pem` and `client.key`) when given.
fn client_tls(pki: &TestPki, ca: &str, client: Option<&str>) -> arbiter_runtime::tls::ClientTls {
    let tls = arbiter_runtime::tls::ClientTls::new(pki.path(ca));
    match client {
        Some(c) => tls.with_identity(pki.path(&format!("{c}.pem")), pki.path(&format!("{c}.key"))),
        None => tls,
    }
}

/// Two players start a game on `front` and each plays a move, echoed to both.
async fn two_moves(front: &Front) {
    let (mut b, mut w): (Client, Client) = started(front, X1_LOGINS, "tls-600-10").await;
    b.send(b"+7776FU\n").await;
    for c in [&mut b, &mut w] {
        assert_eq!(c.until(|l| l.starts_with('+')).await, ["+7776FU,T0"]);
    }
    w.send(b"-3334FU\n").await;
    for c in [&mut b, &mut w] {
        assert_eq!(c.until(|l| l.starts_with('-')).await, ["-3334FU,T0"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_play_through_a_validator_serving_tls() {
    let pki = TestPki::new();
    let mut arbiter = arbiter_stack::StackConfig::default();
    arbiter.validator.tls = Some(TlsConfig::new(
        pki.path("server.pem"),
        pki.path("server.key"),
    ));
    let front = start_with(arbiter, |config| {
        config.tls = Some(client_tls(&pki, "ca.pem", None));
    })
    .await;
    assert!(front.grpc.starts_with("https://"), "{}", front.grpc);
    two_moves(&front).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_play_through_a_validator_serving_mutual_tls() {
    let pki = TestPki::new();
    let arbiter = mutual_tls(&pki);
    let refusals = arbiter.validator.refusals.clone();
    let front = start_with(arbiter, |config| {
        config.tls = Some(client_tls(&pki, "ca.pem", Some("client")));
        config.token = Some(TOKEN.into());
    })
    .await;
    assert!(front.grpc.starts_with("https://"), "{}", front.grpc);
    two_moves(&front).await;

    // The same validator, called as the front end calls it: only the CA and the certificate
    // together reach it (a game it does not know is NOT_FOUND, an answer of the service).
    let call = |tls: arbiter_runtime::tls::ClientTls| {
        let url = front.grpc.clone();
        async move {
            // No patience: each call is made once, its refusal seen as it is.
            let mut config = csa_server::Config::new(&url);
            config.tls = Some(tls);
            config.token = Some(TOKEN.into());
            config.arbiter_stream = false;
            config.arbiter_patience = std::time::Duration::ZERO;
            Arbiter::connect(&config)
                .expect("a client")
                .get("no-such-game")
                .await
                .expect_err("no such game")
        }
    };
    let reached = call(client_tls(&pki, "ca.pem", Some("client"))).await;
    assert_eq!(reached.code(), tonic::Code::NotFound, "{reached:?}");
    // Refused at the handshake, by the client (another CA trusted) or by the validator, which
    // counts each refusal with its reason.
    let other_ca = call(client_tls(&pki, "rogue-ca.pem", Some("client"))).await;
    assert_eq!(other_ca.code(), tonic::Code::Unavailable, "{other_ca:?}");
    assert!(other_ca.message().contains("UnknownIssuer"), "{other_ca:?}");
    for (what, client, reason) in [
        ("no certificate", None, RefusalReason::NoClientCertificate),
        (
            "a certificate of another CA",
            Some("rogue-client"),
            RefusalReason::BadClientCertificate,
        ),
    ] {
        let refused = call(client_tls(&pki, "ca.pem", client)).await;
        assert_ne!(refused.code(), tonic::Code::NotFound, "{what}: {refused:?}");
        tokio::time::timeout(COUNTED.get(), refusals.wait_for(reason, 1))
            .await
            .unwrap_or_else(|_| panic!("{what}: not counted as {reason:?}: {refusals:?}"));
    }
}

#[test]
fn an_https_url_needs_a_ca_and_a_ca_needs_an_https_url() {
    let pki = TestPki::new();
    let mut config = csa_server::Config::new("https://127.0.0.1:50051");
    let err = config.validate().unwrap_err().to_string();
    assert!(err.contains("needs the CA"), "{err}");
    config.tls = Some(client_tls(&pki, "ca.pem", Some("client")));
    config.validate().expect("https with a CA");
    config.arbiter = "http://127.0.0.1:50051".into();
    let err = config.validate().unwrap_err().to_string();
    assert!(err.contains("is https://"), "{err}");
    config.arbiter = "https://127.0.0.1:50051".into();
    config.tls = Some(client_tls(&pki, "missing.pem", None));
    let err = config.validate().unwrap_err().to_string();
    assert!(err.contains("missing.pem"), "{err}");
}
