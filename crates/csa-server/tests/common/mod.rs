//! What the front end's tests share: an arbiter on its embedded bus behind gRPC, a front end in
//! front of it, and a CSA client over TCP as an engine meets the front end.

// Each test file uses its own part of it.
#![allow(dead_code)]

use arbiter_bus::{Bus, MemoryBus};
use std::sync::Arc;
use test_support::Deadline;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// How long a client waits for one line.
pub const LINE_DEADLINE: Deadline = Deadline::secs(20);

/// The whole arbiter on the embedded bus, serving gRPC on a loopback port: its URL and the
/// stack (shut it down at the end).
pub async fn arbiter() -> (String, arbiter_stack::Stack) {
    let bus: Bus = Arc::new(MemoryBus::default());
    let grpc = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind gRPC");
    let stack = arbiter_stack::Stack::start(grpc, bus, arbiter_stack::StackConfig::default())
        .await
        .expect("start the arbiter");
    (format!("http://{}", stack.addr()), stack)
}

/// A front end with its own arbiter; both stop when it is dropped.
pub struct Front {
    /// The CSA address.
    pub csa: String,
    /// The arbiter's gRPC URL.
    pub grpc: String,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// A front end (its lobby in the process) in front of an arbiter of its own.
pub async fn start(tune: impl FnOnce(&mut csa_server::Config)) -> Front {
    let (grpc, stack) = arbiter().await;
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

/// A CSA client.
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

    /// The next line, `None` when the connection closed.
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

/// Two x1 players logged in at `addrs` (Black's, White's) in game `game`, started.
pub async fn started_on(addrs: [&str; 2], game: &str) -> (Client, Client) {
    let mut b = Client::login(addrs[0], "black").await;
    let mut w = Client::login(addrs[1], "white").await;
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

/// Two x1 players in game `game` on `front`, started.
pub async fn started(front: &Front, game: &str) -> (Client, Client) {
    started_on([&front.csa, &front.csa], game).await
}
