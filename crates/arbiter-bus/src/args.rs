//! The NATS connection flags every binary shares (feature `clap`), flattened into each one's
//! arguments, so that the names, the environment variables and their checks are written once.
//!
//! The server URL stays with each binary (`--nats-url`, `NATS_URL`), because its default
//! differs: `shogi-arbiter serve` runs on an embedded bus without one.

use crate::{NatsOptions, NatsTls};
use std::path::PathBuf;

/// How to authenticate to NATS and whether to speak TLS: `#[command(flatten)]` it.
///
/// Secrets come from the environment or from files (a Kubernetes Secret mounted as a volume),
/// never from a flag's value, which any user of the host can read in the process list: the
/// token and the password are read from `NATS_TOKEN` and `NATS_PASSWORD` (or from the files
/// `--nats-token-file`, `--nats-password-file` name), the nkey seed from a file only, and
/// `--help` never prints their values.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(
    after_help = "NATS secrets: NATS_TOKEN and NATS_PASSWORD are read from the \
environment only (or from --nats-token-file, --nats-password-file), never from a flag."
)]
pub struct NatsArgs {
    /// File holding the token to authenticate to NATS with (or the environment variable
    /// NATS_TOKEN).
    #[arg(long, env = "NATS_TOKEN_FILE")]
    pub nats_token_file: Option<PathBuf>,
    /// User to authenticate to NATS as; its password comes from NATS_PASSWORD or
    /// --nats-password-file.
    #[arg(long, env = "NATS_USER")]
    pub nats_user: Option<String>,
    /// File holding the password of --nats-user (or the environment variable NATS_PASSWORD).
    #[arg(long, env = "NATS_PASSWORD_FILE")]
    pub nats_password_file: Option<PathBuf>,
    /// NATS credentials file (.creds: a user JWT and its nkey seed), for servers in operator
    /// mode.
    #[arg(long, env = "NATS_CREDS")]
    pub nats_creds: Option<PathBuf>,
    /// File holding the user nkey seed (SU...) to authenticate to NATS with.
    #[arg(long, env = "NATS_NKEY_SEED_FILE")]
    pub nats_nkey_seed_file: Option<PathBuf>,
    /// PEM CA certificates to trust for the NATS servers' certificates, instead of the
    /// system's.
    #[arg(long, env = "NATS_TLS_CA")]
    pub nats_tls_ca: Option<PathBuf>,
    /// PEM client certificate chain for NATS servers that verify clients (mutual TLS); needs
    /// --nats-tls-key.
    #[arg(long, env = "NATS_TLS_CERT", requires = "nats_tls_key")]
    pub nats_tls_cert: Option<PathBuf>,
    /// PEM private key of --nats-tls-cert.
    #[arg(long, env = "NATS_TLS_KEY", requires = "nats_tls_cert")]
    pub nats_tls_key: Option<PathBuf>,
    /// Speak TLS to NATS even if the server does not ask for it (the variable: true/false,
    /// 1/0, yes/no, on/off).
    #[arg(
        long,
        env = "NATS_TLS_REQUIRED",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub nats_tls_required: bool,
    /// The prefix of this client's reply subjects (default `_INBOX.<user>` with --nats-user,
    /// else `_INBOX`): a server's permissions give each user its own replies only.
    #[arg(long, env = "NATS_INBOX_PREFIX")]
    pub nats_inbox_prefix: Option<String>,
    /// The JetStream API's subject prefix (default `$JS.API`): `JS.ARBITER.API` for a user of
    /// an account that imports the streams' API (deploy/nats/auth.conf: watcher, judge,
    /// reader).
    #[arg(long, env = "NATS_JS_API_PREFIX")]
    pub nats_js_api_prefix: Option<String>,
    /// Whether this service creates missing streams and durable consumers (`create`), or only
    /// binds to those a setup job made with `shogi-arbiter streams apply` (`bind`: production,
    /// where the services hold no stream-admin rights).
    #[arg(long = "streams", env = "ARBITER_STREAMS", value_enum, default_value_t = crate::Provision::Create)]
    pub provision: crate::Provision,
}

