//! The W3C trace context (`traceparent`, `tracestate`) across the arbiter's hops.
//!
//! A hop's receiving side extracts the caller's context (from a gRPC request's HTTP headers,
//! [`from_http_headers`], or from a bus message's headers, [`from_headers`]) and runs its work
//! with [`within`]: the work's span gets the caller's context as its parent, and the context is
//! attached while the work runs. The sending side writes the current context into the outgoing
//! message's headers with [`inject`]. With OpenTelemetry installed the current context is the
//! innermost span's, so each hop is a child of the one before it; without it, the current
//! context is the one received, so the caller's trace context is carried through unchanged.

use opentelemetry::Context;
use opentelemetry::context::FutureExt as _;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator as _};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use std::future::Future;
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// The W3C header that names the trace and the parent span.
pub const TRACEPARENT: &str = "traceparent";
/// The W3C header of vendor-specific trace state.
pub const TRACESTATE: &str = "tracestate";

struct Headers<'a>(&'a mut Vec<(String, String)>);

impl Injector for Headers<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.push((key.to_owned(), value));
    }
}

struct HeaderSlice<'a>(&'a [(String, String)]);

impl Extractor for HeaderSlice<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| k.as_str()).collect()
    }
}

struct HttpHeaders<'a>(&'a http::HeaderMap);

impl Extractor for HttpHeaders<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// Writes the current trace context into `headers`, replacing any there; writes nothing when
/// there is no valid context.
pub fn inject(headers: &mut Vec<(String, String)>) {
    inject_context(&Context::current(), headers);
}

/// Writes `cx` into `headers`, replacing any trace context there.
pub fn inject_context(cx: &Context, headers: &mut Vec<(String, String)>) {
    if !cx.span().span_context().is_valid() {
        return;
    }
    headers.retain(|(k, _)| {
        !k.eq_ignore_ascii_case(TRACEPARENT) && !k.eq_ignore_ascii_case(TRACESTATE)
    });
    TraceContextPropagator::new().inject_context(cx, &mut Headers(headers));
}

/// The trace context a bus message carries (empty when none, or malformed).
pub fn from_headers(headers: &[(String, String)]) -> Context {
    TraceContextPropagator::new().extract(&HeaderSlice(headers))
}

/// The trace context a gRPC request carries in its HTTP headers (empty when none, or
/// malformed); a `tonic::metadata::MetadataMap` gives them with `as_ref()`.
pub fn from_http_headers(headers: &http::HeaderMap) -> Context {
    TraceContextPropagator::new().extract(&HttpHeaders(headers))
}

/// Runs `work` in `span`, as a continuation of the remote context `parent`: `parent` becomes the
/// span's parent (when it names a trace) and is the current context while `work` runs.
pub fn within<F: Future>(
    span: tracing::Span,
    parent: Context,
    work: F,
) -> impl Future<Output = F::Output> {
    set_parent(&span, &parent);
    attached(span, parent, work)
}

/// Makes the remote context `parent` the parent of `span`, when it names a trace. Only before
/// `span` is first entered: its OpenTelemetry span starts then, with the parent it has.
pub fn set_parent(span: &tracing::Span, parent: &Context) {
    if parent.span().span_context().is_valid() {
        // Fails without the OpenTelemetry layer, where the attached context carries the
        // caller's trace through instead, and once the span has started.
        let _ = span.set_parent(parent.clone());
    }
}

/// Runs `work` in `span` with `parent` the current context while it runs; `span`'s parent set
/// already ([`set_parent`]).
pub fn attached<F: Future>(
    span: tracing::Span,
    parent: Context,
    work: F,
) -> impl Future<Output = F::Output> {
    work.instrument(span).with_context(parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_round_trips_through_headers_and_is_passed_on_without_a_layer() {
        let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let incoming = vec![
            ("traceparent".to_owned(), traceparent.to_owned()),
            ("tracestate".to_owned(), "vendor=x".to_owned()),
        ];
        let cx = from_headers(&incoming);
        assert!(cx.span().span_context().is_remote());
        let mut out = vec![("traceparent".to_owned(), "stale".to_owned())];
        let _guard = cx.attach();
        inject(&mut out);
        out.sort();
        assert_eq!(out, {
            let mut want = incoming.clone();
            want.sort();
            want
        });
    }

    #[test]
    fn no_context_writes_nothing() {
        let mut out = Vec::new();
        inject(&mut out);
        assert!(out.is_empty());
        let garbage = vec![("traceparent".to_owned(), "00-zz".to_owned())];
        assert!(!from_headers(&garbage).span().span_context().is_valid());
        let mut md = tonic::metadata::MetadataMap::new();
        md.insert(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                .parse()
                .unwrap(),
        );
        assert!(
            from_http_headers(md.as_ref())
                .span()
                .span_context()
                .is_valid()
        );
    }
}
