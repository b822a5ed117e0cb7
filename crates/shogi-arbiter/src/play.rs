//! `shogi-arbiter play`: a game against a running arbiter over gRPC, move by move.
//!
//! A small client for a first run and for scripts: it creates a game (strict mode, so that a
//! move that ends the game is answered with its verdict), submits each move for its ply, and
//! prints one JSON line a move and the verdict when one comes.

use anyhow::Context;
use serde_json::{Value, json};
use shogi_proto::v1::{
    CreateGameRequest, GetGameRequest, IllegalKind, MoveOutcome, ResultCode, Ruleset,
    StartPosition, SubmitMoveRequest, Verdict, move_validator_client::MoveValidatorClient,
    start_position, verdict::Evidence,
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

fn code_name(code: i32) -> String {
    ResultCode::try_from(code)
        .map(|c| {
            c.as_str_name()
                .trim_start_matches("RESULT_CODE_")
                .to_ascii_lowercase()
        })
        .unwrap_or_else(|_| code.to_string())
}

fn color_json(c: i32) -> Value {
    match c {
        1 => Value::from("black"),
        2 => Value::from("white"),
        _ => Value::Null,
    }
}

fn verdict_json(v: &Verdict) -> Value {
    let mut out =
        json!({ "result": code_name(v.code), "winner": color_json(v.winner), "ply": v.ply });
    match &v.evidence {
        Some(Evidence::Repetition(r)) => {
            out["occurrence_plies"] = json!(r.plies);
            out["mutual_check"] = json!(r.mutual_check);
        }
        Some(Evidence::PerpetualCheck(p)) => {
            out["occurrence_plies"] = json!(p.plies);
            out["checker"] = color_json(p.checker);
            out["check_plies"] = json!(p.check_plies);
        }
        Some(other) => out["evidence"] = format!("{other:?}").into(),
        None => {}
    }
    out
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
    let mut client = MoveValidatorClient::connect(args.addr.clone())
        .await
        .with_context(|| format!("connecting to {}", args.addr))?;
    let start = args.sfen.map(|s| StartPosition {
        start: Some(start_position::Start::Sfen(s)),
    });
    let created = client
        .create_game(request(
            CreateGameRequest {
                ruleset: Some(Ruleset {
                    preset: args.rules.clone(),
                    overrides: None,
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
    println!(
        "{}",
        json!({ "game_id": game.game_id, "start_sfen": game.start_sfen, "rules": args.rules })
    );
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
                },
                token,
            )?)
            .await;
        let answer = match answer {
            Ok(a) => a.into_inner(),
            Err(status) => {
                println!(
                    "{}",
                    json!({ "ply": ply, "usi": usi, "error": status.message(), "code": format!("{:?}", status.code()) })
                );
                all_accepted = false;
                break;
            }
        };
        let outcome = MoveOutcome::try_from(answer.outcome)
            .map(|o| {
                o.as_str_name()
                    .trim_start_matches("MOVE_OUTCOME_")
                    .to_ascii_lowercase()
            })
            .unwrap_or_default();
        let mut line = json!({
            "ply": ply,
            "usi": usi,
            "outcome": outcome,
            "gives_check": answer.gives_check,
            "warnings": answer.warnings.len(),
        });
        if answer.outcome != MoveOutcome::Accepted as i32 {
            line["kind"] = IllegalKind::try_from(answer.illegal_kind)
                .map(|k| {
                    k.as_str_name()
                        .trim_start_matches("ILLEGAL_KIND_")
                        .to_ascii_lowercase()
                })
                .unwrap_or_default()
                .into();
        }
        if let Some(v) = &answer.verdict {
            line["verdict"] = verdict_json(v);
        }
        println!("{line}");
        if answer.outcome != MoveOutcome::Accepted as i32 {
            all_accepted = false;
        }
        if answer.verdict.is_some() || answer.outcome != MoveOutcome::Accepted as i32 {
            break;
        }
    }
    let state = client
        .get_game(request(
            GetGameRequest {
                game_id: game.game_id.clone(),
            },
            token,
        )?)
        .await
        .context("GetGame")?
        .into_inner();
    if let Some(g) = state.game {
        let verdict = g.verdict.as_ref().map(verdict_json).unwrap_or(Value::Null);
        println!(
            "{}",
            json!({ "game_id": g.game_id, "ply": g.ply, "sfen": g.sfen, "verdict": verdict })
        );
    }
    Ok(if all_accepted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
