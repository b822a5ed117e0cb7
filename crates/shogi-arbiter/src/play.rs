//! `shogi-arbiter play`: a game against a running arbiter over gRPC, move by move.
//!
//! A small client for a first run and for scripts: it creates a game (strict mode, so that a
//! move that ends the game is answered with its verdict), submits each move for its ply, and
//! prints JSON lines of schema `shogi-arbiter.play.v2` (docs/cli-json.md): the game created,
//! each move's answer, and the game's state at the end, each as the contract's message in the
//! protobuf JSON mapping.

use crate::{output, proto_json};
use anyhow::Context;
use serde_json::json;
use shogi_proto::v1::{
    CreateGameRequest, GetGameRequest, MoveOutcome, Ruleset, RulesetOverrides, StartPosition,
    SubmitMoveRequest, move_validator_client::MoveValidatorClient, start_position,
};
use std::process::ExitCode;

/// What `play` was asked.
#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    /// The arbiter's gRPC address.
    #[arg(
        long,
        default_value = "http://127.0.0.1:50051",
        env = "SHOGI_ARBITER_ADDR"
    )]
    addr: String,
    /// Ruleset preset: jsa, amateur, csa, online, floodgate.
    #[arg(long, default_value = "online")]
    rules: String,
    /// The start position as SFEN (default: the even-game start).
    #[arg(long)]
    sfen: Option<String>,
    /// A client-chosen game id (default: the server chooses).
    #[arg(long)]
    game_id: Option<String>,
    /// Each side's main time in seconds, for a game with a clock (up to three decimals; it
    /// needs nats-server 2.12 or later, docs/rules.md section 9). The side to move after the
    /// last move then stays silent, and is flagged at its deadline.
    #[arg(long, value_name = "SECONDS")]
    time_main: Option<f64>,
    /// PEM CA certificates the arbiter's certificate must chain to: TLS towards an arbiter
    /// that serves it (an `https://` --addr needs it; the system's roots are not read).
    #[arg(long, env = "SHOGI_ARBITER_TLS_CA")]
    tls_ca: Option<std::path::PathBuf>,
    /// PEM client certificate chain, for an arbiter that requires client certificates
    /// (mutual TLS); needs --tls-key and --tls-ca.
    #[arg(
        long,
        env = "SHOGI_ARBITER_TLS_CERT",
        requires_all = ["tls_key", "tls_ca"]
    )]
    tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, env = "SHOGI_ARBITER_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// File holding the bearer token, when the arbiter requires one (or the environment
    /// variable SHOGI_ARBITER_TOKEN, never a flag's value, which the process list shows).
    #[arg(long, env = "SHOGI_ARBITER_TOKEN_FILE")]
    token_file: Option<std::path::PathBuf>,
    /// The moves, in USI (`7g7f`, `8h2b+`, `P*5e`).
    #[arg(required = true)]
    moves: Vec<String>,
}

fn request<T>(msg: T, token: Option<&str>) -> anyhow::Result<tonic::Request<T>> {
    let mut req = tonic::Request::new(msg);
    if let Some(t) = token {
        req.metadata_mut()
            .insert("authorization", format!("Bearer {t}").parse()?);
    }
    Ok(req)
}

/// The schema of `play`'s lines.
const SCHEMA: &str = "shogi-arbiter.play.v2";

/// A gRPC status code by its canonical name (`FAILED_PRECONDITION`).
fn status_name(code: tonic::Code) -> String {
    let mut name = String::new();
    for (i, c) in format!("{code:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

/// `--time-main` as the ruleset's override: each side's main time, to the millisecond.
fn main_time(seconds: f64) -> anyhow::Result<RulesetOverrides> {
    anyhow::ensure!(
        seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0 * 365.0,
        "--time-main {seconds}: a time in seconds, above 0 and at most a year"
    );
    Ok(RulesetOverrides {
        time_main: Some(shogi_proto::convert::duration_pb(
            (seconds * 1000.0).round() as u64,
        )),
        ..Default::default()
    })
}

/// Plays the moves; exits 0 when every move was accepted.
pub fn run(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(play(args))
}

async fn play(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let token = match std::env::var("SHOGI_ARBITER_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
    {
        Some(t) => Some(t),
        None => args
            .token_file
            .as_deref()
            .map(|p| {
                std::fs::read_to_string(p)
                    .map(|t| t.trim_end_matches(['\r', '\n']).to_owned())
                    .with_context(|| format!("--token-file {}", p.display()))
            })
            .transpose()?,
    };
    let token = token.as_deref();
    let tls = arbiter_runtime::tls::ClientTls::from_flags(
        args.tls_ca.clone(),
        args.tls_cert.clone(),
        args.tls_key.clone(),
    );
    let endpoint = arbiter_runtime::tls::endpoint(&args.addr, tls.as_ref())?;
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| anyhow::anyhow!(arbiter_runtime::tls::error_chain(&e)))
        .with_context(|| format!("connecting to {}", args.addr))?;
    let mut client = MoveValidatorClient::new(channel);
    let start = args.sfen.map(|s| StartPosition {
        start: Some(start_position::Start::Sfen(s)),
    });
    let created = client
        .create_game(request(
            CreateGameRequest {
                ruleset: Some(Ruleset {
                    preset: args.rules.clone(),
                    overrides: args.time_main.map(main_time).transpose()?,
                }),
                start,
                game_id: args.game_id.unwrap_or_default(),
                strict: true,
            },
            token,
        )?)
        .await
        .context("CreateGame")?
        .into_inner();
    let game = created.game.context("CreateGame answered without a game")?;
    output::line(
        json!({ "schema": SCHEMA, "created": proto_json::message("shogi.v1.GameState", &game) }),
    )?;
    let mut all_accepted = true;
    for (i, usi) in args.moves.iter().enumerate() {
        let ply = i as u32 + 1;
        let answer = client
            .submit_move(request(
                SubmitMoveRequest {
                    game_id: game.game_id.clone(),
                    ply,
                    usi: usi.clone(),
                    strict: false,
                    comment: String::new(),
                },
                token,
            )?)
            .await;
        let mut line = json!({ "schema": SCHEMA, "ply": ply, "usi": usi });
        let answer = match answer {
            Ok(a) => a.into_inner(),
            Err(status) => {
                line["error"] =
                    json!({ "code": status_name(status.code()), "message": status.message() });
                output::line(&line)?;
                all_accepted = false;
                break;
            }
        };
        line["answer"] = proto_json::message("shogi.v1.SubmitMoveResponse", &answer);
        output::line(&line)?;
        let accepted = answer.outcome == MoveOutcome::Accepted as i32;
        all_accepted &= accepted;
        if answer.verdict.is_some() || !accepted {
            break;
        }
    }
    let state = client
        .get_game(request(
            GetGameRequest {
                game_id: game.game_id.clone(),
                ..Default::default()
            },
            token,
        )?)
        .await
        .context("GetGame")?
        .into_inner();
    if let Some(g) = state.game {
        output::line(
            json!({ "schema": SCHEMA, "game": proto_json::message("shogi.v1.GameState", &g) }),
        )?;
    }
    Ok(if all_accepted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