impl NatsArgs {
    /// The connection options for the server(s) at `url` (comma-separated). Check them with
    /// [`NatsOptions::validate`] before binding anything.
    pub fn options(&self, url: impl Into<String>) -> NatsOptions {
        NatsOptions {
            url: url.into(),
            token: secret("NATS_TOKEN", self.nats_token_file.as_deref()),
            user: self.nats_user.clone(),
            password: secret("NATS_PASSWORD", self.nats_password_file.as_deref()),
            credentials_file: self.nats_creds.clone(),
            nkey_seed_file: self.nats_nkey_seed_file.clone(),
            tls: NatsTls {
                ca: self.nats_tls_ca.clone(),
                cert: self.nats_tls_cert.clone(),
                key: self.nats_tls_key.clone(),
                required: self.nats_tls_required,
            },
            inbox_prefix: self.nats_inbox_prefix.clone(),
            api_prefix: self.nats_js_api_prefix.clone(),
            provision: self.provision,
        }
    }
}

/// A secret from the environment variable `var`, or else from `file` (its content, without the
/// final line break). An unreadable or empty file gives an empty secret, which
/// [`NatsOptions::validate`] refuses before anything connects.
fn secret(var: &str, file: Option<&std::path::Path>) -> Option<String> {
    if let Some(value) = std::env::var(var).ok().filter(|v| !v.is_empty()) {
        return Some(value);
    }
    let path = file?;
    Some(
        std::fs::read_to_string(path)
            .map(|s| s.trim_end_matches(['\r', '\n']).to_owned())
            .unwrap_or_default(),
    )
}

/// The `--stream-replicas` flag of every binary that may create the streams (the services,
/// `serve`, `streams apply`): one type, one check ([`check_replicas`], which the services'
/// configurations use too).
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct ReplicasArgs {
    /// Servers that keep a copy of each stream, when this process creates it: 1 on a single
    /// server, 3 on a NATS cluster (at most 5). An existing stream keeps its count.
    #[arg(long, env = "NATS_STREAM_REPLICAS", default_value_t = 1, value_parser = parse_replicas)]
    pub stream_replicas: usize,
}

/// `replicas` if a stream may have that many copies (1 to [`crate::MAX_REPLICAS`]).
///
/// # Errors
///
/// The reason, when it may not.
pub fn check_replicas(replicas: usize) -> Result<usize, String> {
    if (1..=crate::MAX_REPLICAS).contains(&replicas) {
        Ok(replicas)
    } else {
        Err(format!(
            "stream replicas {replicas} is not in 1..={}",
            crate::MAX_REPLICAS
        ))
    }
}

fn parse_replicas(text: &str) -> Result<usize, String> {
    let n = text
        .parse::<usize>()
        .map_err(|e| format!("{text:?} is not a count: {e}"))?;
    check_replicas(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        nats: NatsArgs,
    }

    #[test]
    fn flags_fill_the_options() {
        let dir = std::env::temp_dir().join(format!("nats-args-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pw = dir.join("password");
        std::fs::write(&pw, "pw\n").unwrap();
        let cli = Cli::try_parse_from([
            "x",
            "--nats-user",
            "arbiter",
            "--nats-password-file",
            pw.to_str().unwrap(),
            "--nats-tls-ca",
            "ca.pem",
            "--nats-tls-cert",
            "c.pem",
            "--nats-tls-key",
            "k.pem",
            "--nats-tls-required",
        ])
        .unwrap();
        let o = cli.nats.options("nats://a:4222,nats://b:4222");
        assert_eq!(o.urls().len(), 2);
        assert_eq!(o.user.as_deref(), Some("arbiter"));
        assert_eq!(o.password.as_deref(), Some("pw"));
        assert_eq!(o.tls.ca, Some(PathBuf::from("ca.pem")));
        assert!(o.tls.required);
        // No secret is a flag's value; a certificate without its key is refused by clap.
        assert!(Cli::try_parse_from(["x", "--nats-password", "pw"]).is_err());
        assert!(Cli::try_parse_from(["x", "--nats-token", "t"]).is_err());
        assert!(Cli::try_parse_from(["x", "--nats-tls-cert", "c.pem"]).is_err());
    }

    #[test]
    fn stream_replicas_are_one_to_five() {
        #[derive(clap::Parser)]
        struct R {
            #[command(flatten)]
            r: ReplicasArgs,
        }
        assert_eq!(R::try_parse_from(["x"]).unwrap().r.stream_replicas, 1);
        let three = R::try_parse_from(["x", "--stream-replicas", "3"]).unwrap();
        assert_eq!(three.r.stream_replicas, 3);
        for bad in ["0", "6", "-1", "three"] {
            assert!(
                R::try_parse_from(["x", "--stream-replicas", bad]).is_err(),
                "{bad}"
            );
        }
        assert!(check_replicas(5).is_ok() && check_replicas(0).is_err());
    }
}
