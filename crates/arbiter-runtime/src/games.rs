//! Games read from the bus: the creation event, then the log entry by entry through
//! [`Replay::apply`], the one policy for every reader. An entry set aside is copied to
//! `shogi.aside.<game_id>` (stream `SHOGI_ASIDE`) with its sequence, reason and type in headers,
//! counted per reader and reason, and logged at WARN; the game goes on from its valid entries.

use arbiter_bus::{Bus, BusError, Message, Outgoing};
use shogi_proto::log::{Applied, AsideReason, Entry, Replay, SetAside, Unreadable, msg_id};
use shogi_proto::subject;
use std::sync::atomic::{AtomicU64, Ordering};

/// The header of a copy set aside: the stream sequence of the entry in the game stream.
pub const ASIDE_SEQ_HEADER: &str = "Shogi-Aside-Seq";
/// The header of a copy set aside: why it was set aside ([`AsideReason::as_str`]).
pub const ASIDE_REASON_HEADER: &str = "Shogi-Aside-Reason";
/// The header of a copy set aside: what exactly was wrong.
pub const ASIDE_DETAIL_HEADER: &str = "Shogi-Aside-Detail";
/// The header of a copy set aside: the entry's own message type.
pub const ASIDE_TYPE_HEADER: &str = "Shogi-Aside-Type";

/// Why a game could not be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    /// The bus failed; reading again may succeed.
    #[error("{0}")]
    Bus(#[from] BusError),
    /// The creation event cannot be read: no reader can build the game.
    #[error("{0}")]
    Unreadable(#[from] Unreadable),
}

/// Who reads games, as its copies set aside and its counts name it.
#[derive(Debug)]
pub struct Reader {
    name: &'static str,
    counts: [AtomicU64; AsideReason::ALL.len()],
}

impl Reader {
    /// A reader named `name` (`move-validator`, `repetition-watcher`, ...).
    pub const fn new(name: &'static str) -> Reader {
        Reader {
            name,
            counts: [const { AtomicU64::new(0) }; AsideReason::ALL.len()],
        }
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How many entries it set aside for `reason`.
    pub fn set_aside(&self, reason: AsideReason) -> u64 {
        self.counts[reason as usize].load(Ordering::Relaxed)
    }

    /// Every reason with its count, for the `shogi.events.set_aside` metric.
    pub fn counts(&self) -> Vec<(&'static str, u64)> {
        AsideReason::ALL
            .iter()
            .map(|r| (r.as_str(), self.set_aside(*r)))
            .collect()
    }

    /// Reads game `game_id`'s creation event: the game with no log entry read yet, or `None`
    /// when it was never created.
    pub async fn load(&self, bus: &Bus, game_id: &str) -> Result<Option<Replay>, ReadError> {
        let Some(created) = bus.last(&subject::created(game_id)).await? else {
            return Ok(None);
        };
        Ok(Some(Replay::new(
            game_id,
            created.sequence,
            &created.payload,
        )?))
    }

    /// Applies one entry read from the game's log; one set aside is logged, counted and copied
    /// aside (a failed copy is logged: the entry itself stays in the game stream).
    pub async fn apply(&self, bus: &Bus, replay: &mut Replay, msg: &Message) -> Applied {
        let applied = replay.apply(entry(msg));
        if let Applied::SetAside(aside) = &applied {
            self.put_aside(bus, replay.id(), msg, aside).await;
        }
        applied
    }

    /// Reads the game's log after the last entry read, applying each entry.
    pub async fn catch_up(&self, bus: &Bus, replay: &mut Replay) -> Result<(), BusError> {
        let log = subject::moves(replay.id());
        while let Some(msg) = bus.next(&log, replay.read_from()).await? {
            self.apply(bus, replay, &msg).await;
        }
        Ok(())
    }

    /// Copies the entry `copy` set aside to `shogi.aside.<game_id>`, once per reader (the
    /// message id), with why, for an operator to inspect.
    pub async fn put_aside(&self, bus: &Bus, game_id: &str, copy: &Message, aside: &SetAside) {
        self.counts[aside.reason as usize].fetch_add(1, Ordering::Relaxed);
        let seq = copy.sequence;
        tracing::warn!(
            game_id,
            seq,
            reason = aside.reason.as_str(),
            detail = %aside.detail,
            reader = self.name,
            "log entry set aside"
        );
        let mut out = Outgoing::new(
            subject::aside(game_id),
            shogi_proto::ASIDE_TYPE,
            msg_id::aside(game_id, seq, self.name),
            copy.payload.clone(),
        );
        out.headers = vec![
            (ASIDE_SEQ_HEADER.to_owned(), seq.to_string()),
            (
                ASIDE_REASON_HEADER.to_owned(),
                aside.reason.as_str().to_owned(),
            ),
            (ASIDE_DETAIL_HEADER.to_owned(), header_value(&aside.detail)),
            (
                ASIDE_TYPE_HEADER.to_owned(),
                copy.message_type.clone().unwrap_or_default(),
            ),
        ];
        if let Err(e) = bus.publish(out).await {
            tracing::warn!(game_id, seq, error = %e, "log entry not copied aside");
        }
    }
}

/// A log entry as the replay reads it.
pub fn entry(msg: &Message) -> Entry<'_> {
    Entry {
        sequence: msg.sequence,
        message_type: msg.message_type.as_deref(),
        payload: &msg.payload,
    }
}

/// `text` as a header value: printable ASCII on one line, at most 256 bytes.
fn header_value(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(256)
        .collect()
}
