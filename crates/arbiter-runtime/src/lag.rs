//! The lag of durable consumers, read from the bus on a timer of its own: what a consumer has
//! not finished with (not yet delivered, plus delivered and not acknowledged), reported on the
//! `shogi.consumer.lag` gauge. The workers poll their role's 16 partitions' consumers; the
//! validator polls `verdict-check`, through which every verdict reaches the platforms.
//!
//! The lag is polled apart from the handling of deliveries, so that it keeps moving when a
//! consumer stalls (a handling that hangs, an instance that died holding partitions, nobody
//! consuming): every instance of a role reports the same consumers, and a query takes the
//! largest per consumer (docs/metrics.md). A consumer that does not exist yet is not reported.

use arbiter_bus::Bus;
use arbiter_telemetry::metrics;
use std::time::Duration;

/// How often a service reads its consumers' lag unless told otherwise.
pub const INTERVAL: Duration = Duration::from_secs(5);

/// Reports the lag of each of `consumers` (read by `role`) every `interval` until `stop` turns
/// true; the first report at once.
pub async fn poll(
    bus: Bus,
    role: &'static str,
    consumers: Vec<String>,
    interval: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut failing = false;
    loop {
        for name in &consumers {
            match bus.consumer_lag(name).await {
                Ok(Some(lag)) => metrics().record_lag(name, role, lag.total()),
                Ok(None) => {}
                Err(e) => {
                    // Logged once a failure starts, not every tick while the bus is down.
                    if !failing {
                        tracing::warn!(role, consumer = %name, error = %e, "consumer lag unavailable");
                    }
                    failing = true;
                    break;
                }
            }
            failing = false;
        }
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}
