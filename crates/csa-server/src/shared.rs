//! The lobby shared by front-end instances on NATS (docs/csa.md, "Running more than one"): the
//! key-value bucket [`BUCKET`] holds who is logged in (`name.<hex name>`: the instance holding
//! the login) and who waits for which game (`seek.<hex game name>`: the list of seekers). Every
//! write expects the revision it read (a `LOGIN` creates its key, which fails when it exists),
//! so that two instances never hold one name nor pair one waiting player twice.
//!
//! Only the bucket lives here; the connections, and the games' halves each instance plays,
//! stay in [`crate::lobby::Lobby`].

use async_nats::jetstream::kv::{self, CreateErrorKind, Operation, UpdateErrorKind};
use csa_protocol::{GameName, Matcher, Pairing, Status, Turn, WhoEntry};
use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use shogi_rules::Color;
use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The bucket (its stream is `KV_CSA_LOBBY`).
pub const BUCKET: &str = "CSA_LOBBY";

/// How often an instance rewrites the names it holds.
pub const BEAT: Duration = Duration::from_secs(10);

/// A name not rewritten for this long belongs to an instance that died: the next login takes
/// it over, and its seeks are dropped by the next writer.
pub const STALE: Duration = Duration::from_secs(30);

/// How long the pairing instance waits for the rival's instance to take the game.
pub const PROPOSE_DEADLINE: Duration = Duration::from_secs(2);

/// The bucket's settings: one value a key, `replicas` copies (the game stream's), on file.
pub fn bucket_config(replicas: usize) -> kv::Config {
    kv::Config {
        bucket: BUCKET.to_owned(),
        description: "The CSA front ends' shared lobby: logins and seekers (docs/csa.md)".into(),
        history: 1,
        num_replicas: replicas,
        storage: async_nats::jetstream::stream::StorageType::File,
        ..Default::default()
    }
}

/// The subject an instance takes proposals on.
pub fn conn_subject(instance: &str) -> String {
    format!("csa.conn.{instance}")
}

/// The subject `%%CHAT` lines go out on, to every instance's x1 players.
pub const CHAT_SUBJECT: &str = "csa.chat";

/// The subject the two halves of a game talk on.
pub fn game_subject(arbiter_id: &str) -> String {
    format!("csa.game.{arbiter_id}")
}

