//! A nats-server with a configuration file (TLS, authorization), and the test PKI to go with it:
//! CAs and certificates made in the test by rcgen, written as PEM files.

use crate::{INSTALL_HINT, NatsServer, READY_DEADLINE, nats_server_binary, wait_ready};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The NATS users of the shipped `deploy/nats/auth.conf`, each of whose passwords it reads from
/// `<USER>_PASSWORD`.
pub const AUTH_USERS: [&str; 7] = [
    "admin",
    "validator",
    "watcher",
    "judge",
    "reader",
    "csa",
    "listener",
];

impl NatsServer {
    /// Starts a nats-server with JetStream, as [`NatsServer::start`] does, reading `config`
    /// (nats-server configuration syntax: `tls { ... }`, `authorization { ... }`) from a file in
    /// its store directory. The address, port and store still come from the command line.
    ///
    /// # Panics
    ///
    /// As [`NatsServer::start`]; the message carries the server's log, which names a bad
    /// configuration.
    pub fn start_with_config(config: &str) -> NatsServer {
        NatsServer::launch_with_config(config, "-1", &[])
    }

    /// As [`NatsServer::start_with_config`], with environment variables `env` set for the
    /// server, which its configuration may reference (`password: $VALIDATOR_PASSWORD`).
    ///
    /// # Panics
    ///
    /// As [`NatsServer::start_with_config`].
    pub fn start_with_config_env(config: &str, env: &[(&str, &str)]) -> NatsServer {
        NatsServer::launch_with_config(config, "-1", env)
    }

    /// As [`NatsServer::start_with_config_env`], for `config` holding the shipped
    /// `deploy/nats/auth.conf`: each of [`AUTH_USERS`] has the password `password(user)`, in
    /// its `<USER>_PASSWORD` variable.
    ///
    /// # Panics
    ///
    /// As [`NatsServer::start_with_config`].
    pub fn start_with_auth(config: &str, password: impl Fn(&str) -> String) -> NatsServer {
        let env: Vec<(String, String)> = AUTH_USERS
            .iter()
            .map(|u| (format!("{}_PASSWORD", u.to_ascii_uppercase()), password(u)))
            .collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        NatsServer::start_with_config_env(config, &env)
    }

    /// As [`NatsServer::start_with_config`], on the loopback port `port`: for a test whose
    /// client is started before its server.
    ///
    /// # Panics
    ///
    /// As [`NatsServer::start_with_config`], and when the port is taken.
    pub fn start_with_config_on(config: &str, port: u16) -> NatsServer {
        NatsServer::launch_with_config(config, &port.to_string(), &[])
    }

    fn launch_with_config(config: &str, port: &str, env: &[(&str, &str)]) -> NatsServer {
        let bin = nats_server_binary();
        let store = tempfile::Builder::new()
            .prefix("nats-test-")
            .tempdir()
            .expect("create a temporary JetStream store directory");
        let conf = store.path().join("nats.conf");
        std::fs::write(&conf, config).expect("write nats.conf");
        let mut child = Command::new(&bin)
            .arg("-c")
            .arg(&conf)
            .args(["-a", "127.0.0.1", "-p", port, "-js", "-sd"])
            .arg(store.path())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}. {INSTALL_HINT}", bin.display()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let port = match wait_ready(stderr) {
            Ok(port) => port,
            Err(log) => {
                let _ = child.kill();
                let status = child.wait();
                panic!(
                    "nats-server did not report ready within {READY_DEADLINE:?} \
                     (exit status {status:?}); its configuration:\n{config}\nits log:\n{log}"
                );
            }
        };
        NatsServer {
            child,
            port,
            url: format!("nats://127.0.0.1:{port}"),
            store,
            monitor_port: None,
        }
    }
}

/// A certificate authority made for a test.
#[derive(Debug)]
pub struct TestCa {
    /// Its certificate, PEM.
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    /// A new self-signed CA named `name`.
    pub fn new(name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().expect("CA key");
        let pem = params.self_signed(&key).expect("self-sign the CA").pem();
        TestCa {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A leaf certificate for the DNS names or IP addresses `names`, signed by this CA:
    /// (certificate PEM, private key PEM).
    pub fn leaf(&self, names: &[&str]) -> (String, String) {
        let params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .expect("leaf params");
        let key = KeyPair::generate().expect("leaf key");
        let cert = params.signed_by(&key, &self.issuer).expect("sign the leaf");
        (cert.pem(), key.serialize_pem())
    }
}

/// A test PKI in a temporary directory: a CA that signs the server's certificate (for
/// `localhost` and `127.0.0.1`) and the good client's, and a rogue CA nobody trusts.
///
/// Files: `ca.pem`, `server.pem`, `server.key`, `client.pem`, `client.key`, `rogue-ca.pem`,
/// `rogue-client.pem`, `rogue-client.key`.
#[derive(Debug)]
pub struct TestPki {
    dir: tempfile::TempDir,
    /// The CA trusted on both sides.
    pub ca: TestCa,
    /// A CA trusted by nobody.
    pub rogue_ca: TestCa,
}

impl Default for TestPki {
    fn default() -> TestPki {
        TestPki::new()
    }
}

impl TestPki {
    /// Makes the CAs and certificates and writes them.
    pub fn new() -> TestPki {
        let pki = TestPki {
            dir: tempfile::Builder::new()
                .prefix("test-pki-")
                .tempdir()
                .expect("create a temporary PKI directory"),
            ca: TestCa::new("test ca"),
            rogue_ca: TestCa::new("rogue ca"),
        };
        pki.write("ca.pem", &pki.ca.pem);
        pki.write("rogue-ca.pem", &pki.rogue_ca.pem);
        let (cert, key) = pki.ca.leaf(&["localhost", "127.0.0.1"]);
        pki.write("server.pem", &cert);
        pki.write("server.key", &key);
        let (cert, key) = pki.ca.leaf(&["client"]);
        pki.write("client.pem", &cert);
        pki.write("client.key", &key);
        let (cert, key) = pki.rogue_ca.leaf(&["client"]);
        pki.write("rogue-client.pem", &cert);
        pki.write("rogue-client.key", &key);
        pki
    }

    /// Writes `text` to the file `name` in the PKI directory and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).expect("write a PKI file");
        path
    }

    /// The path of the file `name` in the PKI directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A nats-server `tls { }` block serving `server.pem`; with `verify`, clients must present
    /// a certificate signed by `ca.pem` (mutual TLS).
    pub fn nats_tls_block(&self, verify: bool) -> String {
        format!(
            "tls {{\n  cert_file: {:?}\n  key_file: {:?}\n  ca_file: {:?}\n  verify: {verify}\n  \
             timeout: 5\n}}\n",
            self.path("server.pem"),
            self.path("server.key"),
            self.path("ca.pem"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_server_starts_and_reports_its_port() {
        let pki = TestPki::new();
        let server = NatsServer::start_with_config(&pki.nats_tls_block(true));
        assert!(server.port() > 0);
        assert!(server.store_dir().join("nats.conf").is_file());
    }

    #[test]
    #[should_panic(expected = "its log")]
    fn a_bad_configuration_fails_with_the_log() {
        NatsServer::start_with_config("tls { cert_file: \"/nonexistent.pem\" }\n");
    }
}
