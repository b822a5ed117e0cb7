//! A bare tonic echo service, the baseline of the load benchmark (issue 4: "measure a bare
//! tonic echo call on the same machine").
//!
//! Hand-written as tonic's code generator would write it, with a prost message, so that it
//! stays out of the shipped contracts (`proto/`) and needs no build step: one unary method,
//! `/bench.Echo/Echo`, whose handler returns its request.

use std::convert::Infallible;
use std::future::{Ready, ready};
use tonic::codegen::{Body, BoxFuture, Context, Poll, Service, StdError, http};
use tonic::transport::Channel;
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

/// The method's path.
const PATH: &str = "/bench.Echo/Echo";

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
            Ok(grpc.unary(Echo, req).await)
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
