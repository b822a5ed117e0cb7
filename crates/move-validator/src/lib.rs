//! The move validator: the `shogi.v1.MoveValidator` gRPC service platforms call.
//!
//! It validates every move with the rules core (`shogi-rules`) and judges it with the
//! adjudication layer (`shogi-adjudication`), answers at once, and stores each accepted move as
//! a durable event on the bus before answering.
//!
//! Invariants:
//! - Game state lives on the bus, not in the process. A game is its `GameCreated` event and its
//!   log, the subject `shogi.game.<id>.move.<partition>`, read through the contract crate's one
//!   replay ([`shogi_proto::log::Replay`]), as every other service reads it.
//! - Every append to a log names the subject's expected last sequence, so two writers (two
//!   instances, or two calls) cannot both take a ply, and nothing is appended after a verdict by
//!   a writer that has read it. A writer that loses reads the log and judges again.
//! - Every append carries a `Nats-Msg-Id` derived from what it records, so a retried call writes
//!   nothing new and gets the answer the first call got.
//! - Nothing is written while the bus is disconnected; a write the bus did not answer is
//!   answered UNAVAILABLE with reason `OUTCOME_UNKNOWN` (it may still be stored: retry the same
//!   request), never as a failure that did not happen.
//! - Errors become gRPC statuses in one place, [`to_status`]; nothing panics on any input.
//!
//! [`run`] connects to NATS and serves; [`serve`] is the whole service over a bus it is given
//! (JetStream, or the embedded bus of `shogi-arbiter serve`): one bootstrap for both, with
//! health, reflection, limits, authentication and TLS as configured.

mod auth;
mod calls;
mod config;
mod console;
mod credentials;
mod error;
mod games;
mod incoming;
mod operator;
mod pages;
mod service;
mod store;
mod time;
mod tls;

pub use auth::{Authorized, RefusalReason, Refusals, Tenants, auth_token_from_env_or};
pub use config::{Announcements, Config, ConfigError};
pub use credentials::{
    Credential, Limit, Quotas, Scope, check_all as check_credentials,
    from_file as credentials_from_file, parse as parse_credentials,
};
pub use error::{ERROR_DOMAIN, Error, PlyConflict, reason, to_status};
pub use games::footprint as cached_game_bytes;
pub use pages::MAX_PAGE_PLIES;
pub use service::moves::{legal_moves, validate_move};
pub use service::{CacheLimits, GAME_LOG, SweepSettings, Validator};
pub use time::TimeSource;
pub use tls::TlsConfig;

use arbiter_runtime::compose::{self, Composition};
use arbiter_runtime::grpc::{self, Health};
use arbiter_runtime::streams::BusConfig;
use shogi_proto::v1::move_validator_server::MoveValidatorServer;
use shogi_proto::v1::operator_server::OperatorServer;
use std::future::Future;
use tokio::net::TcpListener;

/// The name grpc.health.v1 reports the service under.
pub const SERVICE_NAME: &str = "shogi.v1.MoveValidator";

/// Checks `config`, connects to NATS (creating the stream when missing) and [`serve`]s on
/// `listener` until `shutdown` completes, through the one composition
/// ([`arbiter_runtime::compose`]) with this service its only part.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    config.validate()?;
    // Setting the streams up waits for JetStream as long as it takes to answer (a cluster
    // electing its leader, a busy server), logged; calls made meanwhile wait on the listener.
    let bus = BusConfig::Nats {
        options: Box::new(config.nats.clone()),
        stream: config.stream.clone(),
        replicas: config.stream_replicas,
    };
    alone(bus, listener, config, shutdown).await
}

