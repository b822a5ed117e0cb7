//! The credentials layer ([`Tenants`]): who calls, whether the method is in the caller's
//! scope, whether the caller is within its quotas (`credentials.rs` says what a credential is);
//! and the count of the clients the service refuses.
//!
//! A call without a known credential, or a refused TLS handshake, is logged (a `warn` with the
//! peer's address and the reason, never the token given) and counted: in [`Refusals`], which
//! the service's owner can read, and on the OpenTelemetry global meter as the counter
//! `arbiter.grpc.refused` with a `reason` attribute. A known credential's call outside its
//! scope or over a quota is logged with the credential's name and counted on
//! `shogi.credential.refused`. The handshakes are refused in `incoming.rs`, the calls here.
//!
//! The quotas' rates are token buckets of one second's worth (at least one token), per
//! instance, and a refusal over one is held until the next token is due ([`Refusal`]); WatchGame and SubmitMoves streams are counted per instance too. Live games are counted from the
//! bus, where every creation event names its credential, so the count holds across instances
//! and restarts (`service/create.rs`).

use crate::credentials::{Credential, Limit};
use crate::error::Error;
use arbiter_telemetry::metrics::metrics;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tonic::Status;
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};

/// Why a client was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalReason {
    /// A call without `authorization` metadata, and without a TLS client certificate that a
    /// credential names.
    MissingToken,
    /// A call whose `authorization` metadata is not `Bearer <token>`.
    Malformed,
    /// A call with a bearer token that is none of the configured ones.
    WrongToken,
    /// A TLS client without a certificate, where mutual TLS requires one.
    NoClientCertificate,
    /// A TLS client whose certificate the client CA did not sign (or that is not valid).
    BadClientCertificate,
    /// Any other failed TLS handshake: a plaintext client, a client that does not trust the
    /// server's certificate, a handshake that took too long.
    TlsHandshake,
}

impl RefusalReason {
    /// Every reason, in the order of [`RefusalReason::index`].
    pub const ALL: [RefusalReason; 6] = [
        RefusalReason::MissingToken,
        RefusalReason::Malformed,
        RefusalReason::WrongToken,
        RefusalReason::NoClientCertificate,
        RefusalReason::BadClientCertificate,
        RefusalReason::TlsHandshake,
    ];

    /// The reason as logged and as the metric's `reason` attribute.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::MissingToken => "missing_token",
            RefusalReason::Malformed => "malformed",
            RefusalReason::WrongToken => "wrong_token",
            RefusalReason::NoClientCertificate => "no_client_certificate",
            RefusalReason::BadClientCertificate => "bad_client_certificate",
            RefusalReason::TlsHandshake => "tls_handshake",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// When a refusal was last logged, and how many went unlogged since.
type LastLogged = (Option<std::time::Instant>, u64);

/// Per credential and reason (a scope, a quota), when a refusal was last logged.
type CredentialRefusals = HashMap<(Arc<str>, &'static str), LastLogged>;

/// The clients refused so far, by reason. Clones share the counts, so that whoever configured
/// the service keeps a handle to read them.
#[derive(Clone, Default)]
pub struct Refusals {
    counts: Arc<[AtomicU64; 6]>,
    /// The total, for [`Refusals::wait_for`]: a handshake is refused in a task of its own,
    /// after the client has seen it fail.
    total: Arc<tokio::sync::watch::Sender<u64>>,
    /// For each reason, when a refused call was last logged and how many went unlogged since:
    /// a client trying wrong tokens in a loop gets one line a second, not one a call.
    logged: Arc<std::sync::Mutex<[LastLogged; 6]>>,
}

impl std::fmt::Debug for Refusals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut map = f.debug_map();
        for reason in RefusalReason::ALL {
            map.entry(&reason.as_str(), &self.count(reason));
        }
        map.finish()
    }
}

impl Refusals {
    /// How many clients were refused for `reason`.
    pub fn count(&self, reason: RefusalReason) -> u64 {
        self.counts[reason.index()].load(Ordering::Relaxed)
    }

    /// How many clients were refused, whatever the reason.
    pub fn total(&self) -> u64 {
        RefusalReason::ALL.iter().map(|r| self.count(*r)).sum()
    }

    /// Waits until at least `n` refusals for `reason` have been counted.
    pub async fn wait_for(&self, reason: RefusalReason, n: u64) {
        let mut changes = self.total.subscribe();
        // The sender lives in `self`, so the wait ends only by reaching `n`.
        let _ = changes.wait_for(|_| self.count(reason) >= n).await;
    }

