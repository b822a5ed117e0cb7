//! Named credentials: who may call the service, what each may do (its scopes) and how much
//! (its quotas), read from a TOML file (`--credentials-file`) and checked before anything is
//! bound. The layer that enforces them is `auth.rs`.
//!
//! ```toml
//! [[credential]]
//! name = "platform-a"              # letters, digits, '-', '_' and '.'; metrics and logs name it
//! token = "…"                      # its bearer token, and/or
//! client_certificate = "a.pem"     # its TLS client certificate (PEM; relative to this file)
//! scopes = ["play", "read"]        # play: write games; read: read them; operate: the Operator
//! games_per_second = 5             # quotas, each optional (absent: no limit)
//! live_games = 1000
//! calls_per_second = 200
//! watch_streams = 100            # WatchGame streams open at once, per instance
//! move_streams = 4                 # SubmitMoves streams open at once, per instance
//! ```
//!
//! A bad file is refused with its path and the line at fault. The single shared token of a
//! one-platform deployment (`MOVE_VALIDATOR_AUTH_TOKEN`) is [`Credential::shared`]: every
//! scope, no quota.

use crate::ConfigError;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject as _;
use std::path::Path;

/// What a credential may do; each method of the contract needs one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Write games: CreateGame, SubmitMove, SubmitMoves, Declare, EndGame.
    Play,
    /// Read games and judge positions: GetGame, WatchGame, ListGames, AnalyzeGame,
    /// ValidateMove, LegalMoves, EvaluateImpasse.
    Read,
    /// The operator's view (`shogi.v1.Operator`), which names every platform's games.
    Operate,
}

impl Scope {
    /// Every scope.
    pub const ALL: [Scope; 3] = [Scope::Play, Scope::Read, Scope::Operate];

    /// The scope's name, as the file and the errors write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Play => "play",
            Scope::Read => "read",
            Scope::Operate => "operate",
        }
    }
}

/// A quota a credential can be over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    /// Games created per second (a token bucket).
    GamesPerSecond,
    /// Games created by the credential and without a verdict, on the bus.
    LiveGames,
    /// Calls per second, every method (a token bucket).
    CallsPerSecond,
    /// WatchGame streams open at once on this instance.
    WatchStreams,
    /// SubmitMoves streams open at once on this instance.
    MoveStreams,
}

impl Limit {
    /// Every limit.
    pub const ALL: [Limit; 5] = [
        Limit::GamesPerSecond,
        Limit::LiveGames,
        Limit::CallsPerSecond,
        Limit::WatchStreams,
        Limit::MoveStreams,
    ];

    /// The limit's name: its key in the file, in errors and in metrics.
    pub const fn as_str(self) -> &'static str {
        match self {
            Limit::GamesPerSecond => "games_per_second",
            Limit::LiveGames => "live_games",
            Limit::CallsPerSecond => "calls_per_second",
            Limit::WatchStreams => "watch_streams",
            Limit::MoveStreams => "move_streams",
        }
    }
}

/// A credential's quotas; `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Quotas {
    /// Games created per second, with a burst of one second's worth (at least one).
    pub games_per_second: Option<f64>,
    /// Live games created by this credential.
    pub live_games: Option<u32>,
    /// Calls per second, with a burst of one second's worth (at least one).
    pub calls_per_second: Option<f64>,
    /// WatchGame streams open at once, per instance.
    pub watch_streams: Option<u32>,
    /// SubmitMoves streams open at once, per instance (each of their moves is also a call
    /// against `calls_per_second`).
    pub move_streams: Option<u32>,
}

/// One credential: a name, how a client proves it holds it (a bearer token, a TLS client
/// certificate, or both), its scopes and its quotas. Its `Debug` shows neither secret.
#[derive(Clone, PartialEq)]
pub struct Credential {
    /// Its name, as metrics, logs and the operator's error list give it.
    pub name: String,
    /// The bearer token that identifies it.
    pub token: Option<String>,
    /// The DER of the TLS client certificate that identifies it, where the server requires
    /// client certificates.
    pub client_certificate: Option<Vec<u8>>,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// How much.
    pub quotas: Quotas,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("name", &self.name)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field(
                "client_certificate",
                &self.client_certificate.as_ref().map(|_| "<set>"),
            )
            .field("scopes", &self.scopes)
            .field("quotas", &self.quotas)
            .finish()
    }
}

