//! The CSA protocol front end: engines and tournament software written for shogi-server (the
//! server behind floodgate) connect over TCP and play through the arbiter, unchanged.
//!
//! A thin shell over [`csa_protocol`], the pure dialect: bytes become lines in one place
//! ([`lines`]), each connection is a [`csa_protocol::Session`] ([`conn`]), pairing is the
//! [`csa_protocol::Matcher`] in the one shared [`lobby`], and each game is a task ([`game`]) that
//! talks to the arbiter as a platform does, through the gRPC `MoveValidator`: it creates the
//! game at `START` (ruleset preset `floodgate`, the clock from the game name), submits every
//! move, resignation and declaration, and follows `WatchGame`, so that a verdict the arbiter
//! reaches by itself (a silent side flagged by its clock) ends the CSA game too. The end lines
//! come from the verdict ([`ending`]), and each finished game's record is written in
//! shogi-server's layout ([`record`]).
//!
//! Invariants: one bad client never stalls another game (each connection and each game is its
//! own task; lines are bounded; logins time out); passwords are never logged nor kept (only
//! shogi-server's MD5 player id, for the record's `'rating` line).
//!
//! Pairing lives in one process ([`run`]), or, for more instances behind one address, in a
//! lobby they share on NATS ([`run_on_nats`], [`shared`]): the logged-in names and the waiting
//! players in a key-value bucket, and a game whose players are on two instances played in two
//! halves, one an instance (docs/csa.md, "Running more than one").

mod arbiter;
pub mod conn;
mod ending;
pub mod game;
pub mod lines;
pub mod lobby;
mod md5;
mod mover;
pub mod record;
pub mod shared;
mod time;

use arbiter_runtime::compose::{BoxError, Context, Part, Started};
use arbiter_runtime::tls::ClientTls;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

pub use arbiter::Arbiter;

/// How the front end runs; shogi-server's defaults where it has one.
#[derive(Debug, Clone)]
pub struct Config {
    /// The arbiter's gRPC URL (`http://127.0.0.1:50051`).
    pub arbiter: String,
    /// TLS towards the arbiter, which an `https://` URL needs: the CA to trust, and the
    /// front end's certificate for an arbiter that requires client certificates.
    pub tls: Option<ClientTls>,
    /// The bearer token every MoveValidator call carries, if the arbiter wants one.
    pub token: Option<String>,
    /// `Max_Moves`: the move cap in plies (shogi-server's `--max-moves`, 256; 0 for none).
    pub max_moves: u32,
    /// `Least_Time_Per_Move`: 0 (shogi-server's default) or 1 second.
    pub least_time_per_move: u32,
    /// Where each finished game's record is written (`DIR/YYYY/MM/DD/<game id>.csa`).
    pub record_dir: Option<PathBuf>,
    /// The event name that starts every game id (shogi-server's first argument).
    pub event: String,
    /// Connections at once; one more is refused with a line and closed.
    pub max_connections: usize,
    /// How long a connection may take to log in.
    pub login_timeout: Duration,
    /// How long a connection outside a game may stay silent (a player in a game is the
    /// clock's: its silence ends the game on time).
    pub idle_timeout: Duration,
    /// How long a write to a client may block before the connection is dropped.
    pub write_timeout: Duration,
    /// How long a game proposed may wait for both `AGREE`s (shogi-server's 120 s).
    pub agree_timeout: Duration,
    /// What `%%VERSION` answers.
    pub revision: String,
    /// How a checkmate reaches the players.
    pub checkmate: CheckmateLines,
    /// How long a call the arbiter could not take (an instance draining or restarting, none
    /// reachable) is made again before the game is interrupted (`arbiter.rs`).
    pub arbiter_patience: Duration,
    /// The moves of every game on one SubmitMoves stream (the default), or a SubmitMove call a
    /// move (`false`: for an arbiter behind a proxy that passes no bidirectional streams; an
    /// arbiter without SubmitMoves is sent calls either way).
    pub arbiter_stream: bool,
    /// How often the connection to the arbiter is pinged, and how long a ping may go
    /// unanswered before the connection is given up (`arbiter.rs`).
    pub arbiter_keepalive: Duration,
}