    /// Counts one refused call, and logs it unless one was refused for the same reason less
    /// than a second ago (the next line says how many went unlogged).
    fn record(&self, reason: RefusalReason, peer: Option<SocketAddr>) {
        self.count_one(reason);
        let suppressed = {
            let mut all = self.logged.lock().unwrap_or_else(|e| e.into_inner());
            let logged = &mut all[reason.index()];
            let now = std::time::Instant::now();
            if logged
                .0
                .is_some_and(|at| now.duration_since(at) < std::time::Duration::from_secs(1))
            {
                logged.1 += 1;
                return;
            }
            let suppressed = logged.1;
            *logged = (Some(now), 0);
            suppressed
        };
        let peer = peer.map_or_else(|| "unknown".to_owned(), |p| p.to_string());
        tracing::warn!(
            peer,
            reason = reason.as_str(),
            not_logged_since_last = suppressed,
            "refused a call: unauthenticated"
        );
    }

    /// Logs and counts one refused TLS handshake; `detail` is the TLS stack's word for it.
    pub(crate) fn record_handshake(
        &self,
        reason: RefusalReason,
        peer: Option<SocketAddr>,
        detail: &str,
    ) {
        self.count_one(reason);
        let peer = peer.map_or_else(|| "unknown".to_owned(), |p| p.to_string());
        tracing::warn!(
            peer,
            reason = reason.as_str(),
            detail,
            "refused a connection: tls handshake"
        );
    }

    fn count_one(&self, reason: RefusalReason) {
        self.counts[reason.index()].fetch_add(1, Ordering::Relaxed);
        arbiter_telemetry::metrics::count_grpc_refused(reason.as_str());
        self.total.send_modify(|t| *t += 1);
    }
}

/// What the credentials layer made of a call, in its response's extensions: the operator's
/// error list names the credential of an admitted call and leaves a refused one out.
#[derive(Debug, Clone)]
pub(crate) enum Caller {
    /// The call went on to the service as this credential's.
    Admitted(Arc<str>),
    /// The call was refused before it reached the service.
    Refused,
}

/// A token bucket: `rate` tokens a second, at most `burst` held.
#[derive(Debug)]
struct Bucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// A full bucket of one second's worth, at least one.
    fn new(rate: f64) -> Bucket {
        let burst = rate.max(1.0);
        Bucket {
            rate,
            burst,
            tokens: burst,
            at: Instant::now(),
        }
    }

    /// Takes a token if there is one; else how long until the next one is due (at most
    /// [`MAX_HOLD`]).
    fn take(&mut self, now: Instant) -> Result<(), Duration> {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            let due = (1.0 - self.tokens) / self.rate;
            Err(Duration::try_from_secs_f64(due).map_or(MAX_HOLD, |d| d.min(MAX_HOLD)))
        }
    }
}

/// The longest a refusal over a rate quota is held before it is answered.
const MAX_HOLD: Duration = Duration::from_secs(1);

/// A call refused: its answer, and how long to hold it first. A refusal over a rate quota
/// (calls or games a second) is answered when the credential's next token is due, so that a
/// client that loops on its refusals goes no faster than its quota. Each refusal costs the
/// validator a request and an answer whatever the quota; answered at once, 16 loops of them
/// make 13,500 a second and take the CPU another platform's moves need (deploy/STREAMS.md,
/// "Limits").
struct Refusal {
    status: Status,
    hold: Duration,
}

/// One credential and its quotas' state on this instance.
#[derive(Debug)]
pub(crate) struct Tenant {
    name: Arc<str>,
    credential: Credential,
    calls: Option<Mutex<Bucket>>,
    games: Option<Mutex<Bucket>>,
    /// WatchGame streams open now.
    watching: Arc<AtomicU32>,
    /// SubmitMoves streams open now.
    submitting: Arc<AtomicU32>,
}

impl Tenant {
    fn new(credential: Credential) -> Tenant {
        Tenant {
            name: Arc::from(credential.name.as_str()),
            calls: credential
                .quotas
                .calls_per_second
                .map(|r| Mutex::new(Bucket::new(r))),
            games: credential
                .quotas
                .games_per_second
                .map(|r| Mutex::new(Bucket::new(r))),
            watching: Arc::default(),
            submitting: Arc::default(),
            credential,
        }
    }

