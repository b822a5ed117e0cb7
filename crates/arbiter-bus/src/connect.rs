//! How a service reaches NATS: the servers, the credentials, TLS; checked before connecting, and
//! a refusal by the server reported as such, at once.
//!
//! async-nats, told to retry the initial connection (`retry_on_initial_connect`), retries an
//! authorization violation for ever too, and a TLS handshake that cannot succeed likewise, and
//! reports each failed attempt by the name of its kind only. So [`NatsOptions::connect`] makes
//! the attempts itself, each one without retry: a refusal (credentials, or TLS) ends the call
//! with [`BusError::Refused`] at once; only a server that cannot be reached is tried again, with
//! a backoff, for as long as it takes (a service started before its nats-server, or during a
//! restart, waits for it). Once connected, the client reconnects for ever; an authorization
//! refusal on reconnecting is seen through the client's events (a failed TLS handshake shows
//! there only as an IO error, and is retried).
//!
//! Every refusal is logged (a `warn` with the server and the reason, never a secret) and counted:
//! in this process ([`refused_connections`]) and on the OpenTelemetry global meter, as the
//! counter `arbiter.nats.refused` with a `reason` attribute (`authorization` or `tls`).

use crate::BusError;
use async_nats::{ClientError, ConnectErrorKind, Event, ServerError};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The wait before the second attempt to reach a server; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// The longest wait between two attempts to reach a server.
const MAX_BACKOFF: Duration = Duration::from_secs(4);

/// How often the client pings the server: a hung server is noticed within about three of these
/// (deploy/STREAMS.md, "What a platform can rely on").
pub const PING_INTERVAL: Duration = Duration::from_secs(2);

/// How to reach NATS: one or several servers, at most one way to authenticate, and TLS.
#[derive(Clone, Default)]
pub struct NatsOptions {
    /// The server URL, or several separated by commas (the servers of a cluster): `nats://`
    /// (TLS when the server asks for it or [`NatsTls::required`] is set) or `tls://`.
    pub url: String,
    /// A token to authenticate with, if the server wants one.
    pub token: Option<String>,
    /// A user name, with [`NatsOptions::password`].
    pub user: Option<String>,
    /// The user's password.
    pub password: Option<String>,
    /// A `.creds` file (a user JWT and its nkey seed), for servers in operator mode.
    pub credentials_file: Option<PathBuf>,
    /// A file holding a user nkey seed (`SU...`): the seed stays out of the command line and
    /// the environment.
    pub nkey_seed_file: Option<PathBuf>,
    /// TLS settings.
    pub tls: NatsTls,
    /// The prefix of this client's reply subjects; `None`: `_INBOX.<user>` when a user name is
    /// set (so that a server's permissions can give each user its own replies only,
    /// `deploy/nats/auth.conf`), else NATS's `_INBOX`.
    pub inbox_prefix: Option<String>,
    /// The subject prefix of the JetStream API, `$JS.API` when unset. A client in another
    /// account than the streams' reaches the API through the services that account exports
    /// to it, imported under a prefix of its own (`JS.ARBITER.API` in `deploy/nats/auth.conf`:
    /// the workers' and the platform's accounts), since every account already answers
    /// `$JS.API.>` itself.
    pub api_prefix: Option<String>,
    /// Whether this service may create the streams and consumers it uses, or only binds to
    /// existing ones (production: a setup job creates them, `shogi-arbiter streams apply`).
    pub provision: Provision,
}

/// Whether a service creates what it uses on JetStream or only binds to it.
///
/// In production the services hold no stream-admin rights (`deploy/nats/nats.conf`): the
/// streams and the workers' durable consumers are created by a setup job with the arbiter's
/// own `shogi-arbiter streams apply`, and every service runs with [`Provision::Bind`], which
/// only looks streams and durable consumers up (`$JS.API.STREAM.INFO`,
/// `$JS.API.CONSUMER.INFO`) and fails, naming the command, when one is missing. The validator
/// still creates the ephemeral consumers that follow one game (WatchGame): they are reads,
/// not administration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Provision {
    /// Create a missing stream or durable consumer (a first run, a test, one process).
    #[default]
    Create,
    /// Only bind to existing streams and durable consumers.
    Bind,
}

