//! `shogi-arbiter serve`: one process, no NATS, a game played over gRPC to its verdict; and the
//! same over NATS, where a platform's core subscriber hears each game's verdict exactly once.

use arbiter_tests::{bin, games, serve};
use futures::StreamExt;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::process::Command;
use std::time::Duration;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(20);

#[tokio::test]
async fn serve_plays_a_game_to_its_verdict_on_the_embedded_bus() {
    let (mut child, addr) = serve(&[]);
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
            verdict_only: false,
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
                comment: String::new(),
            })
            .await
            .expect("submit")
            .into_inner();
        assert_eq!(answer.outcome, pb::MoveOutcome::Accepted as i32);
    }
    let verdict = tokio::time::timeout(DEADLINE.get(), async {
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
    let status = arbiter_tests::terminate(&mut child, DEADLINE.get()).await;
    assert!(status.success(), "{status:?}");
}

/// Over NATS, one notice per game reaches a core subscriber of the republished verdicts, and one
/// reaches a subscriber of the stored subject too: each ending has one announcer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_over_nats_announces_each_verdict_once_to_a_core_subscriber() {
    use futures::StreamExt as _;
    let nats = test_support::NatsServer::start();
    let raw_client = async_nats::connect(nats.url()).await.unwrap();
    let mut raw = raw_client.subscribe("shogi.game.*.verdict").await.unwrap();
    raw_client.flush().await.unwrap();
    let subscriber = arbiter_tests::play::VerdictSubscriber::start(nats.url()).await;
    let (mut child, addr) = serve(&["--nats-url", nats.url()]);
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
    let clients = arbiter_tests::play::Clients::new(&[port], DEADLINE.get());
    // Every kind of ending: checkmate, a forfeit, repetition, perpetual check, a move cap.
    let mut picked = Vec::new();
    for g in games::at_least(200) {
        let n = picked
            .iter()
            .filter(|p: &&games::Scripted| p.expected.code == g.expected.code)
            .count();
        if n < 4 {
            picked.push(g);
        }
    }
    assert!(picked.len() >= 12, "{} games", picked.len());
    for (i, g) in picked.iter().enumerate() {
        arbiter_tests::play::play(&clients, format!("serve-{i}"), g).await;
    }
    let bus: arbiter_bus::Bus = std::sync::Arc::new(
        arbiter_bus::JetStreamBus::connect(
            &arbiter_bus::NatsOptions::new(nats.url()),
            "serve-test",
            &arbiter_runtime::streams::games(shogi_proto::STREAM, 1),
        )
        .await
        .unwrap(),
    );
    arbiter_tests::play::assert_one_right_verdict(&bus, "serve", &picked).await;
    let exempt = subscriber
        .assert_each_heard_once(&bus, "serve", picked.len(), DEADLINE.get())
        .await;
    assert_eq!(exempt, 0, "the subscriber was never away");
    // The stored subject's raw publishes: one announcer per ending, so one each here too.
    let mut heard = std::collections::HashMap::<String, usize>::new();
    while let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(500), raw.next()).await {
        *heard.entry(m.subject.to_string()).or_default() += 1;
    }
    assert_eq!(heard.len(), picked.len(), "{heard:?}");
    assert!(heard.values().all(|&n| n == 1), "{heard:?}");

    // The games exported from the bus as records, each judged again from its record to the
    // same ending: one by id on standard output, and every finished one into a directory.
    let one = Command::new(bin("shogi-arbiter"))
        .args([
            "export",
            "--nats-url",
            nats.url(),
            "--format",
            "csa",
            "serve-0",
        ])
        .output()
        .expect("run export");
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    // A CSA record: V2.2 (`--csa-version`'s default) where the record fits it, V3.0 where
    // its ending or its times need it. (A perpetual check, once `%OUTE_SENNICHITE`, is now
    // the checker's `%+ILLEGAL_ACTION`, which V2.2 has: RULES.md section 7.)
    let text = String::from_utf8_lossy(&one.stdout);
    assert!(
        text.starts_with("V2.2\n") || text.starts_with("V3.0\n"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    for format in ["csa", "kif", "jkf"] {
        let out = Command::new(bin("shogi-arbiter"))
            .args([
                "export",
                "--nats-url",
                nats.url(),
                "--archive",
                "--format",
                format,
            ])
            .arg("--out-dir")
            .arg(dir.path().join(format))
            .output()
            .expect("run export --archive");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for (i, g) in picked.iter().enumerate() {
        let rules = shogi_proto::convert::ruleset_from_pb(Some(&g.ruleset)).unwrap();
        for (format, ext) in [("csa", "csa"), ("kif", "kifu"), ("jkf", "jkf")] {
            let path = dir.path().join(format).join(format!("serve-{i}.{ext}"));
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let record = shogi_records::read_any(&path.display().to_string(), &bytes)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(record.ending.is_some(), "{}: no ending", path.display());
            let moves: Vec<_> = record.moves.iter().map(|m| m.mv).collect();
            let played = g.moves.len() - usize::from(g.forfeit_last);
            assert_eq!(moves.len(), played, "{}", path.display());
            if !g.forfeit_last {
                let judged = shogi_adjudication::judge(record.start.clone(), moves, false, &rules);
                let code = judged.verdict.map(|v| v.code.as_str().to_owned());
                let want = shogi_proto::convert::result_code_from_pb(g.expected.code)
                    .map(|c| c.as_str().to_owned());
                assert_eq!(code, want, "{}", path.display());
            }
        }
    }
    let status = arbiter_tests::terminate(&mut child, DEADLINE.get()).await;
    assert!(status.success(), "{status:?}");
}

/// `serve --csa-listen`: the CSA front end in the same process, on the stack's own gRPC. Two
/// engines' sessions play a game to a resignation over CSA; the game is an arbiter game, its
/// verdict the resignation, and a platform lists it over gRPC.
#[tokio::test]
async fn serve_with_csa_listen_plays_csa_games_as_arbiter_games() {
    use std::io::{BufRead, BufReader, Write};
    type Reader = BufReader<std::net::TcpStream>;
    let mut child = Command::new(bin("shogi-arbiter"))
        .args(["serve", "--listen", "127.0.0.1:0", "--grace-secs", "2"])
        .args(["--csa-listen", "127.0.0.1:0", "--no-console"])
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("start shogi-arbiter serve");
    let out = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(out).lines();
        for _ in 0..2 {
            let _ = tx.send(lines.next().and_then(Result::ok).unwrap_or_default());
        }
    });
    let addr = rx.recv_timeout(DEADLINE.get()).expect("the gRPC address");
    let csa = rx.recv_timeout(DEADLINE.get()).expect("the CSA address");
    let csa = csa.strip_prefix("csa ").expect("csa <address>").to_owned();

    let connect = |login: &str| {
        let s = std::net::TcpStream::connect(&csa).expect("connect to CSA");
        s.set_read_timeout(Some(DEADLINE.get())).expect("a timeout");
        let mut w = s.try_clone().expect("a writer");
        writeln!(w, "{login}").expect("login");
        (w, BufReader::new(s))
    };
    // The lines up to the first that `last` accepts.
    let until = |r: &mut Reader, last: &dyn Fn(&str) -> bool| {
        let mut seen = Vec::new();
        loop {
            let mut l = String::new();
            assert!(
                r.read_line(&mut l).expect("a line") > 0,
                "closed after {seen:?}"
            );
            let done = last(l.trim_end());
            seen.push(l.trim_end().to_owned());
            if done {
                return seen;
            }
        }
    };
    let (mut bw, mut br) = connect("LOGIN black pw x1");
    let (mut ww, mut wr) = connect("LOGIN white pw x1");
    until(&mut br, &|l| l == "##[LOGIN] +OK x1");
    until(&mut wr, &|l| l == "##[LOGIN] +OK x1");
    writeln!(bw, "%%GAME serve-600-10 +").expect("seek");
    writeln!(ww, "%%GAME serve-600-10 -").expect("seek");
    until(&mut br, &|l| l == "END Game_Summary");
    until(&mut wr, &|l| l == "END Game_Summary");
    writeln!(bw, "AGREE").expect("agree");
    writeln!(ww, "AGREE").expect("agree");
    until(&mut br, &|l| l.starts_with("START:"));
    until(&mut wr, &|l| l.starts_with("START:"));
    writeln!(bw, "+7776FU").expect("move");
    assert_eq!(
        until(&mut wr, &|l| l.starts_with("+7776FU")),
        ["+7776FU,T0"]
    );
    writeln!(ww, "%TORYO").expect("resign");
    let ending = ["%TORYO", "#RESIGN"];
    assert_eq!(
        until(&mut wr, &|l| l.starts_with("#LOSE")),
        [ending[0], ending[1], "#LOSE"]
    );
    assert_eq!(
        until(&mut br, &|l| l.starts_with("#WIN"))[1..],
        [ending[0], ending[1], "#WIN"]
    );

    let mut client = MoveValidatorClient::connect(format!("http://{addr}"))
        .await
        .expect("connect");
    let games = client
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect("list")
        .into_inner()
        .games;
    assert_eq!(games.len(), 1, "{games:?}");
    assert_eq!(games[0].preset, "floodgate");
    let verdict = games[0].verdict.as_ref().expect("the game's verdict");
    assert_eq!(verdict.code, pb::ResultCode::Resignation as i32);
    assert_eq!(verdict.winner, pb::Color::Black as i32);

    let status = arbiter_tests::terminate(&mut child, DEADLINE.get()).await;
    assert!(status.success(), "{status:?}");
}
