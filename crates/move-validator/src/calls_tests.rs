//! The layer around a stand-in service whose answer each test chooses: what is recorded, when,
//! and on which span.

use super::*;
use bytes::Bytes;
use http_body::{Body as _, Frame};
use std::collections::VecDeque;
use std::sync::Mutex;
use tower::{Layer as _, Service as _};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::SubscriberExt as _;

/// The calls recorded: method and code.
type Recorded = Arc<Mutex<Vec<(&'static str, Code)>>>;

/// What the stand-in service answers.
enum Answer {
    /// A trailers-only answer: the status in the headers, no body.
    Head(Code),
    /// These frames, then the body's end.
    Frames(Vec<Frame<Bytes>>),
    /// Nothing, ever.
    Never,
}

/// The stand-in service: answers its one call as told and notes the span it was called in.
#[derive(Clone)]
struct Stand {
    answer: Arc<Mutex<Option<Answer>>>,
    span_name: Arc<Mutex<Option<&'static str>>>,
}

impl tower::Service<http::Request<Body>> for Stand {
    type Response = http::Response<Frames>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Frames>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Request<Body>) -> Self::Future {
        let answer = self.answer.lock().unwrap().take().expect("one call");
        let span_name = self.span_name.clone();
        Box::pin(async move {
            *span_name.lock().unwrap() = tracing::Span::current().metadata().map(|m| m.name());
            let mut response = http::Response::new(Frames(VecDeque::new()));
            match answer {
                Answer::Head(code) => {
                    response
                        .headers_mut()
                        .insert("grpc-status", (code as i32).into());
                }
                Answer::Frames(frames) => *response.body_mut() = Frames(frames.into()),
                Answer::Never => std::future::pending::<()>().await,
            }
            Ok(response)
        })
    }
}

/// A body of the frames given.
struct Frames(VecDeque<Frame<Bytes>>);

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }
}

fn data() -> Frame<Bytes> {
    Frame::data(Bytes::from_static(b"\0\0\0\0\0"))
}

fn trailers(code: Code) -> Frame<Bytes> {
    let mut map = http::HeaderMap::new();
    map.insert("grpc-status", (code as i32).into());
    Frame::trailers(map)
}

