//! The one gRPC bootstrap: health (grpc.health.v1) and, where asked, reflection (v1 and
//! v1alpha) beside the service's own routes, a per-call time limit, and a drain bounded by a
//! grace period.
//! The validator serves its API through it, the workers their health endpoint.
//!
//! Health tells the truth: a service is SERVING only while it can do its job; the caller
//! sets it through [`Health`] (the validator follows its bus connection, a worker its
//! consumers), and on shutdown everything turns NOT_SERVING before the drain.

use std::future::Future;
use std::time::Duration;
use tokio_stream::Stream;
use tonic::service::Routes;
use tonic::transport::server::Connected;

pub use tonic_health::ServingStatus;

/// The health of a process's gRPC services: the named ones and the server as a whole (`""`).
#[derive(Debug, Clone)]
pub struct Health {
    reporter: tonic_health::server::HealthReporter,
    names: Vec<&'static str>,
}

impl Health {
    /// Health for the services `names`, NOT_SERVING until told otherwise; [`Health::service`]
    /// serves it.
    pub async fn new(names: &[&'static str]) -> Health {
        let (reporter, _) = tonic_health::server::health_reporter();
        let health = Health {
            reporter,
            names: names.to_vec(),
        };
        health.set(false).await;
        health
    }

    /// The grpc.health.v1 service that answers with this health, for [`serve`]'s routes (each
    /// call a service over the same statuses).
    pub fn service(
        &self,
    ) -> tonic_health::pb::health_server::HealthServer<tonic_health::server::HealthService> {
        tonic_health::pb::health_server::HealthServer::new(
            tonic_health::server::HealthService::from_health_reporter(self.reporter.clone()),
        )
    }

    /// What a health check of service `name` answers now (`None`: the service is unknown).
    pub async fn status(&self, name: &str) -> Option<ServingStatus> {
        use tonic_health::pb::health_server::Health as _;
        let service =
            tonic_health::server::HealthService::from_health_reporter(self.reporter.clone());
        let request = tonic::Request::new(tonic_health::pb::HealthCheckRequest {
            service: name.to_owned(),
        });
        let answer = service.check(request).await.ok()?.into_inner();
        Some(match answer.status() {
            tonic_health::pb::health_check_response::ServingStatus::Serving => {
                ServingStatus::Serving
            }
            tonic_health::pb::health_check_response::ServingStatus::ServiceUnknown => {
                ServingStatus::Unknown
            }
            _ => ServingStatus::NotServing,
        })
    }

    /// The names of the services this health reports on (besides the server's, `""`).
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// Every named service and the server: SERVING when `serving`, NOT_SERVING otherwise; each
    /// named service's status is also recorded on the `arbiter.health.serving` gauge, so that
    /// a scrape sees what a health check would answer.
    pub async fn set(&self, serving: bool) {
        let status = if serving {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        };
        for name in self.names.iter().copied().chain([""]) {
            self.reporter.set_service_status(name, status).await;
        }
        for name in self.names.iter().copied() {
            arbiter_telemetry::metrics::record_serving(name, serving);
        }
    }
}

/// The reflection service (v1) for the `shogi.v1` contracts and grpc.health.v1.
pub fn reflection() -> Result<
    tonic_reflection::server::v1::ServerReflectionServer<
        impl tonic_reflection::server::v1::ServerReflection,
    >,
    tonic_reflection::server::Error,
> {
    // The other version's service is registered too, so that a listing through either names
    // both.
    reflected()
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET)
        .build_v1()
}

/// The same reflection as [`reflection`], as the older `grpc.reflection.v1alpha` service, which
/// is all that older grpcurl releases, GUI clients and grpcio-reflection's client speak.
pub fn reflection_v1alpha() -> Result<
    tonic_reflection::server::v1alpha::ServerReflectionServer<
        impl tonic_reflection::server::v1alpha::ServerReflection,
    >,
    tonic_reflection::server::Error,
> {
    reflected()
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
}

/// What reflection describes, in either version: the `shogi.v1` files and grpc.health.v1.
fn reflected() -> tonic_reflection::server::Builder<'static> {
    tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(shogi_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
}

/// How [`serve`] serves.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The longest a call may run, whatever deadline the client asks for.
    pub request_timeout: Option<Duration>,
    /// How long in-flight calls get to finish once `shutdown` completes.
    pub grace_period: Duration,
    /// Whether HTTP/1.1 is accepted beside HTTP/2: for gRPC-Web and a page served from the
    /// routes (the validator's console). gRPC itself needs HTTP/2 only.
    pub accept_http1: bool,
}

/// Serves `routes` on the connections of `incoming` until `shutdown` completes; then `health`
/// turns NOT_SERVING, `on_shutdown` runs (to end long-lived streams), new connections stop and
/// in-flight calls get the grace period to finish.
pub async fn serve<I, IO, IE>(
    incoming: I,
    routes: Routes,
    health: &Health,
    options: &ServeOptions,
    shutdown: impl Future<Output = ()> + Send,
    on_shutdown: impl FnOnce(),
) -> Result<(), tonic::transport::Error>
where
    I: Stream<Item = Result<IO, IE>> + Send + 'static,
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Connected + Unpin + Send + 'static,
    IE: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    let mut builder = tonic::transport::Server::builder().accept_http1(options.accept_http1);
    if let Some(timeout) = options.request_timeout {
        builder = builder.timeout(timeout);
    }
    let (drain_tx, drain_rx) = tokio::sync::oneshot::channel::<()>();
    let server = builder
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, async {
            let _ = drain_rx.await;
        });
    tokio::pin!(server);
    tokio::select! {
        result = &mut server => return result,
        () = shutdown => {}
    }
    tracing::info!(grace = ?options.grace_period, "shutting down: NOT_SERVING, draining");
    health.set(false).await;
    on_shutdown();
    let _ = drain_tx.send(());
    match tokio::time::timeout(options.grace_period, server).await {
        Ok(result) => result,
        Err(_) => {
            tracing::warn!("grace period over with calls still in flight; stopping");
            Ok(())
        }
    }
}
