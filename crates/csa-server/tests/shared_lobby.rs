//! Several front-end instances sharing the lobby on a real nats-server (docs/csa.md, "Running
//! more than one"), over TCP as engines meet them, in front of one arbiter: players of one game
//! on two instances, names held by one instance, `%%WHO` across instances, an instance killed
//! mid-game, and seekers racing on two instances.
//!
//! nats-server: `$NATS_SERVER_BIN` or the pinned binary (test-support says how to install it).

mod common;

use common::{Client, arbiter, black_opens, started_on, white_plays_chudan};
use std::path::{Path, PathBuf};
use std::time::Duration;
use test_support::{Deadline, NatsServer, patience};

/// How long a record may take to appear once the game ended.
const RECORD_DEADLINE: Deadline = Deadline::secs(10);

/// How long a seek may take to show in `%%WHO`.
const LISTED_DEADLINE: Deadline = Deadline::secs(10);

/// One instance, on a runtime of its own so that it can be killed: every task and socket of it
/// dropped at once, nothing run on the way out (as a process killed).
struct Instance {
    csa: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Instance {
    fn start(nats: &str, grpc: &str, records: &Path) -> Instance {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind CSA");
        listener.set_nonblocking(true).expect("non-blocking");
        let csa = listener.local_addr().expect("an address").to_string();
        let mut config = csa_server::Config::new(grpc);
        config.record_dir = Some(records.to_owned());
        let nats = nats.to_owned();
        let (ready_tx, ready) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a listener");
            let client = async_nats::connect(nats).await.expect("connect to NATS");
            let _ = ready_tx.send(());
            let js = async_nats::jetstream::new(client);
            csa_server::run_on_nats(listener, config, js, std::future::pending())
                .await
                .expect("the front end");
        });
        ready
            .recv_timeout(Deadline::secs(30).get())
            .expect("the instance connected to NATS");
        Instance {
            csa,
            runtime: Some(runtime),
        }
    }

    /// Kills the instance: its connections drop, nothing of it runs again.
    fn kill(&mut self) {
        if let Some(r) = self.runtime.take() {
            r.shutdown_background();
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A nats-server, an arbiter and two instances sharing the lobby, with one record folder.
struct Cluster {
    a: Instance,
    b: Instance,
    records: tempfile::TempDir,
    _stack: arbiter_stack::Stack,
    _nats: NatsServer,
}

async fn cluster() -> Cluster {
    let nats = NatsServer::start();
    let (grpc, stack) = arbiter().await;
    let records = tempfile::tempdir().expect("a folder");
    let a = Instance::start(nats.url(), &grpc, records.path());
    let b = Instance::start(nats.url(), &grpc, records.path());
    Cluster {
        a,
        b,
        records,
        _stack: stack,
        _nats: nats,
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// The one record written under `dir`, once it appears.
async fn the_record(dir: &Path) -> String {
    let until = std::time::Instant::now() + RECORD_DEADLINE.get();
    let written = loop {
        let found = files(dir);
        if !found.is_empty() || std::time::Instant::now() > until {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(written.len(), 1, "one record: {written:?}");
    let text = std::fs::read(&written[0]).expect("read the record");
    String::from_utf8_lossy(&text).into_owned()
}

/// `%%WHO`'s lines, without the closing one.
async fn who(c: &mut Client) -> Vec<String> {
    c.send(b"%%WHO\n").await;
    let mut lines = c.until(|l| l == "##[WHO] +OK").await;
    lines.pop();
    lines
}

/// Asks `%%WHO` until a line `shown` accepts appears (a seek has no answer of its own: this is
/// how a test knows it is listed), within [`LISTED_DEADLINE`].
async fn until_listed(c: &mut Client, shown: impl Fn(&str) -> bool) -> Vec<String> {
    let until = std::time::Instant::now() + LISTED_DEADLINE.get();
    loop {
        let seen = who(c).await;
        if seen.iter().any(|l| shown(l)) {
            return seen;
        }
        assert!(std::time::Instant::now() < until, "never listed: {seen:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_on_two_instances_play_a_game_to_its_end_and_one_record_is_written() {
    let c = cluster().await;
    let (mut b, mut w) = started_on([&c.a.csa, &c.b.csa], "across-600-10").await;
    // Either instance lists the game, once.
    for addr in [&c.a.csa, &c.b.csa] {
        let mut watcher = Client::login(addr, "lister").await;
        watcher.send(b"%%LIST\n").await;
        let listed = watcher.until(|l| l == "##[LIST] +OK").await;
        let games: Vec<&String> = listed
            .iter()
            .filter(|l| l.starts_with("##[LIST] arbiter+across-600-10+black+white+"))
            .collect();
        assert_eq!(games.len(), 1, "{listed:?}");
        watcher.send(b"LOGOUT\n").await;
        watcher.until(|l| l == "LOGOUT:completed").await;
    }
    b.send(b"+7776FU\n").await;
    assert_eq!(b.until(|l| l.starts_with('+')).await, ["+7776FU,T0"]);
    assert_eq!(w.until(|l| l.starts_with('+')).await, ["+7776FU,T0"]);
    w.send(b"-3334FU,'* 123 -3334FU\n").await;
    assert_eq!(w.until(|l| l.starts_with('-')).await, ["-3334FU,T0"]);
    assert_eq!(b.until(|l| l.starts_with('-')).await, ["-3334FU,T0"]);
    b.send(b"%TORYO\n").await;
    assert_eq!(
        b.until(|l| l.starts_with('#') && l != "#RESIGN").await,
        ["%TORYO", "#RESIGN", "#LOSE"]
    );
    assert_eq!(
        w.until(|l| l.starts_with('#') && l != "#RESIGN").await,
        ["%TORYO", "#RESIGN", "#WIN"]
    );
    let text = the_record(c.records.path()).await;
    for line in [
        "N+black",
        "N-white",
        "+7776FU",
        "-3334FU",
        "'** 123 -3334FU",
        "%TORYO",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "the record has no {line:?}: {text}"
        );
    }
}

/// During a rolling upgrade, White's instance of an earlier release relays its player's move
/// comment apart from the move (`Relay::Comment` on the game's subject, played here by the
/// test); Black's instance, which writes the record, puts it with its move whether it comes
/// before the move or after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comments_relayed_by_an_instance_of_an_earlier_release_go_with_their_moves() {
    use csa_server::shared::{Relay, RelayMsg};
    use futures::StreamExt as _;
    let c = cluster().await;
    let nats = async_nats::connect(c._nats.url()).await.expect("NATS");
    // The halves' AGREE relays name the game's subject.
    let mut relays = nats.subscribe("csa.game.>").await.expect("subscribe");
    nats.flush().await.expect("flush");
    let (mut b, mut w) = started_on([&c.a.csa, &c.b.csa], "relayed-600-10").await;
    let subject = tokio::time::timeout(patience(Duration::from_secs(10)), relays.next())
        .await
        .expect("a relay in time")
        .expect("a relay")
        .subject;
    let relay = |ply, text: &str| {
        serde_json::to_vec(&RelayMsg {
            from: '-',
            relay: Relay::Comment {
                ply,
                text: text.into(),
            },
        })
        .expect("JSON")
    };
    black_opens(&mut b, &mut w).await;
    // Ply 2's comment before its move; ply 4's after it (its move echoed to both players).
    nats.publish(subject.clone(), relay(2, "* 30 -3334FU").into())
        .await
        .expect("publish");
    nats.flush().await.expect("flush");
    play_lines(&mut b, &mut w, &["-3334FU", "+2726FU", "-8384FU"]).await;
    nats.publish(subject, relay(4, "* -12 +2625FU").into())
        .await
        .expect("publish");
    nats.flush().await.expect("flush");
    // Two more moves through the arbiter before the end: the relay, already on its way to
    // Black's instance, reaches it before the game ends and its record is written (a relay
    // that came after the end would find no record to go into, and the test would not say
    // what it means to).
    play_lines(&mut b, &mut w, &["+2625FU", "-8485FU"]).await;
    b.send(b"%TORYO\n").await;
    b.until(|l| l == "#LOSE").await;
    let text = the_record(c.records.path()).await;
    let lines: Vec<&str> = text.lines().collect();
    for (mv, comment) in [
        ("-3334FU", "'** 30 -3334FU"),
        ("-8384FU", "'** -12 +2625FU"),
    ] {
        let at = lines.iter().position(|l| *l == mv).expect("the move");
        assert_eq!(lines.get(at + 2), Some(&comment), "{text}");
    }
}

/// Plays `lines` (CSA moves, each by the side its sign names), each echoed to both players.
async fn play_lines(b: &mut Client, w: &mut Client, lines: &[&str]) {
    for line in lines {
        let mover = if line.starts_with('+') {
            &mut *b
        } else {
            &mut *w
        };
        mover.send(format!("{line}\n").as_bytes()).await;
        let echo = format!("{line},T0");
        assert_eq!(b.until(|l| l == echo).await, [echo.as_str()]);
        assert_eq!(w.until(|l| l == echo).await, [echo.as_str()]);
    }
}

/// A line of White's played as an illegal move that is no move of the board ends the game for
/// both, and Black's instance names it in the record, from the verdict's note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_illegal_line_on_the_other_instance_is_named_in_the_record() {
    let c = cluster().await;
    let (mut b, mut w) = started_on([&c.a.csa, &c.b.csa], "chudan-600-10").await;
    white_plays_chudan(&mut b, &mut w).await;
    let text = the_record(c.records.path()).await;
    assert!(
        text.lines().any(|l| l == "'ILLEGAL_MOVE(%CHUDAN)"),
        "{text}"
    );
}

/// A board move of White's that the preset forfeits is named in Black's record too, from the
/// verdict's USI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forfeited_move_on_the_other_instance_is_named_in_the_record() {
    let c = cluster().await;
    let (mut b, mut w) = started_on([&c.a.csa, &c.b.csa], "forfeit-600-10").await;
    black_opens(&mut b, &mut w).await;
    // A pawn one square sideways and forward: no pawn's move.
    w.send(b"-3344FU\n").await;
    assert_eq!(
        w.until(|l| l.starts_with("#LOSE"))
            .await
            .last()
            .map(String::as_str),
        Some("#LOSE")
    );
    assert_eq!(
        b.until(|l| l.starts_with("#WIN"))
            .await
            .last()
            .map(String::as_str),
        Some("#WIN")
    );
    let text = the_record(c.records.path()).await;
    assert!(
        text.lines().any(|l| l == "'ILLEGAL_MOVE(-3344FU)"),
        "{text}"
    );
}

/// A declaration on one instance is echoed to the other's player too, before the same result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declaration_is_echoed_to_both_players() {
    let c = cluster().await;
    let (mut b, mut w) = started_on([&c.a.csa, &c.b.csa], "kachi-600-10").await;
    b.send(b"%KACHI\n").await;
    let ended = |l: &str| l == "#WIN" || l == "#LOSE";
    let black = b.until(ended).await;
    let white = w.until(ended).await;
    // A declaration at the start fails: its echo, then the illegal declaration's lines.
    assert_eq!(black, ["%KACHI,T0", "%KACHI", "#ILLEGAL_MOVE", "#LOSE"]);
    assert_eq!(white, ["%KACHI,T0", "%KACHI", "#ILLEGAL_MOVE", "#WIN"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_is_held_by_one_instance_and_who_shows_every_instances_players() {
    let c = cluster().await;
    let mut alice = Client::login(&c.a.csa, "alice").await;
    let mut again = Client::connect(&c.b.csa).await;
    again.send(b"LOGIN alice pw x1\n").await;
    assert_eq!(again.line().await.as_deref(), Some("LOGIN:incorrect"));
    let mut bob = Client::login(&c.b.csa, "bob").await;
    bob.send(b"%%GAME who-600-10 +\n").await;
    let seen = until_listed(&mut alice, |l| {
        l.starts_with("##[WHO] bob+") && l.ends_with(" who-600-10 +")
    })
    .await;
    assert!(
        seen.iter().any(|l| l.starts_with("##[WHO] alice+")),
        "{seen:?}"
    );
    // A chat line reaches the x1 players of every instance.
    alice.send(b"%%CHAT hello\n").await;
    assert_eq!(
        bob.until(|l| l.starts_with("##[CHAT]"))
            .await
            .last()
            .map(String::as_str),
        Some("##[CHAT][alice] hello")
    );
    // The name is free again once its login is gone.
    alice.send(b"LOGOUT\n").await;
    alice.until(|l| l == "LOGOUT:completed").await;
    let _alice = Client::login(&c.b.csa, "alice").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_killed_mid_game_loses_its_player_on_time() {
    let mut c = cluster().await;
    // Ten seconds each, no byoyomi.
    let (mut b, mut w) = started_on([&c.a.csa, &c.b.csa], "killed-10-0").await;
    black_opens(&mut b, &mut w).await;
    let killed = std::time::Instant::now();
    c.b.kill();
    assert_eq!(
        w.line().await,
        None,
        "the killed instance's player is cut off"
    );
    assert_eq!(
        b.until(|l| l.starts_with('#') && l != "#TIME_UP").await,
        ["#TIME_UP", "#WIN"]
    );
    // White's ten seconds, then the flag's ack wait (2 s) at most, and the machine's slack.
    let bound = Duration::from_secs(12) + patience(Duration::from_secs(3));
    assert!(
        killed.elapsed() <= bound,
        "#TIME_UP {:?} after the kill, over {bound:?}",
        killed.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seekers_racing_on_two_instances_never_pair_one_waiting_player_twice() {
    let c = cluster().await;
    for round in 0..5 {
        let game = format!("race{round}-600-10");
        let mut waiting = Client::login(&c.a.csa, &format!("w{round}")).await;
        waiting.send(format!("%%GAME {game} +\n").as_bytes()).await;
        let name = format!("##[WHO] w{round}+");
        until_listed(&mut waiting, |l| {
            l.starts_with(&name) && l.contains(" game_waiting ")
        })
        .await;
        let mut one = Client::login(&c.a.csa, &format!("s{round}a")).await;
        let mut two = Client::login(&c.b.csa, &format!("s{round}b")).await;
        let seek = format!("%%GAME {game} -\n");
        tokio::join!(one.send(seek.as_bytes()), two.send(seek.as_bytes()));
        let first = waiting.until(|l| l.starts_with("Game_ID:")).await;
        let id = first.last().cloned().expect("an id");
        // The one paired gets the same game; the other still waits: a third seeker pairs with
        // it, and it sees that game's summary, never a REJECT of the first.
        let mut third = Client::login(&c.b.csa, &format!("t{round}")).await;
        third.send(format!("%%GAME {game} +\n").as_bytes()).await;
        let third_id = third
            .until(|l| l.starts_with("Game_ID:"))
            .await
            .last()
            .cloned()
            .expect("an id");
        assert_ne!(id, third_id, "round {round}");
        let mut ids = Vec::new();
        for seeker in [&mut one, &mut two] {
            let lines = seeker
                .until(|l| l.starts_with("Game_ID:") || l.starts_with("REJECT:"))
                .await;
            ids.push(lines.last().cloned().expect("a line"));
        }
        ids.sort();
        let mut want = vec![id.clone(), third_id.clone()];
        want.sort();
        assert_eq!(ids, want, "round {round}");
    }
}
