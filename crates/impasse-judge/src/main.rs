//! `impasse-judge`: the worker flags of `arbiter_worker::cli` under the prefix of its role's
//! environment variables, then a checked configuration, telemetry, connect, consume until
//! SIGTERM or SIGINT.

fn main() -> anyhow::Result<()> {
    arbiter_worker::cli::main(
        arbiter_worker::Role::Judge,
        "Announces move-cap endings and automatic declarations from the games' move events on NATS.",
    )
}
