//! What every `shogi.v1.MoveValidator` call gets, in one tower layer around the service
//! ([`CallTelemetry`]), so that no method handler does it by hand: its server span, continuing
//! the caller's W3C trace context from the request's headers; its gRPC status on the span; and
//! its handling time by method and status code in the RPC metrics, recorded exactly once.
//!
//! The handlers run inside the call's span (the inner service's future is polled in it) and
//! record what only the request body names, `game_id` and `ply`, on
//! [`tracing::Span::current`].
//!
//! When a call ends is read from the HTTP response, as the client reads it:
//! - a status in the response's headers (tonic answers an error before any message that way,
//!   trailers-only): the call ends with its head;
//! - otherwise the status is in the trailers at the end of the body, so the call ends when they
//!   are read: for a unary call just after its answer, for WatchGame when the stream ends;
//! - a body that ends without trailers ends the call with UNKNOWN, as a client reads a gRPC
//!   answer without a status;
//! - a call dropped before its end (the response's future, or its body before its trailers)
//!   ends with DEADLINE_EXCEEDED when a deadline that bound it had passed (the client's
//!   `grpc-timeout` for the whole call, the server's time limit until the head), and with
//!   CANCELLED otherwise: the client reset the stream or went away, or the server stopped
//!   within its grace period. It is never UNKNOWN: nothing failed in the server, the call was
//!   given up, which is what gRPC calls CANCELLED.
//!
//! Only the service's own methods are counted, under the names the contract gives them: a
//! method the service does not have (UNIMPLEMENTED) is passed through untouched, as any name a
//! client sends would otherwise become a metric label. Health and reflection, served beside it,
//! are not behind this layer at all: probes every few seconds would drown the calls that play.

use crate::credentials::Scope;
use arbiter_telemetry::{metrics, propagation};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tonic::Code;
use tonic::body::Body;
use tonic::server::NamedService;

/// Where a call's code and handling time go: the RPC metrics, or a test's list.
type Sink = Arc<dyn Fn(&'static str, Code, f64) + Send + Sync>;

/// Declares the methods of `shogi.v1.MoveValidator`, each with the name of its span and the
/// scope a credential needs to call it.
macro_rules! methods {
    ($($method:literal => $span:literal, $scope:ident);* $(;)?) => {
        /// The service's methods, as the contract names them.
        #[cfg(test)]
        const METHODS: &[&str] = &[$($method),*];

        /// Every method this server serves from the contract, by its path, with the scope it
        /// needs: the MoveValidator's and the Operator's.
        const CONTRACT: &[(&str, Scope)] = &[
            $((concat!("/shogi.v1.MoveValidator/", $method), Scope::$scope),)*
            ("/shogi.v1.Operator/GetOverview", Scope::Operate),
        ];

        /// The call `method`'s span, a server span in OpenTelemetry's terms, with the game's
        /// id and ply left for the handler to record, so that every line logged while serving
        /// the call names the game; `None` for a method the service does not have.
        fn span_of(method: &str) -> Option<(&'static str, tracing::Span)> {
            match method {
                $($method => Some(($method, tracing::info_span!(
                    $span,
                    otel.name = concat!("shogi.v1.MoveValidator/", $method),
                    otel.kind = "server",
                    otel.status_code = tracing::field::Empty,
                    rpc.system = "grpc",
                    rpc.method = $method,
                    rpc.response.status_code = tracing::field::Empty,
                    game_id = tracing::field::Empty,
                    ply = tracing::field::Empty,
                ))),)*
                _ => None,
            }
        }
    };
}

methods! {
    "CreateGame" => "create_game", Play;
    "SubmitMove" => "submit_move", Play;
    "SubmitMoves" => "submit_moves", Play;
    "ValidateMove" => "validate_move", Read;
    "Declare" => "declare", Play;
    "EvaluateImpasse" => "evaluate_impasse", Read;
    "GetGame" => "get_game", Read;
    "WatchGame" => "watch_game", Read;
    "EndGame" => "end_game", Play;
    "LegalMoves" => "legal_moves", Read;
    "ListGames" => "list_games", Read;
    "AnalyzeGame" => "analyze_game", Read;
}

/// The method at `path` as the contract names it (`/shogi.v1.MoveValidator/SubmitMove`), and
/// the scope it needs; `None` for a path that is no method of the contract, whose text is the
/// client's and is never recorded.
pub(crate) fn contract(path: &str) -> Option<(&'static str, Scope)> {
    CONTRACT.iter().find(|(p, _)| *p == path).copied()
}

/// The method at `path` as the contract names it, or `unknown`.
pub(crate) fn contract_method(path: &str) -> &'static str {
    contract(path).map_or("unknown", |(p, _)| p)
}

/// The layer: a call's span, trace context, status and metrics around the service it wraps.
#[derive(Clone)]
pub(crate) struct CallTelemetry {
    record: Sink,
    /// The server's limit on a call until its answer's head (tonic's `Server::timeout`, which
    /// drops the call's future from outside this layer when it passes).
    timeout: Option<Duration>,
}

impl std::fmt::Debug for CallTelemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallTelemetry")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl CallTelemetry {
    /// Records into the process's RPC metrics; `timeout` is the server's time limit on a call.
    pub(crate) fn new(timeout: Option<Duration>) -> CallTelemetry {
        CallTelemetry {
            record: Arc::new(|method, code, seconds| metrics().record_rpc(method, code, seconds)),
            timeout,
        }
    }
}

impl<S> tower::Layer<S> for CallTelemetry {
    type Service = Traced<S>;

