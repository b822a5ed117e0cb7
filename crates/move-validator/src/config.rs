//! The service's configuration: typed, checked before anything is bound or connected.

use crate::credentials::Credential;
use crate::{Refusals, TlsConfig};
use arbiter_bus::NatsOptions;
use std::time::Duration;

/// What the service needs to run. `main` fills it from flags and the environment.
#[derive(Clone)]
pub struct Config {
    /// How to reach NATS: the server URL(s) (`nats://host:4222`), credentials, TLS.
    pub nats: NatsOptions,
    /// The JetStream stream of game events (created when missing).
    pub stream: String,
    /// How many servers keep a copy of the stream when it is created: 1, or 3 on a NATS
    /// cluster; at most [`arbiter_bus::MAX_REPLICAS`].
    pub stream_replicas: usize,
    /// When set, every MoveValidator call must carry `authorization: Bearer <token>`. Health and
    /// reflection stay open so that probes and grpcurl's listing work without a secret. It is
    /// the credential `shared`, with every scope and no quota ([`Credential::shared`]), beside
    /// the named ones of `credentials`.
    pub auth_token: Option<String>,
    /// The named credentials, each with its scopes and quotas (`--credentials-file`,
    /// [`crate::credentials_from_file`]). With none and no `auth_token`, every call is let
    /// through.
    pub credentials: Vec<Credential>,
    /// How long in-flight calls may take to finish after a shutdown signal.
    pub grace_period: Duration,
    /// The largest request or response message, in bytes.
    pub max_message_bytes: usize,
    /// The longest a call may run, whatever deadline the client asks for.
    pub request_timeout: Duration,
    /// How many games to keep in memory. Past it, games not in use are dropped (finished ones
    /// first) and rebuilt from the bus when next asked for.
    pub max_cached_games: usize,
    /// About how many bytes the cached games may take (about 1 KB a game and 24 bytes a ply);
    /// past it, games are dropped as past `max_cached_games`.
    pub max_cache_bytes: usize,
    /// Who announces the endings on `.verdict`: the repetition-watcher and the impasse-judge
    /// running beside this service (the production layout), or this service alone.
    /// [`Config::new`] says this service (a validator alone); the binary says the owners unless
    /// told `--standalone`.
    pub announcements: Announcements,
    /// When set, the gRPC server speaks TLS (and mutual TLS with a client CA); plaintext
    /// otherwise.
    pub tls: Option<TlsConfig>,
    /// Where calls refused for want of the bearer token are counted: keep a clone to read them.
    pub refusals: Refusals,
    /// Whether the browser console is served on the gRPC port (`GET /`), with gRPC-Web and
    /// HTTP/1.1 accepted there for its calls. Off in [`Config::new`] and in the validator's
    /// binary unless `--console`; on in `shogi-arbiter serve`.
    pub console: bool,
    /// Host names the console answers browsers under, beside IP addresses, `localhost` and
    /// `.localhost` names (a defence against DNS rebinding; `*`: any name). Empty by default.
    pub console_hosts: Vec<String>,
    /// How often the lag of the verdict check's consumer (`verdict-check`) is read from the bus
    /// for the `shogi.consumer.lag` gauge.
    pub lag_interval: Duration,
    /// Where the time a call was received is read (the system's clock; a test's own).
    pub time: crate::TimeSource,
    /// The sweep over the live games: how often, how many at a time, and how long a game may
    /// go without an entry before it is ended as abandoned (docs/rules.md section 10).
    pub sweep: crate::SweepSettings,
    /// The store's limit the games' stream is held to when it has none of its own: the NATS
    /// servers' `max_file_store`, for `shogi.store.limit` and its alert; `None`: not reported.
    pub store_limit_bytes: Option<u64>,
    /// How often the store's use is read (one stream info).
    pub store_interval: Duration,
}

/// Who announces a game's ending on its `.verdict` (`ResultCode::announcer`). Either way the
/// validator records every ending on `.result` (`service/gamelog.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announcements {
    /// The repetition-watcher and the impasse-judge run beside this service, each announcing
    /// the endings it owns; their announcements are checked against the log (`verdict-check`).
    ByOwners,
    /// This service runs alone and announces every ending itself (`--standalone`).
    ByValidator,
}

impl std::fmt::Debug for Config {
    // The secrets stay out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("nats", &self.nats)
            .field("stream", &self.stream)
            .field("stream_replicas", &self.stream_replicas)
            .field("auth_token", &self.auth_token.as_ref().map(|_| "<set>"))
            .field("credentials", &self.credentials)
            .field("grace_period", &self.grace_period)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("request_timeout", &self.request_timeout)
            .field("max_cached_games", &self.max_cached_games)
            .field("max_cache_bytes", &self.max_cache_bytes)
            .field("announcements", &self.announcements)
            .field("lag_interval", &self.lag_interval)
            .field("tls", &self.tls)
            .field("refusals", &self.refusals)
            .field("console", &self.console)
            .field("console_hosts", &self.console_hosts)
            .field("time", &self.time)
            .field("sweep", &self.sweep)
            .field("store_limit_bytes", &self.store_limit_bytes)
            .field("store_interval", &self.store_interval)
            .finish()
    }
}

