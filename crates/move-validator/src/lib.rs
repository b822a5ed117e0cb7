//! The move validator: the `shogi.v1.MoveValidator` gRPC service platforms call.
//!
//! It validates every move with the rules core (`shogi-rules`) and judges it with the
//! adjudication layer (`shogi-adjudication`), answers at once, and stores each accepted move as
//! a durable event on NATS JetStream before answering.
//!
//! Invariants:
//! - Game state lives on the bus, not in the process. A game is its `GameCreated` event and its
//!   log, the subject `shogi.game.<id>.move`: every accepted move, and the verdict of an ending
//!   that does not follow from the moves (a platform report, a declaration, a forfeit). Any
//!   instance rebuilds any game by replaying the log through the adjudication layer.
//! - Every append to a log names the subject's expected last sequence, so two writers (two
//!   instances, or two calls) cannot both take a ply, and nothing is appended after a verdict by
//!   a writer that has read it. A writer that loses reads the log and judges again.
//! - Every append carries a `Nats-Msg-Id` derived from what it records, so a retried call writes
//!   nothing new and gets the answer the first call got.
//! - The other subjects (`.created` aside) are notices of what the log already holds.
//! - Errors become gRPC statuses in one place, [`to_status`]; nothing panics on any input.
//!
//! [`run`] is the whole service on a bound listener, until a shutdown future completes; `main`
//! is a thin shell around it (flags, telemetry, bind, run). TLS and mutual TLS are by
//! configuration ([`TlsConfig`]).

mod auth;
mod config;
mod convert;
mod error;
mod games;
mod incoming;
mod service;
mod store;
mod tls;

pub use auth::{BearerAuth, RefusalReason, Refusals};
pub use config::{Config, ConfigError};
pub use error::{ERROR_DOMAIN, Error, PlyConflict, to_status};
pub use service::{
    ServeOptions, owned_by_pipeline, result_code_from_pb, ruleset_from_pb, serve, verdict_pb,
    warning_pb,
};
pub use service::{Validator, validate_move};
pub use tls::TlsConfig;

use shogi_proto::v1::move_validator_server::MoveValidatorServer;
use std::future::Future;
use tokio::net::TcpListener;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Server;

/// Runs the service on `listener` until `shutdown` completes, then drains.
///
/// In order: checks `config`, connects to NATS and makes sure the stream exists, reports
/// SERVING on grpc.health.v1, serves MoveValidator (behind the bearer-token interceptor when a
/// token is configured), health and reflection, over TLS when `config.tls` is set. When
/// `shutdown` completes, health turns NOT_SERVING first, new connections stop, and in-flight
/// calls get `config.grace_period` to finish; open WatchGame streams end at once.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    config.validate()?;
    let bus = store::Bus::connect(&config.nats, &config.stream, config.stream_replicas).await?;

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let validator = Validator::new(bus, stop_rx, config.max_cached_games);
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<MoveValidatorServer<Validator>>().await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(shogi_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let validator_service = InterceptedService::new(
        MoveValidatorServer::new(validator)
            .max_decoding_message_size(config.max_message_bytes)
            .max_encoding_message_size(config.max_message_bytes),
        BearerAuth::new(config.auth_token.as_deref()).counting(config.refusals.clone()),
    );

    let local = listener.local_addr().ok();
    tracing::info!(addr = ?local, stream = %config.stream, "move-validator serving");
    let (drain_tx, drain_rx) = tokio::sync::oneshot::channel::<()>();
    let router = Server::builder()
        .timeout(config.request_timeout)
        .add_service(health_service)
        .add_service(reflection)
        .add_service(validator_service);
    let drained = async {
        let _ = drain_rx.await;
    };
    // TLS handshakes are run by the service, so that refused ones are counted (`incoming.rs`).
    let server: std::pin::Pin<
        Box<dyn Future<Output = Result<(), tonic::transport::Error>> + Send>,
    > = match &config.tls {
        Some(tls) => Box::pin(router.serve_with_incoming_shutdown(
            incoming::tls_incoming(listener, tls.acceptor()?, config.refusals.clone()),
            drained,
        )),
        None => Box::pin(router.serve_with_incoming_shutdown(
            tokio_stream::wrappers::TcpListenerStream::new(listener),
            drained,
        )),
    };
    tokio::pin!(server);
    tokio::select! {
        result = &mut server => return result.map_err(Error::from),
        () = shutdown => {}
    }
    tracing::info!(grace = ?config.grace_period, "shutting down: NOT_SERVING, draining");
    health
        .set_not_serving::<MoveValidatorServer<Validator>>()
        .await;
    health
        .set_service_status("", tonic_health::ServingStatus::NotServing)
        .await;
    let _ = stop_tx.send(true);
    let _ = drain_tx.send(());
    match tokio::time::timeout(config.grace_period, server).await {
        Ok(result) => result.map_err(Error::from),
        Err(_) => {
            tracing::warn!("grace period over with calls still in flight; stopping");
            Ok(())
        }
    }
}
