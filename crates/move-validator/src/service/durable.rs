//! The validator's durable consumers (`verdict-check`, `clock-flag`): each delivery handled
//! once, several at a time, acknowledged once handled; one whose handling failed on the bus is
//! not acknowledged and comes again after the ack wait.

use super::{GAME_LOG, Validator};
use crate::error::Error;
use arbiter_bus::{DurableConfig, Message};
use futures::StreamExt;
use std::future::Future;
use std::time::Duration;

/// Deliveries handled at once by one instance.
const CONCURRENT: usize = 32;

/// How long the consumer waits before it is opened again after a failure, doubled at each
/// failure in a row up to [`MAX_RETRY`].
const RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(10);

impl Validator {
    /// Hands the message of every delivery of `durable` to `handle` until `shutdown`, opening
    /// the consumer again whenever it fails (a lost server, a consumer not yet made by
    /// `streams apply`, said at WARN each time with `unopened`, what is not done meanwhile).
    pub(crate) async fn consume<F, Fut>(
        &self,
        durable: DurableConfig,
        unopened: &'static str,
        shutdown: impl Future<Output = ()> + Send,
        handle: F,
    ) where
        F: Fn(Message) -> Fut + Copy,
        Fut: Future<Output = Result<(), Error>>,
    {
        let mut shutdown = std::pin::pin!(shutdown);
        let bus = self.inner.bus.inner.clone();
        let mut retry = RETRY;
        loop {
            let deliveries = tokio::select! {
                opened = bus.consume(&durable) => opened,
                () = &mut shutdown => return,
            };
            let deliveries = match deliveries {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(consumer = %durable.name, error = %e, "{unopened}");
                    tokio::select! {
                        () = tokio::time::sleep(retry) => {
                            retry = (retry * 2).min(MAX_RETRY);
                            continue;
                        }
                        () = &mut shutdown => return,
                    }
                }
            };
            retry = RETRY;
            tracing::info!(consumer = %durable.name, "consuming");
            let consumer = durable.name.as_str();
            let handling = deliveries
                .take_while(|d| {
                    if let Err(e) = d {
                        tracing::warn!(consumer = %durable.name, error = %e, "consumer error; consuming again");
                    }
                    std::future::ready(d.is_ok())
                })
                .filter_map(|d| std::future::ready(d.ok()))
                .for_each_concurrent(CONCURRENT, |d| async move {
                    let seq = d.message.sequence;
                    let started = std::time::Instant::now();
                    match handle(d.message.clone()).await {
                        Ok(()) => {
                            if let Err(e) = d.ack().await {
                                tracing::warn!(consumer, seq, error = %e, "not acknowledged, will come again");
                            }
                            // Timed as a worker's handling is, up to the ack.
                            arbiter_telemetry::metrics().record_process(
                                consumer,
                                GAME_LOG.name(),
                                started.elapsed().as_secs_f64(),
                            );
                        }
                        Err(e) => {
                            tracing::warn!(consumer, seq, error = %e, "not handled, will come again");
                        }
                    }
                });
            tokio::select! {
                () = handling => {}
                () = &mut shutdown => return,
            }
        }
    }
}
