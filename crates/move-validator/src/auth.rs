//! Bearer-token authentication, as a tonic interceptor, and the count of the clients the
//! service refuses.
//!
//! A refused call or TLS handshake is logged (a `warn` with the peer's address and the reason,
//! never the token given) and counted: in [`Refusals`], which the service's owner can read, and
//! on the OpenTelemetry global meter as the counter `arbiter.grpc.refused` with a `reason`
//! attribute. The handshakes are refused in `incoming.rs`, the calls here.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tonic::{Request, Status, service::Interceptor};

/// Why a client was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalReason {
    /// A call without `authorization` metadata.
    MissingToken,
    /// A call whose `authorization` metadata is not `Bearer <token>`.
    Malformed,
    /// A call with a bearer token that is not the configured one.
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

/// Requires `authorization: Bearer <token>` when a token is configured; lets every call through
/// otherwise. Refusals are logged and counted in its [`Refusals`].
#[derive(Clone, Default)]
pub struct BearerAuth {
    token: Option<Arc<[u8]>>,
    refusals: Refusals,
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("enabled", &self.token.is_some())
            .finish()
    }
}

impl BearerAuth {
    /// An interceptor for `token`, or a pass-through for `None`.
    pub fn new(token: Option<&str>) -> BearerAuth {
        BearerAuth {
            token: token.map(|t| Arc::from(t.as_bytes())),
            refusals: Refusals::default(),
        }
    }

    /// The same, counting refusals in `refusals`.
    pub fn counting(self, refusals: Refusals) -> BearerAuth {
        BearerAuth { refusals, ..self }
    }

    /// The refusals counted so far.
    pub fn refusals(&self) -> &Refusals {
        &self.refusals
    }
}

impl Interceptor for BearerAuth {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.token else {
            return Ok(request);
        };
        let refused = match request.metadata().get("authorization") {
            None => RefusalReason::MissingToken,
            // The scheme's name is case-insensitive (RFC 6750 section 2.1, RFC 9110 11.1).
            Some(value) => match value.as_bytes().split_at_checked(7) {
                Some((scheme, given)) if scheme.eq_ignore_ascii_case(b"bearer ") => {
                    if constant_time_eq(given, expected) {
                        return Ok(request);
                    }
                    RefusalReason::WrongToken
                }
                _ => RefusalReason::Malformed,
            },
        };
        self.refusals.record(refused, request.remote_addr());
        Err(crate::error::unauthenticated())
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

    #[test]
    fn token_is_required_when_set() {
        let mut open = BearerAuth::new(None);
        assert!(open.call(Request::new(())).is_ok());
        let mut auth = BearerAuth::new(Some("s3cret"));
        assert!(auth.call(Request::new(())).is_err());
        assert_eq!(auth.refusals().count(RefusalReason::MissingToken), 1);
        let mut req = Request::new(());
        req.metadata_mut()
            .insert("authorization", "Bearer s3cret".parse().unwrap());
        assert!(auth.call(req).is_ok());
        // The scheme in any case, as RFC 6750 allows.
        for scheme in ["bearer", "BEARER", "BeArEr"] {
            let mut req = Request::new(());
            req.metadata_mut()
                .insert("authorization", format!("{scheme} s3cret").parse().unwrap());
            assert!(auth.call(req).is_ok(), "{scheme}");
        }
        let mut req = Request::new(());
        req.metadata_mut()
            .insert("authorization", "Bearer s3creT".parse().unwrap());
        assert!(auth.call(req).is_err());
        let mut req = Request::new(());
        req.metadata_mut()
            .insert("authorization", "Basic s3cret".parse().unwrap());
        assert!(auth.call(req).is_err());
        // Clones share the counts.
        let refusals = auth.clone().refusals().clone();
        assert_eq!(refusals.count(RefusalReason::WrongToken), 1);
        assert_eq!(refusals.count(RefusalReason::Malformed), 1);
        assert_eq!(refusals.total(), 3);
        assert_eq!(
            format!("{refusals:?}"),
            "{\"missing_token\": 1, \"malformed\": 1, \"wrong_token\": 1, \
             \"no_client_certificate\": 0, \"bad_client_certificate\": 0, \"tls_handshake\": 0}"
        );
    }
}
