//! Black-box tests of the move validator: the real server on 127.0.0.1:0 against a real
//! nats-server (test-support), through the generated gRPC client. No sleeps: a listener is bound
//! before the server task starts, and nats-server is ready when `NatsServer::start` returns.

use async_nats::jetstream;
use futures::StreamExt;
use move_validator::Config;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::net::SocketAddr;
use std::path::PathBuf;
use test_support::NatsServer;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

/// A validator instance running on a loopback port.
struct Validator {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), move_validator::Error>>,
}

impl Validator {
    async fn start(nats: &NatsServer) -> Validator {
        Validator::start_with(Config::new(nats.url())).await
    }

    async fn start_with(config: Config) -> Validator {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(move_validator::run(listener, config, async {
            let _ = stopped.await;
        }));
        Validator {
            addr,
            stop: Some(stop),
            task,
        }
    }

    fn channel(&self) -> Channel {
        Channel::from_shared(format!("http://{}", self.addr))
            .unwrap()
            .connect_lazy()
    }

    fn client(&self) -> MoveValidatorClient<Channel> {
        MoveValidatorClient::new(self.channel())
    }

    async fn shutdown(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task
            .await
            .expect("server task")
            .expect("server ran cleanly");
    }
}

fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(path)
}

fn ruleset(preset: &str) -> Option<pb::Ruleset> {
    Some(pb::Ruleset {
        preset: preset.into(),
        overrides: None,
    })
}

async fn create(
    client: &mut MoveValidatorClient<Channel>,
    id: &str,
    preset: &str,
    sfen: Option<&str>,
) -> pb::GameState {
    client
        .create_game(pb::CreateGameRequest {
            ruleset: ruleset(preset),
            start: sfen.map(|s| pb::StartPosition {
                start: Some(pb::start_position::Start::Sfen(s.into())),
            }),
            game_id: id.into(),
        })
        .await
        .expect("create game")
        .into_inner()
        .game
        .expect("game state")
}

async fn submit(
    client: &mut MoveValidatorClient<Channel>,
    id: &str,
    ply: u32,
    usi: &str,
) -> Result<pb::SubmitMoveResponse, Status> {
    client
        .submit_move(pb::SubmitMoveRequest {
            game_id: id.into(),
            ply,
            usi: usi.into(),
        })
        .await
        .map(|r| r.into_inner())
}

fn bad_field(status: &Status) -> String {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let details = status.get_error_details();
    let bad = details.bad_request().expect("a BadRequest detail");
    bad.field_violations[0].field.clone()
}

fn error_info(status: &Status) -> (String, u32) {
    let details = status.get_error_details();
    let info = details.error_info().expect("an ErrorInfo detail");
    (
        info.reason.clone(),
        info.metadata["current_ply"].parse().unwrap(),
    )
}