/// A key's token: the text hex-encoded, since a CSA identifier may hold `@` and `.`.
fn hex(text: &str) -> String {
    use std::fmt::Write as _;
    text.bytes().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn name_key(name: &str) -> String {
    format!("name.{}", hex(name))
}

fn seek_key(game: &GameName) -> String {
    format!("seek.{}", hex(game.as_str()))
}

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A login as the bucket holds it: `name.<hex name>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameEntry {
    /// The instance holding it.
    pub instance: String,
    /// When the instance last wrote it (Unix milliseconds).
    pub beat_ms: u64,
    /// What `%%WHO` shows: the name, or `<name>+<md5>`.
    pub id: String,
    /// x1 or CSA.
    pub x1: bool,
    /// The status, as [`status_code`] writes it.
    pub status: u8,
    /// The game asked for and the turn (`+`, `-`, `*`).
    pub game: Option<(String, char)>,
    /// The CSA id of the game proposed or played, for `%%LIST`.
    pub playing: Option<String>,
    /// When it logged in (Unix milliseconds): `%%WHO` lists in login order.
    pub login_ms: u64,
}

/// A status as a number in [`NameEntry::status`].
pub fn status_code(status: Status) -> u8 {
    match status {
        Status::Connected => 0,
        Status::GameWaiting => 1,
        Status::AgreeWaiting => 2,
        Status::StartWaiting => 3,
        Status::Game => 4,
        Status::Finished => 5,
    }
}

fn status_from(code: u8) -> Status {
    match code {
        1 => Status::GameWaiting,
        2 => Status::AgreeWaiting,
        3 => Status::StartWaiting,
        4 => Status::Game,
        5 => Status::Finished,
        _ => Status::Connected,
    }
}

/// A turn as one character.
pub fn turn_char(turn: Turn) -> char {
    match turn {
        Turn::Black => '+',
        Turn::White => '-',
        Turn::Any => '*',
    }
}

fn turn_from(c: char) -> Turn {
    match c {
        '+' => Turn::Black,
        '-' => Turn::White,
        _ => Turn::Any,
    }
}

/// A side as one character.
pub fn color_char(c: Color) -> char {
    match c {
        Color::Black => '+',
        Color::White => '-',
    }
}

/// The side of a character of [`color_char`].
pub fn color_from(c: char) -> Color {
    if c == '+' { Color::Black } else { Color::White }
}

/// A player waiting, as `seek.<hex game name>` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeekEntry {
    /// Its instance.
    pub instance: String,
    /// Its connection's key on that instance.
    pub key: u64,
    /// Its name.
    pub name: String,
    /// shogi-server's player id, for a rated player (the record's).
    pub player_id: Option<String>,
    /// Its turn (`+`, `-`, `*`).
    pub turn: char,
    /// When it logged in (Unix milliseconds): the earliest login is the rival.
    pub login_ms: u64,
}

impl SeekEntry {
    /// Its place among the waiting: login order, then instance and key to break ties.
    fn order(&self) -> (u64, String, u64) {
        (self.login_ms, self.instance.clone(), self.key)
    }
}

/// A game proposed to the rival's instance on `csa.conn.<instance>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Proposal {
    /// The rival's connection there.
    pub key: u64,
    /// The rival's name (a check that the key is still its).
    pub name: String,
    /// The game name.
    pub game: String,
    /// The CSA game id.
    pub game_id: String,
    /// The arbiter's game id.
    pub arbiter_id: String,
    /// Black and White: name and player id.
    pub players: [(String, Option<String>); 2],
    /// The rival's side.
    pub color: char,
    /// When the game was proposed (Unix seconds).
    pub proposed: i64,
}

/// What one half of a game tells the other on `csa.game.<arbiter id>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Relay {
    /// The player sent `AGREE`.
    Agree,
    /// The player refused the game or left before it started.
    Reject,
    /// The comment of the player's move at `ply`, for the record Black's instance writes, as
    /// instances before the comment went into the log with its move (SubmitMoveRequest
    /// `comment`) sent it; still taken from them, before or after the move it belongs to.
    Comment {
        /// The ply.
        ply: u32,
        /// The comment.
        text: String,
    },
}

/// A [`Relay`] with the side that sent it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RelayMsg {
    /// The sender's side.
    pub from: char,
    /// What it says.
    pub relay: Relay,
}

/// Why the bucket failed.
pub type SharedError = Box<dyn std::error::Error + Send + Sync>;

/// The bucket, and the names this instance holds with their revisions.
#[derive(Debug)]
pub struct Shared {
    /// This instance's id: a subject token.
    pub instance: String,
    /// The NATS client.
    pub client: async_nats::Client,
    kv: kv::Store,
    names: tokio::sync::Mutex<HashMap<String, (u64, NameEntry)>>,
}

/// A random id for an instance: 16 hex digits.
pub fn instance_id() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(now_ms());
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

impl Shared {
    /// Binds to the bucket through `js` (the JetStream API of the front end's account, or the
    /// arbiter's imported under a prefix: deploy/nats/auth.conf), creating it when missing with
    /// one copy (production creates it with `shogi-arbiter streams apply`).
    pub async fn open(js: async_nats::jetstream::Context) -> Result<Shared, SharedError> {
        let client = js.client();
        let kv = match js.get_key_value(BUCKET).await {
            Ok(kv) => kv,
            Err(_) => js.create_key_value(bucket_config(1)).await?,
        };
        Ok(Shared {
            instance: instance_id(),
            client,
            kv,
            names: tokio::sync::Mutex::new(HashMap::new()),
        })
    }

    fn stale(entry: &NameEntry) -> bool {
        now_ms().saturating_sub(entry.beat_ms) > u64::try_from(STALE.as_millis()).unwrap_or(0)
    }

