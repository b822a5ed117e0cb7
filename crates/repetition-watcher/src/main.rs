//! `repetition-watcher`: the worker flags of `arbiter_worker::cli` under the prefix of its role's
//! environment variables, then a checked configuration, telemetry, connect, consume until
//! SIGTERM or SIGINT.

fn main() -> anyhow::Result<()> {
    arbiter_worker::cli::main(
        arbiter_worker::Role::Watcher,
        "Announces fourfold repetition and perpetual check from the games' move events on NATS.",
    )
}