/// The fields recorded on spans after their creation, in order.
#[derive(Clone, Default)]
struct Fields(Arc<Mutex<Vec<(&'static str, String)>>>);

impl Fields {
    fn get(&self, name: &str) -> Vec<String> {
        let fields = self.0.lock().unwrap();
        fields
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .lock()
            .unwrap()
            .push((field.name(), format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .lock()
            .unwrap()
            .push((field.name(), value.to_owned()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Fields {
    fn on_record(
        &self,
        _: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        values.record(&mut self.clone());
    }
}

/// One test's world: the layer around a stand-in answering `answer`, with the server's time
/// limit `timeout`, what it records and the spans' fields (on this thread).
struct World {
    service: Traced<Stand>,
    recorded: Recorded,
    span_name: Arc<Mutex<Option<&'static str>>>,
    fields: Fields,
    _subscriber: tracing::subscriber::DefaultGuard,
}

fn world(answer: Answer, timeout: Option<Duration>) -> World {
    let fields = Fields::default();
    let subscriber =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(fields.clone()));
    let recorded = Recorded::default();
    let sink = recorded.clone();
    let layer = CallTelemetry {
        record: Arc::new(move |method, code, _| sink.lock().unwrap().push((method, code))),
        timeout,
    };
    let span_name = Arc::new(Mutex::new(None));
    World {
        service: layer.layer(Stand {
            answer: Arc::new(Mutex::new(Some(answer))),
            span_name: span_name.clone(),
        }),
        recorded,
        span_name,
        fields,
        _subscriber: subscriber,
    }
}

impl World {
    fn recorded(&self) -> Vec<(&'static str, Code)> {
        self.recorded.lock().unwrap().clone()
    }
}

fn request(path: &str, headers: &[(&'static str, &'static str)]) -> http::Request<Body> {
    let mut request = http::Request::new(Body::empty());
    *request.uri_mut() = path.parse().unwrap();
    for (k, v) in headers {
        request
            .headers_mut()
            .insert(*k, http::HeaderValue::from_static(v));
    }
    request
}

async fn next(body: &mut Body) -> Option<Result<Frame<Bytes>, tonic::Status>> {
    std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await
}

#[test]
fn the_methods_are_the_contracts() {
    use prost::Message as _;
    let set = prost_types::FileDescriptorSet::decode(shogi_proto::FILE_DESCRIPTOR_SET).unwrap();
    let mut contract: Vec<String> = set
        .file
        .iter()
        .filter(|f| f.package() == "shogi.v1")
        .flat_map(|f| &f.service)
        .filter(|s| s.name() == "MoveValidator")
        .flat_map(|s| s.method.iter().map(|m| m.name().to_owned()))
        .collect();
    let mut ours: Vec<String> = METHODS.iter().map(|m| (*m).to_owned()).collect();
    contract.sort();
    ours.sort();
    assert_eq!(ours, contract);
    assert_eq!(crate::SERVICE_NAME, "shogi.v1.MoveValidator");
}

#[tokio::test]
async fn a_status_in_the_headers_ends_the_call_with_its_head() {
    let mut w = world(Answer::Head(Code::NotFound), None);
    let response = w
        .service
        .call(request("/shogi.v1.MoveValidator/GetGame", &[]))
        .await
        .unwrap();
    assert_eq!(w.recorded(), [("GetGame", Code::NotFound)]);
    assert_eq!(*w.span_name.lock().unwrap(), Some("get_game"));
    assert_eq!(w.fields.get("otel.status_code"), ["ERROR"]);
    assert_eq!(w.fields.get("rpc.response.status_code"), ["NOT_FOUND"]);
    let mut body = response.into_body();
    assert!(next(&mut body).await.is_none());
    drop(body);
    assert_eq!(w.recorded(), [("GetGame", Code::NotFound)]);
}

#[tokio::test]
async fn a_streamed_call_ends_with_its_trailers() {
    for (code, error) in [(Code::Ok, false), (Code::Unavailable, true)] {
        let frames = vec![data(), data(), trailers(code)];
        let mut w = world(Answer::Frames(frames), None);
        let response = w
            .service
            .call(request("/shogi.v1.MoveValidator/WatchGame", &[]))
            .await
            .unwrap();
        assert_eq!(*w.span_name.lock().unwrap(), Some("watch_game"));
        let mut body = response.into_body();
        for _ in 0..2 {
            assert!(next(&mut body).await.unwrap().unwrap().is_data());
            assert_eq!(w.recorded(), [], "recorded before the trailers");
        }
        assert!(next(&mut body).await.unwrap().unwrap().is_trailers());
        assert_eq!(w.recorded(), [("WatchGame", code)]);
        assert!(next(&mut body).await.is_none());
        drop(body);
        assert_eq!(w.recorded(), [("WatchGame", code)], "recorded once");
        let status = arbiter_telemetry::metrics::status_name(code);
        assert_eq!(w.fields.get("rpc.response.status_code"), [status]);
        let marked: &[&str] = if error { &["ERROR"] } else { &[] };
        assert_eq!(w.fields.get("otel.status_code"), marked, "{code:?}");
    }
}

#[tokio::test]
async fn a_body_without_trailers_ends_unknown() {
    let mut w = world(Answer::Frames(vec![data()]), None);
    let response = w
        .service
        .call(request("/shogi.v1.MoveValidator/SubmitMove", &[]))
        .await
        .unwrap();
    let mut body = response.into_body();
    assert!(next(&mut body).await.unwrap().unwrap().is_data());
    assert!(next(&mut body).await.is_none());
    drop(body);
    assert_eq!(w.recorded(), [("SubmitMove", Code::Unknown)]);
}

/// A call given up before its end: before its head (the future dropped), or in its body.
#[tokio::test]
async fn an_abandoned_call_is_cancelled_or_past_its_deadline() {
    use Code::{Cancelled, DeadlineExceeded};
    let zero = Some(Duration::ZERO);
    type Headers = &'static [(&'static str, &'static str)];
    let deadline: Headers = &[("grpc-timeout", "0m")];
    let far: Headers = &[("grpc-timeout", "1H")];
    // (in the body, the client's headers, the server's limit, the code)
    let cases: &[(bool, Headers, Option<Duration>, Code)] = &[
        (false, &[], None, Cancelled),
        (false, far, None, Cancelled),
        (false, deadline, None, DeadlineExceeded),
        (false, &[], zero, DeadlineExceeded),
        (true, &[], None, Cancelled),
        // The server's limit is on the head only: a stream goes on past it.
        (true, &[], zero, Cancelled),
        (true, deadline, None, DeadlineExceeded),
    ];
    for &(in_body, headers, timeout, code) in cases {
        let answer = if in_body {
            Answer::Frames(vec![data(), trailers(Code::Ok)])
        } else {
            Answer::Never
        };
        let mut w = world(answer, timeout);
        let mut call = w
            .service
            .call(request("/shogi.v1.MoveValidator/SubmitMove", headers));
        if in_body {
            let mut body = call.await.unwrap().into_body();
            assert!(next(&mut body).await.unwrap().unwrap().is_data());
            drop(body);
        } else {
            assert!(futures::poll!(&mut call).is_pending());
            drop(call);
        }
        let case = format!("in body: {in_body}, {headers:?}, {timeout:?}");
        assert_eq!(w.recorded(), [("SubmitMove", code)], "{case}");
    }
}

#[tokio::test]
async fn other_paths_pass_through_unrecorded() {
    for path in [
        "/shogi.v1.MoveValidator/Bogus",
        "/shogi.v1.MoveValidatorX/GetGame",
        "/grpc.health.v1.Health/Check",
    ] {
        let mut w = world(Answer::Head(Code::Unimplemented), None);
        let response = w.service.call(request(path, &[])).await.unwrap();
        assert_eq!(
            response.headers()["grpc-status"],
            (Code::Unimplemented as i32).to_string().as_str()
        );
        assert_eq!(w.recorded(), [], "{path}");
        assert_eq!(*w.span_name.lock().unwrap(), None, "{path}");
    }
}

#[test]
fn grpc_timeouts_are_read_as_the_protocol_writes_them() {
    let check = |value: &'static str, want: Option<Duration>| {
        let mut headers = http::HeaderMap::new();
        headers.insert("grpc-timeout", http::HeaderValue::from_static(value));
        assert_eq!(grpc_timeout(&headers), want, "{value:?}");
    };
    check("2H", Some(Duration::from_secs(7200)));
    check("3M", Some(Duration::from_secs(180)));
    check("10S", Some(Duration::from_secs(10)));
    check("250m", Some(Duration::from_millis(250)));
    check("7u", Some(Duration::from_micros(7)));
    check("99999999n", Some(Duration::from_nanos(99_999_999)));
    check("123456789S", None);
    check("S", None);
    check("10", None);
    check("10s", None);
    check("-1S", None);
    check("", None);
    assert_eq!(grpc_timeout(&http::HeaderMap::new()), None);
}
