//! Named credentials over real gRPC on loopback against a real nats-server: each platform's
//! scope keeps it to its methods, the operator's view is the operate scope's alone (a platform
//! never sees another's game ids, moves or positions), the shared token works as it always
//! did, a TLS client certificate names its credential, and each quota refuses with
//! RESOURCE_EXHAUSTED and a `google.rpc.QuotaFailure` naming the limit. The quota tests print
//! their figures.

mod common;

use common::{create, reason, serve, submit};
use move_validator::{Config, Credential, Quotas, Scope};
use shogi_proto::v1::operator_client::OperatorClient;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::time::{Duration, Instant};
use test_support::{Deadline, NatsServer, TestPki};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Code, Status};
use tonic_types::StatusExt;

const PATIENCE: Deadline = Deadline::secs(30);
const POLL: Duration = Duration::from_millis(20);
const STARTPOS: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";

fn as_<T>(token: &str, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

fn validator(channel: &Channel) -> MoveValidatorClient<Channel> {
    MoveValidatorClient::new(channel.clone())
}

fn operator(channel: &Channel) -> OperatorClient<Channel> {
    OperatorClient::new(channel.clone())
}

fn validate(token: &str) -> tonic::Request<pb::ValidateMoveRequest> {
    as_(
        token,
        pb::ValidateMoveRequest {
            sfen: STARTPOS.into(),
            usi: "7g7f".into(),
        },
    )
}

/// The limit a quota refusal names, checked to be in its QuotaFailure and its ErrorInfo.
fn quota_limit(status: &Status) -> String {
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert_eq!(reason(status), "QUOTA_EXCEEDED");
    let details = status.get_error_details();
    let failure = details.quota_failure().expect("a QuotaFailure");
    let violation = &failure.violations[0];
    let info = details.error_info().unwrap();
    assert_eq!(
        violation.subject,
        format!("credential:{}", info.metadata["credential"])
    );
    let limit = info.metadata["limit"].clone();
    assert!(
        violation.description.starts_with(&format!("{limit}: ")),
        "{violation:?}"
    );
    limit
}

fn credential(name: &str, scopes: &[Scope], quotas: Quotas) -> Credential {
    Credential::new(name, &format!("{name}-token"), scopes).with_quotas(quotas)
}

#[tokio::test]
async fn scopes_keep_each_credential_to_its_methods() {
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.auth_token = Some("shared-token".into());
    config.credentials = vec![
        credential("alpha", &[Scope::Play, Scope::Read], Quotas::default()),
        credential("beta", &[Scope::Play, Scope::Read], Quotas::default()),
        credential("viewer", &[Scope::Read], Quotas::default()),
        credential("ops", &[Scope::Operate], Quotas::default()),
    ];
    let (channel, _stop) = serve(config).await;

    // A reader reads and judges, and writes nothing.
    assert!(
        validator(&channel)
            .validate_move(validate("viewer-token"))
            .await
            .is_ok()
    );
    let denied = validator(&channel)
        .create_game(as_("viewer-token", create("v-1", "online", None, None)))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    assert_eq!(reason(&denied), "PERMISSION_DENIED");
    let info = denied.get_error_details().error_info().unwrap().clone();
    assert_eq!(
        (
            info.metadata["credential"].as_str(),
            info.metadata["scope"].as_str()
        ),
        ("viewer", "play")
    );
    // The operator operates and plays nothing.
    let denied = validator(&channel)
        .validate_move(validate("ops-token"))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    // No credential, or a wrong one: UNAUTHENTICATED, as with the shared token alone.
    let none = validator(&channel)
        .validate_move(pb::ValidateMoveRequest {
            sfen: STARTPOS.into(),
            usi: "7g7f".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(none.code(), Code::Unauthenticated);
    let wrong = validator(&channel)
        .validate_move(validate("alpha-token-"))
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), Code::Unauthenticated);
    // The shared token: every method, as before.
    validator(&channel)
        .create_game(as_("shared-token", create("s-1", "online", None, None)))
        .await
        .unwrap();
    operator(&channel)
        .get_overview(as_("shared-token", pb::GetOverviewRequest::default()))
        .await
        .unwrap();
    println!("scopes: viewer may not play, ops may not read, the shared token may do all");
}

/// A platform's errors name its games, moves and positions: only the operate scope sees the
/// list, where each error names the credential that made the call.
#[tokio::test]
async fn a_platform_never_sees_another_platforms_errors() {
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.credentials = vec![
        credential("alpha", &[Scope::Play, Scope::Read], Quotas::default()),
        credential("beta", &[Scope::Play, Scope::Read], Quotas::default()),
        credential("ops", &[Scope::Operate], Quotas::default()),
    ];
    let (channel, _stop) = serve(config).await;
    let secret = "alpha-private-game";
    validator(&channel)
        .create_game(as_("alpha-token", create(secret, "online", None, None)))
        .await
        .unwrap();
    validator(&channel)
        .submit_move(as_("alpha-token", submit(secret, 1, "7g7f")))
        .await
        .unwrap();
    // An error that names alpha's game and ply.
    let ahead = validator(&channel)
        .submit_move(as_("alpha-token", submit(secret, 5, "3c3d")))
        .await
        .unwrap_err();
    assert_eq!(ahead.code(), Code::Aborted);

    for platform in ["alpha-token", "beta-token"] {
        let denied = operator(&channel)
            .get_overview(as_(platform, pb::GetOverviewRequest::default()))
            .await
            .unwrap_err();
        assert_eq!(denied.code(), Code::PermissionDenied, "{platform}");
        assert!(!format!("{denied:?}").contains(secret));
    }
    let view = operator(&channel)
        .get_overview(as_("ops-token", pb::GetOverviewRequest::default()))
        .await
        .unwrap()
        .into_inner();
    let listed: Vec<(&str, &str)> = view
        .errors
        .iter()
        .map(|e| (e.credential.as_str(), e.method.as_str()))
        .collect();
    assert_eq!(listed, [("alpha", "/shogi.v1.MoveValidator/SubmitMove")]);
    assert!(view.errors[0].message.contains(secret));
    // The two refusals of the platforms are counted, not listed.
    assert_eq!(view.refused_calls, 2);
}

#[tokio::test]
async fn quotas_refuse_with_a_quota_failure_naming_the_limit() {
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.credentials = vec![
        credential(
            "burst",
            &[Scope::Play, Scope::Read],
            Quotas {
                games_per_second: Some(5.0),
                ..Quotas::default()
            },
        ),
        credential(
            "chatty",
            &[Scope::Read],
            Quotas {
                calls_per_second: Some(20.0),
                ..Quotas::default()
            },
        ),
        credential(
            "watcher",
            &[Scope::Play, Scope::Read],
            Quotas {
                watch_streams: Some(2),
                ..Quotas::default()
            },
        ),
        credential("other", &[Scope::Play, Scope::Read], Quotas::default()),
    ];
    let (channel, _stop) = serve(config).await;

    // Games created per second: a burst of one second's worth, then the rate.
    let started = Instant::now();
    let (mut allowed, mut refused) = (0u32, 0u32);
    for i in 0..40 {
        match validator(&channel)
            .create_game(as_(
                "burst-token",
                create(&format!("b-{i}"), "online", None, None),
            ))
            .await
        {
            Ok(_) => allowed += 1,
            Err(status) => {
                assert_eq!(quota_limit(&status), "games_per_second");
                refused += 1;
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "games_per_second = 5: {allowed} creations allowed, {refused} refused in {elapsed:.3} s"
    );
    assert!(refused > 0);
    assert!(
        f64::from(allowed) <= 5.0 + 5.0 * elapsed + 1.0,
        "{allowed} in {elapsed} s"
    );
    // Then for a second and a half, as fast as one client goes: the rate, about 5 a second.
    const SUSTAINED: Duration = Duration::from_millis(1500);
    let started = Instant::now();
    let (mut allowed, mut refused) = (0u32, 0u32);
    let mut i = 0;
    while started.elapsed() < SUSTAINED {
        i += 1;
        match validator(&channel)
            .create_game(as_(
                "burst-token",
                create(&format!("s-{i}"), "online", None, None),
            ))
            .await
        {
            Ok(_) => allowed += 1,
            Err(status) => {
                assert_eq!(quota_limit(&status), "games_per_second");
                refused += 1;
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "games_per_second = 5, sustained: {allowed} creations allowed ({:.1}/s), {refused} \
         refused in {elapsed:.3} s",
        f64::from(allowed) / elapsed
    );
    assert!(
        f64::from(allowed) <= 5.0 * elapsed + 1.0,
        "{allowed} in {elapsed} s"
    );
    assert!(
        f64::from(allowed) >= 5.0 * (elapsed - 0.5),
        "{allowed} in {elapsed} s"
    );
    // Another credential is not held back by it.
    validator(&channel)
        .create_game(as_("other-token", create("o-1", "online", None, None)))
        .await
        .unwrap();

    // Calls per second, any method.
    let started = Instant::now();
    let (mut allowed, mut refused) = (0u32, 0u32);
    for _ in 0..100 {
        match validator(&channel)
            .validate_move(validate("chatty-token"))
            .await
        {
            Ok(_) => allowed += 1,
            Err(status) => {
                assert_eq!(quota_limit(&status), "calls_per_second");
                refused += 1;
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!("calls_per_second = 20: {allowed} calls allowed, {refused} refused in {elapsed:.3} s");
    assert!(refused > 0);
    assert!(f64::from(allowed) <= 20.0 + 20.0 * elapsed + 1.0);

    watch_streams_are_held_to_their_quota(&channel).await;
}

/// WatchGame streams open at once under `watch_streams = 2`: the third waits for one to close.
async fn watch_streams_are_held_to_their_quota(channel: &Channel) {
    validator(channel)
        .create_game(as_("watcher-token", create("w-1", "online", None, None)))
        .await
        .unwrap();
    let watch = || {
        let mut client = validator(channel);
        async move {
            client
                .watch_game(as_(
                    "watcher-token",
                    pb::WatchGameRequest {
                        game_id: "w-1".into(),
                        from_ply: 0,
                        verdict_only: false,
                    },
                ))
                .await
        }
    };
    let mut first = watch().await.unwrap().into_inner();
    let mut second = watch().await.unwrap().into_inner();
    assert!(first.message().await.unwrap().is_some());
    assert!(second.message().await.unwrap().is_some());
    let third = watch().await.unwrap_err();
    assert_eq!(quota_limit(&third), "watch_streams");
    drop(first);
    let until = Instant::now() + PATIENCE.get();
    loop {
        match watch().await {
            Ok(_) => break,
            Err(status) => assert_eq!(quota_limit(&status), "watch_streams"),
        }
        assert!(
            Instant::now() < until,
            "the closed stream's place never came back"
        );
        tokio::time::sleep(POLL).await;
    }
    println!("watch_streams = 2: a third stream refused until one closed");
}

/// Live games are counted from the bus: a game ends and frees its place, and a new instance
/// (a restart) counts the same games.
#[tokio::test]
async fn live_games_are_counted_from_the_bus_across_a_restart() {
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.credentials = vec![credential(
        "small",
        &[Scope::Play, Scope::Read],
        Quotas {
            live_games: Some(3),
            ..Quotas::default()
        },
    )];
    let (channel, stop) = serve(config.clone()).await;
    let creating = |channel: Channel, id: &'static str| async move {
        validator(&channel)
            .create_game(as_("small-token", create(id, "online", None, None)))
            .await
    };
    for id in ["l-1", "l-2", "l-3"] {
        creating(channel.clone(), id).await.unwrap();
    }
    let over = creating(channel.clone(), "l-4").await.unwrap_err();
    assert_eq!(quota_limit(&over), "live_games");
    validator(&channel)
        .end_game(as_(
            "small-token",
            pb::EndGameRequest {
                game_id: "l-1".into(),
                reason: pb::EndReason::Resignation as i32,
                loser: pb::Color::White as i32,
                ..Default::default()
            },
        ))
        .await
        .unwrap();
    // The place frees once the verdict is recorded on `.result`.
    let until = Instant::now() + PATIENCE.get();
    loop {
        match creating(channel.clone(), "l-4").await {
            Ok(_) => break,
            Err(status) => assert_eq!(quota_limit(&status), "live_games"),
        }
        assert!(
            Instant::now() < until,
            "the ended game's place never came back"
        );
        tokio::time::sleep(POLL).await;
    }
    // A new instance reads the same three live games from the bus.
    drop(stop);
    let (channel, _stop) = serve(config).await;
    let over = creating(channel.clone(), "l-5").await.unwrap_err();
    assert_eq!(quota_limit(&over), "live_games");
    println!(
        "live_games = 3: 3 created, the 4th refused until one ended, the 5th refused after a restart"
    );
}

/// Where the server requires client certificates, a credential can be named by its
/// certificate instead of a token (read from a credentials file).
#[tokio::test]
async fn a_client_certificate_names_its_credential() {
    let nats = NatsServer::start();
    let pki = TestPki::new();
    let (other_cert, other_key) = pki.ca.leaf(&["other-client"]);
    let file = pki.write(
        "credentials.toml",
        "[[credential]]\nname = \"by-cert\"\nclient_certificate = \"client.pem\"\n\
         scopes = [\"read\"]\n",
    );
    let mut config = Config::new(nats.url());
    config.credentials = move_validator::credentials_from_file(&file).unwrap();
    config.tls = Some(
        move_validator::TlsConfig::new(pki.path("server.pem"), pki.path("server.key"))
            .with_client_ca(pki.path("ca.pem")),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(move_validator::run(listener, config, async {
        let _ = stopped.await;
    }));
    let channel = |cert: String, key: String| {
        let tls = ClientTlsConfig::new()
            .domain_name("localhost")
            .ca_certificate(Certificate::from_pem(pki.ca.pem.clone()))
            .identity(Identity::from_pem(cert, key));
        Endpoint::from_shared(format!("https://{addr}"))
            .unwrap()
            .tls_config(tls)
            .unwrap()
            .connect_lazy()
    };
    let read = |path| std::fs::read_to_string(pki.path(path)).unwrap();
    let pinned = channel(read("client.pem"), read("client.key"));
    let request = || pb::ValidateMoveRequest {
        sfen: STARTPOS.into(),
        usi: "7g7f".into(),
    };
    assert!(validator(&pinned).validate_move(request()).await.is_ok());
    let denied = validator(&pinned)
        .create_game(create("c-1", "online", None, None))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    let info = denied.get_error_details().error_info().unwrap().clone();
    assert_eq!(info.metadata["credential"], "by-cert");
    // Another certificate of the same CA passes the handshake and names no credential.
    let unknown = channel(other_cert, other_key);
    let refused = validator(&unknown)
        .validate_move(request())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unauthenticated);
}

/// A bad credentials file stops the binary before it binds, naming the file and the line.
#[test]
fn a_bad_credentials_file_exits_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("credentials.toml");
    std::fs::write(
        &file,
        "[[credential]]\nname = \"a\"\ntoken = \"t\"\nscopes = [\"play\", \"admin\"]\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_move-validator"))
        .args(["--listen", "127.0.0.1:0", "--credentials-file"])
        .arg(&file)
        .env_remove("NATS_URL")
        .env_remove("MOVE_VALIDATOR_AUTH_TOKEN")
        .output()
        .expect("run move-validator");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("credentials.toml: line 4"), "{stderr}");
    assert!(stderr.contains("unknown scope \"admin\""), "{stderr}");
}
