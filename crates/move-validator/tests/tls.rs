//! TLS and mutual TLS by configuration: the real server on 127.0.0.1:0 against a real
//! nats-server, with certificates made in the test (`test_support::TestCa`: a server CA, a
//! client CA, and a rogue CA that the server does not trust). The bearer token applies on top of TLS. Every
//! refused handshake is counted by the service with its reason.

use move_validator::{Config, RefusalReason, TlsConfig};
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use test_support::{NatsServer, TestCa};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::Code;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

const TOKEN: &str = "s3cret";

/// Everything a test needs, written to a temporary directory.
struct Pki {
    dir: tempfile::TempDir,
    server_ca: TestCa,
    client_ca: TestCa,
    rogue_ca: TestCa,
}

impl Pki {
    fn new() -> Pki {
        let pki = Pki {
            dir: tempfile::tempdir().unwrap(),
            server_ca: TestCa::new("test server ca"),
            client_ca: TestCa::new("test client ca"),
            rogue_ca: TestCa::new("rogue ca"),
        };
        let (cert, key) = pki.server_ca.leaf(&["localhost", "127.0.0.1"]);
        pki.write("server.pem", &cert);
        pki.write("server.key", &key);
        pki.write("client-ca.pem", &pki.client_ca.pem);
        pki
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn server_tls(&self) -> TlsConfig {
        TlsConfig::new(self.path("server.pem"), self.path("server.key"))
    }

    fn mutual_tls(&self) -> TlsConfig {
        self.server_tls().with_client_ca(self.path("client-ca.pem"))
    }
}

/// A validator instance running on a loopback port.
struct Validator {
    addr: SocketAddr,
    refusals: move_validator::Refusals,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), move_validator::Error>>,
}

impl Validator {
    async fn start(nats: &NatsServer, tls: TlsConfig) -> Validator {
        let mut config = Config::new(nats.url());
        config.tls = Some(tls);
        config.auth_token = Some(TOKEN.into());
        let refusals = config.refusals.clone();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(move_validator::run(listener, config, async {
            let _ = stopped.await;
        }));
        Validator {
            addr,
            refusals,
            stop: Some(stop),
            task,
        }
    }

    /// A TLS channel trusting `ca` (PEM), with an optional client identity.
    async fn tls_channel(
        &self,
        ca: Option<&str>,
        identity: Option<&(String, String)>,
    ) -> Result<Channel, tonic::transport::Error> {
        let mut tls = ClientTlsConfig::new().domain_name("localhost");
        if let Some(ca) = ca {
            tls = tls.ca_certificate(Certificate::from_pem(ca));
        }
        if let Some((cert, key)) = identity {
            tls = tls.identity(Identity::from_pem(cert, key));
        }
        Endpoint::from_shared(format!("https://{}", self.addr))
            .unwrap()
            .tls_config(tls)?
            .connect()
            .await
    }

    async fn shutdown(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task
            .await
            .expect("server task")
            .expect("server ran cleanly");
    }
}

/// One ValidateMove, with or without the bearer token.
async fn validate(channel: Channel, token: bool) -> Result<bool, tonic::Status> {
    let mut request = tonic::Request::new(pb::ValidateMoveRequest {
        sfen: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1".into(),
        usi: "7g7f".into(),
    });
    if token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    }
    MoveValidatorClient::new(channel)
        .validate_move(request)
        .await
        .map(|r| r.into_inner().legal)
}

