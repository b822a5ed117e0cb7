//! The arbiter's streams, as every service opens them: the games (`SHOGI_GAMES`, which
//! republishes each stored verdict to core NATS), the entries set aside (`SHOGI_ASIDE`) and
//! the partition leases (`SHOGI_LEASES`).

use arbiter_bus::{Bus, BusError, JetStreamBus, NatsOptions, StreamSettings};
use std::sync::Arc;
use std::time::Duration;

/// The games' stream `name` with `replicas` copies, republishing each stored verdict to
/// `shogi.verdict.<game_id>`.
pub fn games(name: &str, replicas: usize) -> StreamSettings {
    StreamSettings {
        replicas,
        republish: Some((
            shogi_proto::VERDICT_REPUBLISH_SOURCE.to_owned(),
            shogi_proto::VERDICT_REPUBLISH_DESTINATION.to_owned(),
        )),
        ..StreamSettings::new(name, shogi_proto::STREAM_SUBJECTS)
    }
}

/// Connects to NATS as `client_name` and opens the games' stream `stream` (creating it, and
/// the side streams, when missing).
pub async fn connect(
    nats: &NatsOptions,
    client_name: &str,
    stream: &str,
    replicas: usize,
) -> Result<JetStreamBus, BusError> {
    let bus = JetStreamBus::connect(nats, client_name, &games(stream, replicas)).await?;
    side_streams(&bus, replicas).await?;
    Ok(bus)
}

/// How long `SHOGI_ASIDE` keeps a copy set aside.
pub const ASIDE_MAX_AGE: Duration = Duration::from_secs(30 * 86_400);

/// Makes sure the side streams exist on `js` (`SHOGI_ASIDE` for entries set aside,
/// `SHOGI_LEASES` for the leases, one message kept per subject, ten minutes at most), each with
/// `replicas` copies; the bus of the lease stream.
pub async fn side_streams(js: &JetStreamBus, replicas: usize) -> Result<Bus, BusError> {
    let mut aside = StreamSettings::new(shogi_proto::ASIDE_STREAM, shogi_proto::ASIDE_SUBJECTS);
    aside.replicas = replicas;
    // Copies for an operator to inspect, not the games' record: bounded in time (issue 20).
    aside.max_age = Some(ASIDE_MAX_AGE);
    js.with_stream(&aside).await?;
    let mut lease = StreamSettings::new(shogi_proto::LEASE_STREAM, shogi_proto::LEASE_SUBJECTS);
    lease.replicas = replicas;
    lease.max_messages_per_subject = Some(1);
    // Old members and released leases go; live ones are rewritten every few seconds.
    lease.max_age = Some(Duration::from_secs(600));
    Ok(Arc::new(js.with_stream(&lease).await?))
}
