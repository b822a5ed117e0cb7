//! What the front end's tests share: the whole arbiter (the stack on its embedded bus) behind
//! gRPC, the front end over TCP in front of it, and a CSA client as an engine meets it.

// Each test binary uses the part it needs.
#![allow(dead_code)]

use arbiter_bus::{Bus, MemoryBus};
use std::sync::Arc;
use test_support::Deadline;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// How long a line from the front end may take.
pub const LINE_DEADLINE: Deadline = Deadline::secs(20);

/// The logins of two x1 players, `black` and `white`.
pub const X1_LOGINS: [&str; 2] = ["LOGIN black pw x1\n", "LOGIN white pw x1\n"];

/// The front end, listening, and the arbiter behind it; both stop when it is dropped.
pub struct Front {
    /// The front end's address.
    pub csa: String,
    /// The arbiter's gRPC URL.
    pub grpc: String,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// The arbiter on an embedded bus, and the front end in front of it with its config as `tune`
/// leaves it.
pub async fn start(tune: impl FnOnce(&mut csa_server::Config)) -> Front {
    start_with(arbiter_stack::StackConfig::default(), tune).await
}

/// The same with the arbiter's settings `arbiter`; its URL is `https://` when its validator
/// serves TLS.
pub async fn start_with(
    arbiter: arbiter_stack::StackConfig,
    tune: impl FnOnce(&mut csa_server::Config),
) -> Front {
    let scheme = if arbiter.validator.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let stack = arbiter_with(arbiter).await;
    let grpc = format!("{scheme}://{}", stack.addr());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind CSA");
    let csa = listener.local_addr().expect("an address").to_string();
    let mut config = csa_server::Config::new(&grpc);
    tune(&mut config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        csa_server::run(listener, config, async {
            let _ = stopped.await;
        })
        .await
        .expect("the front end");
        stack.shutdown().await;
    });
    Front {
        csa,
        grpc,
        _stop: stop,
    }
}

/// The whole arbiter on the embedded bus, serving gRPC on a loopback port: its URL and the
/// stack (shut it down at the end).
pub async fn arbiter() -> (String, arbiter_stack::Stack) {
    let stack = arbiter_with(arbiter_stack::StackConfig::default()).await;
    (format!("http://{}", stack.addr()), stack)
}

/// The arbiter with the settings `config`, on the embedded bus.
async fn arbiter_with(config: arbiter_stack::StackConfig) -> arbiter_stack::Stack {
    let bus: Bus = Arc::new(MemoryBus::default());
    let grpc = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind gRPC");
    arbiter_stack::Stack::start(grpc, bus, config)
        .await
        .expect("start the arbiter")
}

/// A CSA client over TCP.
pub struct Client {
    r: BufReader<OwnedReadHalf>,
    w: OwnedWriteHalf,
}

impl Client {
    /// Connects to the front end at `addr`.
    pub async fn connect(addr: &str) -> Client {
        let (r, w) = TcpStream::connect(addr)
            .await
            .expect("connect")
            .into_split();
        Client {
            r: BufReader::new(r),
            w,
        }
    }

    /// Connects to `addr` and logs in as the x1 player `name`.
    pub async fn login(addr: &str, name: &str) -> Client {
        let mut c = Client::connect(addr).await;
        c.send(format!("LOGIN {name} pw x1\n").as_bytes()).await;
        c.until(|l| l == "##[LOGIN] +OK x1").await;
        c
    }

    /// Sends `bytes` as they are.
    pub async fn send(&mut self, bytes: &[u8]) {
        self.w.write_all(bytes).await.expect("write");
    }

    /// The next line without its `\n`; `None` when the front end closed the connection.
    pub async fn line(&mut self) -> Option<String> {
        let mut l = String::new();
        let n = tokio::time::timeout(LINE_DEADLINE.get(), self.r.read_line(&mut l))
            .await
            .expect("a line within the deadline")
            .expect("read");
        (n > 0).then(|| l.trim_end_matches('\n').to_owned())
    }

    /// The lines up to the first one `last` accepts, that one included.
    pub async fn until(&mut self, last: impl Fn(&str) -> bool) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let l = self.line().await;
            let Some(l) = l else {
                panic!("closed after {seen:?}");
            };
            let done = last(&l);
            seen.push(l);
            if done {
                return seen;
            }
        }
    }
}

/// Black opens with 7g7f, and both players hear it.
pub async fn black_opens(b: &mut Client, w: &mut Client) {
    b.send(b"+7776FU\n").await;
    b.until(|l| l.starts_with('+')).await;
    w.until(|l| l.starts_with('+')).await;
}

/// After Black's opening, White plays `%CHUDAN`: shogi-server's lines for an illegal move,
/// White's loss and Black's win.
pub async fn white_plays_chudan(b: &mut Client, w: &mut Client) {
    black_opens(b, w).await;
    w.send(b"%CHUDAN\n").await;
    assert_eq!(
        w.until(|l| l.starts_with("#LOSE")).await,
        ["#ILLEGAL_MOVE", "#LOSE"]
    );
    assert_eq!(
        b.until(|l| l.starts_with("#WIN")).await,
        ["#ILLEGAL_MOVE", "#WIN"]
    );
}

/// Two players logged in with `logins` (each a whole `LOGIN` line), in game `game`, started.
pub async fn started(front: &Front, logins: [&str; 2], game: &str) -> (Client, Client) {
    let mut b = Client::connect(&front.csa).await;
    let mut w = Client::connect(&front.csa).await;
    b.send(logins[0].as_bytes()).await;
    w.send(logins[1].as_bytes()).await;
    b.until(|l| l.starts_with("LOGIN:") || l.starts_with("##[LOGIN] +OK"))
        .await;
    w.until(|l| l.starts_with("LOGIN:") || l.starts_with("##[LOGIN] +OK"))
        .await;
    agree(b, w, game).await
}

/// Two x1 players logged in at `addrs` (Black's, White's), in game `game`, started.
pub async fn started_on(addrs: [&str; 2], game: &str) -> (Client, Client) {
    let b = Client::login(addrs[0], "black").await;
    let w = Client::login(addrs[1], "white").await;
    agree(b, w, game).await
}

/// Black and White, logged in, seek game `game` and agree to it.
async fn agree(mut b: Client, mut w: Client, game: &str) -> (Client, Client) {
    b.send(format!("%%GAME {game} +\n").as_bytes()).await;
    w.send(format!("%%GAME {game} -\n").as_bytes()).await;
    b.until(|l| l == "END Game_Summary").await;
    w.until(|l| l == "END Game_Summary").await;
    b.send(b"AGREE\n").await;
    w.send(b"AGREE\n").await;
    b.until(|l| l.starts_with("START:")).await;
    w.until(|l| l.starts_with("START:")).await;
    (b, w)
}

/// The one game on the arbiter at `addr` (its gRPC address), whole.
pub async fn the_game(addr: impl std::fmt::Display) -> shogi_proto::v1::GameState {
    use shogi_proto::v1 as pb;
    let url = format!("http://{addr}");
    let mut client = pb::move_validator_client::MoveValidatorClient::connect(url)
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