/// Serves MoveValidator and Operator (behind the credentials layer when credentials are
/// configured), health, reflection and, with `config.console`, the browser console and gRPC-Web, on
/// `listener` over `bus`, over TLS when `config.tls` is set, until
/// `shutdown` completes, through the one composition with this service its only part ([`part`]).
/// Health is SERVING while the bus is connected. When `shutdown`
/// completes, health turns NOT_SERVING first, new connections stop, open WatchGame streams end
/// and in-flight calls get `config.grace_period` to finish. `config.nats` is not used.
pub async fn serve(
    listener: TcpListener,
    bus: arbiter_bus::Bus,
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    config.validate()?;
    alone(BusConfig::Open(bus.into()), listener, config, shutdown).await
}

/// The composition of this service alone over `bus`.
async fn alone(
    bus: BusConfig,
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let composition = Composition {
        bus,
        client_name: "move-validator".to_owned(),
        grace_period: config.grace_period,
        parts: vec![part(listener, config)],
        health: None,
    };
    compose::run(composition, shutdown)
        .await
        .map_err(|e| match e {
            compose::Error::Bus(e) => Error::unavailable(e),
            compose::Error::Part { source, .. } => match source.downcast::<Error>() {
                Ok(e) => *e,
                Err(other) => Error::BusUnavailable(other.to_string()),
            },
            other @ compose::Error::Health { .. } => Error::BusUnavailable(other.to_string()),
        })
}

/// This service as a part of the one composition ([`arbiter_runtime::compose`]), on `listener`
/// as [`serve`] describes, with the composition's health (on its own port, beside the calls)
/// and bus. It does its job whenever the bus is connected.
pub fn part(listener: TcpListener, config: Config) -> Box<dyn compose::Part> {
    Box::new(ValidatorPart { listener, config })
}

/// See [`part`].
struct ValidatorPart {
    listener: TcpListener,
    config: Config,
}

impl compose::Part for ValidatorPart {
    fn name(&self) -> &'static str {
        SERVICE_NAME
    }

    fn start(self: Box<Self>, cx: compose::Context) -> Result<compose::Started, compose::BoxError> {
        self.config.validate().map_err(Error::from)?;
        let stopped = cx.stopped();
        let run = async move {
            serve_part(self.listener, cx.bus, self.config, cx.health, stopped)
                .await
                .map_err(compose::BoxError::from)
        };
        Ok(compose::Started {
            ready: Box::new(|| true),
            run: Box::pin(run),
        })
    }
}

