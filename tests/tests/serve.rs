//! `shogi-arbiter serve`: one process, no NATS, a game played over gRPC to its verdict.

use arbiter_tests::{bin, games};
use futures::StreamExt;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(20);

#[tokio::test]
async fn serve_plays_a_game_to_its_verdict_on_the_embedded_bus() {
    let mut child = Command::new(bin("shogi-arbiter"))
        .args(["serve", "--listen", "127.0.0.1:0", "--grace-secs", "2"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start shogi-arbiter serve");
    // The first line is the address: read it on a thread, with a deadline.
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let addr = rx.recv_timeout(DEADLINE).expect("the address line");
    let addr = addr.trim().to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr:?}");
    let mut client = MoveValidatorClient::connect(format!("http://{addr}"))
        .await
        .expect("connect");

    let game = games::repetition()
        .into_iter()
        .find(|g| g.expected.code == pb::ResultCode::PerpetualCheck as i32)
        .expect("a perpetual check fixture");
    client
        .create_game(pb::CreateGameRequest {
            ruleset: Some(game.ruleset.clone()),
            start: Some(pb::StartPosition {
                start: Some(pb::start_position::Start::Sfen(game.start_sfen.clone())),
            }),
            game_id: "first-game".into(),
            strict: false,
        })
        .await
        .expect("create");
    let mut watch = client
        .watch_game(pb::WatchGameRequest {
            game_id: "first-game".into(),
            from_ply: 0,
        })
        .await
        .expect("watch")
        .into_inner();
    for (i, usi) in game.moves.iter().enumerate() {
        let answer = client
            .submit_move(pb::SubmitMoveRequest {
                game_id: "first-game".into(),
                ply: i as u32 + 1,
                usi: usi.clone(),
                strict: false,
            })
            .await
            .expect("submit")
            .into_inner();
        assert_eq!(answer.outcome, pb::MoveOutcome::Accepted as i32);
    }
    let verdict = tokio::time::timeout(DEADLINE, async {
        while let Some(event) = watch.next().await {
            if let Some(pb::watch_game_response::Event::Verdict(v)) = event.expect("event").event {
                return v;
            }
        }
        panic!("the watch ended without a verdict");
    })
    .await
    .expect("a verdict within the deadline");
    assert_eq!(verdict.code, game.expected.code);
    assert_eq!(verdict.ply, game.expected.ply);
    assert_eq!(verdict.winner, game.expected.winner);

    // SIGTERM drains and exits cleanly.
    let status = arbiter_tests::terminate(&mut child, DEADLINE).await;
    assert!(status.success(), "{status:?}");
}