    /// The credential's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// One call of the credential's `calls_per_second`, taken now; else how long until the
    /// next is due: a move of a SubmitMoves stream, each counted as a call of its own.
    pub(crate) fn take_call(&self) -> Result<(), Duration> {
        Tenant::take(self.calls.as_ref(), Instant::now())
    }

    /// The credential's live-games quota.
    pub(crate) fn live_games(&self) -> Option<u32> {
        self.credential.quotas.live_games
    }

    /// The error of this credential over `limit`.
    pub(crate) fn over(&self, limit: Limit) -> Error {
        let q = &self.credential.quotas;
        let value = match limit {
            Limit::GamesPerSecond => q.games_per_second.map(|r| r.to_string()),
            Limit::LiveGames => q.live_games.map(|n| n.to_string()),
            Limit::CallsPerSecond => q.calls_per_second.map(|r| r.to_string()),
            Limit::WatchStreams => q.watch_streams.map(|n| n.to_string()),
            Limit::MoveStreams => q.move_streams.map(|n| n.to_string()),
        };
        Error::QuotaExceeded {
            credential: self.name.to_string(),
            limit,
            value: value.unwrap_or_default(),
        }
    }

    fn take(bucket: Option<&Mutex<Bucket>>, now: Instant) -> Result<(), Duration> {
        bucket.map_or(Ok(()), |b| {
            b.lock().unwrap_or_else(|e| e.into_inner()).take(now)
        })
    }
}

/// A stream's place in its credential's quota (WatchGame's, SubmitMoves'), given back when the
/// stream's body is dropped.
struct StreamSlot(Arc<AtomicU32>);

