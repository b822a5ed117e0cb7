//! TLS towards the validator's gRPC, for its clients (the CSA front end, `shogi-arbiter play`):
//! the CA its certificate must chain to, and a client certificate for a validator that asks
//! for one (mutual TLS, `move-validator --tls-client-ca`). The bearer token is the client's
//! own business, per call.
//!
//! The material is PEM files. [`endpoint`] reads and checks them (each file readable and
//! holding what it should) and builds the TLS configuration, so that a client calls it before
//! binding anything and a bad path stops the binary with a message naming the file. The PEM
//! checks here are the validator's too.

use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

/// A client's TLS material: PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientTls {
    /// The CA certificates the server's certificate must chain to; the system's roots are
    /// not read.
    pub ca: PathBuf,
    /// The client's certificate chain (leaf first) and private key, for a server that
    /// requires client certificates.
    pub identity: Option<(PathBuf, PathBuf)>,
}

/// Why a client cannot reach its server as configured.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// The URL is not one.
    #[error("url {url:?}: {source}")]
    Url {
        /// The URL.
        url: String,
        /// Why.
        source: tonic::transport::Error,
    },
    /// The TLS settings do not fit the URL, or a file is missing or holds the wrong thing.
    #[error("{0}")]
    Tls(String),
}

impl ClientTls {
    /// Trusting the CAs at `ca`, with no client certificate.
    pub fn new(ca: impl Into<PathBuf>) -> ClientTls {
        ClientTls {
            ca: ca.into(),
            identity: None,
        }
    }

    /// The same, presenting the certificate chain at `cert` with the key at `key`.
    pub fn with_identity(self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> ClientTls {
        ClientTls {
            identity: Some((cert.into(), key.into())),
            ..self
        }
    }

    /// From a client's flags: TLS when a CA is named, with the client certificate when
    /// both the certificate and its key are (the flags require each other).
    pub fn from_flags(
        ca: Option<PathBuf>,
        cert: Option<PathBuf>,
        key: Option<PathBuf>,
    ) -> Option<ClientTls> {
        let tls = ClientTls::new(ca?);
        Some(match (cert, key) {
            (Some(cert), Some(key)) => tls.with_identity(cert, key),
            _ => tls,
        })
    }

    /// Reads and checks the files, and returns tonic's client TLS configuration.
    fn config(&self) -> Result<ClientTlsConfig, String> {
        let ca = read(&self.ca, "tls ca")?;
        certificates(&ca, &self.ca, "tls ca")?;
        let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca));
        if let Some((cert_path, key_path)) = &self.identity {
            let cert = read(cert_path, "tls cert")?;
            certificates(&cert, cert_path, "tls cert")?;
            let key = read(key_path, "tls key")?;
            private_key(&key, key_path, "tls key")?;
            config = config.identity(Identity::from_pem(cert, key));
        }
        Ok(config)
    }
}

/// The endpoint of `url`, over TLS with `tls`: an `https://` URL needs it, and it needs an
/// `https://` URL, so that a client never speaks plaintext where TLS was asked for, nor
/// fails its handshakes for want of a CA. Not connected yet.
pub fn endpoint(url: &str, tls: Option<&ClientTls>) -> Result<Endpoint, ChannelError> {
    let endpoint = Endpoint::from_shared(url.to_owned()).map_err(|source| ChannelError::Url {
        url: url.to_owned(),
        source,
    })?;
    let https = endpoint.uri().scheme_str() == Some("https");
    match (https, tls) {
        (false, None) => Ok(endpoint),
        (true, None) => Err(ChannelError::Tls(format!(
            "{url}: an https URL needs the CA to trust (the tls ca option)"
        ))),
        (false, Some(_)) => Err(ChannelError::Tls(format!(
            "{url}: with TLS configured the URL is https://"
        ))),
        (true, Some(tls)) => {
            let config = tls.config().map_err(ChannelError::Tls)?;
            endpoint
                .tls_config(config)
                .map_err(|e| ChannelError::Tls(format!("{url}: {}", error_chain(&e))))
        }
    }
}

/// The bytes of the file at `path`; an error names it as `what`.
pub fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{what} {}: {e}", path.display()))
}

/// Checks that `pem`, read from `path`, holds at least one certificate and nothing
/// unparseable.
pub fn certificates(pem: &[u8], path: &Path, what: &str) -> Result<(), String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what} {}: bad PEM ({e})", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{what} {}: no PEM certificate found",
            path.display()
        ));
    }
    Ok(())
}

/// Checks that `pem`, read from `path`, holds a private key (PKCS#8, PKCS#1 or SEC1).
pub fn private_key(pem: &[u8], path: &Path, what: &str) -> Result<(), String> {
    PrivateKeyDer::from_pem_slice(pem)
        .map(drop)
        .map_err(|e| format!("{what} {}: no PEM private key found ({e})", path.display()))
}

/// An error and its sources, joined: tonic's transport error says little at the top.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_and_the_settings_agree() {
        assert!(endpoint("http://127.0.0.1:50051", None).is_ok());
        let err = endpoint("https://127.0.0.1:50051", None).unwrap_err();
        assert!(err.to_string().contains("needs the CA"), "{err}");
        let tls = ClientTls::new("ca.pem");
        let err = endpoint("http://127.0.0.1:50051", Some(&tls)).unwrap_err();
        assert!(err.to_string().contains("is https://"), "{err}");
        assert!(matches!(
            endpoint("not a url", None),
            Err(ChannelError::Url { .. })
        ));
    }

    #[test]
    fn missing_and_empty_files_are_named() {
        let dir = std::env::temp_dir().join(format!("client-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        let url = "https://127.0.0.1:50051";
        let err = endpoint(url, Some(&ClientTls::new(dir.join("nope.pem")))).unwrap_err();
        assert!(err.to_string().starts_with("tls ca "), "{err}");
        assert!(err.to_string().contains("nope.pem"), "{err}");
        let err = endpoint(url, Some(&ClientTls::new(&empty))).unwrap_err();
        assert!(
            err.to_string().contains("no PEM certificate found"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
