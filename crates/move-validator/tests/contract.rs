//! The error contract and the game log's edges, as a platform meets them: the real server on
//! loopback against a real nats-server. Refusals name their field and carry an ErrorInfo
//! reason; a move after the end carries the verdict; GetGame shows the effective ruleset; a
//! cancelled WatchGame frees its consumer on the server at once; a purged game is NOT_FOUND,
//! not a retry for ever.

use async_nats::jetstream;
use move_validator::Config;
use prost::Message as _;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::time::Duration;
use test_support::NatsServer;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

async fn start(
    nats: &NatsServer,
) -> (
    MoveValidatorClient<Channel>,
    tokio::sync::oneshot::Sender<()>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(move_validator::run(
        listener,
        Config::new(nats.url()),
        async {
            let _ = stopped.await;
        },
    ));
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    (MoveValidatorClient::new(channel), stop)
}

fn reason(status: &Status) -> String {
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_else(|| panic!("no ErrorInfo: {status:?}"))
}

fn field(status: &Status) -> String {
    let details = status.get_error_details();
    let bad = details.bad_request().expect("a BadRequest");
    bad.field_violations[0].field.clone()
}

fn create(
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

fn submit(id: &str, ply: u32, usi: &str) -> pb::SubmitMoveRequest {
    pb::SubmitMoveRequest {
        game_id: id.into(),
        ply,
        usi: usi.into(),
        strict: false,
    }
}

/// Item 8: out-of-range and contradicting ruleset options, and a start position no game
/// reaches, are INVALID_ARGUMENT naming the field, with reason INVALID_RULESET or
/// INVALID_REQUEST; nothing is created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_rulesets_and_positions_name_their_field() {
    let nats = NatsServer::start();
    let (mut c, _stop) = start(&nats).await;
    let cases = [
        (
            create(
                "r1",
                "online",
                Some(pb::RulesetOverrides {
                    agreement_threshold: Some(5),
                    ..Default::default()
                }),
                None,
            ),
            "ruleset.overrides.agreement_threshold",
            "INVALID_RULESET",
        ),
        (
            create(
                "r2",
                "online",
                Some(pb::RulesetOverrides {
                    agreement_threshold: Some(4_000_000_000),
                    ..Default::default()
                }),
                None,
            ),
            "ruleset.overrides.agreement_threshold",
            "INVALID_RULESET",
        ),
        (
            create(
                "r3",
                "online",
                Some(pb::RulesetOverrides {
                    declaration: pb::DeclarationRule::None as i32,
                    declaration_trigger: pb::DeclarationTrigger::Automatic as i32,
                    ..Default::default()
                }),
                None,
            ),
            "ruleset.overrides.declaration_trigger",
            "INVALID_RULESET",
        ),
        (
            create("r4", "blitz", None, None),
            "ruleset.preset",
            "INVALID_RULESET",
        ),
        (
            // White's king on 1a is in check from the lance, and it is Black to move.
            create(
                "r5",
                "online",
                None,
                Some("R6gk/9/6S1L/9/9/9/9/9/4K4 b P 1"),
            ),
            "start.sfen",
            "INVALID_REQUEST",
        ),
    ];
    for (req, want_field, want_reason) in cases {
        let id = req.game_id.clone();
        let status = c.create_game(req).await.expect_err(&id);
        assert_eq!(status.code(), Code::InvalidArgument, "{id}: {status:?}");
        assert_eq!(field(&status), want_field, "{id}");
        assert_eq!(reason(&status), want_reason, "{id}");
        let missing = c
            .get_game(pb::GetGameRequest {
                game_id: id.clone(),
            })
            .await
            .expect_err("nothing created");
        assert_eq!(
            (missing.code(), reason(&missing).as_str()),
            (Code::NotFound, "GAME_NOT_FOUND")
        );
    }
}

