//! SubmitMoves over real gRPC on loopback against a real nats-server: each move of the stream
//! is answered as SubmitMove answers it, tagged, its error with the status's code and details;
//! the moves of one game are played in the order they were sent while other games' go on; each
//! move counts against the credential's `calls_per_second`; a credential without the play scope
//! is refused the stream, and one over its `move_streams` a stream more; a draining instance answers the moves it took, then ends the stream
//! with SHUTTING_DOWN.

mod common;

use common::{create, field, game, reason, serve, submit};
use move_validator::{Config, Credential, Quotas, Scope};
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::collections::HashMap;
use std::time::Instant;
use test_support::{Deadline, NatsServer};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt as _;

const PATIENCE: Deadline = Deadline::secs(30);

/// An open stream: where its moves go, and its answers.
struct Moves {
    send: Option<mpsc::Sender<pb::SubmitMovesRequest>>,
    answers: tonic::Streaming<pb::SubmitMovesResponse>,
}

impl Moves {
    async fn open(channel: &Channel, token: Option<&str>) -> Result<Moves, Status> {
        let (send, rx) = mpsc::channel(256);
        let mut request = tonic::Request::new(ReceiverStream::new(rx));
        if let Some(token) = token {
            request
                .metadata_mut()
                .insert("authorization", format!("Bearer {token}").parse().unwrap());
        }
        let answers = MoveValidatorClient::new(channel.clone())
            .submit_moves(request)
            .await?
            .into_inner();
        Ok(Moves {
            send: Some(send),
            answers,
        })
    }

