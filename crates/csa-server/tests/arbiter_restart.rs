//! The arbiter restarted under a game in play (an upgrade, a crash): the front end makes again
//! each call the arbiter could not take, and the game goes on as if nothing happened; past its
//! patience the game is interrupted, as before. And an arbiter of a release without SubmitMoves
//! behind a front end that sends moves on it: the front end sends calls. A host gone silent
//! under the front end: its pings give the connection up.
//!
//! Between the front end and the arbiter sits a gate on loopback: it forwards connections to
//! the arbiter while one is up, and takes and closes them (counted) while none is, so that the
//! test knows the front end tried while the arbiter was gone; it can also hold the arbiter's
//! answers and cut the connections under them, so that a move is stored and its answer lost.

mod common;

use arbiter_bus::{Bus, MemoryBus};
use common::Client;
use shogi_proto::v1 as pb;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use test_support::Deadline;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

const PATIENCE: Deadline = Deadline::secs(30);
/// The front end's pings to the arbiter: a silent connection is given up in twice as long.
const KEEPALIVE: Duration = Duration::from_millis(300);

/// Forwards each connection to the arbiter's address while it has one; else closes it. It can
/// hold what the arbiter sends, and cut every connection it forwards.
#[derive(Default)]
struct Gate {
    upstream: Mutex<Option<SocketAddr>>,
    closed: AtomicUsize,
    /// What the arbiter sends is held, not passed on.
    hold: AtomicBool,
    /// The copies of the connections forwarded (each way), and whether each is silenced.
    copies: Mutex<Vec<(AbortHandle, AbortHandle, Arc<AtomicBool>)>>,
}

