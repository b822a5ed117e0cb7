//! The bus messages as typed values: what each one is encoded as (its subject, its
//! [`MESSAGE_TYPE_HEADER`](crate::MESSAGE_TYPE_HEADER), its `Nats-Msg-Id`, its guard and its
//! payload), and what a message read back decodes to. No other crate encodes or decodes a bus
//! payload: the services build an [`Envelope`] here and hand it to the bus
//! (`arbiter_bus::Outgoing::from`), and read what the bus gives back through the decoders here
//! and [`crate::log::Replay`].

use crate::log::{AsideReason, msg_id};
use crate::v1 as pb;
use crate::{
    ASIDE_DETAIL_HEADER, ASIDE_REASON_HEADER, ASIDE_SEQ_HEADER, ASIDE_TYPE, ASIDE_TYPE_HEADER,
    DECLARATION_TYPE, GAME_CREATED_TYPE, LEASE_TYPE, MEMBER_TYPE, MOVE_ACCEPTED_TYPE, VERDICT_TYPE,
    WARNING_TYPE, subject,
};
use prost::Message as _;

/// One message to publish, encoded: everything the bus needs, nothing it has to know about
/// the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// The subject.
    pub subject: String,
    /// The [`MESSAGE_TYPE_HEADER`](crate::MESSAGE_TYPE_HEADER) value.
    pub message_type: &'static str,
    /// The `Nats-Msg-Id`: the same write gets the same id, so a retried publish is stored once.
    pub msg_id: String,
    /// The subject's expected last sequence (0: the subject must be empty), or none.
    pub expected_subject_seq: Option<u64>,
    /// Headers besides the message type (a copy set aside says why in them).
    pub headers: Vec<(String, String)>,
    /// The encoded message.
    pub payload: Vec<u8>,
}

impl Envelope {
    fn new(
        subject: String,
        message_type: &'static str,
        msg_id: String,
        payload: Vec<u8>,
    ) -> Envelope {
        Envelope {
            subject,
            message_type,
            msg_id,
            expected_subject_seq: None,
            headers: Vec::new(),
            payload,
        }
    }

    fn expect(mut self, seq: u64) -> Envelope {
        self.expected_subject_seq = Some(seq);
        self
    }

    /// A game's creation event on `.created`, which must be empty: a game id is taken once.
    pub fn created(created: &pb::GameCreated) -> Envelope {
        let id = &created.game_id;
        Envelope::new(
            subject::created(id),
            GAME_CREATED_TYPE,
            msg_id::created(id),
            created.encode_to_vec(),
        )
        .expect(0)
    }

    /// A warning notice on `.warning`, the `index`-th of its ply.
    pub fn warning(warning: &pb::Warning, index: usize) -> Envelope {
        let id = &warning.game_id;
        Envelope::new(
            subject::warning(id),
            WARNING_TYPE,
            msg_id::warning(id, warning.ply, index),
            warning.encode_to_vec(),
        )
    }

    /// A declaration notice on `.declare`.
    pub fn declaration(declaration: &pb::Declaration) -> Envelope {
        let id = &declaration.game_id;
        Envelope::new(
            subject::declare(id),
            DECLARATION_TYPE,
            msg_id::declaration(
                id,
                declaration.ply,
                declaration.declarer,
                declaration.has_time,
            ),
            declaration.encode_to_vec(),
        )
    }

    /// The announcement of `verdict` on its game's `.verdict`, expecting `expected` as the
    /// subject's last sequence (0: the announcement is the subject's first message).
    pub fn announcement(verdict: &pb::Verdict, expected: u64) -> Envelope {
        let id = &verdict.game_id;
        Envelope::new(
            subject::verdict(id),
            VERDICT_TYPE,
            msg_id::verdict(id, verdict.ply),
            verdict.encode_to_vec(),
        )
        .expect(expected)
    }

