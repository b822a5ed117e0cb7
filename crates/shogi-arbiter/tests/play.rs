//! `shogi-arbiter serve` with its embedded bus, and `shogi-arbiter play` against it: the README's
//! first game, as a newcomer runs it; and `play` against a validator serving mutual TLS.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve() -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The first line is the bound address: read it rather than sleep.
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = format!("http://{}", line.trim());
    (Server(child), addr)
}

#[test]
fn a_first_game_ends_in_its_verdict() {
    let (_server, addr) = serve();
    // Lishogi's perpetual-check case: White checks on every move and loses.
    let moves = "5h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h";
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
        .args([
            "play",
            "--addr",
            &addr,
            "--rules",
            "online",
            "--sfen",
            "6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1",
        ])
        .args(moves.split(' '))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1 + 13 + 1, "{lines:?}");
    assert!(
        lines.iter().all(|l| l["schema"] == "shogi-arbiter.play.v2"),
        "{lines:?}"
    );
    let game_id = &lines[0]["created"]["gameId"];
    assert!(
        game_id.as_str().is_some_and(|id| !id.is_empty()),
        "{}",
        lines[0]
    );
    let last_move = &lines[13];
    assert_eq!(last_move["ply"], 13);
    assert_eq!(last_move["usi"], "2h3h");
    assert_eq!(last_move["answer"]["outcome"], "MOVE_OUTCOME_ACCEPTED");
    assert_eq!(
        last_move["answer"]["verdict"]["code"], "RESULT_CODE_PERPETUAL_CHECK",
        "{last_move}"
    );
    let end = &lines.last().unwrap()["game"];
    assert_eq!(&end["gameId"], game_id);
    let verdict = &end["verdict"];
    assert_eq!(verdict["code"], "RESULT_CODE_PERPETUAL_CHECK");
    assert_eq!(verdict["codeName"], "perpetual_check");
    assert_eq!(verdict["winner"], "COLOR_WHITE");
    assert_eq!(verdict["perpetualCheck"]["checker"], "COLOR_BLACK");
    assert_eq!(
        verdict["perpetualCheck"]["plies"],
        serde_json::json!([1, 5, 9, 13])
    );
}

#[test]
fn an_illegal_move_is_refused_with_its_kind_and_play_stops() {
    let (_server, addr) = serve();
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
        .args([
            "play", "--addr", &addr, "--rules", "online", "7g7f", "3c3d", "8h2b", "P*2c",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // 8h2b takes the bishop without promoting (legal); then White drops a pawn it does not hold
    // onto 2c, which holds White's own pawn: impossible.
    let refused = lines
        .iter()
        .find(|l| l["answer"]["outcome"] == "MOVE_OUTCOME_REJECTED")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(refused["ply"], 4);
    assert_eq!(refused["usi"], "P*2c");
    assert_eq!(
        refused["answer"]["illegalKind"], "ILLEGAL_KIND_IMPOSSIBLE",
        "{text}"
    );
}

/// `play` against a validator serving mutual TLS (certificates from `test_support::TestPki`):
/// with the CA and its certificate it plays; without its certificate, or trusting another CA,
/// it fails (exit code 2), saying why.
#[test]
fn play_reaches_a_validator_serving_mutual_tls() {
    let pki = test_support::TestPki::new();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut arbiter = arbiter_stack::StackConfig::default();
    arbiter.validator.tls = Some(
        move_validator::TlsConfig::new(pki.path("server.pem"), pki.path("server.key"))
            .with_client_ca(pki.path("ca.pem")),
    );
    let stack = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let bus: arbiter_bus::Bus = std::sync::Arc::new(arbiter_bus::MemoryBus::default());
        arbiter_stack::Stack::start(listener, bus, arbiter)
            .await
            .unwrap()
    });
    let addr = format!("https://{}", stack.addr());
    let path = |name: &str| pki.path(name).to_str().unwrap().to_owned();
    let play = |tls: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_shogi-arbiter"))
            .args(["play", "--addr", &addr])
            .args(tls)
            .arg("7g7f")
            .output()
            .unwrap()
    };
    let (ca, cert, key) = (path("ca.pem"), path("client.pem"), path("client.key"));
    let out = play(&["--tls-ca", &ca, "--tls-cert", &cert, "--tls-key", &key]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rogue = path("rogue-ca.pem");
    // Without a certificate the handshake (TLS 1.3) completes before the validator refuses
    // it, so the first call fails; trusting another CA, the connection does.
    for (tls, says) in [
        (vec!["--tls-ca", &ca], "CreateGame"),
        (
            vec!["--tls-ca", &rogue, "--tls-cert", &cert, "--tls-key", &key],
            "UnknownIssuer",
        ),
    ] {
        let out = play(&tls);
        assert_eq!(out.status.code(), Some(2), "{tls:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{tls:?}: {stderr}");
    }
    runtime.block_on(stack.shutdown());
}