    fn layer(&self, inner: S) -> Traced<S> {
        Traced {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service `S` with its calls traced and measured ([`CallTelemetry`]).
#[derive(Debug, Clone)]
pub(crate) struct Traced<S> {
    inner: S,
    layer: CallTelemetry,
}

impl<S: NamedService> NamedService for Traced<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B> tower::Service<http::Request<Body>> for Traced<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<B>, Error = Infallible>,
    S::Future: Send + 'static,
    B: http_body::Body<Data = bytes::Bytes> + Unpin + Send + 'static,
    B::Error: Into<tonic::codegen::StdError>,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let method = request
            .uri()
            .path()
            .strip_prefix('/')
            .and_then(|p| p.strip_prefix(crate::SERVICE_NAME))
            .and_then(|p| p.strip_prefix('/'));
        let Some((method, span)) = method.and_then(span_of) else {
            let answer = self.inner.call(request);
            return Box::pin(async move { Ok(answer.await?.map(Body::new)) });
        };
        let parent = propagation::from_http_headers(request.headers());
        let started = Instant::now();
        let call = Call {
            method,
            span: span.clone(),
            started,
            client_deadline: grpc_timeout(request.headers()).map(|t| started + t),
            server_deadline: self.layer.timeout.map(|t| started + t),
            answered: false,
            record: Some(self.layer.record.clone()),
        };
        // The parent first: the span's OpenTelemetry span starts when it is first entered.
        propagation::set_parent(&span, &parent);
        // The interceptor (the bearer token) runs here, in `call`: in the span too.
        let answer = span.in_scope(|| self.inner.call(request));
        Box::pin(async move {
            let response = propagation::attached(span, parent, answer).await?;
            Ok(call.answered(response))
        })
    }
}

/// One call until its end: what its code and handling time are recorded with. Recording takes
/// the sink, so a call is recorded once; dropped before that, it was abandoned.
struct Call {
    method: &'static str,
    span: tracing::Span,
    started: Instant,
    client_deadline: Option<Instant>,
    server_deadline: Option<Instant>,
    /// Whether the response's head was given (the server's time limit is over then).
    answered: bool,
    record: Option<Sink>,
}

impl Call {
    /// The call's response: ended now when its status is in the headers, else its body
    /// watched for the trailers.
    fn answered<B>(mut self, response: http::Response<B>) -> http::Response<Body>
    where
        B: http_body::Body<Data = bytes::Bytes> + Unpin + Send + 'static,
        B::Error: Into<tonic::codegen::StdError>,
    {
        self.answered = true;
        if let Some(code) = grpc_status(response.headers()) {
            self.end(code);
            return response.map(Body::new);
        }
        response.map(|inner| Body::new(Watched { inner, call: self }))
    }

    /// Records the call's end with `code`, if not recorded yet.
    fn end(&mut self, code: Code) {
        let Some(record) = self.record.take() else {
            return;
        };
        if code != Code::Ok {
            self.span.record("otel.status_code", "ERROR");
        }
        self.span.record(
            "rpc.response.status_code",
            arbiter_telemetry::metrics::status_name(code),
        );
        record(self.method, code, self.started.elapsed().as_secs_f64());
    }

    /// The code of a call given up before its end.
    fn abandoned(&self) -> Code {
        let now = Instant::now();
        let passed = |deadline: Option<Instant>| deadline.is_some_and(|d| d <= now);
        if passed(self.client_deadline) || (!self.answered && passed(self.server_deadline)) {
            Code::DeadlineExceeded
        } else {
            Code::Cancelled
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if self.record.is_some() {
            let code = self.abandoned();
            self.end(code);
        }
    }
}

/// A response body read for its trailers, polled in the call's span (WatchGame's stream is
/// written as it is read).
struct Watched<B: http_body::Body> {
    inner: B,
    call: Call,
}

impl<B: http_body::Body> Drop for Watched<B> {
    fn drop(&mut self) {
        // A body at its end whose trailers were never read had none; else the call was given
        // up, as the call's own drop records.
        if self.call.record.is_some() && self.inner.is_end_stream() {
            self.call.end(Code::Unknown);
        }
    }
}

impl<B> http_body::Body for Watched<B>
where
    B: http_body::Body<Data = bytes::Bytes> + Unpin,
    B::Error: Into<tonic::codegen::StdError>,
{
    type Data = bytes::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, tonic::Status>>> {
        let this = &mut *self;
        let polled = {
            let _entered = this.call.span.enter();
            Pin::new(&mut this.inner)
                .poll_frame(cx)
                .map_err(|e| tonic::Status::from_error(e.into()))
        };
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(trailers) = frame.trailers_ref() {
                    this.call
                        .end(grpc_status(trailers).unwrap_or(Code::Unknown));
                }
            }
            Poll::Ready(Some(Err(status))) => this.call.end(status.code()),
            Poll::Ready(None) => this.call.end(Code::Unknown),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// The `grpc-status` in `headers`, if any.
fn grpc_status(headers: &http::HeaderMap) -> Option<Code> {
    headers
        .get("grpc-status")
        .map(|v| Code::from_bytes(v.as_bytes()))
}

/// The client's deadline, `grpc-timeout`: up to 8 digits and a unit (gRPC over HTTP/2,
/// "Timeout"); `None` when absent or malformed, as tonic reads it.
fn grpc_timeout(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = value.split_at_checked(value.len().checked_sub(1)?)?;
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

#[cfg(test)]
#[path = "calls_tests.rs"]
mod tests;
