//! `.creds` files against a nats-server in operator mode: the test is the operator. It makes an
//! operator, an account with JetStream and a user as nkeys, signs their JWTs (what `nsc` does),
//! preloads the account into the server's memory resolver, and writes the user's `.creds`
//! file. The right file connects, publishes and reads; a user of an account the server does
//! not know, and a client without credentials, are refused at once, logged and counted.

use arbiter_bus::{
    BusError, EventBus, JetStreamBus, NatsOptions, Outgoing, Published, Refusal, StreamSettings,
    refused_connections,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use nkeys::KeyPair;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;
use test_support::NatsServer;

const FAST: Duration = Duration::from_secs(5);

/// A NATS JWT (v2): `subject`'s claims, signed by `issuer`.
fn jwt(issuer: &KeyPair, subject: &str, name: &str, nats: serde_json::Value) -> String {
    let header = json!({ "typ": "JWT", "alg": "ed25519-nkey" });
    let claims = json!({
        "jti": format!("{name}-{subject}"),
        "iat": 1_700_000_000u64,
        "iss": issuer.public_key(),
        "name": name,
        "sub": subject,
        "nats": nats,
    });
    let body = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = issuer.sign(body.as_bytes()).expect("sign the JWT");
    format!("{body}.{}", URL_SAFE_NO_PAD.encode(signature))
}

/// An account's JWT, without limits; with JetStream if `jetstream` (the system account may
/// not have it).
fn account_jwt(operator: &KeyPair, account: &KeyPair, name: &str, jetstream: bool) -> String {
    let storage = if jetstream { -1 } else { 0 };
    jwt(
        operator,
        &account.public_key(),
        name,
        json!({
            "type": "account",
            "version": 2,
            "limits": {
                "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                "wildcards": true, "conn": -1, "leaf": -1,
                "mem_storage": storage, "disk_storage": storage, "streams": storage,
                "consumer": storage,
            },
        }),
    )
}

/// A `.creds` file for a new user of `account`, in `dir`.
fn creds(dir: &tempfile::TempDir, file: &str, account: &KeyPair) -> PathBuf {
    let user = KeyPair::new_user();
    let token = jwt(
        account,
        &user.public_key(),
        "arbiter",
        json!({
            "type": "user",
            "version": 2,
            "pub": {}, "sub": {},
            "subs": -1, "data": -1, "payload": -1,
        }),
    );
    let text = format!(
        "-----BEGIN NATS USER JWT-----\n{token}\n------END NATS USER JWT------\n\n\
         ************************* IMPORTANT *************************\n\
         NKEY Seed printed below can be used to sign and prove identity.\n\
         NKEYs are sensitive and should be treated as secrets.\n\n\
         -----BEGIN USER NKEY SEED-----\n{}\n------END USER NKEY SEED------\n\n\
         *************************************************************\n",
        user.seed().expect("the user's seed")
    );
    let path = dir.path().join(file);
    std::fs::write(&path, text).expect("write the creds file");
    path
}

async fn connect(nats: &NatsOptions) -> Result<JetStreamBus, BusError> {
    tokio::time::timeout(
        FAST,
        JetStreamBus::connect(
            nats,
            "creds-test",
            &StreamSettings::new("CREDS", "shogi.game.>"),
        ),
    )
    .await
    .expect("connecting neither hangs nor retries a refusal")
}

#[tokio::test]
async fn a_creds_file_from_the_operator_gets_in_and_others_are_refused() {
    let operator = KeyPair::new_operator();
    let system = KeyPair::new_account();
    let account = KeyPair::new_account();
    let stranger = KeyPair::new_account();
    let operator_jwt = jwt(
        &operator,
        &operator.public_key(),
        "test-operator",
        json!({ "type": "operator", "version": 2 }),
    );
    let server = NatsServer::start_with_config(&format!(
        "operator: {operator_jwt}\nsystem_account: {sys}\nresolver: MEMORY\n\
         resolver_preload: {{\n  {sys}: {sys_jwt}\n  {acc}: {acc_jwt}\n}}\n",
        sys = system.public_key(),
        sys_jwt = account_jwt(&operator, &system, "SYS", false),
        acc = account.public_key(),
        acc_jwt = account_jwt(&operator, &account, "ARBITER", true),
    ));
    let dir = tempfile::tempdir().unwrap();

    let mut good = NatsOptions::new(server.url());
    good.credentials_file = Some(creds(&dir, "arbiter.creds", &account));
    good.validate().expect("a well-formed creds file");
    let bus = connect(&good).await.expect("the operator's user connects");
    let published = bus
        .publish(Outgoing::new(
            "shogi.game.c.move",
            "test.Type",
            "c1",
            &b"c"[..],
        ))
        .await
        .unwrap();
    assert!(matches!(published, Published::Stored(_)), "{published:?}");
    let last = bus
        .last("shogi.game.c.move")
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(&last.payload[..], b"c");

    let before = refused_connections(Refusal::Authorization);
    let mut unknown = NatsOptions::new(server.url());
    unknown.credentials_file = Some(creds(&dir, "stranger.creds", &stranger));
    for (case, options) in [
        ("an account the server does not know", unknown),
        ("no credentials", NatsOptions::new(server.url())),
    ] {
        let err = connect(&options).await.map(|_| ()).unwrap_err();
        assert!(
            matches!(
                &err,
                BusError::Refused {
                    reason: Refusal::Authorization,
                    ..
                }
            ),
            "{case}: {err}"
        );
    }
    // This test binary has no other test, so the count is exact.
    assert_eq!(refused_connections(Refusal::Authorization) - before, 2);
}