/// Connecting, or the first call on the connection, fails: a refused handshake can show either
/// way (TLS 1.3 lets the client finish its side before the server has checked its certificate,
/// and the server then closes the connection).
async fn refused(channel: Result<Channel, tonic::transport::Error>) {
    match channel {
        Err(_) => {}
        Ok(channel) => {
            let status = validate(channel, true)
                .await
                .expect_err("a refused client cannot call");
            // A transport failure (the code depends on when the connection broke), not an
            // answer from the service.
            assert!(
                matches!(
                    status.code(),
                    Code::Unavailable | Code::Cancelled | Code::Unknown
                ),
                "{status:?}"
            );
            assert!(
                std::error::Error::source(&status).is_some(),
                "a transport error is the cause: {status:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_client_with_the_ca_trusts_the_server_and_the_token_still_applies() {
    let pki = Pki::new();
    let nats = NatsServer::start();
    let v = Validator::start(&nats, pki.server_tls()).await;

    let channel = v
        .tls_channel(Some(&pki.server_ca.pem), None)
        .await
        .expect("a client with the CA connects");
    assert!(
        validate(channel.clone(), true)
            .await
            .expect("call over TLS")
    );
    let status = validate(channel, false).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");

    // A client that does not trust the server's CA does not get through; its handshake is
    // counted as refused.
    refused(v.tls_channel(Some(&pki.rogue_ca.pem), None).await).await;
    v.refusals.wait_for(RefusalReason::TlsHandshake, 1).await;
    // Nor does plaintext.
    let plain = Endpoint::from_shared(format!("http://{}", v.addr))
        .unwrap()
        .connect_lazy();
    let status = validate(plain, true).await.unwrap_err();
    assert_ne!(status.code(), Code::Ok);
    v.refusals.wait_for(RefusalReason::TlsHandshake, 2).await;
    v.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_refuses_clients_without_a_certificate_from_the_client_ca() {
    let pki = Pki::new();
    let nats = NatsServer::start();
    let v = Validator::start(&nats, pki.mutual_tls()).await;
    let ca = Some(pki.server_ca.pem.as_str());

    // No client certificate.
    refused(v.tls_channel(ca, None).await).await;
    // The server counts the refused handshake in its own task, once the client has seen it.
    v.refusals
        .wait_for(RefusalReason::NoClientCertificate, 1)
        .await;
    // A certificate signed by a CA the server does not trust.
    let rogue = pki.rogue_ca.leaf(&["client"]);
    refused(v.tls_channel(ca, Some(&rogue)).await).await;
    v.refusals
        .wait_for(RefusalReason::BadClientCertificate, 1)
        .await;

    // A certificate signed by the client CA: calls succeed, with the token.
    let good = pki.client_ca.leaf(&["client"]);
    let channel = v
        .tls_channel(ca, Some(&good))
        .await
        .expect("a client with a good certificate connects");
    assert!(
        validate(channel.clone(), true)
            .await
            .expect("call over mTLS")
    );
    let status = validate(channel, false).await.unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(
        v.refusals
            .count(move_validator::RefusalReason::MissingToken),
        1
    );
    v.shutdown().await;
}

#[test]
fn bad_tls_files_are_refused_before_anything_is_bound() {
    let pki = Pki::new();
    let garbage = pki.write("garbage.pem", "not a certificate\n");
    // Another certificate's key: not the server certificate's.
    let other_key = pki.write("other.key", &pki.rogue_ca.leaf(&["localhost"]).1);
    let missing = pki.path("missing.pem");
    let cert = pki.path("server.pem");
    let key = pki.path("server.key");
    let cases: [(&Path, &Path, Option<&Path>, &str); 5] = [
        (&missing, &key, None, "tls cert"),
        (&garbage, &key, None, "no PEM certificate found"),
        (&cert, &garbage, None, "no PEM private key found"),
        (&cert, &other_key, None, "tls cert"),
        (&cert, &key, Some(&garbage), "tls client ca"),
    ];
    for (cert, key, client_ca, expected) in cases {
        // The library refuses the configuration as such...
        let mut config = Config::new("nats://127.0.0.1:1");
        config.tls = Some(TlsConfig {
            cert: cert.to_owned(),
            key: key.to_owned(),
            client_ca: client_ca.map(Path::to_owned),
        });
        let err = config.validate().unwrap_err();
        assert!(err.0.contains(expected), "{expected:?} not in {err}");

        // ...and the binary exits non-zero with the message before it binds: its listen
        // address is one that is already taken, so a bind would fail with another message,
        // and its NATS URL has no server, so a connection would fail with another too.
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_move-validator"));
        cmd.args(["--listen", &taken.local_addr().unwrap().to_string()])
            .args(["--nats-url", "nats://127.0.0.1:1"])
            .arg("--tls-cert")
            .arg(cert)
            .arg("--tls-key")
            .arg(key);
        if let Some(ca) = client_ca {
            cmd.arg("--tls-client-ca").arg(ca);
        }
        let out = cmd.output().expect("run move-validator");
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("invalid configuration"), "{stderr}");
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
        assert!(!stderr.contains("bind"), "{stderr}");
    }
}
