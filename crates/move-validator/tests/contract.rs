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

mod common;
use common::{create, field, reason, serve, submit};

async fn start(
    nats: &NatsServer,
) -> (
    MoveValidatorClient<Channel>,
    tokio::sync::oneshot::Sender<()>,
) {
    let (channel, stop) = start_channel(nats).await;
    (MoveValidatorClient::new(channel), stop)
}

/// The validator on loopback, and a channel to it.
async fn start_channel(nats: &NatsServer) -> (Channel, tokio::sync::oneshot::Sender<()>) {
    serve(Config::new(nats.url())).await
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
                ..Default::default()
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
    let got = common::game(&mut c, "mate").await;
    assert_eq!(got.ruleset, state.ruleset, "GetGame: the effective ruleset");
}

/// Item 5: a cancelled WatchGame on a game with no further events leaves nothing on the
/// server: a follower holds no consumer at all (issue 20: it reads with message gets).
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
                verdict_only: false,
            })
            .await
            .unwrap()
            .into_inner();
        streams.push(s);
    }
    // Each stream has its first event (the creation), so each follower is running.
    for s in &mut streams {
        let first = s.message().await.unwrap().unwrap();
        assert!(matches!(
            first.event,
            Some(pb::watch_game_response::Event::Created(_))
        ));
    }
    assert_eq!(consumers().await, before, "no consumer per watcher");
    drop(streams);
    // A bound of the product (watchers leave nothing behind at once), not a wait.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1); // product bound
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
    // GetGame reads afresh: the cached copy is not answered.
    let status = c
        .get_game(pb::GetGameRequest {
            game_id: "gone".into(),
            ..Default::default()
        })
        .await
        .expect_err("purged");
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::NotFound, "GAME_NOT_FOUND"),
        "GetGame: {status:?}"
    );
    c.create_game(create("again", "online", None, None))
        .await
        .unwrap();
    c.submit_move(submit("again", 1, "7g7f")).await.unwrap();
    stream
        .purge()
        .filter(shogi_proto::subject::all("again"))
        .await
        .unwrap();
    let status = c
        .submit_move(submit("again", 2, "3c3d"))
        .await
        .expect_err("purged");
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::NotFound, "GAME_NOT_FOUND"),
        "{status:?}"
    );
}

/// Bytes that are not the method's request message are the client's error, INVALID_ARGUMENT
/// naming the field prost could not read, not INTERNAL (a server fault).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_request_bytes_are_invalid_argument_naming_the_field() {
    let nats = NatsServer::start();
    let (channel, _stop) = start_channel(&nats).await;
    let mut grpc = tonic::client::Grpc::new(channel);
    // SubmitMoveRequest.usi (field 3) holding bytes that are not UTF-8; CreateGameRequest's
    // start.sfen likewise (a member of the oneof `start`); a SubmitMoveRequest cut short.
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("SubmitMove", vec![0x1a, 2, 0xff, 0xfe], "usi"),
        ("CreateGame", vec![0x12, 3, 0x12, 1, 0xff], "start"),
        ("SubmitMove", vec![0x0a, 10, b'g'], ""),
    ];
    for (method, bytes, want) in cases {
        grpc.ready().await.unwrap();
        let path = format!("/shogi.v1.MoveValidator/{method}");
        let status = grpc
            .unary(
                tonic::Request::new(bytes.clone()),
                path.parse().unwrap(),
                RawCodec,
            )
            .await
            .expect_err("undecodable");
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "{method} {bytes:?}: {status:?}"
        );
        if !want.is_empty() {
            assert_eq!(field(&status), want, "{status:?}");
        } else {
            assert!(!field(&status).is_empty(), "{status:?}");
        }
    }
}

/// Bytes as they are, for [`undecodable_request_bytes_are_invalid_argument_naming_the_field`].
#[derive(Clone, Copy, Default)]
struct RawCodec;

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }
    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl tonic::codec::Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(
        &mut self,
        item: Vec<u8>,
        buf: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), Status> {
        bytes::BufMut::put_slice(buf, &item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, buf: &mut tonic::codec::DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        use bytes::Buf as _;
        let out = buf.chunk().to_vec();
        buf.advance(out.len());
        Ok(Some(out))
    }
}

