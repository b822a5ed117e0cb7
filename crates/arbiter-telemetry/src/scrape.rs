//! The Prometheus endpoint: the instruments of [`crate::metrics()`] in the Prometheus text
//! format on `GET /metrics`, for a Prometheus server (or any scraper) to pull.
//!
//! The reader is the OpenTelemetry project's Prometheus exporter, so the names are the
//! standard translation of the OpenTelemetry ones: dots become underscores, the unit is a
//! suffix (`s` -> `_seconds`; annotations such as `{move}` are dropped), counters end in
//! `_total`; attributes become labels the same way (`rpc.method` -> `rpc_method`), and the
//! resource is `target_info`.
//!
//! The server is HTTP/1.1 on hyper, one task a connection; a request's head must arrive within
//! [`HEADER_TIMEOUT`], so an idle or slow client holds a connection, never the endpoint.

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::time::Duration;

/// How long a client may take to send a request's head.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// The exposition format's content type (text format 0.0.4).
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Serves `registry` on `listener` until the task is aborted.
pub(crate) async fn serve(listener: tokio::net::TcpListener, registry: prometheus::Registry) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: wait a little rather than spin.
                tracing::warn!(error = %e, "metrics endpoint: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let registry = registry.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let registry = registry.clone();
                async move { Ok::<_, Infallible>(answer(&req, &registry)) }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                tracing::debug!(error = %e, "metrics endpoint: connection ended");
            }
        });
    }
}

/// The answer to one request: the metrics on `GET` or `HEAD /metrics`, 404 elsewhere, 405 for
/// another method.
fn answer<B>(req: &Request<B>, registry: &prometheus::Registry) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, body: Bytes| {
        let mut r = Response::new(Full::new(body));
        *r.status_mut() = status;
        r
    };
    if req.uri().path() != "/metrics" {
        return reply(
            StatusCode::NOT_FOUND,
            Bytes::from_static(b"not found: try /metrics\n"),
        );
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = reply(
            StatusCode::METHOD_NOT_ALLOWED,
            Bytes::from_static(b"GET only\n"),
        );
        r.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("GET, HEAD"),
        );
        return r;
    }
    match render(registry) {
        Ok(text) => {
            let mut r = reply(StatusCode::OK, Bytes::from(text));
            r.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static(CONTENT_TYPE),
            );
            r
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics endpoint: encoding failed");
            reply(
                StatusCode::INTERNAL_SERVER_ERROR,
                Bytes::from(format!("encoding failed: {e}\n")),
            )
        }
    }
}

/// The registry's metrics in the text format.
fn render(registry: &prometheus::Registry) -> Result<String, prometheus::Error> {
    use prometheus::Encoder as _;
    let mut out = Vec::new();
    prometheus::TextEncoder::new().encode(&registry.gather(), &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}
