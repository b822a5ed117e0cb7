//! Retention of finished games: `shogi-arbiter streams prune` writes every game finished before
//! the cutoff as a record, then purges it from the games' stream; a game still being played,
//! and a game whose record cannot be written, stay. Prints the stream's bytes per finished
//! game, the figure deploy/README.md sizes the volumes with.

use arbiter_tests::{bin, games, play, serve};
use shogi_proto::v1 as pb;
use std::process::Command;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(30);

fn prune(url: &str, extra: &[&str]) -> (bool, String, String) {
    let out = Command::new(bin("shogi-arbiter"))
        .args(["streams", "prune", "--nats-url", url])
        .args(extra)
        .output()
        .expect("run streams prune");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_games_are_archived_then_purged_and_live_ones_stay() {
    let nats = test_support::NatsServer::start();
    let url = nats.url().to_owned();
    let (mut child, addr) = serve(&["--nats-url", &url]);
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
    let clients = play::Clients::new(&[port], DEADLINE.get());

    let mut finished = games::repetition();
    finished.extend(games::corpus(80, 8));
    for (i, g) in finished.iter().enumerate() {
        play::play(&clients, format!("old-{i}"), g).await;
    }
    // A game still being played: its first moves only.
    let live = &finished[finished.len() - 1];
    let mut unfinished = live.clone();
    unfinished.moves.truncate(4);
    play::play(&clients, "live-0".into(), &unfinished).await;

    let js = async_nats::jetstream::new(async_nats::connect(&url).await.unwrap());
    let bus: arbiter_bus::Bus = std::sync::Arc::new(
        arbiter_bus::JetStreamBus::connect(
            &arbiter_bus::NatsOptions::new(&url),
            "retention-test",
            &arbiter_runtime::streams::games(shogi_proto::STREAM, 1),
        )
        .await
        .unwrap(),
    );
    play::assert_one_right_verdict(&bus, "old", &finished).await;
    let mut stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    let before = stream.info().await.unwrap().state.clone();

    // Nothing is older than a day: nothing goes.
    let (ok, stdout, stderr) = prune(&url, &["--finished-before", "1d"]);
    assert!(ok, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("0 finished before the cutoff"), "{stderr}");

    // A directory that cannot be written: every game stays.
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "not a directory").unwrap();
    let (ok, _, stderr) = prune(
        &url,
        &[
            "--finished-before",
            "0s",
            "--archive-dir",
            blocked.to_str().unwrap(),
        ],
    );
    assert!(!ok, "{stderr}");
    assert_eq!(
        stream.info().await.unwrap().state.messages,
        before.messages,
        "a failed archive purged something: {stderr}"
    );

    // A dry run says what would go and leaves it.
    let (ok, stdout, _) = prune(&url, &["--finished-before", "0s", "--dry-run"]);
    assert!(ok);
    assert_eq!(stdout.lines().count(), finished.len(), "{stdout}");
    assert_eq!(stream.info().await.unwrap().state.messages, before.messages);

    // Archived, then purged.
    let archive = dir.path().join("archive");
    let (ok, stdout, stderr) = prune(
        &url,
        &[
            "--finished-before",
            "0s",
            "--archive-dir",
            archive.to_str().unwrap(),
            "--format",
            "kif",
        ],
    );
    assert!(ok, "{stderr}");
    assert_eq!(stdout.lines().count(), finished.len(), "{stdout}");
    let after = stream.info().await.unwrap().state.clone();
    let per_game = (before.bytes - after.bytes) / finished.len() as u64;
    let plies: usize = finished.iter().map(|g| g.moves.len()).sum();
    eprintln!(
        "{} finished games ({plies} plies) took {} bytes of the stream, {per_game} bytes a game; \
         {} messages and {} bytes left",
        finished.len(),
        before.bytes - after.bytes,
        after.messages,
        after.bytes
    );
    for (i, g) in finished.iter().enumerate() {
        let id = format!("old-{i}");
        // Its record, with its ending, then nothing of it on the bus.
        let path = archive.join(format!("{id}.kifu"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let record = shogi_records::read_any(&path.display().to_string(), &bytes).unwrap();
        assert!(record.ending.is_some(), "{id}: no ending in its record");
        assert_eq!(
            record.moves.len(),
            g.moves.len() - usize::from(g.forfeit_last),
            "{id}"
        );
        assert!(
            bus.last(&shogi_proto::subject::created(&id))
                .await
                .unwrap()
                .is_none(),
            "{id} still on the bus"
        );
        // A validator answers from the bus, or from its cache until it evicts the game: the
        // same finished game, never a different one.
        let answer = clients
            .call(&id, |mut c| {
                let id = id.clone();
                async move {
                    c.get_game(pb::GetGameRequest {
                        game_id: id,
                        ..Default::default()
                    })
                    .await
                }
            })
            .await;
        match answer {
            Err(status) => assert_eq!(status.code(), tonic::Code::NotFound, "{id}: {status}"),
            Ok(r) => assert_eq!(
                r.game.and_then(|g| g.verdict).map(|v| (v.code, v.ply)),
                Some((g.expected.code, g.expected.ply)),
                "{id}"
            ),
        }
    }
    // The game being played is untouched, and goes on.
    assert!(
        bus.last(&shogi_proto::subject::created("live-0"))
            .await
            .unwrap()
            .is_some()
    );
    let next = clients
        .call("live-0", |mut c| {
            let usi = live.moves[4].clone();
            async move {
                c.submit_move(pb::SubmitMoveRequest {
                    game_id: "live-0".into(),
                    ply: 5,
                    usi,
                    strict: false,
                    comment: String::new(),
                })
                .await
            }
        })
        .await
        .expect("the live game goes on");
    assert_eq!(next.outcome, pb::MoveOutcome::Accepted as i32);

    // Again: nothing left to prune.
    let (ok, stdout, _) = prune(&url, &["--finished-before", "0s"]);
    assert!(ok);
    assert!(stdout.is_empty(), "{stdout}");
    let _ = child.kill();
    let _ = child.wait();
}