/// How a checkmate the arbiter judges reaches the players (`--csa-checkmate`).
///
/// shogi-server never detects a checkmate: the game goes on until the mated engine sends
/// `%TORYO` (or plays, which is an illegal move, or runs out of time). The arbiter judges the
/// mating move, and its verdict on the bus and in the record is the checkmate either way; this
/// chooses only the CSA lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckmateLines {
    /// The game ends at the mating move, with the lines of the mated side's resignation
    /// (`%TORYO`, `#RESIGN`), sent at once; a `%TORYO` the mated side sends afterwards is
    /// dropped.
    #[default]
    Arbiter,
    /// shogi-server's lines and timing: after the mating move's echo the mated side's turn goes
    /// on, and its next line ends the game as shogi-server ends it: `%TORYO` (or a disconnect)
    /// with `#RESIGN`, a move or any other `%` line with `#ILLEGAL_MOVE`, `%KACHI` with its echo
    /// and `#ILLEGAL_MOVE`, a line after its time, or its silence to the end of its time, with
    /// `#TIME_UP`.
    ShogiServer,
}

impl Config {
    /// The defaults, for the arbiter at `arbiter`.
    pub fn new(arbiter: &str) -> Config {
        Config {
            arbiter: arbiter.to_owned(),
            tls: None,
            token: None,
            max_moves: 256,
            least_time_per_move: 0,
            record_dir: None,
            event: "arbiter".to_owned(),
            max_connections: 4096,
            login_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(3600),
            write_timeout: Duration::from_secs(30),
            agree_timeout: Duration::from_secs(120),
            revision: env!("CARGO_PKG_VERSION").to_owned(),
            checkmate: CheckmateLines::Arbiter,
            arbiter_patience: Duration::from_secs(30),
            arbiter_stream: true,
            arbiter_keepalive: Duration::from_secs(10),
        }
    }

    /// Checks the settings, before anything is bound.
    pub fn validate(&self) -> Result<(), Error> {
        if self.least_time_per_move > 1 {
            return Err(Error::Config(format!(
                "least time per move is 0 or 1 second, not {}",
                self.least_time_per_move
            )));
        }
        if self.max_moves > 10_000 {
            return Err(Error::Config(format!(
                "max moves is 0 (none) to 10000, not {}",
                self.max_moves
            )));
        }
        if self.max_connections == 0 {
            return Err(Error::Config("max connections must be positive".into()));
        }
        csa_protocol::check_identifier(&self.event)
            .map_err(|e| Error::Config(format!("event {:?}: {e}", self.event)))?;
        // The URL, and the TLS files read and checked.
        arbiter_runtime::tls::endpoint(&self.arbiter, self.tls.as_ref())?;
        Ok(())
    }
}

/// What stops the front end.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting out of range.
    #[error("configuration: {0}")]
    Config(String),
    /// The arbiter's URL is not one, or its TLS settings do not hold.
    #[error(transparent)]
    Arbiter(#[from] arbiter_runtime::tls::ChannelError),
    /// The shared lobby's bucket could not be bound.
    #[error("the shared lobby: {0}")]
    Lobby(String),
    /// The listener failed.
    #[error("listener: {0}")]
    Io(#[from] std::io::Error),
}

/// Checks `config` and makes the arbiter's client it names.
fn checked(config: &Config) -> Result<Arbiter, Error> {
    config.validate()?;
    Arbiter::connect(config)
}

/// Serves CSA on `listener` until `shutdown` completes; games in play are left to end on the
/// arbiter's side (their clocks run there).
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let arbiter = checked(&config)?;
    let lobby = lobby::Lobby::new(Arc::new(config), arbiter);
    tracing::info!(addr = ?listener.local_addr().ok(), "CSA front end listening");
    lobby::accept(listener, lobby, shutdown).await
}