/// Item 9: a move after the end is FAILED_PRECONDITION with reason GAME_OVER, the verdict in
/// the metadata and packed in the details; GetGame returns the effective ruleset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_after_the_end_carries_the_verdict_and_get_game_the_effective_ruleset() {
    let nats = NatsServer::start();
    let (mut c, _stop) = start(&nats).await;
    let state = c
        .create_game(create(
            "mate",
            "online",
            None,
            Some("4k4/9/4P4/9/9/9/9/9/4K4 b G 1"),
        ))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    let overrides = state
        .ruleset
        .as_ref()
        .and_then(|r| r.overrides.as_ref())
        .expect("overrides");
    assert_eq!(
        overrides.illegal_move,
        pb::IllegalMovePolicy::Reject as i32,
        "online rejects"
    );
    assert_eq!(overrides.agreement_threshold, Some(27));
    assert!(overrides.move_cap.is_some() && overrides.start_position_counted.is_some());
    let mated = c
        .submit_move(submit("mate", 1, "G*5b"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        mated.verdict.as_ref().map(|v| v.code_name.as_str()),
        Some("checkmate")
    );
    let status = c
        .submit_move(submit("mate", 2, "5a4a"))
        .await
        .expect_err("game over");
    assert_eq!(status.code(), Code::FailedPrecondition);
    let details = status.get_error_details();
    let info = details.error_info().expect("ErrorInfo");
    assert_eq!(info.reason, "GAME_OVER");
    assert_eq!(info.metadata["verdict_code"], "checkmate");
    assert_eq!(info.metadata["verdict_ply"], "1");
    let packed = tonic_types::pb::Status::decode(status.details()).unwrap();
    let verdict = packed
        .details
        .iter()
        .find(|a| a.type_url == "type.googleapis.com/shogi.v1.Verdict")
        .map(|a| pb::Verdict::decode(a.value.as_slice()).unwrap())
        .expect("the verdict packed in the details");
    assert_eq!(Some(&verdict), mated.verdict.as_ref());
    // The same move for the ply that ended it is a retry: the same answer.
    let again = c
        .submit_move(submit("mate", 1, "G*5b"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again, mated);
    let got = c
        .get_game(pb::GetGameRequest {
            game_id: "mate".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert_eq!(got.ruleset, state.ruleset, "GetGame: the effective ruleset");
}

/// Item 5: a cancelled WatchGame on a game with no further events frees its consumer on the
/// server within a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_watch_streams_free_their_consumers_at_once() {
    let nats = NatsServer::start();
    let (mut c, _stop) = start(&nats).await;
    c.create_game(create("quiet", "online", None, None))
        .await
        .unwrap();
    let js = jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    let consumers = || async {
        let mut stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
        stream.info().await.unwrap().state.consumer_count
    };
    let before = consumers().await;
    let mut streams = Vec::new();
    for _ in 0..50 {
        let s = c
            .watch_game(pb::WatchGameRequest {
                game_id: "quiet".into(),
                from_ply: 0,
            })
            .await
            .unwrap()
            .into_inner();
        streams.push(s);
    }
    // Each stream has its first event (the creation), so each consumer exists.
    for s in &mut streams {
        let first = s.message().await.unwrap().unwrap();
        assert!(matches!(
            first.event,
            Some(pb::watch_game_response::Event::Created(_))
        ));
    }
    assert_eq!(consumers().await, before + 50, "one consumer per watcher");
    drop(streams);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    loop {
        let now = consumers().await;
        if now == before {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{now} consumers a second after 50 watchers went away (before: {before})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Item 7: a game purged from the bus while a validator has it cached is NOT_FOUND there, not
/// "being changed concurrently, retry" for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purged_game_is_not_found_on_the_instance_that_cached_it() {
    let nats = NatsServer::start();
    let (mut c, _stop) = start(&nats).await;
    c.create_game(create("gone", "online", None, None))
        .await
        .unwrap();
    c.submit_move(submit("gone", 1, "7g7f")).await.unwrap();
    let js = jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    stream
        .purge()
        .filter(shogi_proto::subject::all("gone"))
        .await
        .unwrap();
    let status = c
        .submit_move(submit("gone", 2, "3c3d"))
        .await
        .expect_err("purged");
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::NotFound, "GAME_NOT_FOUND"),
        "{status:?}"
    );
}