/// Every `.move` event of a game, in stream order.
async fn move_events(nats: &NatsServer, game_id: &str) -> Vec<pb::MoveAccepted> {
    use prost::Message as _;
    let client = async_nats::connect(nats.url()).await.unwrap();
    let js = jetstream::new(client);
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    let subject = shogi_proto::subject::moves(game_id);
    let mut events = Vec::new();
    let mut seq = 1;
    loop {
        let got = stream
            .raw_message_builder()
            .sequence(seq)
            .next_by_subject(subject.clone())
            .send()
            .await;
        match got {
            Ok(msg) => {
                seq = msg.sequence + 1;
                events.push(pb::MoveAccepted::decode(msg.payload).unwrap());
            }
            Err(_) => break,
        }
    }
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_game_to_checkmate() {
    let nats = NatsServer::start();
    let v = Validator::start(&nats).await;
    let mut c = v.client();
    // White's king on 5a, a Black pawn walks to 5c, a White pawn moves, and the gold drop on 5b
    // (protected by the pawn) mates.
    let sfen = "4k4/9/9/4P4/9/9/p8/9/4K4 b G 1";
    let game = create(&mut c, "mate-1", "online", Some(sfen)).await;
    assert_eq!(game.ply, 0);
    assert_eq!(game.side_to_move, pb::Color::Black as i32);

    let a = submit(&mut c, "mate-1", 1, "5d5c").await.unwrap();
    assert_eq!(a.outcome, pb::MoveOutcome::Accepted as i32);
    assert!(!a.gives_check && a.verdict.is_none());
    let a = submit(&mut c, "mate-1", 2, "9g9h").await.unwrap();
    assert_eq!(a.outcome, pb::MoveOutcome::Accepted as i32);
    // An illegal move under `online` is rejected and the game goes on.
    let r = submit(&mut c, "mate-1", 3, "G*5c").await.unwrap();
    assert_eq!(r.outcome, pb::MoveOutcome::Rejected as i32);
    assert_eq!(r.illegal_kind, pb::IllegalKind::Impossible as i32);
    let m = submit(&mut c, "mate-1", 3, "G*5b").await.unwrap();
    assert_eq!(m.outcome, pb::MoveOutcome::Accepted as i32);
    assert!(m.gives_check);
    let verdict = m.verdict.expect("the mate ends the game");
    assert_eq!(verdict.code, pb::ResultCode::Checkmate as i32);
    assert_eq!(verdict.winner, pb::Color::Black as i32);
    assert_eq!(verdict.ply, 3);
    assert_eq!(verdict.code_name, "checkmate");

    // After the verdict: FAILED_PRECONDITION, and the state says it is over.
    let after = submit(&mut c, "mate-1", 4, "5a4a").await.unwrap_err();
    assert_eq!(after.code(), Code::FailedPrecondition, "{after:?}");
    let state = c
        .get_game(pb::GetGameRequest {
            game_id: "mate-1".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert_eq!(state.ply, 3);
    assert_eq!(state.moves, ["5d5c", "9g9h", "G*5b"]);
    assert_eq!(
        state.verdict.unwrap().code,
        pb::ResultCode::Checkmate as i32
    );

    // The same mate, statelessly.
    let vm = c
        .validate_move(pb::ValidateMoveRequest {
            sfen: "4k4/9/4P4/9/9/9/9/p8/4K4 b G 3".into(),
            usi: "G*5b".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(vm.legal && vm.gives_check && vm.is_checkmate && vm.no_legal_reply);
    v.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_move_matches_every_row_of_moves_tsv() {
    let nats = NatsServer::start();
    let v = Validator::start(&nats).await;
    let mut c = v.client();
    let path = shared("rules/moves.tsv");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut kinds = std::collections::BTreeSet::new();
    let mut rows = 0;
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (id, sfen, usi, expected) = (cols[0], cols[1], cols[2], cols[3]);
        let answer = c
            .validate_move(pb::ValidateMoveRequest {
                sfen: sfen.into(),
                usi: usi.into(),
            })
            .await
            .unwrap_or_else(|e| panic!("{id}: {e:?}"))
            .into_inner();
        if expected == "legal" {
            assert!(answer.legal, "{id}: {answer:?}");
            assert!(!answer.sfen_after.is_empty(), "{id}");
        } else {
            assert!(!answer.legal, "{id}");
            assert_eq!(answer.illegal_kind_name, expected, "{id}");
            assert_ne!(answer.illegal_kind, 0, "{id}");
            kinds.insert(expected.to_owned());
        }
        rows += 1;
    }
    assert!(rows >= 18, "moves.tsv has {rows} rows");
    // Every position-level kind of RULES.md section 1 appears in the fixture.
    for kind in [
        "two_pawns",
        "pawn_drop_mate",
        "dead_piece",
        "leaves_king_in_check",
        "impossible",
    ] {
        assert!(kinds.contains(kind), "moves.tsv lacks {kind}");
    }
    // wrong_turn needs a game: SubmitMove always plays for the side to move, so the wrong turn
    // is a declaration by the other side, which `online` refuses (failed_declaration = refuse).
    create(&mut c, "turn-1", "online", None).await;
    let d = c
        .declare(pb::DeclareRequest {
            game_id: "turn-1".into(),
            declarer: pb::Color::White as i32,
            has_time: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(d.verdict.is_none());
    let report = d.report.unwrap();
    assert_eq!(report.outcome, "refused");
    let turn = report
        .conditions
        .iter()
        .find(|c| c.name == "declarers_turn")
        .unwrap();
    assert!(!turn.met);
    v.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_invalid_argument_naming_the_field() {
    let nats = NatsServer::start();
    let v = Validator::start(&nats).await;
    let mut c = v.client();
    let e = c
        .validate_move(pb::ValidateMoveRequest {
            sfen: "not an sfen".into(),
            usi: "7g7f".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_field(&e), "sfen");
    let e = c
        .validate_move(pb::ValidateMoveRequest {
            sfen: shogi_rules::STARTPOS.into(),
            usi: "7z7f".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_field(&e), "usi");
    for bad_id in ["a.b", "", "x*", &"x".repeat(65)] {
        let e = submit(&mut c, bad_id, 1, "7g7f").await.unwrap_err();
        assert_eq!(bad_field(&e), "game_id", "{bad_id:?}");
    }
    let e = c
        .create_game(pb::CreateGameRequest {
            ruleset: ruleset("blitz"),
            start: None,
            game_id: "g".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_field(&e), "ruleset.preset");
    let e = c
        .create_game(pb::CreateGameRequest {
            ruleset: None,
            start: Some(pb::StartPosition {
                start: Some(pb::start_position::Start::Sfen("9/9 b - 1".into())),
            }),
            game_id: "g".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_field(&e), "start.sfen");
    let e = c
        .create_game(pb::CreateGameRequest {
            ruleset: None,
            start: Some(pb::StartPosition {
                start: Some(pb::start_position::Start::Handicap("queen".into())),
            }),
            game_id: "g".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_field(&e), "start.handicap");
    create(&mut c, "g-ok", "online", None).await;
    let e = submit(&mut c, "g-ok", 1, "P*").await.unwrap_err();
    assert_eq!(bad_field(&e), "usi");
    let e = submit(&mut c, "g-ok", 0, "7g7f").await.unwrap_err();
    assert_eq!(bad_field(&e), "ply");
    v.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_game_is_not_found() {
    let nats = NatsServer::start();
    let v = Validator::start(&nats).await;
    let mut c = v.client();
    let e = submit(&mut c, "nope", 1, "7g7f").await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    let e = c
        .get_game(pb::GetGameRequest {
            game_id: "nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    let e = c
        .end_game(pb::EndGameRequest {
            game_id: "nope".into(),
            reason: pb::EndReason::Resignation as i32,
            loser: pb::Color::Black as i32,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    v.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_game_with_every_call_twice_stores_each_ply_once_in_order() {
    let nats = NatsServer::start();
    let v = Validator::start(&nats).await;
    let mut c = v.client();
    let path = shared(
        "corpus/records/resign/mogproject+mog-core-scala__jvm__src__test__resources__csa__game__001.csa",
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let text = String::from_utf8_lossy(&bytes);
    let record = shogi_records::read_csa(&text).expect("the corpus record reads");
    assert!(record.moves.len() > 100, "{} moves", record.moves.len());
    let start = record.start.to_sfen();
    let id = "corpus-001";
    create(&mut c, id, "online", Some(&start)).await;
    let mut usis = Vec::new();
    for (i, m) in record.moves.iter().enumerate() {
        let ply = i as u32 + 1;
        let usi = m.mv.to_string();
        let first = submit(&mut c, id, ply, &usi).await.unwrap();
        let again = submit(&mut c, id, ply, &usi).await.unwrap();
        assert_eq!(first, again, "ply {ply}: a retry gets the same answer");
        assert_eq!(first.outcome, pb::MoveOutcome::Accepted as i32, "ply {ply}");
        assert_eq!(first.ply, ply);
        usis.push(usi);
    }
    // A different move for a taken ply is refused with the current ply.
    let e = submit(&mut c, id, 1, "2g2f").await.unwrap_err();
    assert_eq!(e.code(), Code::Aborted, "{e:?}");
    assert_eq!(
        error_info(&e),
        ("PLY_TAKEN".to_owned(), record.moves.len() as u32)
    );
    // A ply beyond the next one, likewise.
    let e = submit(&mut c, id, usis.len() as u32 + 5, "2g2f")
        .await
        .unwrap_err();
    assert_eq!(error_info(&e).0, "PLY_AHEAD");

    let events = move_events(&nats, id).await;
    assert_eq!(events.len(), usis.len(), "one .move event per ply");
    for (i, (event, usi)) in events.iter().zip(&usis).enumerate() {
        assert_eq!(event.ply, i as u32 + 1);
        assert_eq!(&event.usi, usi);
        assert_eq!(event.game_id, id);
    }
    let end = record.final_position().expect("all moves legal");
    assert_eq!(events.last().unwrap().sfen_after, end.to_sfen());
    assert_eq!(events.last().unwrap().position_hash, end.hash());
    v.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_racing_one_ply_never_both_succeed() {
    let nats = NatsServer::start();
    let a = Validator::start(&nats).await;
    let b = Validator::start(&nats).await;
    let (mut ca, mut cb) = (a.client(), b.client());
    let id = "race-1";
    create(&mut ca, id, "online", None).await;
    let mut pos = shogi_rules::Position::startpos();
    let mut played = Vec::new();
    for ply in 1..=24u32 {
        let legal = pos.legal_moves();
        // Spread the choices so that the game does not repeat itself into a draw.
        let n = legal.len();
        let i = (ply as usize * 7) % n;
        let (ma, mb) = (legal[i].to_string(), legal[(i + n / 2) % n].to_string());
        assert_ne!(ma, mb);
        let (ra, rb) = tokio::join!(submit(&mut ca, id, ply, &ma), submit(&mut cb, id, ply, &mb));
        let winner = match (ra, rb) {
            (Ok(r), Err(e)) | (Err(e), Ok(r)) => {
                assert_eq!(r.outcome, pb::MoveOutcome::Accepted as i32);
                assert_eq!(e.code(), Code::Aborted, "ply {ply}: {e:?}");
                assert_eq!(error_info(&e), ("PLY_TAKEN".to_owned(), ply));
                r
            }
            (Ok(x), Ok(y)) => panic!("ply {ply}: both succeeded: {x:?} {y:?}"),
            (Err(x), Err(y)) => panic!("ply {ply}: both failed: {x:?} {y:?}"),
        };
        let mut after_a = pos.clone();
        after_a.play_unchecked(shogi_rules::Move::from_usi(&ma).unwrap());
        let usi = if after_a.to_sfen() == winner.sfen_after {
            &ma
        } else {
            &mb
        };
        pos.play_unchecked(shogi_rules::Move::from_usi(usi).unwrap());
        played.push(usi.clone());
        if winner.verdict.is_some() {
            break;
        }
    }
    // Both instances, and the bus, agree on one history.
    for c in [&mut ca, &mut cb] {
        let state = c
            .get_game(pb::GetGameRequest { game_id: id.into() })
            .await
            .unwrap()
            .into_inner()
            .game
            .unwrap();
        assert_eq!(state.moves, played);
        assert_eq!(state.sfen, pos.to_sfen());
    }
    let events = move_events(&nats, id).await;
    assert_eq!(
        events.iter().map(|e| e.usi.clone()).collect::<Vec<_>>(),
        played
    );
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_instance_rebuilds_games_from_the_bus() {
    let nats = NatsServer::start();
    let a = Validator::start(&nats).await;
    let mut ca = a.client();
    create(&mut ca, "rebuild-1", "online", None).await;
    for (ply, usi) in ["7g7f", "3c3d", "8h2b+"].iter().enumerate() {
        submit(&mut ca, "rebuild-1", ply as u32 + 1, usi)
            .await
            .unwrap();
    }
    create(&mut ca, "rebuild-2", "online", None).await;
    ca.end_game(pb::EndGameRequest {
        game_id: "rebuild-2".into(),
        reason: pb::EndReason::Resignation as i32,
        loser: pb::Color::Black as i32,
    })
    .await
    .unwrap();
    a.shutdown().await;

    let b = Validator::start(&nats).await;
    let mut cb = b.client();
    // A retry of an old ply gets its old answer, and play goes on.
    let again = submit(&mut cb, "rebuild-1", 3, "8h2b+").await.unwrap();
    assert_eq!(again.outcome, pb::MoveOutcome::Accepted as i32);
    let next = submit(&mut cb, "rebuild-1", 4, "3a2b").await.unwrap();
    assert_eq!(next.outcome, pb::MoveOutcome::Accepted as i32);
    let e = submit(&mut cb, "rebuild-2", 1, "7g7f").await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    let state = cb
        .get_game(pb::GetGameRequest {
            game_id: "rebuild-2".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    let verdict = state.verdict.unwrap();
    assert_eq!(verdict.code, pb::ResultCode::Resignation as i32);
    assert_eq!(verdict.winner, pb::Color::White as i32);
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_token_is_required_when_configured() {
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.auth_token = Some("s3cret".into());
    let v = Validator::start_with(config).await;
    let mut c = v.client();
    let req = || pb::ValidateMoveRequest {
        sfen: shogi_rules::STARTPOS.into(),
        usi: "7g7f".into(),
    };
    let e = c.validate_move(req()).await.unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated);
    let mut r = tonic::Request::new(req());
    r.metadata_mut()
        .insert("authorization", "Bearer s3cret".parse().unwrap());
    assert!(c.validate_move(r).await.unwrap().into_inner().legal);
    v.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_turns_not_serving_on_shutdown() {
    use tonic_health::pb::{
        HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
    };
    let nats = NatsServer::start();
    let v = Validator::start(&nats).await;
    let mut health = HealthClient::new(v.channel());
    let mut watch = health
        .watch(HealthCheckRequest {
            service: "shogi.v1.MoveValidator".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let first = watch.next().await.unwrap().unwrap();
    assert_eq!(first.status, ServingStatus::Serving as i32);
    let Validator { stop, task, .. } = v;
    let _ = stop.unwrap().send(());
    let next = watch.next().await.unwrap().unwrap();
    assert_eq!(next.status, ServingStatus::NotServing as i32);
    // The open watch would hold the drain until the grace period ends.
    drop(watch);
    drop(health);
    task.await.unwrap().unwrap();
}
