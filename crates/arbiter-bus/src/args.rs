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
/// never from a flag's value in a process listing: the nkey seed is read from a file only.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct NatsArgs {
    /// Token to authenticate to NATS.
    #[arg(long, env = "NATS_TOKEN", hide_env_values = true)]
    pub nats_token: Option<String>,
    /// User to authenticate to NATS as; needs --nats-password.
    #[arg(long, env = "NATS_USER", requires = "nats_password")]
    pub nats_user: Option<String>,
    /// Password of --nats-user (prefer the environment variable).
    #[arg(
        long,
        env = "NATS_PASSWORD",
        hide_env_values = true,
        requires = "nats_user"
    )]
    pub nats_password: Option<String>,
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
}

impl NatsArgs {
    /// The connection options for the server(s) at `url` (comma-separated). Check them with
    /// [`NatsOptions::validate`] before binding anything.
    pub fn options(&self, url: impl Into<String>) -> NatsOptions {
        NatsOptions {
            url: url.into(),
            token: self.nats_token.clone(),
            user: self.nats_user.clone(),
            password: self.nats_password.clone(),
            credentials_file: self.nats_creds.clone(),
            nkey_seed_file: self.nats_nkey_seed_file.clone(),
            tls: NatsTls {
                ca: self.nats_tls_ca.clone(),
                cert: self.nats_tls_cert.clone(),
                key: self.nats_tls_key.clone(),
                required: self.nats_tls_required,
            },
        }
    }
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
        let cli = Cli::try_parse_from([
            "x",
            "--nats-user",
            "arbiter",
            "--nats-password",
            "pw",
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
        // A password without a user, a certificate without its key: refused by clap.
        assert!(Cli::try_parse_from(["x", "--nats-password", "pw"]).is_err());
        assert!(Cli::try_parse_from(["x", "--nats-tls-cert", "c.pem"]).is_err());
    }
}