impl Credential {
    /// The name of the one credential a shared bearer token makes.
    pub const SHARED: &'static str = "shared";

    /// A credential with `token`, every scope and no quota: what the single shared token
    /// (`MOVE_VALIDATOR_AUTH_TOKEN`) is.
    pub fn shared(token: &str) -> Credential {
        Credential::new(Credential::SHARED, token, &Scope::ALL)
    }

    /// A credential `name` with `token` and `scopes`, no quota.
    pub fn new(name: &str, token: &str, scopes: &[Scope]) -> Credential {
        Credential {
            name: name.to_owned(),
            token: Some(token.to_owned()),
            client_certificate: None,
            scopes: scopes.to_vec(),
            quotas: Quotas::default(),
        }
    }

    /// The same with `quotas`.
    pub fn with_quotas(self, quotas: Quotas) -> Credential {
        Credential { quotas, ..self }
    }

    /// Whether it may do what `scope` allows.
    pub fn allows(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }

    /// The first problem with this credential alone.
    fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        if let Some(token) = &self.token
            && (token.is_empty() || token.contains(char::is_whitespace))
        {
            return Err("token must be non-empty and without whitespace".into());
        }
        if self.token.is_none() && self.client_certificate.is_none() {
            return Err("needs a token or a client_certificate".into());
        }
        if self.scopes.is_empty() {
            return Err("needs at least one scope".into());
        }
        let q = &self.quotas;
        for (limit, rate) in [
            (Limit::GamesPerSecond, q.games_per_second),
            (Limit::CallsPerSecond, q.calls_per_second),
        ] {
            if rate.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
                return Err(format!("{} must be a positive number", limit.as_str()));
            }
        }
        Ok(())
    }
}

/// Checks the credentials together: each alone, then no name, token or certificate twice.
///
/// # Errors
///
/// The first problem, naming the credential.
pub fn check_all(credentials: &[Credential]) -> Result<(), ConfigError> {
    for (i, c) in credentials.iter().enumerate() {
        c.check()
            .map_err(|e| ConfigError(format!("credential {:?}: {e}", c.name)))?;
        for other in &credentials[..i] {
            if other.name == c.name {
                return Err(ConfigError(format!(
                    "credential {:?}: name used twice",
                    c.name
                )));
            }
            if c.token.is_some() && other.token == c.token {
                return Err(ConfigError(format!(
                    "credential {:?}: same token as credential {:?}",
                    c.name, other.name
                )));
            }
            if c.client_certificate.is_some() && other.client_certificate == c.client_certificate {
                return Err(ConfigError(format!(
                    "credential {:?}: same client certificate as credential {:?}",
                    c.name, other.name
                )));
            }
        }
    }
    Ok(())
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "name {name:?} must be 1 to 64 letters, digits, '-', '_' or '.'"
        ));
    }
    Ok(())
}

/// Reads the credentials file at `path` ([`parse`]).
///
/// # Errors
///
/// A file that cannot be read, or is not a valid credentials file: the message names the file
/// and, where there is one, the line at fault.
pub fn from_file(path: &Path) -> Result<Vec<Credential>, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("credentials file {}: {e}", path.display())))?;
    parse(&text, path.parent().unwrap_or(Path::new(".")))
        .map_err(|e| ConfigError(format!("credentials file {}: {}", path.display(), e.0)))
}