    /// The schedule of the running side's deadline in `clock` (on `.clock.<b|w>`, replacing
    /// that side's earlier one); the bus adds when it fires and where.
    pub fn clock(game_id: &str, clock: &pb::ClockState) -> Envelope {
        let black = clock.running == pb::Color::Black as i32;
        Envelope::new(
            subject::clock(game_id, black),
            crate::CLOCK_STATE_TYPE,
            msg_id::clock(game_id, black, clock.deadline_unix_ms),
            clock.encode_to_vec(),
        )
    }

    /// `verdict`, checked against the log, on its game's `.result`, expecting the subject empty:
    /// one message per game.
    pub fn result(verdict: &pb::Verdict) -> Envelope {
        let id = &verdict.game_id;
        Envelope::new(
            subject::result(id),
            VERDICT_TYPE,
            msg_id::result(id, verdict.ply),
            verdict.encode_to_vec(),
        )
        .expect(0)
    }

    /// The copy of a log entry set aside by `reader` (its payload and type as they were), on
    /// `shogi.aside.<game_id>`, with why in its headers.
    pub fn aside(
        game_id: &str,
        entry: crate::log::Entry<'_>,
        reader: &str,
        reason: AsideReason,
        detail: &str,
    ) -> Envelope {
        let seq = entry.sequence;
        let mut out = Envelope::new(
            subject::aside(game_id),
            ASIDE_TYPE,
            msg_id::aside(game_id, seq, reader),
            entry.payload.to_vec(),
        );
        out.headers = vec![
            (ASIDE_SEQ_HEADER.to_owned(), seq.to_string()),
            (ASIDE_REASON_HEADER.to_owned(), reason.as_str().to_owned()),
            (ASIDE_DETAIL_HEADER.to_owned(), header_value(detail)),
            (
                ASIDE_TYPE_HEADER.to_owned(),
                entry.message_type.unwrap_or_default().to_owned(),
            ),
        ];
        out
    }

    /// `role`'s lease of `partition`, written over the lease at sequence `expected` (0: none).
    pub fn lease(
        role: &str,
        partition: u32,
        expected: u64,
        lease: &pb::PartitionLease,
    ) -> Envelope {
        Envelope::new(
            subject::lease(role, partition),
            LEASE_TYPE,
            msg_id::lease(role, partition, expected, &lease.holder),
            lease.encode_to_vec(),
        )
        .expect(expected)
    }

    /// An instance of `role` that is alive until `member.expires_unix_ms`.
    pub fn member(role: &str, member: &pb::Member) -> Envelope {
        Envelope::new(
            subject::member(role, &member.holder),
            MEMBER_TYPE,
            msg_id::member(role, &member.holder, member.expires_unix_ms),
            member.encode_to_vec(),
        )
    }
}

/// An entry of a game's log (`.move`), as its writer builds it.
#[derive(Debug, Clone, PartialEq)]
pub enum LogEntry {
    /// A move played.
    Move(pb::MoveAccepted),
    /// An ending the moves did not decide (a report, a declaration, a forfeit).
    Ending(pb::Verdict),
}

impl LogEntry {
    /// The entry appended after the log's entry at `last_seq` (0: the log is empty), so that two
    /// writers never take the same ply and nothing is stored after an ending.
    pub fn envelope(&self, last_seq: u64) -> Envelope {
        match self {
            LogEntry::Move(m) => Envelope::new(
                subject::moves(&m.game_id),
                MOVE_ACCEPTED_TYPE,
                msg_id::moved(&m.game_id, m.ply, &m.usi),
                m.encode_to_vec(),
            ),
            LogEntry::Ending(v) => Envelope::new(
                subject::moves(&v.game_id),
                VERDICT_TYPE,
                msg_id::ending(&v.game_id, v.ply),
                v.encode_to_vec(),
            ),
        }
        .expect(last_seq)
    }

