//! A deadline on every gRPC call of the LND and CLN clients, and the HTTP/2 keep-alive
//! of their connections.
//!
//! [`Deadline`] sits under tonic's generated clients: a call that has not got its
//! whole answer (headers and body) within the deadline fails with a status that says
//! so, instead of waiting forever on a node that accepted the connection and stopped
//! answering. Payment calls are left out by path: their callers wait on them with a
//! deadline of their own, the payment's timeout and a grace, which is longer.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::time::Sleep;
use tonic::transport::Endpoint;

/// The deadline of a call that is not a payment, unless the caller gives another.
pub const DEFAULT_CALL_DEADLINE: Duration = Duration::from_secs(60);
/// HTTP/2 pings on a connection with calls in flight: a peer that stops answering
/// them is given up after the keep-alive timeout, and its calls fail. No pings on an
/// idle connection: a gRPC-Go server (LND) by default counts those as abuse and closes
/// the connection (LND's `grpc.client-allow-ping-without-stream`), and an idle
/// connection's next call has its deadline anyway. The interval is well above LND's
/// default minimum between pings (`grpc.client-ping-min-wait`).
const KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(30);
const KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// The endpoint's HTTP/2 keep-alive, as both gRPC clients set it.
pub fn keep_alive(endpoint: Endpoint) -> Endpoint {
    endpoint
        .http2_keep_alive_interval(KEEP_ALIVE_INTERVAL)
        .keep_alive_timeout(KEEP_ALIVE_TIMEOUT)
        .keep_alive_while_idle(false)
}

/// The error of a call that ran out of time; tonic turns it into the call's status.
#[derive(Debug, thiserror::Error)]
#[error("no answer within the call deadline of {0:?}")]
pub struct DeadlineExceeded(pub Duration);

/// A service that fails each call not answered within `deadline`, except the calls
/// whose path is in `exempt`.
#[derive(Clone, Debug)]
pub struct Deadline<S> {
    inner: S,
    deadline: Duration,
    exempt: &'static [&'static str],
}

impl<S> Deadline<S> {
    pub fn new(inner: S, deadline: Duration, exempt: &'static [&'static str]) -> Deadline<S> {
        Deadline {
            inner,
            deadline,
            exempt,
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B> tower::Service<http::Request<B>> for Deadline<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<tonic::body::Body>>,
    S::Error: Into<BoxError>,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = BoxError;
    type Future = Call<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let limit = (!self.exempt.contains(&request.uri().path())).then_some(self.deadline);
        Call {
            inner: Box::pin(self.inner.call(request)),
            limit: limit.map(|d| (d, Box::pin(tokio::time::sleep(d)))),
        }
    }
}

/// A call's answer on its way: its headers, then a body that keeps the same deadline.
pub struct Call<F> {
    inner: Pin<Box<F>>,
    limit: Option<(Duration, Pin<Box<Sleep>>)>,
}

impl<F, E> Future for Call<F>
where
    F: Future<Output = Result<http::Response<tonic::body::Body>, E>>,
    E: Into<BoxError>,
{
    type Output = Result<http::Response<tonic::body::Body>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Poll::Ready(answer) = this.inner.as_mut().poll(cx) {
            let response = answer.map_err(Into::into)?;
            return Poll::Ready(Ok(match this.limit.take() {
                None => response,
                Some((deadline, sleep)) => response.map(|body| {
                    tonic::body::Body::new(Body {
                        inner: body,
                        deadline,
                        sleep,
                    })
                }),
            }));
        }
        match &mut this.limit {
            Some((deadline, sleep)) => {
                ready!(sleep.as_mut().poll(cx));
                Poll::Ready(Err(DeadlineExceeded(*deadline).into()))
            }
            None => Poll::Pending,
        }
    }
}

/// A response body that fails once the call's deadline has passed.
struct Body {
    inner: tonic::body::Body,
    deadline: Duration,
    sleep: Pin<Box<Sleep>>,
}

impl http_body::Body for Body {
    type Data = tonic::codegen::Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        ready!(self.sleep.as_mut().poll(cx));
        let deadline = self.deadline;
        Poll::Ready(Some(Err(DeadlineExceeded(deadline).into())))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;
    use tower::{Service, ServiceExt};

    const PAY: &str = "/routerrpc.Router/SendPaymentV2";
    const DEADLINE: Duration = Duration::from_secs(5);

    fn request(path: &str) -> http::Request<()> {
        http::Request::builder().uri(path).body(()).unwrap()
    }

    /// A node that took the call and never answers it.
    fn silent() -> Deadline<
        impl tower::Service<
            http::Request<()>,
            Response = http::Response<tonic::body::Body>,
            Error = BoxError,
            Future: Send,
        > + Clone,
    > {
        let never = tower::service_fn(|_: http::Request<()>| {
            std::future::pending::<Result<http::Response<tonic::body::Body>, BoxError>>()
        });
        Deadline::new(never, DEADLINE, &[PAY])
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_call_fails_with_the_deadline() {
        let mut service = silent();
        let err = service
            .ready()
            .await
            .unwrap()
            .call(request("/lnrpc.Lightning/GetInfo"));
        let err = err.await.unwrap_err();
        let exceeded = err
            .downcast_ref::<DeadlineExceeded>()
            .expect("a deadline error");
        assert_eq!(exceeded.0, DEADLINE);
        assert!(err.to_string().contains("call deadline of 5s"), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_payment_call_keeps_its_own_deadline() {
        let mut service = silent();
        let call = service.ready().await.unwrap().call(request(PAY));
        // Well past the per-call deadline, the payment is still waited on.
        let waited = tokio::time::timeout(DEADLINE * 10, call).await;
        assert!(waited.is_err(), "the payment call ended: {waited:?}");
    }

    /// A body that never brings a frame.
    struct Silent;

    impl http_body::Body for Silent {
        type Data = tonic::codegen::Bytes;
        type Error = BoxError;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
            Poll::Pending
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_coming_fails_with_the_deadline() {
        let headers_only = tower::service_fn(|_: http::Request<()>| async {
            Ok::<_, BoxError>(http::Response::new(tonic::body::Body::new(Silent)))
        });
        let mut service = Deadline::new(headers_only, DEADLINE, &[PAY]);
        let call = service
            .ready()
            .await
            .unwrap()
            .call(request("/lnrpc.Lightning/GetInfo"));
        let response = call.await.expect("the headers came");
        let mut body = response.into_body();
        let frame = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        let err = frame.expect("a frame or an error").unwrap_err();
        assert!(err.to_string().contains("call deadline of 5s"), "{err}");
    }
}
