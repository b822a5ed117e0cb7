//! The arbiter restarted under a game in play (an upgrade, a crash): the front end makes again
//! each call the arbiter could not take, and the game goes on as if nothing happened; past its
//! patience the game is interrupted, as before.
//!
//! Between the front end and the arbiter sits a gate on loopback: it forwards connections to
//! the arbiter while one is up, and takes and closes them (counted) while none is, so that the
//! test knows the front end tried while the arbiter was gone.

mod common;

use arbiter_bus::{Bus, MemoryBus};
use common::Client;
use shogi_proto::v1 as pb;
use shogi_proto::v1::move_validator_client::MoveValidatorClient;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use test_support::Deadline;
use tokio::net::{TcpListener, TcpStream};

const PATIENCE: Deadline = Deadline::secs(30);

/// Forwards each connection to the arbiter's address while it has one; else closes it.
#[derive(Default)]
struct Gate {
    upstream: Mutex<Option<SocketAddr>>,
    closed: AtomicUsize,
}

impl Gate {
    /// A gate listening on loopback: its address.
    async fn start(gate: Arc<Gate>) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the gate");
        let addr = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let upstream = *gate.upstream.lock().unwrap();
                let Some(upstream) = upstream else {
                    gate.closed.fetch_add(1, Ordering::SeqCst);
                    continue;
                };
                tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        addr
    }

    fn set(&self, upstream: Option<SocketAddr>) {
        *self.upstream.lock().unwrap() = upstream;
    }

    /// Waits until the gate has closed `n` connections in all.
    async fn until_closed(&self, n: usize) {
        let until = tokio::time::Instant::now() + PATIENCE.get();
        while self.closed.load(Ordering::SeqCst) < n {
            assert!(
                tokio::time::Instant::now() < until,
                "the front end did not try again ({} connections)",
                self.closed.load(Ordering::SeqCst)
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// The whole arbiter on `bus`, serving gRPC on a loopback port of its own.
async fn arbiter(bus: &Bus) -> arbiter_stack::Stack {
    let grpc = TcpListener::bind("127.0.0.1:0").await.expect("bind gRPC");
    arbiter_stack::Stack::start(grpc, bus.clone(), arbiter_stack::StackConfig::default())
        .await
        .expect("start the arbiter")
}

/// The front end towards `arbiter` with `patience`: its address, and its stop.
async fn front(
    arbiter: SocketAddr,
    patience: Duration,
) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind CSA");
    let csa = listener.local_addr().expect("an address").to_string();
    let mut config = csa_server::Config::new(&format!("http://{arbiter}"));
    config.arbiter_patience = patience;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        csa_server::run(listener, config, async {
            let _ = stopped.await;
        })
        .await
        .expect("the front end");
    });
    (csa, stop)
}

/// The one game on the arbiter at `addr`, whole.
async fn the_game(addr: SocketAddr) -> pb::GameState {
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
    client
        .get_game(pb::GetGameRequest {
            game_id: games[0].game_id.clone(),
            ..Default::default()
        })
        .await
        .expect("get the game")
        .into_inner()
        .game
        .expect("a game")
}

/// One side's move, heard by both.
async fn play(mover: &mut Client, other: &mut Client, line: &str) {
    mover.send(format!("{line}\n").as_bytes()).await;
    let sign = line.chars().next().expect("a move");
    for c in [mover, other] {
        let heard = c.until(|l| l.starts_with(sign) || l.starts_with('#')).await;
        let last = heard.last().expect("a line");
        assert!(last.starts_with(&format!("{line},T")), "{heard:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_goes_on_through_a_restart_of_the_arbiter() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter("info")
        .with_test_writer()
        .try_init();
    let bus: Bus = Arc::new(MemoryBus::default());
    let gate = Arc::new(Gate::default());
    let gate_addr = Gate::start(gate.clone()).await;
    let first = arbiter(&bus).await;
    gate.set(Some(first.addr()));
    let (csa, _stop) = front(gate_addr, PATIENCE.get()).await;
    let (mut b, mut w) = common::started_on([&csa, &csa], "restart-600-10").await;
    play(&mut b, &mut w, "+7776FU").await;

    // The arbiter drains and stops; White moves while none is up, and the front end's calls
    // find the gate closed until a new instance on the same bus is.
    gate.set(None);
    first.shutdown().await;
    w.send(b"-3334FU\n").await;
    gate.until_closed(2).await;
    let second = arbiter(&bus).await;
    gate.set(Some(second.addr()));
    for c in [&mut w, &mut b] {
        let heard = c.until(|l| l.starts_with('-') || l.starts_with('#')).await;
        assert!(heard.last().unwrap().starts_with("-3334FU,T"), "{heard:?}");
    }
    play(&mut b, &mut w, "+2726FU").await;
    w.send(b"%TORYO\n").await;
    assert_eq!(
        w.until(|l| l.starts_with("#LOSE")).await,
        ["%TORYO", "#RESIGN", "#LOSE"]
    );
    assert_eq!(
        b.until(|l| l.starts_with("#WIN")).await,
        ["%TORYO", "#RESIGN", "#WIN"]
    );

    let game = the_game(second.addr()).await;
    assert_eq!(game.moves, ["7g7f", "3c3d", "2g2f"]);
    let verdict = game.verdict.expect("a verdict");
    assert_eq!(
        verdict.code,
        pb::ResultCode::Resignation as i32,
        "{verdict:?}"
    );
    second.shutdown().await;
}

/// Past its patience the front end gives the game up, as it did before it had any: the
/// players get `#CHUDAN`, an interruption, not a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_is_interrupted_when_the_arbiter_stays_away_past_the_patience() {
    let bus: Bus = Arc::new(MemoryBus::default());
    let gate = Arc::new(Gate::default());
    let gate_addr = Gate::start(gate.clone()).await;
    let first = arbiter(&bus).await;
    gate.set(Some(first.addr()));
    let (csa, _stop) = front(gate_addr, Duration::from_millis(300)).await;
    let (mut b, mut w) = common::started_on([&csa, &csa], "away-600-10").await;
    play(&mut b, &mut w, "+7776FU").await;
    gate.set(None);
    first.shutdown().await;
    w.send(b"-3334FU\n").await;
    assert_eq!(w.until(|l| l.starts_with('#')).await, ["#CHUDAN"]);
    assert_eq!(b.until(|l| l.starts_with('#')).await, ["#CHUDAN"]);
    assert!(gate.closed.load(Ordering::SeqCst) >= 2, "tried once only");
}
