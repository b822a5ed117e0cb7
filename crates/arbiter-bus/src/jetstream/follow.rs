//! Following a subject without a consumer: the stored messages read in batches
//! ([`EventBus::next_batch`]: direct gets where allowed, else message gets), woken by a core
//! subscription to the raw publishes.

use super::JetStreamBus;
use crate::{BusError, EventBus, Message};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::time::Duration;

impl JetStreamBus {
    /// The messages stored on `filter`, from the stream's first, then as they are stored
    /// ([`EventBus::follow`]).
    pub(super) async fn follow_stored(
        &self,
        filter: &str,
    ) -> Result<BoxStream<'static, Result<Message, BusError>>, BusError> {
        // No consumer: the stored messages are read in batches until the follower has caught
        // up (`EventBus::next_batch`, in order, all that is stored), then one message get a
        // message, and a core subscription to the raw publishes on `filter` only says when to
        // read again. Following then needs no right to create consumers
        // (deploy/nats/auth.conf: such a right reaches the workers' durable consumers too),
        // and leaves nothing on the server when the follower goes: dropping the stream
        // unsubscribes (issue 20).
        let wake = self
            .client
            .subscribe(filter.to_owned())
            .await
            .map_err(|e| BusError::Consumer {
                name: filter.to_owned(),
                reason: format!("subscribe: {e}"),
            })?;
        let state = Follow {
            bus: self.clone(),
            filter: filter.to_owned(),
            from: 1,
            read: std::collections::VecDeque::new(),
            caught_up: false,
            wake: Box::pin(wake),
            ended: false,
        };
        Ok(futures::stream::unfold(state, Follow::step).boxed())
    }
}

/// How often a follower reads again without being woken up: a raw publish heard before its
/// message was stored, or one missed while the connection was down, is read within this.
const FOLLOW_POLL: Duration = Duration::from_millis(500);

/// How many messages one read of a follower asks for until it has caught up: a game's whole
/// log, mostly. After, one a read: a game's entries come one at a time, each woken for.
const FOLLOW_BATCH: usize = 512;

/// A follower's state (`JetStreamBus::follow`): the next stream sequence to read from.
struct Follow {
    bus: JetStreamBus,
    filter: String,
    from: u64,
    /// Read and not yet given out, in order.
    read: std::collections::VecDeque<Message>,
    /// Whether a read has found nothing more once: the follower is live.
    caught_up: bool,
    wake: std::pin::Pin<Box<async_nats::Subscriber>>,
    ended: bool,
}

impl Follow {
    /// The next stored message, waiting for one; `None` after an error.
    async fn step(mut self) -> Option<(Result<Message, BusError>, Follow)> {
        if self.ended {
            return None;
        }
        loop {
            if let Some(m) = self.read.pop_front() {
                return Some((Ok(m), self));
            }
            let max = if self.caught_up { 1 } else { FOLLOW_BATCH };
            match self.bus.next_batch(&self.filter, self.from, max).await {
                Ok(batch) if !batch.is_empty() => {
                    self.from = batch.last().map_or(self.from, |m| m.sequence + 1);
                    self.read = batch.into();
                    continue;
                }
                Ok(_) => self.caught_up = true,
                Err(e) => {
                    self.ended = true;
                    return Some((Err(e), self));
                }
            }
            // Nothing stored yet: wait for a raw publish (or the poll), then read again.
            match tokio::time::timeout(FOLLOW_POLL, self.wake.next()).await {
                Ok(Some(_)) | Err(_) => {}
                Ok(None) => {
                    self.ended = true;
                    let e = BusError::Consumer {
                        name: self.filter.clone(),
                        reason: "the connection's subscription ended".to_owned(),
                    };
                    return Some((Err(e), self));
                }
            }
        }
    }
}
