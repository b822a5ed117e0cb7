//! Deadlines: a call that outlives the client's deadline, or the server's own request timeout,
//! ends with DEADLINE_EXCEEDED or CANCELLED, and leaves no partial state behind: no ply half
//! taken, the log and the service's answers agreeing, a retry getting the answer a completed
//! call would have got.
//!
//! The server's work is made slow without a sleep: the validator reaches nats-server through a
//! TCP relay of the test's own, which holds what the validator sends while it is paused, so
//! that a SubmitMove waits for its durable write until the relay resumes.

use async_nats::jetstream;
use move_validator::Config;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use test_support::NatsServer;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tonic::Code;
use tonic::transport::Channel;

/// A TCP relay to nats-server that can hold the traffic from its clients.
struct Relay {
    addr: SocketAddr,
    paused: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Relay {
    async fn start(upstream: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (paused, watch) = watch::channel(false);
        let task = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let Ok(outbound) = TcpStream::connect(upstream).await else {
                    return;
                };
                tokio::spawn(relay(inbound, outbound, watch.clone()));
            }
        });
        Relay { addr, paused, task }
    }

    fn url(&self) -> String {
        format!("nats://{}", self.addr)
    }

    /// From now on, what clients send waits in the relay.
    fn pause(&self) {
        self.paused.send_replace(true);
    }

    /// What waited goes on, in order, and so does the rest.
    fn resume(&self) {
        self.paused.send_replace(false);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Copies both ways; client-to-server bytes wait while `paused` is true.
async fn relay(inbound: TcpStream, outbound: TcpStream, mut paused: watch::Receiver<bool>) {
    let (mut from_client, mut to_client) = inbound.into_split();
    let (mut from_server, mut to_server) = outbound.into_split();
    let up = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match from_client.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if paused.wait_for(|p| !p).await.is_err() {
                return;
            }
            if to_server.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    };
    let down = async move {
        let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
    };
    tokio::join!(up, down);
}

/// A validator on loopback whose bus goes through `relay`.
struct Validator {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), move_validator::Error>>,
}

impl Validator {
    async fn start(config: Config) -> Validator {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
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

    fn client(&self) -> MoveValidatorClient<Channel> {
        MoveValidatorClient::new(
            Channel::from_shared(format!("http://{}", self.addr))
                .unwrap()
                .connect_lazy(),
        )
    }

    async fn shutdown(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task
            .await
            .expect("server task")
            .expect("server ran cleanly");
    }
}

fn submit_request(id: &str, ply: u32, usi: &str) -> pb::SubmitMoveRequest {
    pb::SubmitMoveRequest {
        game_id: id.into(),
        ply,
        usi: usi.into(),
        strict: false,
        comment: String::new(),
    }
}

/// The plies of a game's `.move` log entries, read straight from nats-server (not through the
/// relay).
async fn logged_plies(nats: &NatsServer, game_id: &str) -> Vec<u32> {
    use prost::Message as _;
    let client = async_nats::connect(nats.url()).await.unwrap();
    let stream = jetstream::new(client)
        .get_stream(shogi_proto::STREAM)
        .await
        .unwrap();
    let subject = shogi_proto::subject::moves(game_id);
    let mut plies = Vec::new();
    let mut seq = 1;
    while let Ok(msg) = stream
        .raw_message_builder()
        .sequence(seq)
        .next_by_subject(subject.clone())
        .send()
        .await
    {
        seq = msg.sequence + 1;
        plies.push(pb::MoveAccepted::decode(msg.payload).unwrap().ply);
    }
    plies
}

/// Plays ply 1, then makes ply 2's SubmitMove wait on the bus past `timeout` (the client's
/// deadline when `client_deadline`, else the server's request timeout), and checks that it
/// fails in time and leaves no partial state.
async fn interrupted_submit_leaves_no_partial_state(
    game_id: &str,
    server_timeout: Duration,
    client_deadline: Option<Duration>,
) {
    let nats = NatsServer::start();
    let upstream: SocketAddr = nats.url().trim_start_matches("nats://").parse().unwrap();
    let relay = Relay::start(upstream).await;
    let mut config = Config::new(relay.url());
    config.request_timeout = server_timeout;
    let v = Validator::start(config).await;
    let mut c = v.client();
    c.create_game(pb::CreateGameRequest {
        ruleset: Some(pb::Ruleset {
            preset: "online".into(),
            overrides: None,
        }),
        start: None,
        game_id: game_id.into(),
        strict: false,
    })
    .await
    .expect("create game");
    let first = c
        .submit_move(submit_request(game_id, 1, "7g7f"))
        .await
        .expect("ply 1")
        .into_inner();
    assert_eq!(first.outcome, pb::MoveOutcome::Accepted as i32);

    // The bus stalls; the call gives up at its deadline, not later.
    relay.pause();
    let mut request = tonic::Request::new(submit_request(game_id, 2, "3c3d"));
    if let Some(deadline) = client_deadline {
        request.set_timeout(deadline);
    }
    let limit = client_deadline.unwrap_or(server_timeout);
    let started = Instant::now();
    let status = c
        .submit_move(request)
        .await
        .expect_err("the call cannot finish while the bus is held");
    let took = started.elapsed();
    assert!(
        matches!(status.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{status:?}"
    );
    assert!(took >= limit, "gave up after {took:?}, before {limit:?}");
    assert!(
        took < limit + Duration::from_secs(5),
        "gave up after {took:?}, long after {limit:?}"
    );

    // The bus comes back. The held write may now land (it was sent before the call gave up):
    // either way, a retry gets the answer of a completed call, and the log holds each ply once.
    relay.resume();
    let retry = c
        .submit_move(submit_request(game_id, 2, "3c3d"))
        .await
        .expect("the retry succeeds")
        .into_inner();
    assert_eq!(retry.outcome, pb::MoveOutcome::Accepted as i32);
    assert_eq!(retry.ply, 2);
    let again = c
        .submit_move(submit_request(game_id, 2, "3c3d"))
        .await
        .expect("a second retry succeeds")
        .into_inner();
    assert_eq!(retry, again, "every retry gets the same answer");
    assert_eq!(logged_plies(&nats, game_id).await, [1, 2]);

    // Ply 2 is taken, by that move and no other; the game goes on from it.
    let taken = c
        .submit_move(submit_request(game_id, 2, "8c8d"))
        .await
        .unwrap_err();
    assert_eq!(taken.code(), Code::Aborted, "{taken:?}");
    let game = c
        .get_game(pb::GetGameRequest {
            game_id: game_id.into(),
            ..Default::default()
        })
        .await
        .expect("get game")
        .into_inner()
        .game
        .expect("game state");
    assert_eq!(game.ply, 2);
    let third = c
        .submit_move(submit_request(game_id, 3, "2g2f"))
        .await
        .expect("ply 3")
        .into_inner();
    assert_eq!(third.outcome, pb::MoveOutcome::Accepted as i32);
    assert_eq!(logged_plies(&nats, game_id).await, [1, 2, 3]);
    v.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_deadline_shorter_than_the_work_leaves_no_partial_state() {
    interrupted_submit_leaves_no_partial_state(
        "deadline-client",
        Duration::from_secs(30),
        Some(Duration::from_millis(300)),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_request_timeout_is_configurable_and_leaves_no_partial_state() {
    interrupted_submit_leaves_no_partial_state("deadline-server", Duration::from_millis(300), None)
        .await;
}
