//! The operator's view under load and attack, over real gRPC on loopback against a real
//! nats-server: a GetOverview given up part way loses no game; forged announcements on
//! `.verdict` neither end a game nor name a verdict, and their ERROR lines are counted every
//! time and logged at most once a second; calls with the client's own method names and no
//! credential are counted, never listed.
//!
//! The tests run on a current-thread runtime, so the server's tasks log on the test's thread,
//! where the log test's subscriber collects them.

mod common;

use common::{create, serve};
use move_validator::Config;
use prost::Message as _;
use shogi_proto::log::AsideReason;
use shogi_proto::v1::operator_client::OperatorClient;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::time::{Duration, Instant};
use test_support::{Deadline, LogBuffer, NatsServer};
use tonic::Code;
use tonic::transport::Channel;

const TOKEN: &str = "the-operators-token";
const PATIENCE: Deadline = Deadline::secs(30);
const POLL: Duration = Duration::from_millis(20);

fn authorized<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    request
}

async fn overview(channel: &Channel) -> pb::GetOverviewResponse {
    OperatorClient::new(channel.clone())
        .get_overview(authorized(pb::GetOverviewRequest { minutes: 60 }))
        .await
        .unwrap()
        .into_inner()
}

/// Creates `n` games named `prefix-<i>`, `width` calls at a time.
async fn create_games(channel: &Channel, prefix: &str, n: usize, width: usize) {
    let mut next = 0;
    while next < n {
        let batch = (next..n.min(next + width)).map(|i| {
            let mut client = MoveValidatorClient::new(channel.clone());
            let id = format!("{prefix}-{i}");
            async move {
                client
                    .create_game(authorized(create(&id, "online", None, None)))
                    .await
                    .unwrap();
            }
        });
        futures::future::join_all(batch).await;
        next += width;
    }
}

/// A GetOverview cut short by its deadline part way through the scan keeps what it applied
/// and moves its cursors past nothing else: the next call counts every game.
#[tokio::test]
async fn an_overview_given_up_part_way_loses_no_game() {
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.auth_token = Some(TOKEN.into());
    let (channel, _stop) = serve(config).await;
    const GAMES: usize = 600;
    create_games(&channel, "o1", GAMES, 50).await;

    let mut cut = 0;
    for millis in [1, 2, 3, 5, 8, 13, 21, 34] {
        let mut request = authorized(pb::GetOverviewRequest { minutes: 0 });
        request.set_timeout(Duration::from_millis(millis));
        match OperatorClient::new(channel.clone())
            .get_overview(request)
            .await
        {
            Ok(answer) => {
                assert_eq!(answer.into_inner().live_games as usize, GAMES);
                break;
            }
            Err(status) => {
                assert!(
                    matches!(status.code(), Code::DeadlineExceeded | Code::Cancelled),
                    "{status:?}"
                );
                cut += 1;
            }
        }
    }
    println!("overview calls cut short by their deadline: {cut}");
    assert!(cut > 0, "no call was cut short: the test tested nothing");
    let answer = overview(&channel).await;
    assert_eq!(
        (answer.live_games as usize, answer.ended_games),
        (GAMES, 0),
        "games lost by the calls cut short"
    );
}