/// [`serve`]'s work, with the composition's `health`, until `shutdown`.
async fn serve_part(
    listener: TcpListener,
    bus: arbiter_bus::Bus,
    config: Config,
    health: Health,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut check_stop = stop_rx.clone();
    let stop_rx_flags = stop_rx.clone();
    let lag_stop = stop_rx.clone();
    let sweep_stop = stop_rx.clone();
    let store_stop = stop_rx.clone();
    let validator = Validator::new(
        store::Bus::new(bus.clone()),
        stop_rx,
        config.cache(),
        config.announcements,
        config.max_message_bytes,
    )
    .with_time(config.time.clone());
    // Every announced verdict is checked against the replay before a platform hears of it
    // (`service/check.rs`), by whichever instance its consumer delivers it to.
    let checker = validator.clone();
    let check = tokio::spawn(async move {
        let durable =
            arbiter_runtime::streams::verdict_check(None, arbiter_bus::ConsumerStorage::Auto);
        checker
            .check_announcements(durable, async move {
                let _ = check_stop.wait_for(|s| *s).await;
            })
            .await;
    });
    let check = AbortOnDrop(check);
    // A silent side is flagged at its deadline by the schedule its clock keeps on the bus,
    // judged by whichever instance the consumer delivers the flag to (`service/flag.rs`).
    // A bus without message schedules (nats-server before 2.12) has no flags, and refuses
    // clocked games: no consumer is made or read there.
    let flagger = validator.clone();
    let mut flag_stop = stop_rx_flags;
    let schedules = bus.schedules().is_ok();
    let flags = AbortOnDrop(tokio::spawn(async move {
        if !schedules {
            return;
        }
        let durable =
            arbiter_runtime::streams::clock_flag(None, arbiter_bus::ConsumerStorage::Auto);
        flagger
            .watch_flags(durable, async move {
                let _ = flag_stop.wait_for(|s| *s).await;
            })
            .await;
    }));
    // The live games swept on a timer: an ending no call recorded is recorded, a game nobody
    // plays is ended as abandoned (`service/sweep.rs`).
    let sweeper = validator.clone();
    let sweep_settings = config.sweep;
    let sweep = AbortOnDrop(tokio::spawn(async move {
        sweeper.sweep_live_games(sweep_settings, sweep_stop).await;
    }));
    // The store's use against its limit, for the alert before writes are refused.
    let store_watch = AbortOnDrop(tokio::spawn(store::watch_usage(
        bus.clone(),
        config.stream.clone(),
        config.store_limit_bytes,
        config.store_interval,
        store_stop,
    )));
    // The check's backlog, on the consumers' lag gauge beside the workers'.
    let lag = AbortOnDrop(tokio::spawn(arbiter_runtime::lag::poll(
        bus.clone(),
        service::GAME_LOG.name(),
        vec![
            shogi_proto::consumer::VERDICT_CHECK.to_owned(),
            shogi_proto::consumer::CLOCK_FLAG.to_owned(),
        ],
        config.lag_interval,
        lag_stop,
    )));
    let errors = operator::ErrorLog::default();
    // Who calls, in which scope, within which quotas: one layer around each service of the
    // contract (`auth.rs`).
    let tenants = Tenants::new(&config.all_credentials(), config.refusals.clone());
    let operator_service = tower::Layer::layer(
        &tenants,
        OperatorServer::new(operator::Overview::new(bus.clone(), errors.clone())),
    );
    // Every call's span, trace context and metrics are one layer's, outside the credentials
    // layer so that a refused call is counted too (`calls.rs`).
    let validator_service = tower::Layer::layer(
        &calls::CallTelemetry::new(Some(config.request_timeout)),
        tower::Layer::layer(
            &tenants,
            MoveValidatorServer::new(validator)
                .max_decoding_message_size(config.max_message_bytes)
                .max_encoding_message_size(config.max_message_bytes),
        ),
    );
    let routes = tonic::service::Routes::new(health.service())
        .add_service(grpc::reflection()?)
        .add_service(grpc::reflection_v1alpha()?)
        .add_service(validator_service)
        .add_service(operator_service);
    // The operator's view lists the calls answered with an error.
    let routes = operator::recording_errors(routes, errors);
    // The console's page and gRPC-Web need HTTP/1.1 on this port; without it, only gRPC.
    let routes = if config.console {
        console::with_console(routes, &config.console_hosts)
    } else {
        routes
    };
    let options = grpc::ServeOptions {
        request_timeout: Some(config.request_timeout),
        grace_period: config.grace_period,
        accept_http1: config.console,
    };
    let local = listener.local_addr().ok();
    tracing::info!(addr = ?local, stream = %config.stream, announcements = ?config.announcements, console = config.console, "move-validator serving");
    let stop = move || {
        let _ = stop_tx.send(true);
    };
    // TLS handshakes are run by the service, so that refused ones are counted (`incoming.rs`).
    let served = match &config.tls {
        Some(tls) => {
            let incoming =
                incoming::tls_incoming(listener, tls.acceptor()?, config.refusals.clone());
            grpc::serve(incoming, routes, &health, &options, shutdown, stop).await
        }
        None => {
            let incoming = incoming::plain_incoming(listener);
            grpc::serve(incoming, routes, &health, &options, shutdown, stop).await
        }
    };
    drop((check, flags, sweep, store_watch, lag));
    served.map_err(Error::from)
}

/// Aborts its task when dropped: the check of the verdicts ends with the service (an
/// announcement being checked is not acknowledged, and comes again to another instance), and
/// so does the polling of its lag.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
