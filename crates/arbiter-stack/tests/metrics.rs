//! The metrics, read from an in-memory exporter after real work: moves by outcome and kind,
//! verdicts and their latency, call and event handling times (the workers' and the verdict
//! check's), the consumers' lag (the workers' and `verdict-check`, down to 0 once everything is
//! handled), events set aside.

mod support;

use arbiter_bus::Outgoing;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use shogi_proto::v1 as pb;
use support::{create, eventually, start, submit, telemetry};

/// `rpc.method` of SubmitMove: fully qualified, as the semantic conventions name it.
const SUBMIT_MOVE: &str = "shogi.v1.MoveValidator/SubmitMove";

/// The data points of `metric` whose attributes include `attrs`: their values summed (counters,
/// gauges) or their counts summed (histograms).
fn total(metric: &Metric, attrs: &[(&str, &str)]) -> u64 {
    let matches = |points: &mut dyn Iterator<Item = &opentelemetry::KeyValue>| {
        let points: Vec<_> = points.collect();
        attrs.iter().all(|(k, v)| {
            points
                .iter()
                .any(|kv| kv.key.as_str() == *k && kv.value.to_string() == *v)
        })
    };
    match metric.data() {
        AggregatedMetrics::U64(MetricData::Sum(sum)) => sum
            .data_points()
            .filter(|p| matches(&mut p.attributes()))
            .map(|p| p.value())
            .sum(),
        AggregatedMetrics::U64(MetricData::Gauge(gauge)) => gauge
            .data_points()
            .filter(|p| matches(&mut p.attributes()))
            .map(|p| p.value())
            .sum(),
        AggregatedMetrics::F64(MetricData::Histogram(h)) => h
            .data_points()
            .filter(|p| matches(&mut p.attributes()))
            .map(|p| p.count())
            .sum(),
        other => panic!("{}: unexpected data {other:?}", metric.name()),
    }
}

/// The latest export, after a flush.
fn exported() -> Vec<ResourceMetrics> {
    let t = telemetry();
    t.guard.flush();
    t.metrics.get_finished_metrics().unwrap()
}

/// The total of `name`'s data points with `attrs` in the latest export; 0 when there are none.
fn value(batches: &[ResourceMetrics], name: &str, attrs: &[(&str, &str)]) -> u64 {
    metric(batches, name).map_or(0, |m| total(m, attrs))
}

fn metric<'a>(batches: &'a [ResourceMetrics], name: &str) -> Option<&'a Metric> {
    batches
        .last()
        .into_iter()
        .flat_map(|rm| rm.scope_metrics())
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == name)
}

