//! [`FaultyBus`]: the in-memory bus with the faults of a real one that a test switches on, so
//! that a test of what a service does when a write is never answered, or when a read is served
//! by a server behind, needs no nats-server and no bus of its own.

use crate::{
    BusError, ConsumerLag, Delivery, DurableConfig, EventBus, MemoryBus, Message, Outgoing,
    Published, StreamState,
};
use futures::stream::BoxStream;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// A [`MemoryBus`] whose games' logs (subjects with `.move.`), and verdicts as recorded
/// (subjects ending `.result`), can be made to misbehave.
#[derive(Debug)]
pub struct FaultyBus {
    bus: MemoryBus,
    /// While set, a publish to a game's log never completes: a write sent and never
    /// answered, which its caller gives up on.
    pub hold_log_writes: AtomicBool,
    /// While set, a read of a game's log finds nothing: a read answered by a server that has
    /// not caught up with the one that delivered.
    pub log_reads_behind: AtomicBool,
    /// The next this many publishes to a `.result` subject fail, stored nowhere, as a write
    /// to a server that was lost: a verdict whose first recording did not happen.
    pub fail_result_writes: AtomicU32,
    /// How many publishes to a `.result` subject were made, failed ones included: what a test
    /// of the writes a verdict costs counts.
    pub result_writes: AtomicU32,
    /// How many reads of a game log's last entry were made: what a test of the reads a sweep
    /// costs counts.
    pub log_last_reads: AtomicU32,
}

impl FaultyBus {
    /// `bus`, with no fault on.
    pub fn new(bus: MemoryBus) -> FaultyBus {
        FaultyBus {
            bus,
            hold_log_writes: AtomicBool::new(false),
            log_reads_behind: AtomicBool::new(false),
            fail_result_writes: AtomicU32::new(0),
            result_writes: AtomicU32::new(0),
            log_last_reads: AtomicU32::new(0),
        }
    }
}

fn is_log(subject: &str) -> bool {
    subject.contains(".move.")
}

#[async_trait::async_trait]
impl EventBus for FaultyBus {
    async fn publish(&self, msg: Outgoing) -> Result<Published, BusError> {
        if self.hold_log_writes.load(Ordering::SeqCst) && is_log(&msg.subject) {
            std::future::pending::<()>().await;
        }
        if msg.subject.ends_with(".result") {
            self.result_writes.fetch_add(1, Ordering::SeqCst);
        }
        if msg.subject.ends_with(".result")
            && self
                .fail_result_writes
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        {
            return Err(BusError::Publish {
                msg_id: msg.msg_id,
                reason: "the server was lost (FaultyBus::fail_result_writes)".into(),
            });
        }
        self.bus.publish(msg).await
    }
    async fn next(&self, filter: &str, from_seq: u64) -> Result<Option<Message>, BusError> {
        if self.log_reads_behind.load(Ordering::SeqCst) && is_log(filter) {
            return Ok(None);
        }
        self.bus.next(filter, from_seq).await
    }
    async fn last(&self, subject: &str) -> Result<Option<Message>, BusError> {
        if is_log(subject) {
            self.log_last_reads.fetch_add(1, Ordering::SeqCst);
        }
        self.bus.last(subject).await
    }
    async fn state(&self) -> Result<StreamState, BusError> {
        self.bus.state().await
    }
    async fn follow(
        &self,
        filter: &str,
    ) -> Result<BoxStream<'static, Result<Message, BusError>>, BusError> {
        self.bus.follow(filter).await
    }
    async fn consume(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<Delivery, BusError>>, BusError> {
        self.bus.consume(config).await
    }
    async fn consumer_lag(&self, name: &str) -> Result<Option<ConsumerLag>, BusError> {
        self.bus.consumer_lag(name).await
    }

    async fn consumer_position(
        &self,
        name: &str,
    ) -> Result<Option<crate::ConsumerPosition>, BusError> {
        self.bus.consumer_position(name).await
    }
}