/// Parses a credentials file's `text`; certificate paths are relative to `dir`. Every key is
/// known, every value of its type, each credential valid alone and with the others
/// ([`check_all`]).
///
/// # Errors
///
/// The first problem, as `line N: ...`.
pub fn parse(text: &str, dir: &Path) -> Result<Vec<Credential>, ConfigError> {
    let line = |span: Option<std::ops::Range<usize>>| {
        span.map_or(0, |s| {
            text[..s.start.min(text.len())]
                .bytes()
                .filter(|b| *b == b'\n')
                .count()
                + 1
        })
    };
    let at = |span, msg: String| ConfigError(format!("line {}: {msg}", line(span)));
    let doc = toml_edit::Document::parse(text)
        .map_err(|e| at(e.span(), e.message().trim().to_owned()))?;
    let root = doc.as_table();
    for (key, item) in root.iter() {
        if key != "credential" {
            return Err(at(
                root.key(key).and_then(|k| k.span()).or(item.span()),
                format!("unknown key {key:?}; the file holds [[credential]] tables"),
            ));
        }
    }
    let Some(item) = root.get("credential") else {
        return Err(ConfigError("line 1: no [[credential]] table".into()));
    };
    let Some(tables) = item.as_array_of_tables() else {
        return Err(at(
            item.span(),
            "credential must be an array of tables, [[credential]]".into(),
        ));
    };
    let mut out = Vec::new();
    for table in tables.iter() {
        let mut credential = Credential {
            name: String::new(),
            token: None,
            client_certificate: None,
            scopes: Vec::new(),
            quotas: Quotas::default(),
        };
        let mut name_seen = false;
        for (key, item) in table.iter() {
            let span = item
                .span()
                .or_else(|| table.key(key).and_then(|k| k.span()));
            let value = item.as_value();
            let string = || {
                value
                    .and_then(|v| v.as_str())
                    .ok_or_else(|| at(span.clone(), format!("{key} must be a string")))
            };
            let count = || {
                value
                    .and_then(|v| v.as_integer())
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        at(
                            span.clone(),
                            format!("{key} must be a whole number from 1 to {}", u32::MAX),
                        )
                    })
            };
            let rate = || {
                value
                    .and_then(|v| v.as_float().or(v.as_integer().map(|n| n as f64)))
                    .filter(|r| r.is_finite() && *r > 0.0)
                    .ok_or_else(|| at(span.clone(), format!("{key} must be a positive number")))
            };
            match key {
                "name" => {
                    let name = string()?;
                    check_name(name).map_err(|e| at(span.clone(), e))?;
                    credential.name = name.to_owned();
                    name_seen = true;
                }
                "token" => credential.token = Some(string()?.to_owned()),
                "client_certificate" => {
                    let path = dir.join(string()?);
                    credential.client_certificate =
                        Some(leaf_certificate(&path).map_err(|e| at(span.clone(), e))?);
                }
                "scopes" => {
                    let list = value.and_then(|v| v.as_array()).ok_or_else(|| {
                        at(
                            span.clone(),
                            "scopes must be a list of \"play\", \"read\", \"operate\"".into(),
                        )
                    })?;
                    for v in list.iter() {
                        let scope = v
                            .as_str()
                            .and_then(|s| Scope::ALL.into_iter().find(|c| c.as_str() == s))
                            .ok_or_else(|| {
                                at(
                                    v.span().or(span.clone()),
                                    format!(
                                        "unknown scope {}; known: play, read, operate",
                                        v.as_str().map_or_else(
                                            || format!("of type {}", v.type_name()),
                                            |s| format!("{s:?}")
                                        )
                                    ),
                                )
                            })?;
                        if !credential.scopes.contains(&scope) {
                            credential.scopes.push(scope);
                        }
                    }
                }
                "games_per_second" => credential.quotas.games_per_second = Some(rate()?),
                "calls_per_second" => credential.quotas.calls_per_second = Some(rate()?),
                "live_games" => credential.quotas.live_games = Some(count()?),
                "watch_streams" => credential.quotas.watch_streams = Some(count()?),
                "move_streams" => credential.quotas.move_streams = Some(count()?),
                other => {
                    return Err(at(
                        span,
                        format!(
                            "unknown key {other:?}; known: name, token, client_certificate, \
                             scopes, games_per_second, live_games, calls_per_second, \
                             watch_streams, move_streams"
                        ),
                    ));
                }
            }
        }
        let start = table.span();
        if !name_seen {
            return Err(at(start, "credential without a name".into()));
        }
        credential.check().map_err(|e| {
            at(
                start.clone(),
                format!("credential {:?}: {e}", credential.name),
            )
        })?;
        if let Err(e) = check_all(&[out.as_slice(), &[credential.clone()]].concat()) {
            return Err(at(start, e.0));
        }
        out.push(credential);
    }
    Ok(out)
}

