//! Authentication and TLS towards NATS, against a real nats-server on loopback configured by
//! the test: user and password, nkeys, TLS and mutual TLS with certificates made by rcgen.
//!
//! The right client connects, publishes and reads through `JetStreamBus`; a client without the
//! credentials (or without a client certificate) is refused at once with `BusError::Refused`
//! (not retried for ever), and the refusal is logged and counted.
//!
//! `.creds` files need a server in operator mode: `tests/creds.rs`.

use arbiter_bus::{
    BusError, EventBus, JetStreamBus, NatsOptions, Outgoing, Published, Refusal, StreamSettings,
    refused_connections,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use support::Logs;
use test_support::{NatsServer, TestPki};

mod support;

/// A refusal must come back well within this: no retry loop, no request timeout.
const FAST: Duration = Duration::from_secs(5);

/// The refusal counters are per process: the tests that read them take turns.
static COUNTERS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn stream() -> StreamSettings {
    StreamSettings::new("SECURITY", "shogi.game.>")
}

/// Connects, publishes one message and reads it back.
async fn round_trip(nats: &NatsOptions, tag: &str) {
    let bus = JetStreamBus::connect(nats, "security-test", &stream())
        .await
        .unwrap_or_else(|e| panic!("{tag}: the right client connects: {e}"));
    let subject = format!("shogi.game.{tag}.move");
    let published = bus
        .publish(Outgoing::new(
            &subject,
            "test.Type",
            tag,
            tag.as_bytes().to_vec(),
        ))
        .await
        .unwrap();
    let Published::Stored(seq) = published else {
        panic!("{tag}: {published:?}")
    };
    let last = bus.last(&subject).await.unwrap().expect("the message");
    assert_eq!((last.sequence, &last.payload[..]), (seq, tag.as_bytes()));
}

/// Connecting with `nats` is refused for `reason`, quickly.
async fn refused(nats: &NatsOptions, case: &str, reason: Refusal) -> BusError {
    let started = Instant::now();
    let result = tokio::time::timeout(
        FAST,
        JetStreamBus::connect(nats, "security-test", &stream()),
    )
    .await
    .unwrap_or_else(|_| panic!("{case}: connecting hung instead of failing"));
    let err = result.map(|_| ()).expect_err(case);
    assert!(
        matches!(&err, BusError::Refused { reason: r, .. } if *r == reason),
        "{case}: expected a {reason} refusal, got {err}"
    );
    assert!(started.elapsed() < FAST, "{case}");
    err
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn user_password_and_nkey_clients_get_in_and_others_are_refused() {
    let _turn = COUNTERS.lock().await;
    let (logs, _guard) = Logs::capture();
    let user = nkeys::KeyPair::new_user();
    let stranger = nkeys::KeyPair::new_user();
    let server = NatsServer::start_with_config(&format!(
        "authorization {{\n  users: [\n    {{ user: arbiter, password: \"right-pw\" }}\n    \
         {{ nkey: {} }}\n  ]\n}}\n",
        user.public_key()
    ));
    let dir = tempfile::tempdir().unwrap();
    let seed = write(&dir, "user.nk", &user.seed().unwrap());
    let stranger_seed = write(&dir, "stranger.nk", &stranger.seed().unwrap());

    let mut password = NatsOptions::new(server.url());
    password.user = Some("arbiter".into());
    password.password = Some("right-pw".into());
    round_trip(&password, "password").await;
    let mut nkey = NatsOptions::new(server.url());
    nkey.nkey_seed_file = Some(seed);
    round_trip(&nkey, "nkey").await;

    let before = refused_connections(Refusal::Authorization);
    let anonymous = NatsOptions::new(server.url());
    let err = refused(&anonymous, "no credentials", Refusal::Authorization).await;
    assert!(err.to_string().contains("authorization violation"), "{err}");
    let mut wrong = password.clone();
    wrong.password = Some("wrong-pw".into());
    refused(&wrong, "wrong password", Refusal::Authorization).await;
    let mut unknown = NatsOptions::new(server.url());
    unknown.nkey_seed_file = Some(stranger_seed);
    refused(&unknown, "unknown nkey", Refusal::Authorization).await;
    assert_eq!(refused_connections(Refusal::Authorization) - before, 3);

    let logs = logs.text();
    let lines: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("nats refused the connection"))
        .collect();
    assert_eq!(lines.len(), 3, "{logs}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains("WARN") && l.contains("reason=\"authorization\"")),
        "{logs}"
    );
    assert!(lines.iter().all(|l| l.contains(server.url())), "{logs}");
    assert!(
        !logs.contains("wrong-pw") && !logs.contains("right-pw"),
        "{logs}"
    );
}

