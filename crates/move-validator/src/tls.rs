//! TLS and mutual TLS for the gRPC server, by configuration.
//!
//! The material is PEM files named in the [`Config`](crate::Config). [`TlsConfig::server_config`]
//! reads and checks them (each file readable, each holding what it should, the key matching the
//! certificate) and is called by [`Config::validate`](crate::Config::validate), so that a bad path
//! or a bad PEM stops the binary with a message naming the file before any port is bound.
//!
//! With a client CA, the server asks every client for a certificate and refuses a connection
//! whose certificate that CA did not sign (mutual TLS). The bearer token, when configured, is
//! checked on top, per call.
//!
//! The handshakes are the service's own ([`TlsConfig::acceptor`], `incoming.rs`), not tonic's:
//! tonic drops a failed handshake with a debug line, and a refused client must be logged and
//! counted.

use crate::ConfigError;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};

/// Where the server's TLS material is: PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// The server's certificate chain, leaf first (`--tls-cert`).
    pub cert: PathBuf,
    /// The server's private key, PKCS#8, PKCS#1 or SEC1 (`--tls-key`).
    pub key: PathBuf,
    /// When set, clients must present a certificate signed by one of these CAs
    /// (`--tls-client-ca`): mutual TLS.
    pub client_ca: Option<PathBuf>,
}

impl TlsConfig {
    /// Server TLS with the certificate chain and key at these paths, no client certificates.
    pub fn new(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> TlsConfig {
        TlsConfig {
            cert: cert.into(),
            key: key.into(),
            client_ca: None,
        }
    }

    /// The same, requiring client certificates signed by the CAs at `client_ca`.
    pub fn with_client_ca(self, client_ca: impl Into<PathBuf>) -> TlsConfig {
        TlsConfig {
            client_ca: Some(client_ca.into()),
            ..self
        }
    }

    /// Reads and checks the files, and returns tonic's server TLS configuration.
    ///
    /// The checks are those of the TLS stack itself (a server identity is built from the
    /// files, then dropped), preceded by our own on each file so that the message names it.
    pub fn server_config(&self) -> Result<ServerTlsConfig, ConfigError> {
        let cert = read(&self.cert, "tls cert")?;
        certificates(&cert, &self.cert, "tls cert")?;
        let key = read(&self.key, "tls key")?;
        arbiter_runtime::tls::private_key(&key, &self.key, "tls key").map_err(ConfigError)?;
        let mut config = ServerTlsConfig::new().identity(Identity::from_pem(cert, key));
        if let Some(path) = &self.client_ca {
            let ca = read(path, "tls client ca")?;
            certificates(&ca, path, "tls client ca")?;
            config = config.client_ca_root(Certificate::from_pem(ca));
        }
        // Whether the key belongs to the certificate, and the CAs parse as trust anchors.
        Server::builder().tls_config(config.clone()).map_err(|e| {
            ConfigError(format!(
                "tls cert {} and key {}{}: {}",
                self.cert.display(),
                self.key.display(),
                self.client_ca
                    .as_ref()
                    .map(|p| format!(" with client ca {}", p.display()))
                    .unwrap_or_default(),
                arbiter_runtime::tls::error_chain(&e)
            ))
        })?;
        Ok(config)
    }

    /// The TLS acceptor the server runs its handshakes with: the same material and rules as
    /// [`TlsConfig::server_config`] (HTTP/2 by ALPN, client certificates from the client CA when
    /// set), built here rather than by tonic so that a refused handshake is seen, logged and
    /// counted ([`crate::Refusals`]).
    pub(crate) fn acceptor(&self) -> Result<tokio_rustls::TlsAcceptor, ConfigError> {
        use tokio_rustls::rustls::{self, RootCertStore, server::WebPkiClientVerifier};
        let fail = |e: &dyn std::fmt::Display| {
            ConfigError(format!(
                "tls cert {} and key {}: {e}",
                self.cert.display(),
                self.key.display()
            ))
        };
        let cert = read(&self.cert, "tls cert")?;
        let chain = CertificateDer::pem_slice_iter(&cert)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(&e))?;
        let key =
            PrivateKeyDer::from_pem_slice(&read(&self.key, "tls key")?).map_err(|e| fail(&e))?;
        // Explicitly ring, as tonic's `tls-ring`: the process may link another provider too.
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| fail(&e))?;
        let builder = match &self.client_ca {
            None => builder.with_no_client_auth(),
            Some(path) => {
                let mut roots = RootCertStore::empty();
                for ca in CertificateDer::pem_slice_iter(&read(path, "tls client ca")?) {
                    let ca = ca.map_err(|e| {
                        ConfigError(format!("tls client ca {}: bad PEM ({e})", path.display()))
                    })?;
                    roots.add(ca).map_err(|e| {
                        ConfigError(format!("tls client ca {}: {e}", path.display()))
                    })?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .map_err(|e| ConfigError(format!("tls client ca {}: {e}", path.display())))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder.with_single_cert(chain, key).map_err(|e| fail(&e))?;
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config)))
    }
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, ConfigError> {
    arbiter_runtime::tls::read(path, what).map_err(ConfigError)
}

fn certificates(pem: &[u8], path: &Path, what: &str) -> Result<(), ConfigError> {
    arbiter_runtime::tls::certificates(pem, path, what).map_err(ConfigError)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_empty_files_are_named() {
        let dir = std::env::temp_dir().join(format!("mv-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        let err = TlsConfig::new(dir.join("nope.pem"), &empty)
            .server_config()
            .unwrap_err();
        assert!(err.0.starts_with("tls cert "), "{err}");
        assert!(err.0.contains("nope.pem"), "{err}");
        let err = TlsConfig::new(&empty, &empty).server_config().unwrap_err();
        assert!(err.0.contains("no PEM certificate found"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
