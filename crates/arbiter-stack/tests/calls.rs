//! Every MoveValidator call timed once, with the status the client got, by the layer around the
//! service: a unary error (its status in the headers), a WatchGame stream to its end (its status
//! in the trailers) and one the client dropped (CANCELLED).

mod support;

use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use shogi_proto::v1 as pb;
use support::{create, eventually, start, telemetry};

/// How many calls of `method` `rpc.server.call.duration` counts with `code`, in the latest
/// export.
fn calls(method: &str, code: &str) -> u64 {
    let t = telemetry();
    t.guard.flush();
    let batches = t.metrics.get_finished_metrics().unwrap();
    let method = format!("shogi.v1.MoveValidator/{method}");
    let Some(metric) = batches
        .last()
        .into_iter()
        .flat_map(|rm| rm.scope_metrics())
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == "rpc.server.call.duration")
    else {
        return 0;
    };
    let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
        panic!("rpc.server.call.duration is not a histogram");
    };
    h.data_points()
        .filter(|p| {
            let attr = |key: &str| {
                p.attributes()
                    .find(|kv| kv.key.as_str() == key)
                    .map(|kv| kv.value.to_string())
            };
            attr("rpc.method").as_deref() == Some(method.as_str())
                && attr("rpc.response.status_code").as_deref() == Some(code)
        })
        .map(|p| p.count())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_call_is_timed_once_with_its_status() {
    telemetry();
    let mut arbiter = start().await;
    let c = &mut arbiter.client;

    // A unary call answered with an error: NOT_FOUND, from the answer's headers.
    let missing = c
        .get_game(pb::GetGameRequest {
            game_id: "nowhere".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    eventually("GetGame's NOT_FOUND", || {
        (calls("GetGame", "NOT_FOUND") == 1).then_some(())
    })
    .await;

    // A stream to its end: the game resigned, its verdict the last event, then OK.
    create(c, "watched", "jsa").await;
    let watch = |id: &str| pb::WatchGameRequest {
        game_id: id.into(),
        from_ply: 0,
        verdict_only: false,
    };
    let mut events = c.watch_game(watch("watched")).await.unwrap().into_inner();
    assert!(events.message().await.unwrap().is_some(), "the creation");
    assert_eq!(calls("WatchGame", "OK"), 0, "timed before its end");
    c.end_game(pb::EndGameRequest {
        game_id: "watched".into(),
        reason: pb::EndReason::Resignation as i32,
        loser: pb::Color::Black as i32,
        ..Default::default()
    })
    .await
    .unwrap();
    while events.message().await.unwrap().is_some() {}
    eventually("WatchGame's OK", || {
        (calls("WatchGame", "OK") == 1).then_some(())
    })
    .await;

    // A stream the client drops: CANCELLED.
    create(c, "dropped", "jsa").await;
    let mut events = c.watch_game(watch("dropped")).await.unwrap().into_inner();
    assert!(events.message().await.unwrap().is_some(), "the creation");
    drop(events);
    eventually("WatchGame's CANCELLED", || {
        (calls("WatchGame", "CANCELLED") == 1).then_some(())
    })
    .await;

    // Each once, and nothing else for them (the first stream's end is long past by now).
    let codes = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "NOT_FOUND",
        "DEADLINE_EXCEEDED",
    ];
    let total = |method| codes.iter().map(|code| calls(method, code)).sum::<u64>();
    assert_eq!(total("WatchGame"), 2);
    assert_eq!(total("GetGame"), 1);
    assert_eq!(calls("EndGame", "OK"), 1);
}
