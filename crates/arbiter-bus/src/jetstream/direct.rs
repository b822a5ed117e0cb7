//! Batched reads ([`crate::EventBus::next_batch`]): up to a batch of a filter's messages in one
//! direct get (`<api>.DIRECT.GET.<stream>` with `seq`, `next_by_subj` and `batch`; nats-server
//! 2.11+, a stream with `allow_direct`), where a message get (`STREAM.MSG.GET`) answers one
//! message a request. For a reader of many messages in order from one place of the stream:
//! WatchGame's replay of a game, a request a ply before. (The game index's catch-up, a reader
//! of a wildcard from the middle of a growing stream, tried it and does not: nats-server counts
//! what a batch leaves pending, `NumPending`, over the blocks from the batch's start, and in the
//! pipeline benchmark its largest heap and resident memory grew by half or more:
//! docs/benchmarks-history.md, "Batched reads".)
//!
//! A direct get may be answered by any of the stream's replicas (and by a mirror's, where one
//! has `mirror_direct`), one that has not stored the latest messages yet among them, whose
//! batch is then a prefix of what is stored (a replica stores in order). So a batch's first
//! message is read with a message get, which the leader answers, and only the rest with a
//! direct get from after it: `next_batch` is empty only when the stream holds nothing more, as
//! [`crate::EventBus::next`] says, a reader misses nothing and reads its own writes, and a read
//! that finds nothing costs what it cost before, one message get.
//!
//! Where batches cannot be had (a server before 2.11, a stream without `allow_direct`, a user
//! refused `DIRECT.GET`), a batch is one message get, as before. A request that goes
//! unanswered (a refused publish is dropped by the server without an answer) turns batches off
//! for [`RETRY_AFTER`], said at WARN.

use super::JetStreamBus;
use super::message::from_raw;
use crate::{BusError, Message};
use async_nats::jetstream::{self, stream};
use futures::StreamExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a direct get may go without a reply before it is taken as unanswered: a refused
/// one is never answered (the server drops a publish its user may not make), and a WatchGame
/// waits this long once before batches go off; an answered batch comes in milliseconds, and
/// one cut short keeps what came.
const REPLY_WAIT: Duration = Duration::from_secs(2);

/// How long batches stay off after a direct get went unanswered or was refused.
pub(super) const RETRY_AFTER: Duration = Duration::from_secs(300);

/// How this bus reads in batches.
#[derive(Debug, Clone, Default)]
pub(super) struct Direct {
    /// The direct get's subject, when the server and the stream allow batches.
    subject: Option<String>,
    /// Until when batches are off (a direct get went unanswered or was refused).
    off_until: Arc<Mutex<Option<Instant>>>,
}

impl Direct {
    /// Batches for the stream `info` on nats-server `server` (its INFO `version`) through the
    /// JetStream API prefix `api`, when both allow them.
    pub(super) fn new(api: &str, info: &stream::Info, server: &str) -> Direct {
        let allowed = info.config.allow_direct && crate::server_version::has_batched_gets(server);
        Direct {
            subject: allowed.then(|| format!("{api}.DIRECT.GET.{}", info.config.name)),
            off_until: Arc::default(),
        }
    }

    /// The direct get's subject, when batches are on now.
    fn subject(&self) -> Option<&str> {
        let subject = self.subject.as_deref()?;
        let mut off = self
            .off_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match *off {
            Some(until) if Instant::now() < until => None,
            Some(_) => {
                *off = None;
                Some(subject)
            }
            None => Some(subject),
        }
    }

    fn turn_off(&self, why: &str) {
        *self
            .off_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some(Instant::now() + RETRY_AFTER);
        tracing::warn!(
            subject = self.subject.as_deref().unwrap_or_default(),
            why,
            retry_after_secs = RETRY_AFTER.as_secs(),
            "batched reads off: messages are read one message get each (deploy/STREAMS.md, \
             \"allow direct\")"
        );
    }
}

/// Why a direct get gave nothing to keep.
enum Unanswered {
    /// Not answered, or refused as a whole: batches go off for a while.
    Refused(String),
    /// A failure of this read only.
    Failed(BusError),
}

impl JetStreamBus {
    /// [`crate::EventBus::next_batch`] on this bus: the first message from the leader, the
    /// rest of the batch from a direct get.
    pub(super) async fn read_batch(
        &self,
        filter: &str,
        from_seq: u64,
        max: usize,
    ) -> Result<Vec<Message>, BusError> {
        let Some(first) = self.get_next(filter, from_seq).await? else {
            return Ok(Vec::new());
        };
        let after = first.sequence + 1;
        let mut batch = vec![first];
        if max <= 1 {
            return Ok(batch);
        }
        let Some(subject) = self.direct.subject() else {
            return Ok(batch);
        };
        match self.direct_batch(subject, filter, after, max - 1).await {
            Ok(rest) => batch.extend(rest),
            Err(Unanswered::Refused(why)) => self.direct.turn_off(&why),
            Err(Unanswered::Failed(e)) => return Err(e),
        }
        Ok(batch)
    }

    /// One batched direct get on `subject`: the messages it brought, in order.
    async fn direct_batch(
        &self,
        subject: &str,
        filter: &str,
        from_seq: u64,
        max: usize,
    ) -> Result<Vec<Message>, Unanswered> {
        let failed = |reason: String| {
            Unanswered::Failed(BusError::Read {
                filter: format!("{filter} from {from_seq}"),
                reason,
            })
        };
        let max = max.clamp(1, 10_000);
        let request = serde_json::json!({
            "seq": from_seq.max(1),
            "next_by_subj": filter,
            "batch": max,
        });
        let inbox = self.client.new_inbox();
        let mut replies = self
            .client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| failed(format!("subscribe: {e}")))?;
        self.client
            .publish_with_reply(subject.to_owned(), inbox, request.to_string().into())
            .await
            .map_err(|e| failed(format!("direct get: {e}")))?;
        let mut batch = Vec::new();
        loop {
            let reply = match tokio::time::timeout(REPLY_WAIT, replies.next()).await {
                Ok(Some(reply)) => reply,
                Ok(None) => return Err(failed("the reply subscription ended".into())),
                // What came is a prefix of what is stored: keep it.
                Err(_) if !batch.is_empty() => return Ok(batch),
                Err(_) => {
                    return Err(Unanswered::Refused(format!(
                        "no answer in {} s (is {subject} allowed to this user?)",
                        REPLY_WAIT.as_secs()
                    )));
                }
            };
            match reply.status.map(|s| s.as_u16()) {
                None | Some(200) => {
                    let m = jetstream::message::StreamMessage::try_from(reply)
                        .map_err(|e| failed(format!("a direct get's reply: {e}")))?;
                    batch.push(from_raw(m));
                    if batch.len() > max {
                        return Err(failed(format!("more than the {max} asked for")));
                    }
                }
                // The end of the batch, or nothing from `from_seq` on.
                Some(204 | 404) => return Ok(batch),
                // Nobody answers direct gets: the stream no longer allows them.
                Some(503) => {
                    return Err(Unanswered::Refused(
                        "no responders (the stream does not allow direct gets)".into(),
                    ));
                }
                Some(code) => {
                    let description = reply.description.unwrap_or_default();
                    return Err(failed(format!("direct get answered {code} {description}")));
                }
            }
        }
    }
}