#[tokio::test]
async fn mutual_tls_lets_in_only_clients_with_a_certificate_from_the_ca() {
    let _turn = COUNTERS.lock().await;
    let (logs, _guard) = Logs::capture();
    let pki = TestPki::new();
    let server = NatsServer::start_with_config(&pki.nats_tls_block(true));

    let mut good = NatsOptions::new(server.url());
    good.tls.ca = Some(pki.path("ca.pem"));
    good.tls.cert = Some(pki.path("client.pem"));
    good.tls.key = Some(pki.path("client.key"));
    good.tls.required = true;
    round_trip(&good, "mtls").await;

    let before = refused_connections(Refusal::Tls);
    let mut no_cert = good.clone();
    no_cert.tls.cert = None;
    no_cert.tls.key = None;
    refused(&no_cert, "no client certificate", Refusal::Tls).await;
    let mut rogue = good.clone();
    rogue.tls.cert = Some(pki.path("rogue-client.pem"));
    rogue.tls.key = Some(pki.path("rogue-client.key"));
    refused(&rogue, "a client certificate from another CA", Refusal::Tls).await;
    // Without the CA, the client does not trust the server (system roots only).
    let mut untrusting = good.clone();
    untrusting.tls.ca = None;
    refused(&untrusting, "the server's CA not trusted", Refusal::Tls).await;
    // A client that asks for no TLS is upgraded by the server's INFO, and fails the same way.
    refused(
        &NatsOptions::new(server.url()),
        "no TLS settings",
        Refusal::Tls,
    )
    .await;
    assert_eq!(refused_connections(Refusal::Tls) - before, 4);
    let logs = logs.text();
    assert_eq!(
        logs.lines()
            .filter(|l| l.contains("nats refused the connection") && l.contains("reason=\"tls\""))
            .count(),
        4,
        "{logs}"
    );
}

#[tokio::test]
async fn tls_with_a_password_on_top() {
    let _turn = COUNTERS.lock().await;
    let pki = TestPki::new();
    let server = NatsServer::start_with_config(&format!(
        "{}authorization {{ user: arbiter, password: \"right-pw\" }}\n",
        pki.nats_tls_block(false)
    ));
    let mut good = NatsOptions::new(server.url());
    good.tls.ca = Some(pki.path("ca.pem"));
    good.user = Some("arbiter".into());
    good.password = Some("right-pw".into());
    round_trip(&good, "tls-password").await;
    let mut wrong = good.clone();
    wrong.password = Some("wrong-pw".into());
    refused(&wrong, "TLS, wrong password", Refusal::Authorization).await;
}

#[tokio::test]
async fn bad_settings_fail_before_any_connection() {
    let dir = tempfile::tempdir().unwrap();
    let mut nats = NatsOptions::new("nats://127.0.0.1:1");
    nats.nkey_seed_file = Some(write(&dir, "bad.nk", "not a seed\n"));
    // Nothing listens on port 1: a connection attempt would fail otherwise (and retry).
    let err = tokio::time::timeout(FAST, JetStreamBus::connect(&nats, "t", &stream()))
        .await
        .expect("no connection attempt")
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(&err, BusError::Config(m) if m.contains("bad.nk")),
        "{err}"
    );
}

/// A client started before its server waits for it; the server comes up and refuses it
/// (`config`), and the wait ends at once with `reason`.
async fn refused_after_waiting(
    config: &str,
    client: impl Fn(String) -> NatsOptions,
    reason: Refusal,
) {
    let (logs, _guard) = Logs::capture();
    let port = test_support::free_port();
    let options = client(format!("nats://127.0.0.1:{port}"));
    let settings = stream();
    let connect = JetStreamBus::connect(&options, "security-test", &settings);
    tokio::pin!(connect);
    // Nothing listens yet: the first attempt fails, and the bus says it waits for a server.
    tokio::select! {
        result = &mut connect => panic!("connected to nothing: {:?}", result.map(|_| ())),
        () = logs.logged("waiting for a server") => {}
    }
    let before = refused_connections(reason);
    // The server comes up; this thread blocks meanwhile, so the client's next attempt waits
    // too.
    let _server = NatsServer::start_with_config_on(config, port);
    let err = tokio::time::timeout(FAST, connect)
        .await
        .expect("a refusal after the wait ends it")
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(&err, BusError::Refused { reason: r, .. } if *r == reason),
        "{err}"
    );
    assert_eq!(refused_connections(reason) - before, 1);
    assert!(logs.text().contains("nats refused the connection"));
}

#[tokio::test]
async fn a_server_that_comes_up_and_refuses_ends_the_wait() {
    let _turn = COUNTERS.lock().await;
    refused_after_waiting(
        "authorization { user: arbiter, password: \"right-pw\" }\n",
        NatsOptions::new,
        Refusal::Authorization,
    )
    .await;
    let pki = TestPki::new();
    refused_after_waiting(
        &pki.nats_tls_block(true),
        |url| {
            // Trusts the server, but has no client certificate.
            let mut o = NatsOptions::new(url);
            o.tls.ca = Some(pki.path("ca.pem"));
            o
        },
        Refusal::Tls,
    )
    .await;
}

#[tokio::test]
async fn several_urls_one_of_them_down() {
    let server = NatsServer::start();
    // Port 1 refuses connections; the client goes on to the next server.
    let nats = NatsOptions::new(format!("nats://127.0.0.1:1, {}", server.url()));
    assert_eq!(nats.urls().len(), 2);
    round_trip(&nats, "several").await;
}