/// The DER of the first certificate in the PEM file at `path`.
fn leaf_certificate(path: &Path) -> Result<Vec<u8>, String> {
    let pem =
        std::fs::read(path).map_err(|e| format!("client_certificate {}: {e}", path.display()))?;
    let first = CertificateDer::pem_slice_iter(&pem)
        .next()
        .ok_or_else(|| {
            format!(
                "client_certificate {}: no PEM certificate found",
                path.display()
            )
        })?
        .map_err(|e| format!("client_certificate {}: bad PEM ({e})", path.display()))?;
    Ok(first.as_ref().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: &str) {
        let got = match parse(text, Path::new(".")) {
            Ok(list) => format!("{list:?}"),
            Err(e) => e.0,
        };
        assert!(got.contains(expect), "{text}\n=> {got}\nwanted: {expect}");
    }

    #[test]
    fn a_good_file_reads_and_bad_ones_name_their_line() {
        let good = "[[credential]]\nname = \"a\"\ntoken = \"t1\"\nscopes = [\"play\", \"read\"]\n\
                    games_per_second = 2.5\nlive_games = 10\ncalls_per_second = 100\n\
                    watch_streams = 3\nmove_streams = 2\n\n[[credential]]\nname = \"ops\"\ntoken = \"t2\"\n\
                    scopes = [\"operate\"]\n";
        let list = parse(good, Path::new(".")).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].quotas.games_per_second, Some(2.5));
        assert_eq!(list[0].quotas.live_games, Some(10));
        assert_eq!(list[0].quotas.watch_streams, Some(3));
        assert_eq!(list[0].quotas.move_streams, Some(2));
        assert_eq!(list[1].scopes, vec![Scope::Operate]);
        // The secret stays out of the debug text.
        check(good, "token: Some(\"<set>\")");
        assert!(!format!("{list:?}").contains("t1"));

        check(
            "[[credential]]\nname = \"a\"\ntoken = \"t\"\nscopes = [\"fly\"]\n",
            "line 4: unknown scope \"fly\"",
        );
        check(
            "[[credential]]\nname = \"a\"\ntoken = \"t\"\nscopes = [\"read\"]\nlive_games = -1\n",
            "line 5: live_games must be a whole number",
        );
        check(
            "[[credential]]\nname = \"a\"\ntoken = \"t\"\nscopes = [\"read\"]\ncalls_per_second = \"x\"\n",
            "line 5: calls_per_second must be a positive number",
        );
        check(
            "[[credential]]\nname = \"a\"\ntoken = \"t\"\nscopes = [\"read\"]\ncolour = 1\n",
            "line 5: unknown key \"colour\"",
        );
        check(
            "[[credential]]\nname = \"a b\"\n",
            "line 2: name \"a b\" must be",
        );
        check(
            "[[credential]]\nname = \"a\"\nscopes = [\"read\"]\n",
            "line 1: credential \"a\": needs a token",
        );
        check(
            "[[credential]]\nname = \"a\"\ntoken = \"t\"\nscopes = []\n",
            "line 1: credential \"a\": needs at least one scope",
        );
        check(
            "[[credential]]\nname = \"a\"\ntoken = \"t\"\nscopes = [\"read\"]\n[[credential]]\nname = \"b\"\ntoken = \"t\"\nscopes = [\"read\"]\n",
            "line 5: credential \"b\": same token as credential \"a\"",
        );
        check(
            "[[credential]]\nname = \"a\"\ntoken = \"t\"\nscopes = [\"read\"]\n[[credential]]\nname = \"a\"\ntoken = \"u\"\nscopes = [\"read\"]\n",
            "line 5: credential \"a\": name used twice",
        );
        check("[[credential]\n", "line 1:");
        check("name = \"a\"\n", "line 1: unknown key \"name\"");
        check("", "no [[credential]] table");
        check(
            "[[credential]]\nname = \"a\"\nclient_certificate = \"nope.pem\"\nscopes = [\"read\"]\n",
            "line 3: client_certificate ./nope.pem",
        );
    }
}
