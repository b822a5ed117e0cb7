//! JSON log lines that name their trace: `trace_id` and `span_id` (W3C, lower-case hex) beside
//! the fields `tracing-subscriber`'s JSON format writes.

use opentelemetry::trace::TraceContextExt as _;
use std::sync::{Arc, OnceLock};
use tracing::dispatcher::WeakDispatch;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Wraps a JSON event format: each line gets `"trace_id"` and `"span_id"` when the event is
/// logged inside a span of a trace.
pub(crate) struct WithTraceIds<F> {
    pub(crate) format: F,
    /// The subscriber this format is part of, once installed: the OpenTelemetry layer keeps
    /// each span's context in it. (A formatter runs inside a call of the subscriber, where
    /// `tracing`'s current-dispatcher look-up answers "none", so it is kept here.)
    pub(crate) dispatch: Arc<OnceLock<WeakDispatch>>,
}

impl<F> WithTraceIds<F> {
    /// The ids of the trace the event's span belongs to: with the OpenTelemetry layer, the
    /// span's own (trace id and span id); without it, the trace id of the context a caller
    /// sent, which is attached while its work runs ([`crate::propagation::within`]), and no
    /// span id, since no span of ours is exported.
    fn ids<S, N>(&self, ctx: &FmtContext<'_, S, N>) -> Option<(String, Option<String>)>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
        N: for<'a> FormatFields<'a> + 'static,
    {
        let dispatch = self.dispatch.get().and_then(WeakDispatch::upgrade);
        if let (Some(span), Some(dispatch)) = (ctx.lookup_current(), dispatch)
            && let Some(cx) = tracing_opentelemetry::get_otel_context(&span.id(), &dispatch)
        {
            let sc = cx.span().span_context().clone();
            if sc.is_valid() {
                return Some((sc.trace_id().to_string(), Some(sc.span_id().to_string())));
            }
        }
        let cx = opentelemetry::Context::current();
        let sc = cx.span().span_context().clone();
        sc.is_valid().then(|| (sc.trace_id().to_string(), None))
    }
}

impl<S, N, F> FormatEvent<S, N> for WithTraceIds<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let Some((trace_id, span_id)) = self.ids(ctx) else {
            return self.format.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        self.format
            .format_event(ctx, Writer::new(&mut line), event)?;
        // The JSON format writes one object and a newline: the ids go in before its closing
        // brace. Anything else is written as it came.
        let body = line.trim_end_matches('\n');
        let Some(open) = body.strip_suffix('}') else {
            return writer.write_str(&line);
        };
        writer.write_str(open)?;
        if !open.ends_with('{') {
            writer.write_char(',')?;
        }
        write!(writer, "\"trace_id\":\"{trace_id}\"")?;
        if let Some(span_id) = span_id {
            write!(writer, ",\"span_id\":\"{span_id}\"")?;
        }
        writer.write_str("}")?;
        writer.write_str(&line[body.len()..])
    }
}