/// Serves CSA on `listener` as one of several instances sharing the lobby on NATS, through
/// the JetStream API `js` (`async_nats::jetstream::new`, or `with_prefix` for the arbiter's API
/// imported into the front end's account), until `shutdown` completes.
pub async fn run_on_nats(
    listener: TcpListener,
    config: Config,
    js: async_nats::jetstream::Context,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let arbiter = checked(&config)?;
    let lobby = lobby::Lobby::on_nats(Arc::new(config), arbiter, js)
        .await
        .map_err(|e| Error::Lobby(e.to_string()))?;
    tracing::info!(addr = ?listener.local_addr().ok(), "CSA front end listening");
    lobby::accept(listener, lobby, shutdown).await
}

/// The front end as a part of the one composition (`arbiter_runtime::compose`), for
/// `shogi-arbiter serve --csa-listen`.
pub fn part(listener: TcpListener, config: Config) -> Box<dyn Part> {
    Box::new(CsaPart {
        listener,
        config,
        nats: None,
    })
}

/// The front end as a part of the one composition, its lobby shared on NATS through the
/// JetStream API `js` (`csa-server --nats-url`).
pub fn part_on_nats(
    listener: TcpListener,
    config: Config,
    js: async_nats::jetstream::Context,
) -> Box<dyn Part> {
    Box::new(CsaPart {
        listener,
        config,
        nats: Some(js),
    })
}

struct CsaPart {
    listener: TcpListener,
    config: Config,
    nats: Option<async_nats::jetstream::Context>,
}

impl Part for CsaPart {
    fn name(&self) -> &'static str {
        "csa-server"
    }

    fn start(self: Box<Self>, cx: Context) -> Result<Started, BoxError> {
        self.config.validate()?;
        let CsaPart {
            listener,
            config,
            nats,
        } = *self;
        Ok(Started {
            ready: Box::new(|| true),
            run: Box::pin(async move {
                match nats {
                    Some(js) => run_on_nats(listener, config, js, cx.stopped()).await,
                    None => run(listener, config, cx.stopped()).await,
                }
                .map_err(|e| Box::new(e) as BoxError)
            }),
        })
    }
}

/// The front end's flags, with shogi-server's defaults: the same in `csa-server` and in
/// `shogi-arbiter serve --csa-listen`.
#[derive(clap::Args, Debug, Clone)]
pub struct CsaArgs {
    /// The move cap in plies, `Max_Moves` in every game summary (shogi-server's
    /// `--max-moves`); 0 for none.
    #[arg(long = "csa-max-moves", env = "CSA_MAX_MOVES", default_value_t = 256)]
    pub max_moves: u32,
    /// `Least_Time_Per_Move`: 0 (the CSA's rule since November 2014) or 1 second.
    #[arg(
        long = "csa-least-time-per-move",
        env = "CSA_LEAST_TIME_PER_MOVE",
        default_value_t = 0
    )]
    pub least_time_per_move: u32,
    /// Where each finished game's record is written, in shogi-server's layout
    /// (`DIR/YYYY/MM/DD/<game id>.csa`).
    #[arg(long = "csa-record-dir", env = "CSA_RECORD_DIR")]
    pub record_dir: Option<PathBuf>,
    /// The event name every game id starts with.
    #[arg(long = "csa-event", env = "CSA_EVENT", default_value = "arbiter")]
    pub event: String,
    /// Connections at once.
    #[arg(
        long = "csa-max-connections",
        env = "CSA_MAX_CONNECTIONS",
        default_value_t = 4096
    )]
    pub max_connections: usize,
    /// How a checkmate reaches the players: `arbiter` ends the game at the mating move with the
    /// mated side's resignation lines; `shogi-server` waits, as shogi-server does, for the mated
    /// side's `%TORYO` (or its illegal move, or its time-up).
    #[arg(
        long = "csa-checkmate",
        env = "CSA_CHECKMATE",
        value_enum,
        default_value_t = CheckmateLines::Arbiter
    )]
    pub checkmate: CheckmateLines,
}

impl CsaArgs {
    /// The configuration for the arbiter at `arbiter`.
    pub fn config(&self, arbiter: &str, token: Option<String>) -> Config {
        Config {
            token,
            max_moves: self.max_moves,
            least_time_per_move: self.least_time_per_move,
            record_dir: self.record_dir.clone(),
            event: self.event.clone(),
            max_connections: self.max_connections,
            checkmate: self.checkmate,
            ..Config::new(arbiter)
        }
    }
}