    /// A `LOGIN` of `name`: `false` when another instance's login holds it (and is not stale).
    pub async fn login(&self, name: &str, mut entry: NameEntry) -> Result<bool, SharedError> {
        let key = name_key(name);
        entry.instance.clone_from(&self.instance);
        entry.beat_ms = now_ms();
        let value = bytes::Bytes::from(serde_json::to_vec(&entry)?);
        let mut names = self.names.lock().await;
        let rev = match self.kv.create(&key, value.clone()).await {
            Ok(rev) => rev,
            Err(e) if e.kind() == CreateErrorKind::AlreadyExists => {
                let Some(held) = self.kv.entry(&key).await? else {
                    return Ok(false);
                };
                let old = serde_json::from_slice::<NameEntry>(&held.value).ok();
                if held.operation == Operation::Put && old.as_ref().is_some_and(|o| !Self::stale(o))
                {
                    return Ok(false);
                }
                match self.kv.update(&key, value, held.revision).await {
                    Ok(rev) => {
                        tracing::info!(name, "login takes over a stale instance's name");
                        rev
                    }
                    Err(e) if e.kind() == UpdateErrorKind::WrongLastRevision => return Ok(false),
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        };
        names.insert(name.to_owned(), (rev, entry));
        Ok(true)
    }

    /// `LOGOUT` or a disconnect: the name's key deleted, expecting its revision.
    pub async fn logout(&self, name: &str) {
        let Some((rev, _)) = self.names.lock().await.remove(name) else {
            return;
        };
        if let Err(e) = self
            .kv
            .delete_expect_revision(name_key(name), Some(rev))
            .await
        {
            tracing::warn!(name, error = %e, "the lobby kept a name after its logout");
        }
    }

    /// Rewrites `name`'s entry after `change` (and its beat), expecting its revision; nothing
    /// when `change` changes nothing and `beat` is false.
    pub async fn rewrite(&self, name: &str, beat: bool, change: impl FnOnce(&mut NameEntry)) {
        let mut names = self.names.lock().await;
        let Some((rev, entry)) = names.get_mut(name) else {
            return;
        };
        let before = entry.clone();
        change(entry);
        if !beat && *entry == before {
            return;
        }
        entry.beat_ms = now_ms();
        let Ok(value) = serde_json::to_vec(entry) else {
            return;
        };
        match self.kv.update(name_key(name), value.into(), *rev).await {
            Ok(r) => *rev = r,
            Err(e) => {
                tracing::warn!(name, error = %e, "the lobby's entry of a name was not rewritten")
            }
        }
    }

    /// Rewrites every name this instance holds, every [`BEAT`], until the bucket's client
    /// is dropped.
    pub async fn beat(self: std::sync::Arc<Self>) {
        let mut tick = tokio::time::interval(BEAT);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let held: Vec<String> = self.names.lock().await.keys().cloned().collect();
            for name in held {
                self.rewrite(&name, true, |_| {}).await;
            }
        }
    }

    /// Whether `e`'s login still holds its name (its instance alive).
    async fn live(&self, e: &SeekEntry) -> bool {
        match self.kv.entry(name_key(&e.name)).await {
            Ok(Some(held)) if held.operation == Operation::Put => {
                serde_json::from_slice::<NameEntry>(&held.value)
                    .is_ok_and(|n| n.instance == e.instance && !Self::stale(&n))
            }
            Ok(_) => false,
            // Unknown: kept.
            Err(_) => true,
        }
    }

    /// The seekers of `game` and the revision read (`None`: no key yet).
    async fn seekers(&self, game: &GameName) -> Result<(Vec<SeekEntry>, Option<u64>), SharedError> {
        match self.kv.entry(seek_key(game)).await? {
            Some(e) if e.operation == Operation::Put => {
                Ok((serde_json::from_slice(&e.value)?, Some(e.revision)))
            }
            Some(e) => Ok((Vec::new(), Some(e.revision))),
            None => Ok((Vec::new(), None)),
        }
    }

    /// Writes `list` for `game` expecting `rev`: `false` on a conflict (read again).
    async fn write_seekers(
        &self,
        game: &GameName,
        list: &[SeekEntry],
        rev: Option<u64>,
    ) -> Result<bool, SharedError> {
        let value = bytes::Bytes::from(serde_json::to_vec(list)?);
        let key = seek_key(game);
        let written = match rev {
            Some(rev) => self.kv.update(&key, value, rev).await.map(|_| ()),
            None => match self.kv.create(&key, value).await {
                Ok(_) => Ok(()),
                Err(e) if e.kind() == CreateErrorKind::AlreadyExists => return Ok(false),
                Err(e) => return Err(e.into()),
            },
        };
        match written {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == UpdateErrorKind::WrongLastRevision => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// `me` seeks `game`: [`Matcher`] over the list read (stale entries dropped), the list
    /// written without the rival or with `me`, expecting the revision read; again on a
    /// conflict. `toss` is the coin for two `*` turns.
    pub async fn seek(
        &self,
        me: &SeekEntry,
        game: &GameName,
        challenge: bool,
        toss: Color,
    ) -> Result<Pairing<SeekEntry>, SharedError> {
        loop {
            let (read, rev) = self.seekers(game).await?;
            let mut list = Vec::with_capacity(read.len() + 1);
            for e in read {
                if e.instance == me.instance && e.key == me.key {
                    continue;
                }
                if self.live(&e).await {
                    list.push(e);
                }
            }
            let mut matcher = Matcher::new();
            for e in &list {
                matcher.wait(e.order(), &e.name, game, turn_from(e.turn));
            }
            let turn = turn_from(me.turn);
            let pairing = matcher.seek(me.order(), &me.name, game, turn, challenge, || toss);
            let by_order = |o: &(u64, String, u64)| {
                list.iter()
                    .find(|e| e.order() == *o)
                    .cloned()
                    .unwrap_or_else(|| me.clone())
            };
            let (written, pairing) = match pairing {
                Pairing::Paired { black, white } => {
                    let (black, white) = (by_order(&black), by_order(&white));
                    let rival = if black == *me { &white } else { &black };
                    let rest: Vec<SeekEntry> =
                        list.iter().filter(|e| *e != rival).cloned().collect();
                    (rest, Pairing::Paired { black, white })
                }
                Pairing::Waiting => {
                    list.push(me.clone());
                    (list, Pairing::Waiting)
                }
                Pairing::NoRival => return Ok(Pairing::NoRival),
                Pairing::Refused(r) => return Ok(Pairing::Refused(r)),
            };
            if self.write_seekers(game, &written, rev).await? {
                return Ok(pairing);
            }
        }
    }

    /// `me` stops waiting for `game`.
    pub async fn unseek(&self, game: &GameName, instance: &str, key: u64) {
        loop {
            let Ok((list, rev)) = self.seekers(game).await else {
                return;
            };
            if !list.iter().any(|e| e.instance == instance && e.key == key) {
                return;
            }
            let rest: Vec<SeekEntry> = list
                .into_iter()
                .filter(|e| !(e.instance == instance && e.key == key))
                .collect();
            match self.write_seekers(game, &rest, rev).await {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(game = game.as_str(), error = %e, "a seek was not withdrawn");
                    return;
                }
            }
        }
    }

    /// Every live login of every instance, in login order.
    pub async fn names(&self) -> Result<Vec<NameEntry>, SharedError> {
        // The keys from the stream's subjects (a stream info request), not from a consumer,
        // which the front end's NATS user may not create.
        let prefix = format!("$KV.{BUCKET}.");
        let keys: Vec<String> = self
            .kv
            .stream
            .info_with_subjects(format!("{prefix}name.>"))
            .await?
            .filter_map(|k| {
                let prefix = prefix.clone();
                async move { Some(k.ok()?.0.strip_prefix(&prefix)?.to_owned()) }
            })
            .collect()
            .await;
        let mut entries = Vec::new();
        for key in keys {
            if let Some(held) = self.kv.entry(&key).await?
                && held.operation == Operation::Put
                && let Ok(n) = serde_json::from_slice::<NameEntry>(&held.value)
                && !Self::stale(&n)
            {
                entries.push(n);
            }
        }
        entries.sort_by_key(|n| n.login_ms);
        Ok(entries)
    }
}

/// `%%WHO`'s line of a login the bucket holds.
pub fn who_entry(n: &NameEntry) -> WhoEntry {
    WhoEntry {
        id: n.id.clone(),
        x1: n.x1,
        status: status_from(n.status),
        game: n.game.clone().map(|(g, t)| (g, turn_from(t))),
    }
}