/// Whether `name` has a data point with `attrs` in the latest export.
fn has_point(batches: &[ResourceMetrics], name: &str, attrs: &[(&str, &str)]) -> bool {
    let Some(m) = metric(batches, name) else {
        return false;
    };
    let matching = |a: Vec<&opentelemetry::KeyValue>| {
        attrs.iter().all(|(k, v)| {
            a.iter()
                .any(|kv| kv.key.as_str() == *k && kv.value.to_string() == *v)
        })
    };
    match m.data() {
        AggregatedMetrics::U64(MetricData::Gauge(g)) => {
            g.data_points().any(|p| matching(p.attributes().collect()))
        }
        AggregatedMetrics::U64(MetricData::Sum(s)) => {
            s.data_points().any(|p| matching(p.attributes().collect()))
        }
        _ => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_counters_say_what_the_pipeline_did() {
    telemetry();
    let mut arbiter = start().await;
    let c = &mut arbiter.client;
    // `online` rejects an illegal move and the game goes on.
    create(c, "metered", "online").await;
    for (ply, usi) in [(1, "7g7f"), (2, "3c3d"), (3, "2g2f")] {
        let a = submit(c, "metered", ply, usi, None).await;
        assert_eq!(a.outcome, pb::MoveOutcome::Accepted as i32, "{usi}");
    }
    let r = submit(c, "metered", 4, "5e5d", None).await;
    assert_eq!(r.outcome, pb::MoveOutcome::Rejected as i32);
    assert_eq!(r.illegal_kind, pb::IllegalKind::Impossible as i32);
    // A game to its verdict: the kings walk out and back until the start position occurs a
    // fourth time, which the watcher announces.
    create(c, "metered-end", "jsa").await;
    let shuffle = ["5i4h", "5a4b", "4h5i", "4b5a"];
    let mut ended = false;
    for ply in 1..=16u32 {
        let a = submit(c, "metered-end", ply, shuffle[(ply as usize - 1) % 4], None).await;
        if a.verdict.is_some() {
            ended = true;
            break;
        }
    }
    assert!(ended, "a repetition within 16 plies");
    // An event for a game never created: each worker sets it aside.
    arbiter
        .bus
        .publish(Outgoing::new(
            shogi_proto::subject::moves("ghost"),
            shogi_proto::MOVE_ACCEPTED_TYPE,
            "ghost:1",
            Vec::new(),
        ))
        .await
        .unwrap();

    let watcher = [("shogi.role", "repetition-watcher")];
    // The consumers of the partitions of the ended game and of the ghost.
    let consumer = |id| {
        format!(
            "repetition-watcher-p{}",
            shogi_proto::subject::partition(id)
        )
    };
    let (ended_consumer, ghost_consumer) = (consumer("metered-end"), consumer("ghost"));
    let lags = [
        [("messaging.consumer.group.name", ended_consumer.as_str())],
        [("messaging.consumer.group.name", ghost_consumer.as_str())],
    ];
    let judge = [("shogi.role", "impasse-judge")];
    // The validator's check of the announced verdicts: the repetition's announcement handled,
    // and the check's consumer finished with it.
    let checked = [
        ("messaging.consumer.group.name", "verdict-check"),
        ("shogi.role", "move-validator"),
    ];
    let batches = eventually("the workers' handling of 4 deliveries each", || {
        let batches = exported();
        let set_aside = |role| {
            value(
                &batches,
                "shogi.events.set_aside",
                &[("shogi.role", role), ("shogi.aside.reason", "unknown_game")],
            )
        };
        let done = value(&batches, "messaging.process.duration", &watcher) >= 4
            && value(&batches, "messaging.process.duration", &judge) >= 4
            && value(&batches, "shogi.verdicts", &[("shogi.result_code", "repetition")]) >= 1
            // The verdict's copy in the log may come after the ghost: wait for the lag to be 0.
            && lags.iter().all(|lag| {
                has_point(&batches, "shogi.consumer.lag", lag)
                    && value(&batches, "shogi.consumer.lag", lag) == 0
            })
            && set_aside("repetition-watcher") >= 1
            && set_aside("impasse-judge") >= 1
            && value(&batches, "messaging.process.duration", &checked) >= 1
            && has_point(&batches, "shogi.consumer.lag", &checked)
            && value(&batches, "shogi.consumer.lag", &checked) == 0;
        done.then_some(batches)
    })
    .await;
    let submit_move = |outcome| [("rpc.method", SUBMIT_MOVE), ("shogi.move.outcome", outcome)];
    let repetition_plies = value(
        &batches,
        "rpc.server.call.duration",
        &[("rpc.method", SUBMIT_MOVE)],
    ) - 4;
    assert_eq!(
        value(&batches, "shogi.moves", &submit_move("accepted")),
        3 + repetition_plies
    );
    assert_eq!(value(&batches, "shogi.moves", &submit_move("rejected")), 1);
    assert_eq!(
        value(
            &batches,
            "shogi.moves",
            &[
                ("shogi.move.outcome", "rejected"),
                ("shogi.illegal_kind", "impossible")
            ]
        ),
        1
    );
    // Two games created, every move's call timed and OK.
    let calls = [
        ("rpc.system.name", "grpc"),
        ("rpc.method", SUBMIT_MOVE),
        ("rpc.response.status_code", "OK"),
    ];
    assert_eq!(
        value(&batches, "rpc.server.call.duration", &calls),
        4 + repetition_plies
    );
    assert_eq!(
        value(
            &batches,
            "rpc.server.call.duration",
            &[("rpc.method", "shogi.v1.MoveValidator/CreateGame")]
        ),
        2
    );
    // The repetition, announced once, by the watcher, its latency measured.
    let repetition = [
        ("shogi.result_code", "repetition"),
        ("shogi.announcer", "repetition-watcher"),
    ];
    assert_eq!(value(&batches, "shogi.verdicts", &repetition), 1);
    assert_eq!(
        value(
            &batches,
            "shogi.verdicts",
            &[("shogi.result_code", "repetition")]
        ),
        1
    );
    assert_eq!(
        value(
            &batches,
            "shogi.verdict.latency",
            &[
                ("shogi.result_code", "repetition"),
                ("shogi.role", "repetition-watcher")
            ]
        ),
        1
    );
    // The one announcement, checked once by the validator.
    assert_eq!(value(&batches, "messaging.process.duration", &checked), 1);
    // The event for no game: set aside once by each worker, and nothing else set aside.
    for role in ["repetition-watcher", "impasse-judge"] {
        let set_aside = |reason| {
            value(
                &batches,
                "shogi.events.set_aside",
                &[("shogi.role", role), ("shogi.aside.reason", reason)],
            )
        };
        assert_eq!(set_aside("unknown_game"), 1, "{role}");
        assert_eq!(set_aside("garbage"), 0, "{role}");
    }
    // A garbage count is reported even when none was seen.
    assert!(has_point(
        &batches,
        "shogi.events.set_aside",
        &[
            ("shogi.role", "impasse-judge"),
            ("shogi.aside.reason", "garbage")
        ]
    ));
}
