//! One trace per move across the hops, in one process: the gRPC call on loopback, the publish
//! on the embedded bus, the watcher's and the judge's handling, and the verdict's announcement;
//! and the JSON log lines naming the game and the ply they are about, and the trace and span
//! they were logged in.

mod support;

use opentelemetry::trace::{SpanId, SpanKind, TraceId};
use opentelemetry_sdk::trace::SpanData;
use support::{create, eventually, start, submit, telemetry};

/// The caller's span, the parent named in every `traceparent` sent here.
const CALLER: &str = "00f067aa0ba902b7";

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// The finished spans of `trace`, after a flush.
fn spans_of(trace: TraceId) -> Vec<SpanData> {
    let t = telemetry();
    t.guard.flush();
    t.spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace)
        .collect()
}

fn child<'a>(spans: &'a [SpanData], parent: &SpanData, name: &str) -> Option<&'a SpanData> {
    spans
        .iter()
        .find(|s| s.name == name && s.parent_span_id == parent.span_context.span_id())
}

/// The spans of one submitted move: the call, its publish on `.move`, the watcher's handling
/// and the judge's handling of the published move.
struct MoveSpans {
    call: SpanData,
    publish: SpanData,
    watcher: SpanData,
    judge: SpanData,
}

async fn move_spans(trace: TraceId) -> MoveSpans {
    eventually("the move's spans", || {
        let spans = spans_of(trace);
        let call = spans
            .iter()
            .find(|s| s.name == "shogi.v1.MoveValidator/SubmitMove")?;
        let publish = spans.iter().find(|s| {
            s.name == "publish"
                && s.parent_span_id == call.span_context.span_id()
                && attr(s, "messaging.destination.name").is_some_and(|d| d.contains(".move."))
        })?;
        Some(MoveSpans {
            call: call.clone(),
            publish: publish.clone(),
            watcher: child(&spans, publish, "repetition-watcher process")?.clone(),
            judge: child(&spans, publish, "impasse-judge process")?.clone(),
        })
    })
    .await
}

fn traceparent(trace: &str) -> String {
    format!("00-{trace}-{CALLER}-01")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_is_one_trace_from_the_call_to_the_workers() {
    telemetry();
    let mut arbiter = start().await;
    let id = "traced-move";
    create(&mut arbiter.client, id, "jsa").await;
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let answer = submit(
        &mut arbiter.client,
        id,
        1,
        "7g7f",
        Some(&traceparent(trace)),
    )
    .await;
    assert!(answer.verdict.is_none());
    let s = move_spans(TraceId::from_hex(trace).unwrap()).await;

    // The call continues the caller's trace: its parent is the caller's span.
    assert_eq!(s.call.span_kind, SpanKind::Server);
    assert_eq!(s.call.parent_span_id, SpanId::from_hex(CALLER).unwrap());
    assert!(s.call.parent_span_is_remote);
    assert_eq!(attr(&s.call, "game_id").as_deref(), Some(id));
    assert_eq!(attr(&s.call, "ply").as_deref(), Some("1"));
    // The publish is the call's child, and the workers' handling the publish's (through the
    // message's headers).
    assert_eq!(s.publish.span_kind, SpanKind::Producer);
    assert_eq!(
        attr(&s.publish, "messaging.destination.name").as_deref(),
        Some(shogi_proto::subject::moves("traced-move").as_str())
    );
    for worker in [&s.watcher, &s.judge] {
        assert_eq!(worker.span_kind, SpanKind::Consumer);
        assert!(worker.parent_span_is_remote);
        assert_eq!(attr(worker, "game_id").as_deref(), Some(id));
        assert_eq!(attr(worker, "ply").as_deref(), Some("1"));
    }

    // The log line of the accepted move names the game and the ply through its span.
    let line = telemetry()
        .log_lines()
        .into_iter()
        .find(|l| l["fields"]["message"] == "move accepted" && l["span"]["game_id"] == id)
        .expect("a JSON line for the accepted move");
    assert_eq!(line["span"]["name"], "submit_move");
    assert_eq!(line["span"]["ply"], 1);
    // And it names its trace and its span, as exported: the caller's trace, the call's span.
    assert_eq!(line["trace_id"], trace);
    assert_eq!(line["span_id"], s.call.span_context.span_id().to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verdict_is_in_the_trace_of_the_move_that_decided_it() {
    telemetry();
    let mut arbiter = start().await;
    let id = "traced-verdict";
    create(&mut arbiter.client, id, "jsa").await;
    // The kings walk out and back until the start position occurs a fourth time: repetition,
    // which the watcher announces. Each move is sent in a trace of its own.
    let shuffle = ["5i4h", "5a4b", "4h5i", "4b5a"];
    let mut decided = None;
    for ply in 1..=16u32 {
        let trace = format!("{:032x}", 0x5ea_0000 + ply);
        let usi = shuffle[(ply as usize - 1) % 4];
        let answer = submit(
            &mut arbiter.client,
            id,
            ply,
            usi,
            Some(&traceparent(&trace)),
        )
        .await;
        if answer.verdict.is_some() {
            decided = Some((ply, trace));
            break;
        }
    }
    let (ply, trace) = decided.expect("a repetition within 16 plies");
    let trace = TraceId::from_hex(&trace).unwrap();
    let s = move_spans(trace).await;
    // The watcher's handling of the deciding move announces the verdict: the announcement is
    // its child, in the move's trace.
    let verdict = eventually("the verdict's publish", || {
        let spans = spans_of(trace);
        spans
            .iter()
            .find(|p| {
                p.name == "publish"
                    && attr(p, "messaging.destination.name").as_deref()
                        == Some("shogi.game.traced-verdict.verdict")
            })
            .cloned()
    })
    .await;
    assert_eq!(verdict.parent_span_id, s.watcher.span_context.span_id());
    assert_eq!(attr(&verdict, "outcome").as_deref(), Some("stored"));
    assert_eq!(attr(&s.watcher, "ply"), Some(ply.to_string()));

    // The watcher's log line of the verdict names the game and the ply through the delivery's
    // span.
    let line = eventually("the watcher's JSON line of the verdict", || {
        telemetry().log_lines().into_iter().find(|l| {
            l["fields"]["message"] == "verdict"
                && l["span"]["name"] == "handle_event"
                && l["span"]["game_id"] == id
        })
    })
    .await;
    assert_eq!(line["span"]["ply"], ply);
    assert_eq!(line["span"]["role"], "repetition-watcher");
    // In the deciding move's trace, in the watcher's span of its delivery.
    assert_eq!(line["trace_id"], trace.to_string());
    assert_eq!(
        line["span_id"],
        s.watcher.span_context.span_id().to_string()
    );
}