/// TLS towards NATS. PEM files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NatsTls {
    /// The CA certificates to trust for the server's certificate, instead of the system's.
    pub ca: Option<PathBuf>,
    /// This client's certificate chain, for servers that verify clients (mutual TLS).
    pub cert: Option<PathBuf>,
    /// The private key of [`NatsTls::cert`].
    pub key: Option<PathBuf>,
    /// Speak TLS even when the server does not ask for it (and fail if it cannot).
    pub required: bool,
}

impl std::fmt::Debug for NatsOptions {
    // The secrets stay out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |s: &Option<String>| s.as_ref().map(|_| "<set>");
        f.debug_struct("NatsOptions")
            .field("url", &redacted(&self.url))
            .field("token", &set(&self.token))
            .field("user", &self.user)
            .field("provision", &self.provision)
            .field("api_prefix", &self.api_prefix)
            .field("password", &set(&self.password))
            .field("credentials_file", &self.credentials_file)
            .field("nkey_seed_file", &self.nkey_seed_file)
            .field("tls", &self.tls)
            .finish()
    }
}

/// Why a server refused this client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// Missing or wrong credentials (an authorization violation), or an nkey that could not
    /// sign the server's nonce.
    Authorization,
    /// The TLS handshake failed: no client certificate, or one the server does not trust, or a
    /// server certificate this client does not trust.
    Tls,
}

impl Refusal {
    /// The reason as it appears in logs and on the `reason` attribute of the metric.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Authorization => "authorization",
            Refusal::Tls => "tls",
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

static REFUSED_AUTHORIZATION: AtomicU64 = AtomicU64::new(0);
static REFUSED_TLS: AtomicU64 = AtomicU64::new(0);

/// How many connections NATS servers refused this process for `reason`, since it started.
pub fn refused_connections(reason: Refusal) -> u64 {
    match reason {
        Refusal::Authorization => REFUSED_AUTHORIZATION.load(Ordering::Relaxed),
        Refusal::Tls => REFUSED_TLS.load(Ordering::Relaxed),
    }
}

/// The last permissions violation a server reported to a client of this process.
static VIOLATION: std::sync::OnceLock<tokio::sync::watch::Sender<Option<String>>> =
    std::sync::OnceLock::new();

fn violation() -> &'static tokio::sync::watch::Sender<Option<String>> {
    VIOLATION.get_or_init(|| tokio::sync::watch::channel(None).0)
}

/// The permissions violations NATS servers report to this process's clients, the last one
/// first, as the server words it (`Permissions Violation for Publish to "$JS.API..."`).
///
/// A server tells a client of a publish or a subscription its user may not make in an error
/// line of its own, and drops the publish: a request made so gets no answer and waits out its
/// timeout. An operator's tool watches this to stop at the first one and name the permission,
/// instead of waiting out a timeout per request.
pub fn permissions_violations() -> tokio::sync::watch::Receiver<Option<String>> {
    violation().subscribe()
}

/// Logs and counts one refusal.
fn record_refusal(reason: Refusal, servers: &str, detail: &str) {
    match reason {
        Refusal::Authorization => &REFUSED_AUTHORIZATION,
        Refusal::Tls => &REFUSED_TLS,
    }
    .fetch_add(1, Ordering::Relaxed);
    arbiter_telemetry::metrics::count_nats_refused(reason.as_str());
    tracing::warn!(
        servers,
        reason = reason.as_str(),
        detail,
        "nats refused the connection"
    );
}

impl NatsOptions {
    /// The server at `url` (or the servers, comma-separated), no authentication, TLS only if the
    /// server asks for it.
    pub fn new(url: impl Into<String>) -> NatsOptions {
        NatsOptions {
            url: url.into(),
            ..NatsOptions::default()
        }
    }

    /// The prefix of this client's reply subjects (see [`NatsOptions::inbox_prefix`]); `None`:
    /// the client library's `_INBOX`.
    pub fn reply_prefix(&self) -> Option<String> {
        if let Some(prefix) = &self.inbox_prefix {
            return Some(prefix.clone());
        }
        let user = self.user.as_deref()?;
        let plain = !user.is_empty()
            && user
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        plain.then(|| format!("_INBOX.{user}"))
    }