impl StreamSlot {
    /// A place among `open` streams, unless `max` are open already.
    fn take(open: &Arc<AtomicU32>, max: Option<u32>) -> Option<StreamSlot> {
        let before = open.fetch_add(1, Ordering::Relaxed);
        let slot = StreamSlot(open.clone());
        (max.is_none_or(|max| before < max)).then_some(slot)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The credentials layer around each service of the contract: who calls (a bearer token, or
/// the TLS client certificate), whether the method is in the credential's scope, whether the
/// credential is within its quotas; the admitted call goes on with its [`Tenant`] in the
/// request's extensions, the refused one is answered here, logged (at most once a second per
/// kind) and counted. Without credentials every call goes through.
///
/// The secrets are compared in constant time, each given token against every credential's,
/// and never logged; logs and metrics name the credential.
#[derive(Clone, Default)]
pub struct Tenants {
    tenants: Arc<[Arc<Tenant>]>,
    refusals: Refusals,
    /// When a refusal for a credential and a reason was last logged, and how many since.
    logged: Arc<Mutex<CredentialRefusals>>,
}

impl std::fmt::Debug for Tenants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenants")
            .field(
                "credentials",
                &self.tenants.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// What [`Tenants::admit`] let through: the caller, and its stream's slot if it took one.
struct Admitted {
    tenant: Arc<Tenant>,
    slot: Option<StreamSlot>,
}

impl Tenants {
    /// The layer for `credentials` (none: every call goes through), counting the calls
    /// refused for want of a credential in `refusals`.
    pub fn new(credentials: &[Credential], refusals: Refusals) -> Tenants {
        Tenants {
            tenants: credentials
                .iter()
                .map(|c| Arc::new(Tenant::new(c.clone())))
                .collect(),
            refusals,
            logged: Arc::default(),
        }
    }

    /// The refusals counted so far.
    pub fn refusals(&self) -> &Refusals {
        &self.refusals
    }

    /// The credential a call's headers and connection name, or why none.
    fn identify(&self, parts: &http::request::Parts) -> Result<Arc<Tenant>, RefusalReason> {
        if let Some(value) = parts.headers.get("authorization") {
            // The scheme's name is case-insensitive (RFC 6750 section 2.1, RFC 9110 11.1).
            let Some((scheme, given)) = value.as_bytes().split_at_checked(7) else {
                return Err(RefusalReason::Malformed);
            };
            if !scheme.eq_ignore_ascii_case(b"bearer ") {
                return Err(RefusalReason::Malformed);
            }
            // Every credential's token is compared, so that the time taken says nothing of
            // which one (or how much of it) was right.
            let mut found = None;
            for tenant in self.tenants.iter() {
                if let Some(token) = &tenant.credential.token
                    && constant_time_eq(given, token.as_bytes())
                {
                    found = Some(tenant.clone());
                }
            }
            return found.ok_or(RefusalReason::WrongToken);
        }
        let certificate = parts
            .extensions
            .get::<TlsConnectInfo<TcpConnectInfo>>()
            .and_then(|tls| tls.peer_certs())
            .and_then(|certs| certs.first().map(|c| c.as_ref().to_vec()));
        if let Some(der) = certificate {
            let mut found = None;
            for tenant in self.tenants.iter() {
                if let Some(pinned) = &tenant.credential.client_certificate
                    && constant_time_eq(&der, pinned)
                {
                    found = Some(tenant.clone());
                }
            }
            if let Some(tenant) = found {
                return Ok(tenant);
            }
        }
        Err(RefusalReason::MissingToken)
    }

    /// Whether the call may go on, and as whose.
    #[cfg(test)]
    fn admit(&self, parts: &http::request::Parts) -> Result<Admitted, Status> {
        self.admitted(parts).map_err(|r| r.status)
    }

    /// Whether the call may go on, and as whose; or its refusal.
    fn admitted(&self, parts: &http::request::Parts) -> Result<Admitted, Refusal> {
        let peer = remote_addr(&parts.extensions);
        let tenant = match self.identify(parts) {
            Ok(tenant) => tenant,
            Err(reason) => {
                self.refusals.record(reason, peer);
                return Err(Refusal {
                    status: crate::error::unauthenticated(),
                    hold: Duration::ZERO,
                });
            }
        };
        // A path that is no method of the contract goes on (to UNIMPLEMENTED) once the caller
        // is known; its text is never recorded.
        let Some((method, scope)) = crate::calls::contract(parts.uri.path()) else {
            return Ok(Admitted { tenant, slot: None });
        };
        let refuse_after = |what: &'static str, error: Error, hold: Duration| {
            self.log_refusal(&tenant, what, peer);
            metrics().count_credential_refused(tenant.name(), what);
            Err(Refusal {
                status: crate::error::to_status(error),
                hold,
            })
        };
        let refuse = |what: &'static str, error: Error| refuse_after(what, error, Duration::ZERO);
        if !tenant.credential.allows(scope) {
            return refuse(
                "scope",
                Error::PermissionDenied {
                    credential: tenant.name().to_owned(),
                    method,
                    scope,
                },
            );
        }
        let now = Instant::now();
        if let Err(hold) = Tenant::take(tenant.calls.as_ref(), now) {
            return refuse_after(
                Limit::CallsPerSecond.as_str(),
                tenant.over(Limit::CallsPerSecond),
                hold,
            );
        }
        let slot = match method {
            "/shogi.v1.MoveValidator/CreateGame" => {
                if let Err(hold) = Tenant::take(tenant.games.as_ref(), now) {
                    return refuse_after(
                        Limit::GamesPerSecond.as_str(),
                        tenant.over(Limit::GamesPerSecond),
                        hold,
                    );
                }
                None
            }
            "/shogi.v1.MoveValidator/WatchGame" | "/shogi.v1.MoveValidator/SubmitMoves" => {
                let q = &tenant.credential.quotas;
                let (open, max, limit) = if method.ends_with("/WatchGame") {
                    (&tenant.watching, q.watch_streams, Limit::WatchStreams)
                } else {
                    (&tenant.submitting, q.move_streams, Limit::MoveStreams)
                };
                match StreamSlot::take(open, max) {
                    Some(slot) => Some(slot),
                    None => return refuse(limit.as_str(), tenant.over(limit)),
                }
            }
            _ => None,
        };
        metrics().count_credential_call(tenant.name(), method);
        Ok(Admitted { tenant, slot })
    }

    /// Logs a call of `tenant` refused for `what` (a scope, a quota), unless one was logged
    /// for the same credential and reason less than a second ago.
    fn log_refusal(&self, tenant: &Tenant, what: &'static str, peer: Option<SocketAddr>) {
        let suppressed = {
            let mut logged = self.logged.lock().unwrap_or_else(|e| e.into_inner());
            let entry = logged.entry((tenant.name.clone(), what)).or_default();
            let now = Instant::now();
            if entry
                .0
                .is_some_and(|at| now.duration_since(at) < Duration::from_secs(1))
            {
                entry.1 += 1;
                return;
            }
            let suppressed = entry.1;
            *entry = (Some(now), 0);
            suppressed
        };
        let peer = peer.map_or_else(|| "unknown".to_owned(), |p| p.to_string());
        tracing::warn!(
            peer,
            credential = tenant.name(),
            reason = what,
            not_logged_since_last = suppressed,
            "refused a call: {}",
            if what == "scope" {
                "outside the credential's scope"
            } else {
                "over quota"
            }
        );
    }
}

/// The peer's address, from the connection's information tonic puts in the extensions.
fn remote_addr(extensions: &http::Extensions) -> Option<SocketAddr> {
    extensions
        .get::<TcpConnectInfo>()
        .and_then(TcpConnectInfo::remote_addr)
        .or_else(|| {
            extensions
                .get::<TlsConnectInfo<TcpConnectInfo>>()
                .and_then(|tls| tls.get_ref().remote_addr())
        })
}

impl<S> tower::Layer<S> for Tenants {
    type Service = Authorized<S>;

    fn layer(&self, inner: S) -> Authorized<S> {
        Authorized {
            inner,
            tenants: self.clone(),
        }
    }
}

/// The service `S` behind the credentials layer ([`Tenants`]).
#[derive(Debug, Clone)]
pub struct Authorized<S> {
    inner: S,
    tenants: Tenants,
}

impl<S: NamedService> NamedService for Authorized<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B> tower::Service<http::Request<Body>> for Authorized<S>
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
        if self.tenants.tenants.is_empty() {
            let answer = self.inner.call(request);
            return Box::pin(async move { Ok(answer.await?.map(Body::new)) });
        }
        let (mut parts, body) = request.into_parts();
        let Admitted { tenant, slot } = match self.tenants.admitted(&parts) {
            Ok(admitted) => admitted,
            Err(Refusal { status, hold }) => {
                let mut response = status.into_http::<Body>();
                response.extensions_mut().insert(Caller::Refused);
                if hold.is_zero() {
                    return Box::pin(std::future::ready(Ok(response)));
                }
                return Box::pin(async move {
                    tokio::time::sleep(hold).await;
                    Ok(response)
                });
            }
        };
        let name = tenant.name.clone();
        parts.extensions.insert(tenant);
        let answer = self.inner.call(http::Request::from_parts(parts, body));
        Box::pin(async move {
            let mut response = answer
                .await?
                .map(|inner| Body::new(Holding { inner, _slot: slot }));
            response.extensions_mut().insert(Caller::Admitted(name));
            Ok(response)
        })
    }
}

/// A response body that holds its call's stream slot until it is dropped.
struct Holding<B> {
    inner: B,
    _slot: Option<StreamSlot>,
}

impl<B> http_body::Body for Holding<B>
where
    B: http_body::Body<Data = bytes::Bytes> + Unpin,
{
    type Data = bytes::Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, B::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Compares without an early exit, so that the time taken does not tell how much of a guess
/// was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The bearer token the binaries configure: `MOVE_VALIDATOR_AUTH_TOKEN` from the environment (a
/// secret is never a flag's value, which the process list shows), or else the content of
/// `file` without its final line break; `None` when neither is given.
///
/// # Errors
///
/// When `file` cannot be read (the error names it).
pub fn auth_token_from_env_or(file: Option<&Path>) -> std::io::Result<Option<String>> {
    if let Some(token) = std::env::var("MOVE_VALIDATOR_AUTH_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
    {
        return Ok(Some(token));
    }
    file.map(|path| {
        std::fs::read_to_string(path)
            .map(|t| t.trim_end_matches(['\r', '\n']).to_owned())
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::{Quotas, Scope};

    fn parts(path: &str, authorization: Option<&str>) -> http::request::Parts {
        let mut req = http::Request::builder().uri(path);
        if let Some(a) = authorization {
            req = req.header("authorization", a);
        }
        req.body(()).unwrap().into_parts().0
    }

    #[test]
    fn credentials_are_told_apart_and_refusals_counted() {
        let tenants = Tenants::new(
            &[
                Credential::shared("s3cret"),
                Credential::new("reader", "r3ad", &[Scope::Read]),
            ],
            Refusals::default(),
        );
        let get = "/shogi.v1.MoveValidator/GetGame";
        let create = "/shogi.v1.MoveValidator/CreateGame";
        assert!(tenants.admit(&parts(get, None)).is_err());
        assert_eq!(tenants.refusals().count(RefusalReason::MissingToken), 1);
        // The scheme in any case, as RFC 6750 allows.
        for scheme in ["Bearer", "bearer", "BEARER", "BeArEr"] {
            let admitted = tenants
                .admit(&parts(get, Some(&format!("{scheme} s3cret"))))
                .map_err(|s| s.code());
            assert_eq!(
                admitted.map(|a| a.tenant.name().to_owned()),
                Ok("shared".into())
            );
        }
        let reader = tenants
            .admit(&parts(get, Some("Bearer r3ad")))
            .ok()
            .unwrap();
        assert_eq!(reader.tenant.name(), "reader");
        let denied = tenants
            .admit(&parts(create, Some("Bearer r3ad")))
            .err()
            .unwrap();
        assert_eq!(denied.code(), tonic::Code::PermissionDenied);
        assert!(tenants.admit(&parts(get, Some("Bearer s3creT"))).is_err());
        assert!(tenants.admit(&parts(get, Some("Basic s3cret"))).is_err());
        let refusals = tenants.refusals().clone();
        assert_eq!(refusals.count(RefusalReason::WrongToken), 1);
        assert_eq!(refusals.count(RefusalReason::Malformed), 1);
        assert_eq!(refusals.total(), 3);
        assert_eq!(
            format!("{refusals:?}"),
            "{\"missing_token\": 1, \"malformed\": 1, \"wrong_token\": 1, \
             \"no_client_certificate\": 0, \"bad_client_certificate\": 0, \"tls_handshake\": 0}"
        );
        // The secrets stay out of the layer's debug text.
        assert!(!format!("{tenants:?}").contains("s3cret"));
    }

    #[test]
    fn buckets_hold_one_seconds_worth_and_refill() {
        let start = Instant::now();
        let mut bucket = Bucket::new(4.0);
        bucket.at = start;
        let taken = (0..10).filter(|_| bucket.take(start).is_ok()).count();
        assert_eq!(taken, 4);
        // A refusal says when the next token is due: a quarter of a second at 4 a second.
        assert_eq!(bucket.take(start), Err(Duration::from_millis(250)));
        assert!(bucket.take(start + Duration::from_millis(250)).is_ok());
        assert!(bucket.take(start + Duration::from_millis(250)).is_err());
        // A rate below one a second still lets one call through; a refusal is held 1 s at most.
        let mut slow = Bucket::new(0.5);
        slow.at = start;
        assert!(slow.take(start).is_ok());
        assert_eq!(slow.take(start + Duration::from_secs(1)), Err(MAX_HOLD));
        assert!(slow.take(start + Duration::from_secs(2)).is_ok());
    }

    #[test]
    fn stream_slots_are_counted_apart_and_given_back() {
        let tenants = Tenants::new(
            &[
                Credential::new("w", "t", &[Scope::Read, Scope::Play]).with_quotas(Quotas {
                    watch_streams: Some(1),
                    move_streams: Some(2),
                    ..Quotas::default()
                }),
            ],
            Refusals::default(),
        );
        let watch = parts("/shogi.v1.MoveValidator/WatchGame", Some("Bearer t"));
        let submit = parts("/shogi.v1.MoveValidator/SubmitMoves", Some("Bearer t"));
        let first = tenants.admit(&watch).ok().unwrap();
        let refused = tenants.admit(&watch).err().unwrap();
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        assert!(refused.message().contains("watch_streams"), "{refused:?}");
        // SubmitMoves streams have their own count: the watch held does not take one.
        let moves = [
            tenants.admit(&submit).ok().unwrap(),
            tenants.admit(&submit).ok().unwrap(),
        ];
        let refused = tenants.admit(&submit).err().unwrap();
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        assert!(refused.message().contains("move_streams"), "{refused:?}");
        // A refused stream takes no place: one given back lets exactly one more in.
        drop(first);
        assert!(tenants.admit(&watch).is_ok());
        drop(moves);
        let again = [
            tenants.admit(&submit).ok().unwrap(),
            tenants.admit(&submit).ok().unwrap(),
        ];
        assert!(tenants.admit(&submit).is_err());
        drop(again);
        // Unary calls take no slot.
        let unary = parts("/shogi.v1.MoveValidator/SubmitMove", Some("Bearer t"));
        assert!((0..5).all(|_| tenants.admit(&unary).is_ok()));
    }
}