/// LegalMoves answers the rules core's list, a move that may promote twice; a bad SFEN is
/// INVALID_ARGUMENT naming `sfen`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legal_moves_lists_the_rules_cores_moves_and_refuses_a_bad_sfen() {
    let nats = NatsServer::start();
    let (mut c, _stop) = start(&nats).await;
    let start = shogi_rules::Position::startpos().to_sfen();
    let answer = c
        .legal_moves(pb::LegalMovesRequest { sfen: start })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.moves.len(), 30, "{:?}", answer.moves);
    assert!(answer.moves.contains(&"7g7f".to_owned()) && !answer.in_check);
    // A pawn reaching the camp may promote or not: both are listed, a drop too.
    let answer = c
        .legal_moves(pb::LegalMovesRequest {
            sfen: "k8/9/9/7P1/9/9/9/9/K8 b G 1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    for usi in ["2d2c", "2d2c+", "G*5e"] {
        assert!(
            answer.moves.contains(&usi.to_owned()),
            "{usi}: {:?}",
            answer.moves
        );
    }
    // In check, only the answers to it.
    let answer = c
        .legal_moves(pb::LegalMovesRequest {
            sfen: "4k4/9/9/9/9/9/9/4r4/4K4 b - 1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(answer.in_check);
    assert!(
        answer.moves.iter().all(|m| m.starts_with("5i")),
        "{:?}",
        answer.moves
    );
    for bad in ["", "not an sfen", "9/9/9/9/9/9/9/9/9 b - 1"] {
        let status = c
            .legal_moves(pb::LegalMovesRequest { sfen: bad.into() })
            .await
            .expect_err(bad);
        assert_eq!(status.code(), Code::InvalidArgument, "{bad:?}");
        assert_eq!(field(&status), "sfen");
        assert_eq!(reason(&status), "INVALID_REQUEST");
    }
}

/// ListGames pages through the games in creation order, each with its verdict once one is
/// stored, leaves finished ones out when asked for live ones only, and refuses a page size
/// over 100 or a token it did not give, naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_games_pages_in_creation_order_and_refuses_bad_pages() {
    let nats = NatsServer::start();
    let (mut c, _stop) = start(&nats).await;
    let empty = c
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(empty.games.is_empty());
    for id in ["g1", "g2", "g3"] {
        c.create_game(create(id, "amateur", None, None))
            .await
            .unwrap();
    }
    c.create_game(create("default", "", None, None))
        .await
        .unwrap();
    // g2 ends (the validator alone announces it on `.verdict`).
    c.end_game(pb::EndGameRequest {
        game_id: "g2".into(),
        reason: pb::EndReason::Resignation as i32,
        loser: pb::Color::Black as i32,
        ..Default::default()
    })
    .await
    .unwrap();
    let list = |page_size, page_token: &str, live_only| pb::ListGamesRequest {
        page_size,
        page_token: page_token.into(),
        live_only,
    };
    let first = c.list_games(list(2, "", false)).await.unwrap().into_inner();
    let ids: Vec<_> = first.games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, ["g1", "g2"]);
    assert_eq!(first.games[0].preset, "amateur");
    assert_eq!(
        first.games[0].start_sfen,
        shogi_rules::Position::startpos().to_sfen()
    );
    assert!(first.games[0].verdict.is_none());
    let verdict = first.games[1].verdict.as_ref().expect("g2's verdict");
    assert_eq!(
        (verdict.code_name.as_str(), verdict.winner),
        ("resignation", pb::Color::White as i32)
    );
    assert!(first.games[0].created_sequence < first.games[1].created_sequence);
    let second = c
        .list_games(list(2, &first.next_page_token, false))
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<_> = second.games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, ["g3", "default"]);
    assert_eq!(second.games[1].preset, "jsa", "no preset given is jsa");
    // Past the last game: nothing yet, and a token that lists the next game once created.
    let third = c
        .list_games(list(2, &second.next_page_token, false))
        .await
        .unwrap()
        .into_inner();
    assert!(third.games.is_empty());
    c.create_game(create("g5", "online", None, None))
        .await
        .unwrap();
    let fourth = c
        .list_games(list(0, &third.next_page_token, false))
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<_> = fourth.games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, ["g5"]);
    let live = c.list_games(list(0, "", true)).await.unwrap().into_inner();
    let ids: Vec<_> = live.games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, ["g1", "g3", "default", "g5"]);
    for (req, want) in [
        (list(101, "", false), "page_size"),
        (list(0, "x", false), "page_token"),
        (list(0, "0", false), "page_token"),
        (list(0, "-3", false), "page_token"),
    ] {
        let status = c.list_games(req.clone()).await.expect_err(want);
        assert_eq!(status.code(), Code::InvalidArgument, "{req:?}");
        assert_eq!(field(&status), want, "{req:?}");
        assert_eq!(reason(&status), "INVALID_REQUEST");
    }
}