    /// The server URLs, from [`NatsOptions::url`].
    pub fn urls(&self) -> Vec<String> {
        self.url
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// Checks the options without connecting: the URLs parse, at most one way to authenticate
    /// is set (a password with its user), and every file named is readable and holds what it
    /// should (a user nkey seed, a `.creds` file, PEM certificates, a PEM key).
    pub fn validate(&self) -> Result<(), BusError> {
        let bad = |m: String| Err(BusError::Config(m));
        let urls = self.urls();
        if urls.is_empty() {
            return bad(format!(
                "nats url {:?} names no server",
                redacted(&self.url)
            ));
        }
        for url in &urls {
            if let Err(e) = url.parse::<async_nats::ServerAddr>() {
                return bad(format!("nats url {:?}: {e}", redacted(url)));
            }
            if redacted(url) != *url {
                return bad(format!(
                    "nats url {:?} carries credentials, which are not used: set NATS_USER and \
                     NATS_PASSWORD, or NATS_TOKEN, instead",
                    redacted(url)
                ));
            }
        }
        if let Some(prefix) = &self.api_prefix {
            let token_ok = |t: &str| !t.is_empty() && !t.contains(['*', '>', ' ', '\t']);
            if !prefix.split('.').all(token_ok) {
                return bad(format!(
                    "JetStream API prefix {prefix:?}: expected subject tokens without \
                     wildcards, as JS.ARBITER.API"
                ));
            }
        }
        if let Some(prefix) = &self.inbox_prefix {
            let token_ok = |t: &str| !t.is_empty() && !t.contains(['*', '>', ' ', '\t']);
            if !prefix.split('.').all(token_ok) {
                return bad(format!(
                    "nats inbox prefix {prefix:?}: expected subject tokens without wildcards, \
                     as _INBOX.validator"
                ));
            }
        }
        if self.token.as_deref() == Some("") || self.password.as_deref() == Some("") {
            return bad(
                "nats: an empty token or password (NATS_TOKEN, NATS_PASSWORD or the file named \
                 for it is empty or unreadable)"
                    .into(),
            );
        }
        let ways = [
            self.token.is_some(),
            self.user.is_some() || self.password.is_some(),
            self.credentials_file.is_some(),
            self.nkey_seed_file.is_some(),
        ];
        if ways.iter().filter(|w| **w).count() > 1 {
            return bad(
                "nats: set one of token, user and password, credentials file, nkey seed file"
                    .into(),
            );
        }
        if self.user.is_some() != self.password.is_some() {
            return bad("nats: a user needs a password, and a password a user".into());
        }
        if let Some(path) = &self.nkey_seed_file {
            nkey_seed(path)?;
        }
        if let Some(path) = &self.credentials_file {
            check_creds(path)?;
        }
        let tls = &self.tls;
        if let Some(path) = &tls.ca {
            certificates(path, "nats tls ca")?;
        }
        match (&tls.cert, &tls.key) {
            (Some(cert), Some(key)) => {
                certificates(cert, "nats tls cert")?;
                let pem = read(key, "nats tls key")?;
                PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|e| {
                    BusError::Config(format!(
                        "nats tls key {}: no PEM private key found ({e})",
                        key.display()
                    ))
                })?;
            }
            (None, None) => {}
            _ => return bad("nats: a tls cert needs its key, and a key its cert".into()),
        }
        Ok(())
    }

