//! A bare tonic echo service, the baseline of the load benchmark (issue 4: "measure a bare
//! tonic echo call on the same machine").
//!
//! Hand-written as tonic's code generator would write it, with a prost message, so that it
//! stays out of the shipped contracts (`proto/`) and needs no build step: a unary method,
//! `/bench.Echo/Echo`, whose handler returns its request, and a bidirectional streaming one,
//! `/bench.Echo/EchoStream`, whose answers are its requests as they come: what a message costs
//! on a stream a client keeps open against a call of its own each (issue 38's process share).

use std::convert::Infallible;
use std::future::{Ready, ready};
use tonic::codegen::{Body, BoxFuture, Context, Poll, Service, StdError, http};
use tonic::transport::Channel;
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

/// The unary method's path.
const PATH: &str = "/bench.Echo/Echo";

/// The streaming method's path.
const STREAM_PATH: &str = "/bench.Echo/EchoStream";

/// The request and the answer: bytes, sent back as they came.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EchoMessage {
    /// What to echo.
    #[prost(bytes = "bytes", tag = "1")]
    pub payload: bytes::Bytes,
}

/// The echo service, to add to a `tonic::transport::Server`.
#[derive(Clone, Debug, Default)]
pub struct EchoServer;

impl tonic::server::NamedService for EchoServer {
    const NAME: &'static str = "bench.Echo";
}

/// The one method.
struct Echo;

impl tonic::server::UnaryService<EchoMessage> for Echo {
    type Response = EchoMessage;
    type Future = Ready<Result<Response<EchoMessage>, Status>>;

    fn call(&mut self, request: Request<EchoMessage>) -> Self::Future {
        ready(Ok(Response::new(request.into_inner())))
    }
}

/// The streaming method: the requests, sent back as they come.
struct EchoStream;

impl tonic::server::StreamingService<EchoMessage> for EchoStream {
    type Response = EchoMessage;
    type ResponseStream = tonic::Streaming<EchoMessage>;
    type Future = Ready<Result<Response<Self::ResponseStream>, Status>>;

    fn call(&mut self, request: Request<tonic::Streaming<EchoMessage>>) -> Self::Future {
        ready(Ok(Response::new(request.into_inner())))
    }
}

impl<B> Service<http::Request<B>> for EchoServer
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        Box::pin(async move {
            let mut grpc =
                tonic::server::Grpc::new(ProstCodec::<EchoMessage, EchoMessage>::default());
            if req.uri().path() == STREAM_PATH {
                Ok(grpc.streaming(EchoStream, req).await)
            } else {
                Ok(grpc.unary(Echo, req).await)
            }
        })
    }
}

/// One echo call on `channel`.
pub async fn echo(channel: Channel, payload: bytes::Bytes) -> Result<EchoMessage, Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| Status::unavailable(format!("channel not ready: {e}")))?;
    grpc.unary(
        Request::new(EchoMessage { payload }),
        http::uri::PathAndQuery::from_static(PATH),
        ProstCodec::<EchoMessage, EchoMessage>::default(),
    )
    .await
    .map(Response::into_inner)
}

/// One open echo stream: each [`EchoStreamClient::echo`] sends a message on it and waits for
/// its answer.
pub struct EchoStreamClient {
    requests: tokio::sync::mpsc::Sender<EchoMessage>,
    answers: tonic::Streaming<EchoMessage>,
}

impl EchoStreamClient {
    /// Opens a stream on `channel`.
    pub async fn open(channel: Channel) -> Result<EchoStreamClient, Status> {
        let mut grpc = tonic::client::Grpc::new(channel);
        grpc.ready()
            .await
            .map_err(|e| Status::unavailable(format!("channel not ready: {e}")))?;
        let (requests, rx) = tokio::sync::mpsc::channel(16);
        let answers = grpc
            .streaming(
                Request::new(tokio_stream::wrappers::ReceiverStream::new(rx)),
                http::uri::PathAndQuery::from_static(STREAM_PATH),
                ProstCodec::<EchoMessage, EchoMessage>::default(),
            )
            .await?
            .into_inner();
        Ok(EchoStreamClient { requests, answers })
    }

    /// One message on the stream, and its answer.
    pub async fn echo(&mut self, payload: bytes::Bytes) -> Result<EchoMessage, Status> {
        self.requests
            .send(EchoMessage { payload })
            .await
            .map_err(|_| Status::aborted("the stream's sender is gone"))?;
        self.answers
            .message()
            .await?
            .ok_or_else(|| Status::aborted("the stream ended"))
    }
}