    async fn send(&self, tag: u64, mv: Option<pb::SubmitMoveRequest>) {
        self.send
            .as_ref()
            .expect("the client's half is open")
            .send(pb::SubmitMovesRequest { tag, r#move: mv })
            .await
            .expect("the stream takes moves");
    }

    /// Ends the client's half of the stream.
    fn close(&mut self) {
        self.send = None;
    }

    /// The next answer, within the deadline.
    async fn next(&mut self) -> Result<Option<pb::SubmitMovesResponse>, Status> {
        tokio::time::timeout(PATIENCE.get(), self.answers.message())
            .await
            .expect("an answer in time")
    }

    /// `n` answers, by tag.
    async fn answers(&mut self, n: usize) -> HashMap<u64, pb::submit_moves_response::Answer> {
        let mut got = HashMap::new();
        while got.len() < n {
            let a = self
                .next()
                .await
                .expect("an answer")
                .expect("the stream goes on");
            assert!(
                got.insert(a.tag, a.answer.expect("an answer")).is_none(),
                "tag {} answered twice",
                a.tag
            );
        }
        got
    }
}

/// A stream answer's error as the status a unary call would have ended with.
fn status(answer: &pb::submit_moves_response::Answer) -> Status {
    let pb::submit_moves_response::Answer::Error(e) = answer else {
        panic!("not an error: {answer:?}")
    };
    shogi_proto::status::from_submit_move_error(e)
}

fn submitted(answer: &pb::submit_moves_response::Answer) -> &pb::SubmitMoveResponse {
    match answer {
        pb::submit_moves_response::Answer::Submitted(s) => s,
        pb::submit_moves_response::Answer::Error(e) => panic!("an error: {e:?}"),
    }
}

#[tokio::test]
async fn each_move_is_answered_as_submit_move_answers_it() {
    let nats = NatsServer::start();
    let (channel, _stop) = serve(Config::new(nats.url())).await;
    let mut unary = MoveValidatorClient::new(channel.clone());
    for id in ["s-1", "s-2"] {
        unary
            .create_game(create(id, "online", None, None))
            .await
            .unwrap();
    }
    let mut moves = Moves::open(&channel, None).await.unwrap();
    // Two games interleaved, a ply taken, a move unset, a move that is no move, a game that is
    // none, an illegal move.
    moves.send(1, Some(submit("s-1", 1, "7g7f"))).await;
    moves.send(2, Some(submit("s-2", 1, "2g2f"))).await;
    moves.send(3, Some(submit("s-1", 2, "3c3d"))).await;
    moves.send(4, Some(submit("s-1", 2, "8c8d"))).await;
    moves.send(5, None).await;
    moves.send(6, Some(submit("s-2", 2, "zz"))).await;
    moves.send(7, Some(submit("none", 1, "7g7f"))).await;
    moves.send(8, Some(submit("s-2", 2, "1a1c"))).await;
    let got = moves.answers(8).await;
    moves.close();
    assert!(
        moves.next().await.unwrap().is_none(),
        "the stream ends OK once the client's half ended and every move is answered"
    );

    for (tag, id, ply) in [(1, "s-1", 1), (3, "s-1", 2), (2, "s-2", 1)] {
        let a = submitted(&got[&tag]);
        assert_eq!(a.outcome(), pb::MoveOutcome::Accepted, "tag {tag}");
        assert_eq!(a.ply, ply);
        // The game as a unary call reads it: the stream's moves are stored.
        assert!(game(&mut unary, id).await.ply >= ply);
    }
    // The same retried unary: the same answer.
    let again = unary
        .submit_move(submit("s-1", 2, "3c3d"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(&again, submitted(&got[&3]));

    let taken = status(&got[&4]);
    assert_eq!(taken.code(), Code::Aborted);
    assert_eq!(reason(&taken), "PLY_TAKEN");
    let unary_taken = unary
        .submit_move(submit("s-1", 2, "8c8d"))
        .await
        .unwrap_err();
    assert_eq!(
        (taken.code(), taken.message()),
        (unary_taken.code(), unary_taken.message())
    );
    let unset = status(&got[&5]);
    assert_eq!(
        (unset.code(), reason(&unset), field(&unset)),
        (
            Code::InvalidArgument,
            "INVALID_REQUEST".into(),
            "move".into()
        )
    );
    let bad = status(&got[&6]);
    assert_eq!(
        (bad.code(), field(&bad)),
        (Code::InvalidArgument, "usi".into())
    );
    let none = status(&got[&7]);
    assert_eq!(
        (none.code(), reason(&none)),
        (Code::NotFound, "GAME_NOT_FOUND".into())
    );
    let illegal = submitted(&got[&8]);
    assert!(
        matches!(
            illegal.outcome(),
            pb::MoveOutcome::Rejected | pb::MoveOutcome::Forfeited
        ),
        "{illegal:?}"
    );
}

/// A game's moves sent back to back, without waiting for their answers, are played in the
/// order they were sent (handled at once they would race, and some be PLY_AHEAD).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_games_moves_are_played_in_the_order_they_were_sent() {
    let nats = NatsServer::start();
    let (channel, _stop) = serve(Config::new(nats.url())).await;
    let mut unary = MoveValidatorClient::new(channel.clone());
    let line = "7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d 2h2d 8e8f 8g8f 8b8f";
    let games: Vec<String> = (1..=8).map(|i| format!("o-{i}")).collect();
    for id in &games {
        unary
            .create_game(create(id, "online", None, None))
            .await
            .unwrap();
    }
    let mut moves = Moves::open(&channel, None).await.unwrap();
    let mut tag = 0;
    for (ply, usi) in line.split(' ').enumerate() {
        for id in &games {
            tag += 1;
            moves.send(tag, Some(submit(id, ply as u32 + 1, usi))).await;
        }
    }
    let got = moves.answers(tag as usize).await;
    for (t, answer) in &got {
        let a = submitted(answer);
        assert_eq!(a.outcome(), pb::MoveOutcome::Accepted, "tag {t}: {a:?}");
        assert_eq!(u64::from(a.ply), (t - 1) / 8 + 1, "tag {t}");
    }
}

#[tokio::test]
async fn each_move_counts_against_the_calls_quota_and_the_scope_is_the_play_scope() {
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.credentials = vec![
        Credential::new("chatty", "chatty-token", &[Scope::Play, Scope::Read]).with_quotas(
            Quotas {
                calls_per_second: Some(20.0),
                ..Quotas::default()
            },
        ),
        Credential::new("reader", "reader-token", &[Scope::Read]),
    ];
    let (channel, _stop) = serve(config).await;

    // Outside the play scope: the stream is refused before any answer.
    let refused = match Moves::open(&channel, Some("reader-token")).await {
        Err(status) => status,
        Ok(mut moves) => {
            moves.send(1, Some(submit("q", 1, "7g7f"))).await;
            moves.next().await.expect_err("refused")
        }
    };
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");

    // 100 moves at once (of games that are none: each answered NOT_FOUND unless refused).
    let mut moves = Moves::open(&channel, Some("chatty-token")).await.unwrap();
    let started = Instant::now();
    for tag in 0..100 {
        moves.send(tag, Some(submit("q", 1, "7g7f"))).await;
    }
    let got = moves.answers(100).await;
    let elapsed = started.elapsed().as_secs_f64();
    let (mut allowed, mut over) = (0u32, 0u32);
    for answer in got.values() {
        let s = status(answer);
        match s.code() {
            Code::NotFound => allowed += 1,
            Code::ResourceExhausted => {
                assert_eq!(reason(&s), "QUOTA_EXCEEDED");
                over += 1;
            }
            code => panic!("{code:?}: {s:?}"),
        }
    }
    println!(
        "calls_per_second = 20 on a stream: {allowed} moves answered, {over} over the quota, \
         in {elapsed:.3} s"
    );
    assert!(over > 0, "{allowed} allowed, none over the quota");
    // A second's burst (less the stream's own call), then 20 a second.
    assert!(
        f64::from(allowed) <= 20.0 + 20.0 * elapsed + 1.0,
        "{allowed} in {elapsed} s"
    );
}

/// SubmitMoves streams open at once under `move_streams = 2`: a third is refused with
/// QUOTA_EXCEEDED naming the limit until one of the two ends; the credential's unary calls go
/// on meanwhile.
#[tokio::test]
async fn streams_open_at_once_are_held_to_the_move_streams_quota() {
    let nats = NatsServer::start();
    let mut config = Config::new(nats.url());
    config.credentials = vec![
        Credential::new("platform", "platform-token", &[Scope::Play, Scope::Read]).with_quotas(
            Quotas {
                move_streams: Some(2),
                ..Quotas::default()
            },
        ),
    ];
    let (channel, _stop) = serve(config).await;
    let token = Some("platform-token");
    let limit = |status: &Status| {
        assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
        assert_eq!(reason(status), "QUOTA_EXCEEDED");
        status
            .get_error_details()
            .error_info()
            .expect("an ErrorInfo")
            .metadata["limit"]
            .clone()
    };

    let mut open = Vec::new();
    for tag in 0..2 {
        let mut moves = Moves::open(&channel, token).await.unwrap();
        // Answered: the stream is open on the server, not only asked for.
        moves.send(tag, Some(submit("none", 1, "7g7f"))).await;
        let answer = moves.answers(1).await;
        assert_eq!(status(&answer[&tag]).code(), Code::NotFound);
        open.push(moves);
    }
    let third = Moves::open(&channel, token)
        .await
        .err()
        .expect("a third stream refused");
    assert_eq!(limit(&third), "move_streams");
    // The quota is on streams, not calls: a unary move is answered as ever.
    let mut request = tonic::Request::new(submit("none", 1, "7g7f"));
    request
        .metadata_mut()
        .insert("authorization", "Bearer platform-token".parse().unwrap());
    let unary = MoveValidatorClient::new(channel.clone())
        .submit_move(request)
        .await
        .unwrap_err();
    assert_eq!(unary.code(), Code::NotFound, "{unary:?}");

    // One stream ends (the client's half, then its answers read to the end): its place comes back.
    let mut first = open.remove(0);
    first.close();
    assert!(first.next().await.unwrap().is_none());
    drop(first);
    let until = Instant::now() + PATIENCE.get();
    let again = loop {
        match Moves::open(&channel, token).await {
            Ok(moves) => break moves,
            Err(status) => assert_eq!(limit(&status), "move_streams"),
        }
        assert!(
            Instant::now() < until,
            "the ended stream's place never came back"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(
        limit(&Moves::open(&channel, token).await.err().unwrap()),
        "move_streams"
    );
    drop((again, open));
}

/// An instance that drains answers the moves it took, then ends the stream with UNAVAILABLE
/// (SHUTTING_DOWN), so that the platform sends the rest to another instance.
#[tokio::test]
async fn a_draining_instance_answers_the_moves_it_took_then_ends_the_stream() {
    let nats = NatsServer::start();
    let (channel, stop) = serve(Config::new(nats.url())).await;
    MoveValidatorClient::new(channel.clone())
        .create_game(create("d-1", "online", None, None))
        .await
        .unwrap();
    let mut moves = Moves::open(&channel, None).await.unwrap();
    moves.send(1, Some(submit("d-1", 1, "7g7f"))).await;
    let got = moves.answers(1).await;
    assert_eq!(submitted(&got[&1]).outcome(), pb::MoveOutcome::Accepted);
    stop.send(()).unwrap();
    let ended = moves
        .next()
        .await
        .expect_err("the stream ends with an error");
    assert_eq!(ended.code(), Code::Unavailable, "{ended:?}");
    assert_eq!(reason(&ended), "SHUTTING_DOWN");
}