    /// Checks the options, then connects as `client_name`.
    ///
    /// A server that refuses this client (credentials, TLS) ends the call with
    /// [`BusError::Refused`], logged and counted. When no server can be reached, the call tries
    /// again, with a backoff of up to 4 s, as long as it takes. Once connected,
    /// the client reconnects for ever; refusals on reconnecting are logged and counted.
    pub async fn connect(&self, client_name: &str) -> Result<async_nats::Client, BusError> {
        self.validate()?;
        let urls = self.urls();
        let servers = redacted(&urls.join(","));
        let mut backoff = FIRST_BACKOFF;
        let mut attempts = 0u64;
        loop {
            let attempt = self
                .connect_options(client_name)
                .await?
                .connect(urls.clone())
                .await;
            let error = match attempt {
                Ok(client) => return Ok(client),
                Err(e) => e,
            };
            let detail = error_chain(&error);
            if let Some(reason) = refusal(&error) {
                record_refusal(reason, &servers, &detail);
                return Err(BusError::Refused {
                    servers,
                    reason,
                    detail,
                });
            }
            attempts += 1;
            if attempts == 1 {
                tracing::warn!(
                    servers,
                    error = detail,
                    "nats not reachable; waiting for a server"
                );
            } else {
                tracing::debug!(
                    servers,
                    error = detail,
                    attempts,
                    "nats still not reachable"
                );
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn connect_options(
        &self,
        client_name: &str,
    ) -> Result<async_nats::ConnectOptions, BusError> {
        let servers = redacted(&self.urls().join(","));
        let mut options = async_nats::ConnectOptions::new()
            .name(client_name)
            .connection_timeout(Duration::from_secs(5))
            // A server that hangs (a paused process, a half-open connection) answers no ping:
            // after two unanswered ones the connection is dropped and the services go
            // NOT_SERVING within about three intervals, instead of the library's 60 s
            // interval (minutes) during which every write timed out as OUTCOME_UNKNOWN.
            .ping_interval(PING_INTERVAL)
            // Once connected, a restarted nats-server is waited for, not given up on.
            .max_reconnects(None)
            .event_callback(move |event| {
                on_event(&servers, event);
                std::future::ready(())
            });
        if let Some(prefix) = self.reply_prefix() {
            options = options.custom_inbox_prefix(prefix);
        }
        if let Some(token) = &self.token {
            options = options.token(token.clone());
        }
        if let (Some(user), Some(password)) = (&self.user, &self.password) {
            options = options.user_and_password(user.clone(), password.clone());
        }
        if let Some(path) = &self.nkey_seed_file {
            options = options.nkey(nkey_seed(path)?);
        }
        if let Some(path) = &self.credentials_file {
            options = options.credentials_file(path).await.map_err(|e| {
                BusError::Config(format!("nats credentials file {}: {e}", path.display()))
            })?;
        }
        if let Some(ca) = &self.tls.ca {
            options = options.add_root_certificates(ca.clone());
        }
        if let (Some(cert), Some(key)) = (&self.tls.cert, &self.tls.key) {
            options = options.add_client_certificate(cert.clone(), key.clone());
        }
        if self.tls.required {
            options = options.require_tls(true);
        }
        Ok(options)
    }
}

/// Follows a connected client's events: a refusal on reconnecting is logged and counted.
fn on_event(servers: &str, event: Event) {
    // While reconnecting, async-nats reports a failed attempt by the name of its kind only.
    let refused = match &event {
        Event::ServerError(ServerError::AuthorizationViolation) => {
            Some((Refusal::Authorization, "authorization violation"))
        }
        Event::ClientError(ClientError::Other(kind)) => match kind.as_str() {
            "authorization violation" => Some((Refusal::Authorization, "authorization violation")),
            "failed signing nonce" => Some((Refusal::Authorization, "failed signing nonce")),
            "TLS error" => Some((Refusal::Tls, "TLS error")),
            _ => None,
        },
        _ => None,
    };
    match refused {
        Some((reason, detail)) => record_refusal(reason, servers, detail),
        // A permissions violation, or another error the server reports: the operator's to see.
        None if matches!(event, Event::ServerError(_)) => {
            if let Event::ServerError(ServerError::Other(text)) = &event
                && text.to_ascii_lowercase().contains("permissions violation")
            {
                violation().send_replace(Some(text.clone()));
            }
            tracing::warn!(servers, %event, "nats server error")
        }
        None => tracing::debug!(servers, %event, "nats"),
    }
}

/// `urls` (comma-separated) with any credentials in them (`nats://user:password@host`,
/// `nats://token@host`) replaced by `***`, for logs and errors.
fn redacted(urls: &str) -> String {
    urls.split(',')
        .map(|url| {
            let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
            let host_start = rest.find(['/', '?']).unwrap_or(rest.len());
            match rest[..host_start].rfind('@') {
                Some(at) => {
                    let scheme = if scheme.is_empty() {
                        String::new()
                    } else {
                        format!("{scheme}://")
                    };
                    format!("{scheme}***{}", &rest[at..])
                }
                None => url.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether a failed connection was a refusal, and of what.
fn refusal(error: &async_nats::ConnectError) -> Option<Refusal> {
    match error.kind() {
        ConnectErrorKind::AuthorizationViolation | ConnectErrorKind::Authentication => {
            Some(Refusal::Authorization)
        }
        ConnectErrorKind::Tls => Some(Refusal::Tls),
        // A failed handshake surfaces as an IO error wrapping the TLS stack's error, and so
        // does an alert the server sends after it (TLS 1.3 lets the client finish first, so
        // a missing client certificate is told by an alert on the first read).
        _ => tls_in_chain(error).then_some(Refusal::Tls),
    }
}

fn tls_in_chain(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.is::<async_nats::rustls::Error>() {
            return true;
        }
        // io::Error's `source` skips the error it wraps: look at it directly.
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && let Some(inner) = io.get_ref()
            && (inner.is::<async_nats::rustls::Error>() || tls_in_chain(inner))
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// An error and its sources, joined.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        let more = e.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        next = e.source();
    }
    text
}

fn read(path: &Path, what: &str) -> Result<String, BusError> {
    std::fs::read_to_string(path)
        .map_err(|e| BusError::Config(format!("{what} {}: {e}", path.display())))
}

/// The user nkey seed in the file at `path`.
fn nkey_seed(path: &Path) -> Result<String, BusError> {
    let seed = read(path, "nats nkey seed file")?.trim().to_owned();
    check_seed(&seed)
        .map_err(|e| BusError::Config(format!("nats nkey seed file {}: {e}", path.display())))?;
    Ok(seed)
}

fn check_seed(seed: &str) -> Result<(), String> {
    let pair = nkeys::KeyPair::from_seed(seed).map_err(|e| format!("not an nkey seed ({e})"))?;
    if pair.key_pair_type() != nkeys::KeyPairType::User {
        return Err("not a user nkey seed (SU...)".into());
    }
    Ok(())
}

/// Checks a `.creds` file as nats tools write it: a user JWT block and a user nkey seed block.
fn check_creds(path: &Path) -> Result<(), BusError> {
    let text = read(path, "nats credentials file")?;
    let block = |begin: &str| {
        let mut lines = text.lines().map(str::trim);
        lines.find(|l| l.contains(begin))?;
        lines.find(|l| !l.is_empty()).map(str::to_owned)
    };
    let bad =
        |m: String| BusError::Config(format!("nats credentials file {}: {m}", path.display()));
    let jwt = block("BEGIN NATS USER JWT").ok_or_else(|| bad("no user JWT".into()))?;
    if jwt.split('.').count() != 3 {
        return Err(bad("the user JWT is not a JWT".into()));
    }
    let seed = block("BEGIN USER NKEY SEED").ok_or_else(|| bad("no user nkey seed".into()))?;
    check_seed(&seed).map_err(bad)
}

/// Checks that the file at `path` holds PEM certificates and nothing unparseable.
fn certificates(path: &Path, what: &str) -> Result<(), BusError> {
    let pem = read(path, what)?;
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| BusError::Config(format!("{what} {}: bad PEM ({e})", path.display())))?;
    if certs.is_empty() {
        return Err(BusError::Config(format!(
            "{what} {}: no PEM certificate found",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(f: impl FnOnce(&mut NatsOptions)) -> NatsOptions {
        let mut o = NatsOptions::new("nats://127.0.0.1:4222");
        f(&mut o);
        o
    }

    fn config_error(o: &NatsOptions) -> String {
        match o.validate() {
            Err(BusError::Config(m)) => m,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn replies_go_to_a_per_user_inbox() {
        assert_eq!(options(|_| {}).reply_prefix(), None);
        let o = options(|o| {
            o.user = Some("validator".into());
            o.password = Some("pw".into());
        });
        assert_eq!(o.reply_prefix().as_deref(), Some("_INBOX.validator"));
        // A user name that is not one plain subject token keeps the library's inbox.
        assert_eq!(
            options(|o| o.user = Some("a.b".into())).reply_prefix(),
            None
        );
        let o = options(|o| o.inbox_prefix = Some("_INBOX_arbiter".into()));
        assert_eq!(o.reply_prefix().as_deref(), Some("_INBOX_arbiter"));
        assert!(o.validate().is_ok());
        for bad in ["_INBOX.>", "_INBOX.*", "a..b", "", "a b"] {
            let e = config_error(&options(|o| o.inbox_prefix = Some(bad.into())));
            assert!(e.contains("inbox prefix"), "{bad}: {e}");
        }
    }

    #[test]
    fn several_urls_are_split_on_commas() {
        let o = NatsOptions::new("nats://a:4222, nats://b:4222,,tls://c:4222");
        assert_eq!(o.urls(), ["nats://a:4222", "nats://b:4222", "tls://c:4222"]);
        assert!(o.validate().is_ok());
        assert!(NatsOptions::new("127.0.0.1:4222").validate().is_ok());
        assert!(config_error(&NatsOptions::new(" , ")).contains("names no server"));
        assert!(config_error(&NatsOptions::new("nats://a,http://b")).contains("http://b"));
    }

    #[test]
    fn one_way_to_authenticate() {
        let both = options(|o| {
            o.token = Some("t".into());
            o.user = Some("u".into());
            o.password = Some("p".into());
        });
        assert!(config_error(&both).contains("set one of"));
        let user_only = options(|o| o.user = Some("u".into()));
        assert!(config_error(&user_only).contains("needs a password"));
        let key_only = options(|o| o.tls.key = Some("k.pem".into()));
        assert!(config_error(&key_only).contains("needs its key"));
    }

    #[test]
    fn files_are_read_and_checked_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let user = nkeys::KeyPair::new_user();
        let seed = write("user.nk", &format!("{}\n", user.seed().unwrap()));
        assert!(
            options(|o| o.nkey_seed_file = Some(seed))
                .validate()
                .is_ok()
        );
        let account = write("account.nk", &nkeys::KeyPair::new_account().seed().unwrap());
        let e = config_error(&options(|o| o.nkey_seed_file = Some(account)));
        assert!(
            e.contains("account.nk") && e.contains("not a user nkey seed"),
            "{e}"
        );
        let garbage = write("garbage", "not a key\n");
        let e = config_error(&options(|o| o.nkey_seed_file = Some(garbage.clone())));
        assert!(e.contains("not an nkey seed"), "{e}");
        let missing = dir.path().join("missing");
        let e = config_error(&options(|o| o.nkey_seed_file = Some(missing.clone())));
        assert!(e.contains("missing"), "{e}");

        let creds = write(
            "user.creds",
            &format!(
                "-----BEGIN NATS USER JWT-----\naaa.bbb.ccc\n------END NATS USER JWT------\n\n\
                 ************************* IMPORTANT *************************\n\n\
                 -----BEGIN USER NKEY SEED-----\n{}\n------END USER NKEY SEED------\n",
                user.seed().unwrap()
            ),
        );
        assert!(
            options(|o| o.credentials_file = Some(creds))
                .validate()
                .is_ok()
        );
        let e = config_error(&options(|o| o.credentials_file = Some(garbage.clone())));
        assert!(e.contains("no user JWT"), "{e}");

        let e = config_error(&options(|o| o.tls.ca = Some(garbage.clone())));
        assert!(
            e.contains("nats tls ca") && e.contains("no PEM certificate"),
            "{e}"
        );
        let e = config_error(&options(|o| {
            o.tls.cert = Some(missing.clone());
            o.tls.key = Some(garbage.clone());
        }));
        assert!(e.starts_with("nats tls cert"), "{e}");
    }

    #[test]
    fn credentials_in_urls_stay_out_of_messages() {
        assert_eq!(
            redacted("nats://u:p@a:4222, tls://tok@b,nats://c:4222,d:1"),
            "nats://***@a:4222, tls://***@b,nats://c:4222,d:1"
        );
        assert_eq!(redacted("u:p@host:4222"), "***@host:4222");
        let e = config_error(&NatsOptions::new("http://u:secret@a"));
        assert!(!e.contains("secret"), "{e}");
        assert!(!format!("{:?}", NatsOptions::new("nats://u:secret@a")).contains("secret"));
    }

    #[test]
    fn debug_hides_secrets() {
        let o = options(|o| {
            o.user = Some("arbiter".into());
            o.password = Some("hunter2".into());
        });
        let text = format!("{o:?}");
        assert!(
            text.contains("arbiter") && !text.contains("hunter2"),
            "{text}"
        );
    }
}