impl Config {
    /// A configuration with the defaults for everything but the NATS URL.
    pub fn new(nats_url: impl Into<String>) -> Config {
        Config {
            nats: NatsOptions::new(nats_url),
            stream: shogi_proto::STREAM.to_owned(),
            stream_replicas: 1,
            auth_token: None,
            credentials: Vec::new(),
            grace_period: Duration::from_secs(10),
            max_message_bytes: 64 * 1024,
            request_timeout: Duration::from_secs(30),
            max_cached_games: 100_000,
            max_cache_bytes: 256 * 1024 * 1024,
            announcements: Announcements::ByValidator,
            tls: None,
            refusals: Refusals::default(),
            console: false,
            console_hosts: Vec::new(),
            lag_interval: arbiter_runtime::lag::INTERVAL,
            time: crate::TimeSource::system(),
            sweep: crate::SweepSettings::default(),
            store_limit_bytes: None,
            store_interval: Duration::from_secs(30),
        }
    }

    /// Every credential the service knows: the named ones, and the shared token's.
    pub fn all_credentials(&self) -> Vec<Credential> {
        let mut all = self.credentials.clone();
        all.extend(self.auth_token.as_deref().map(Credential::shared));
        all
    }

    /// The cache's limits.
    pub fn cache(&self) -> crate::CacheLimits {
        crate::CacheLimits {
            games: self.max_cached_games,
            bytes: self.max_cache_bytes,
        }
    }

    /// Checks every field; the first problem found, as a message naming the setting. The TLS
    /// files (gRPC's and NATS's) and the NATS credential files, when configured, are read and
    /// parsed here.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // The URLs, the credentials and the files they name.
        self.nats
            .validate()
            .map_err(|e| ConfigError(e.to_string()))?;
        if self.stream.is_empty()
            || !self
                .stream
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(ConfigError(format!(
                "stream name {:?} must be letters, digits, '-' or '_'",
                self.stream
            )));
        }
        arbiter_bus::check_replicas(self.stream_replicas).map_err(ConfigError)?;
        if let Some(token) = &self.auth_token
            && (token.is_empty() || token.contains(char::is_whitespace))
        {
            return Err(ConfigError(
                "auth token must be non-empty and without whitespace".into(),
            ));
        }
        crate::credentials::check_all(&self.all_credentials())?;
        if self.max_message_bytes < 1024 {
            return Err(ConfigError(format!(
                "max message size {} is below 1024 bytes",
                self.max_message_bytes
            )));
        }
        if self.max_cached_games == 0 {
            return Err(ConfigError("max cached games must be at least 1".into()));
        }
        if self.max_cache_bytes < 1024 * 1024 {
            return Err(ConfigError(format!(
                "max cache bytes {} is below 1 MiB",
                self.max_cache_bytes
            )));
        }
        if self.grace_period.is_zero() || self.request_timeout.is_zero() {
            return Err(ConfigError(
                "grace period and request timeout must be positive".into(),
            ));
        }
        if self.lag_interval.is_zero() {
            return Err(ConfigError("lag interval must be positive".into()));
        }
        if self.store_interval.is_zero() {
            return Err(ConfigError(
                "the store's polling interval must be positive".into(),
            ));
        }
        if self.sweep.interval.is_zero() || self.sweep.max_games == 0 {
            return Err(ConfigError(
                "the sweep's interval and games per sweep must be positive".into(),
            ));
        }
        if self
            .sweep
            .abandon_after
            .is_some_and(|a| a < self.sweep.interval)
        {
            return Err(ConfigError(format!(
                "the abandon limit {:?} is below the sweep's interval {:?}",
                self.sweep.abandon_after.unwrap_or_default(),
                self.sweep.interval
            )));
        }
        if let Some(bad) = self.console_hosts.iter().find(|h| {
            h.is_empty()
                || (h.as_str() != "*"
                    && !h
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_'))
        }) {
            return Err(ConfigError(format!(
                "console host {bad:?} must be a host name (letters, digits, '-', '.', without \
                 a port) or '*'"
            )));
        }
        if let Some(tls) = &self.tls {
            tls.server_config()?;
            tls.acceptor()?;
        }
        Ok(())
    }
}

/// A configuration problem, in words that name the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_bad_values_do_not() {
        assert!(Config::new("nats://127.0.0.1:4222").validate().is_ok());
        assert!(Config::new("127.0.0.1:4222").validate().is_ok());
        assert!(Config::new("http://x").validate().is_err());
        assert!(Config::new("").validate().is_err());
        let mut c = Config::new("nats://x:1");
        c.stream = "a.b".into();
        assert!(c.validate().is_err());
        let mut c = Config::new("nats://x:1");
        c.auth_token = Some(String::new());
        assert!(c.validate().is_err());
        for (replicas, ok) in [(0, false), (1, true), (3, true), (5, true), (6, false)] {
            let mut c = Config::new("nats://x:1");
            c.stream_replicas = replicas;
            assert_eq!(c.validate().is_ok(), ok, "{replicas} replicas");
        }
        let mut c = Config::new("nats://x:1");
        c.lag_interval = std::time::Duration::ZERO;
        assert_eq!(
            c.validate(),
            Err(ConfigError("lag interval must be positive".into()))
        );
    }
}