/// Forged announcements on `.verdict` (a checkmate for a live game, a 200 KB name) end no game
/// and name nothing: the view counts the verdicts the validator recorded on `.result`, named by
/// their result code. The ERROR line of each forged entry is counted every time and logged at
/// most once a second.
#[tokio::test]
async fn forged_announcements_end_no_game_and_name_nothing() {
    let logs = LogBuffer::default();
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
    let (channel, _stop) = serve(config).await;
    create_games(&channel, "o2", 3, 3).await;

    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    const FORGED: u64 = 60;
    let forged_at = Instant::now();
    for i in 0..FORGED {
        let game = format!("o2-{}", i % 2);
        let verdict = pb::Verdict {
            game_id: game.clone(),
            code: pb::ResultCode::Checkmate as i32,
            code_name: if i == 0 {
                "x".repeat(200_000)
            } else {
                format!("forged-{i}")
            },
            winner: pb::Color::Black as i32,
            ply: 1,
            ..Default::default()
        };
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(shogi_proto::MESSAGE_TYPE_HEADER, shogi_proto::VERDICT_TYPE);
        js.publish_with_headers(
            shogi_proto::subject::verdict(&game),
            headers,
            verdict.encode_to_vec().into(),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    }
    // A real ending: the validator announces it and records it on `.result`.
    MoveValidatorClient::new(channel.clone())
        .end_game(authorized(pb::EndGameRequest {
            game_id: "o2-2".into(),
            reason: pb::EndReason::Resignation as i32,
            loser: pb::Color::White as i32,
            ..Default::default()
        }))
        .await
        .unwrap();

    let until = Instant::now() + PATIENCE.get();
    let answer = loop {
        let answer = overview(&channel).await;
        let checked = move_validator::GAME_LOG
            .aside()
            .count(AsideReason::BadVerdict);
        if answer.ended_games >= 1 && checked >= FORGED {
            break answer;
        }
        assert!(
            Instant::now() < until,
            "after {PATIENCE:?}: {answer:?}, {checked} forged entries set aside"
        );
        tokio::time::sleep(POLL).await;
    };
    let elapsed = forged_at.elapsed();
    assert_eq!(
        (answer.live_games, answer.ended_games),
        (2, 1),
        "a forged announcement ended a game"
    );
    let names: Vec<&str> = answer
        .verdicts
        .iter()
        .map(|v| v.code_name.as_str())
        .collect();
    assert_eq!(names, ["resignation"]);
    assert!(
        answer.encoded_len() < 64 * 1024,
        "answer of {} bytes",
        answer.encoded_len()
    );
    let text = logs.text();
    let lines = text
        .lines()
        .filter(|l| l.contains("ERROR") && l.contains("is not its verdict"))
        .count();
    println!(
        "forged entries: {FORGED} set aside in {elapsed:?}, {lines} ERROR lines, log {} bytes",
        text.len()
    );
    assert!(lines >= 1, "no ERROR line at all:\n{text}");
    assert!(
        lines as u64 <= elapsed.as_secs() + 2,
        "{lines} ERROR lines in {elapsed:?}"
    );
    assert!(text.len() < 64 * 1024, "log of {} bytes", text.len());
}

/// Calls to the Operator under method names of the client's own, without a credential, are
/// refused and counted, never listed; a known credential's call to a method the contract does
/// not have is listed as `unknown`; the real errors stay in the list.
#[tokio::test]
async fn refused_calls_are_counted_and_unknown_methods_not_named() {
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.auth_token = Some(TOKEN.into());
    let (channel, _stop) = serve(config).await;
    // A real error first.
    let status = MoveValidatorClient::new(channel.clone())
        .get_game(authorized(pb::GetGameRequest {
            game_id: "nobody".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);

    let long = "x".repeat(12 * 1024);
    let call = |path: String, token: bool| {
        let channel = channel.clone();
        async move {
            let mut grpc = tonic::client::Grpc::new(channel);
            grpc.ready().await.unwrap();
            let path = http::uri::PathAndQuery::try_from(path).unwrap();
            let request = if token {
                authorized(pb::GetOverviewRequest { minutes: 0 })
            } else {
                tonic::Request::new(pb::GetOverviewRequest { minutes: 0 })
            };
            grpc.unary::<_, pb::GetOverviewResponse, _>(
                request,
                path,
                tonic_prost::ProstCodec::default(),
            )
            .await
            .map(|_| ())
            .unwrap_err()
            .code()
        }
    };
    for i in 0..20 {
        let code = call(format!("/shogi.v1.Operator/{long}{i}"), false).await;
        assert_eq!(code, Code::Unauthenticated);
    }
    let code = call(format!("/shogi.v1.Operator/{long}"), true).await;
    assert_eq!(code, Code::Unimplemented);

    let answer = overview(&channel).await;
    let methods: Vec<&str> = answer.errors.iter().map(|e| e.method.as_str()).collect();
    assert_eq!(methods, ["unknown", "/shogi.v1.MoveValidator/GetGame"]);
    assert!(
        answer.errors.iter().all(|e| e.message.len() <= 512),
        "{answer:?}"
    );
    assert!(answer.refused_calls >= 20, "{}", answer.refused_calls);
    println!(
        "refused calls counted: {}, errors listed: {}",
        answer.refused_calls,
        answer.errors.len()
    );
}