    /// A log entry read back, by its message type; why not, if it is not one.
    pub fn decode(message_type: Option<&str>, payload: &[u8]) -> Result<LogEntry, String> {
        match message_type {
            Some(MOVE_ACCEPTED_TYPE) => pb::MoveAccepted::decode(payload)
                .map(LogEntry::Move)
                .map_err(|e| format!("not a MoveAccepted: {e}")),
            Some(VERDICT_TYPE) => pb::Verdict::decode(payload)
                .map(LogEntry::Ending)
                .map_err(|e| format!("not a Verdict: {e}")),
            Some(other) => Err(format!("a {other} in a game log")),
            None => Err("no message type".to_owned()),
        }
    }
}

/// A game's creation event read back.
pub fn decode_created(payload: &[u8]) -> Result<pb::GameCreated, String> {
    pb::GameCreated::decode(payload).map_err(|e| format!("not a GameCreated: {e}"))
}

/// A verdict read back from `.verdict` (or a log): only a message of type
/// [`VERDICT_TYPE`] is one.
pub fn decode_verdict(message_type: Option<&str>, payload: &[u8]) -> Result<pb::Verdict, String> {
    if message_type != Some(VERDICT_TYPE) {
        return Err(format!(
            "a {} where a verdict is expected",
            message_type.unwrap_or("message without a type")
        ));
    }
    pb::Verdict::decode(payload).map_err(|e| format!("not a Verdict: {e}"))
}

/// A declaration notice read back.
pub fn decode_declaration(payload: &[u8]) -> Result<pb::Declaration, String> {
    pb::Declaration::decode(payload).map_err(|e| format!("not a Declaration: {e}"))
}

/// A warning notice read back.
pub fn decode_warning(payload: &[u8]) -> Result<pb::Warning, String> {
    pb::Warning::decode(payload).map_err(|e| format!("not a Warning: {e}"))
}

/// A partition lease read back; `None` for one that does not decode (a free lease).
pub fn decode_lease(payload: &[u8]) -> Option<pb::PartitionLease> {
    pb::PartitionLease::decode(payload).ok()
}

/// A membership read back; `None` for one that does not decode.
pub fn decode_member(payload: &[u8]) -> Option<pb::Member> {
    pb::Member::decode(payload).ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_entries_round_trip_and_name_their_place() {
        let m = pb::MoveAccepted {
            game_id: "g".into(),
            ply: 3,
            usi: "7g7f".into(),
            ..Default::default()
        };
        let e = LogEntry::Move(m.clone()).envelope(9);
        assert_eq!(
            (
                e.subject.as_str(),
                e.msg_id.as_str(),
                e.expected_subject_seq
            ),
            (subject::moves("g").as_str(), "g:3:7g7f", Some(9))
        );
        assert_eq!(
            LogEntry::decode(Some(e.message_type), &e.payload),
            Ok(LogEntry::Move(m))
        );
        let v = pb::Verdict {
            game_id: "g".into(),
            ply: 4,
            ..Default::default()
        };
        let e = LogEntry::Ending(v.clone()).envelope(10);
        assert_eq!(e.msg_id, "g:4:end");
        assert_eq!(decode_verdict(Some(e.message_type), &e.payload), Ok(v));
        assert!(LogEntry::decode(Some(WARNING_TYPE), &e.payload).is_err());
        assert!(LogEntry::decode(None, &e.payload).is_err());
        assert!(decode_verdict(Some(MOVE_ACCEPTED_TYPE), &e.payload).is_err());
    }

    #[test]
    fn a_copy_set_aside_says_why_in_printable_headers() {
        let entry = crate::log::Entry {
            sequence: 7,
            message_type: Some(MOVE_ACCEPTED_TYPE),
            payload: &[0xff],
        };
        let e = Envelope::aside("g", entry, "r", AsideReason::Garbage, "bad\nbytes é");
        assert_eq!(e.subject, subject::aside("g"));
        assert_eq!(e.msg_id, "g:aside:7:r");
        assert!(
            e.headers
                .contains(&(ASIDE_DETAIL_HEADER.to_owned(), "bad?bytes ?".to_owned()))
        );
        assert!(
            e.headers
                .contains(&(ASIDE_TYPE_HEADER.to_owned(), MOVE_ACCEPTED_TYPE.to_owned()))
        );
    }
}