/// Passes what `from` reads on to `to`, until either closes; nothing while `silent`, nor while
/// the `gate` (given for the arbiter's side) holds.
async fn pass(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    silent: Arc<AtomicBool>,
    gate: Option<Arc<Gate>>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buf).await {
        while silent.load(Ordering::SeqCst)
            || gate.as_ref().is_some_and(|g| g.hold.load(Ordering::SeqCst))
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

impl Gate {
    /// A gate listening on loopback: its address.
    async fn start(gate: Arc<Gate>) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the gate");
        let addr = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let upstream = *gate.upstream.lock().unwrap();
                let Some(upstream) = upstream else {
                    gate.closed.fetch_add(1, Ordering::SeqCst);
                    continue;
                };
                let Ok(outbound) = TcpStream::connect(upstream).await else {
                    continue;
                };
                let (from_front, to_front) = inbound.into_split();
                let (from_arbiter, to_arbiter) = outbound.into_split();
                let silent = Arc::new(AtomicBool::new(false));
                let up = tokio::spawn(pass(from_front, to_arbiter, silent.clone(), None));
                let down = tokio::spawn(pass(
                    from_arbiter,
                    to_front,
                    silent.clone(),
                    Some(gate.clone()),
                ));
                let mut copies = gate.copies.lock().unwrap();
                copies.push((up.abort_handle(), down.abort_handle(), silent));
            }
        });
        addr
    }

    /// Cuts every connection forwarded so far, and passes on what comes after.
    fn cut(&self) {
        for (up, down, _) in self.copies.lock().unwrap().drain(..) {
            up.abort();
            down.abort();
        }
        self.hold.store(false, Ordering::SeqCst);
    }

    /// Every connection forwarded so far passes nothing more, either way, and stays open: a
    /// host gone silent. Connections made after are forwarded.
    fn silence(&self) {
        for (_, _, silent) in self.copies.lock().unwrap().iter() {
            silent.store(true, Ordering::SeqCst);
        }
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
    config.arbiter_keepalive = KEEPALIVE;
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

/// A game in play through the gate: the bus, the gate, the arbiter behind it, the players
/// (Black's first move played and heard) and the front end's stop.
struct Scene {
    bus: Bus,
    gate: Arc<Gate>,
    arbiter: arbiter_stack::Stack,
    b: Client,
    w: Client,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Scene {
    /// Game `game` (a CSA game name) on a front end with `patience`, its logs kept for a
    /// failure's output.
    async fn start(game: &str, patience: Duration) -> Scene {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("info")
            .with_test_writer()
            .try_init();
        let bus: Bus = Arc::new(MemoryBus::default());
        let gate = Arc::new(Gate::default());
        let gate_addr = Gate::start(gate.clone()).await;
        let arbiter = arbiter(&bus).await;
        gate.set(Some(arbiter.addr()));
        let (csa, _stop) = front(gate_addr, patience).await;
        let (mut b, mut w) = common::started_on([&csa, &csa], game).await;
        play(&mut b, &mut w, "+7776FU").await;
        Scene {
            bus,
            gate,
            arbiter,
            b,
            w,
            _stop,
        }
    }

    /// After White's 3c3d: Black's 2g2f, White's resignation; the arbiter's game holds the
    /// three moves, each once.
    async fn white_resigns_after_2g2f(&mut self) {
        play(&mut self.b, &mut self.w, "+2726FU").await;
        self.w.send(b"%TORYO\n").await;
        assert_eq!(
            self.b.until(|l| l.starts_with("#WIN")).await,
            ["%TORYO", "#RESIGN", "#WIN"]
        );
        let game = common::the_game(self.arbiter.addr()).await;
        assert_eq!(game.moves, ["7g7f", "3c3d", "2g2f"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_goes_on_through_a_restart_of_the_arbiter() {
    let Scene {
        bus,
        gate,
        arbiter: first,
        mut b,
        mut w,
        _stop,
    } = Scene::start("restart-600-10", PATIENCE.get()).await;

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

    let game = common::the_game(second.addr()).await;
    assert_eq!(game.moves, ["7g7f", "3c3d", "2g2f"]);
    let verdict = game.verdict.expect("a verdict");
    assert_eq!(
        verdict.code,
        pb::ResultCode::Resignation as i32,
        "{verdict:?}"
    );
    second.shutdown().await;
}

/// A move stored whose answer is lost with the connection (on the front end's move stream) is
/// made again on a new one and answered as the first time: the game goes on, the move stored
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_answer_was_lost_is_made_again_and_stored_once() {
    let mut s = Scene::start("lost-600-10", PATIENCE.get()).await;

    s.gate.hold.store(true, Ordering::SeqCst);
    s.w.send(b"-3334FU\n").await;
    // The move is in the log: its answer is what the gate holds.
    let until = tokio::time::Instant::now() + PATIENCE.get();
    while common::the_game(s.arbiter.addr()).await.ply < 2 {
        assert!(
            tokio::time::Instant::now() < until,
            "White's move never stored"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    s.gate.cut();
    for c in [&mut s.w, &mut s.b] {
        let heard = c.until(|l| l.starts_with('-') || l.starts_with('#')).await;
        assert!(heard.last().unwrap().starts_with("-3334FU,T"), "{heard:?}");
    }
    s.white_resigns_after_2g2f().await;
    s.arbiter.shutdown().await;
}

/// The arbiter's host goes silent under the front end (its connection open, nothing passing):
/// the front end's unanswered ping gives the connection up, and the move in hand is made again
/// on a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_connection_is_given_up_and_the_move_made_again() {
    let mut s = Scene::start("silent-600-10", PATIENCE.get()).await;
    s.gate.silence();
    play(&mut s.w, &mut s.b, "-3334FU").await;
    s.white_resigns_after_2g2f().await;
    // The silent connection's streams are open on the arbiter's side: closed, not waited for.
    s.gate.cut();
    s.arbiter.shutdown().await;
}

/// Past its patience the front end gives the game up, as it did before it had any: the
/// players get `#CHUDAN`, an interruption, not a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_is_interrupted_when_the_arbiter_stays_away_past_the_patience() {
    let mut s = Scene::start("away-600-10", Duration::from_millis(300)).await;
    s.gate.set(None);
    s.arbiter.shutdown().await;
    s.w.send(b"-3334FU\n").await;
    assert_eq!(s.w.until(|l| l.starts_with('#')).await, ["#CHUDAN"]);
    assert_eq!(s.b.until(|l| l.starts_with('#')).await, ["#CHUDAN"]);
    assert!(s.gate.closed.load(Ordering::SeqCst) >= 2, "tried once only");
}

/// The arbiter at `addr` as a release before SubmitMoves served it: that method UNIMPLEMENTED
/// (as tonic answers a method it does not know), every other passed on.
#[derive(Clone)]
struct WithoutStreams(tonic::transport::Channel);

impl tonic::server::NamedService for WithoutStreams {
    const NAME: &'static str = "shogi.v1.MoveValidator";
}

impl tower::Service<http::Request<tonic::body::Body>> for WithoutStreams {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let mut channel = self.0.clone();
        Box::pin(async move {
            if request.uri().path() == "/shogi.v1.MoveValidator/SubmitMoves" {
                return Ok(tonic::Status::unimplemented("").into_http());
            }
            std::future::poll_fn(|cx| tower::Service::poll_ready(&mut channel, cx))
                .await
                .map_err(|e| panic!("the arbiter behind: {e}"))
                .ok();
            Ok(match tower::Service::call(&mut channel, request).await {
                Ok(response) => response.map(tonic::body::Body::new),
                Err(e) => tonic::Status::unavailable(e.to_string()).into_http(),
            })
        })
    }
}

/// The front end's moves go as calls to an arbiter without SubmitMoves, each answered as the
/// stream would have answered it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arbiter_without_submit_moves_gets_calls() {
    let bus: Bus = Arc::new(MemoryBus::default());
    let arbiter = arbiter(&bus).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", arbiter.addr()))
        .expect("an endpoint")
        .connect_lazy();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let old = listener.local_addr().expect("an address");
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(WithoutStreams(channel))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let (csa, _stop) = front(old, PATIENCE.get()).await;
    let (mut b, mut w) = common::started_on([&csa, &csa], "old-600-10").await;
    play(&mut b, &mut w, "+7776FU").await;
    play(&mut w, &mut b, "-3334FU").await;
    // A move the rules refuse (the rook through its own pawn) is answered by the call as by
    // the stream: a forfeit.
    b.send(b"+2823HI\n").await;
    assert_eq!(
        b.until(|l| l.starts_with("#LOSE")).await,
        ["#ILLEGAL_MOVE", "#LOSE"]
    );
    let game = common::the_game(arbiter.addr()).await;
    assert_eq!(game.moves, ["7g7f", "3c3d"]);
    arbiter.shutdown().await;
}
