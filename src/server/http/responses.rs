//! The responses the endpoint sends: a JSON-RPC line as `application/json` (marked for
//! `/metrics` when it is an error), a refusal without an id (with `Retry-After` when it is
//! a rate's), the empty and plain ones, an event stream's head, and `/metrics`' text. Every
//! response is built here, so each kind carries the same headers wherever it is sent.

use std::convert::Infallible;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::{Method as Verb, Response, StatusCode};

use super::Server;
use super::metrics::{AnsweredError, Gauges};
use super::streams::{Refused, Stream};
use crate::protocol::http::{
    method_not_allowed, shutting_down, too_many_streams, too_many_streams_for,
};
use crate::protocol::{RequestId, RpcError, error_line, is_error_line};

/// A response's body: a whole message, nothing, or a stream of events.
pub(super) type Reply = BoxBody<Bytes, Infallible>;

/// A request refused before its message is answered: the status, and the error said
/// without an id.
pub(super) struct Refusal(pub(super) StatusCode, pub(super) RpcError);

impl Refusal {
    pub(super) fn response(self) -> Response<Reply> {
        refusal(self.0, &self.1)
    }
}

/// The status a refusal's error asks for (400 for one it does not name).
pub(super) fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST)
}

/// A JSON-RPC line (its newline dropped) as the whole body.
pub(super) fn json(status: StatusCode, mut line: Vec<u8>) -> Response<Reply> {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    let answered_error = is_error_line(&line);
    let mut response = Response::new(Full::new(Bytes::from(line)).boxed());
    *response.status_mut() = status;
    if answered_error {
        response.extensions_mut().insert(AnsweredError);
    }
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// An error without a request to answer (id-less).
pub(super) fn refusal(status: StatusCode, error: &RpcError) -> Response<Reply> {
    let mut response = json(status, error_line(&RequestId::null(), error));
    retry_after(&mut response, error);
    response
}

/// `Retry-After` (whole seconds, rounded up) on the answer to a rate-limited request.
pub(super) fn retry_after(response: &mut Response<Reply>, error: &RpcError) {
    if let Some(wait) = error.retry_after() {
        let seconds = wait.as_millis().div_ceil(1000).max(1);
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(u64::try_from(seconds).unwrap_or(u64::MAX)),
        );
    }
}

/// 405, with the methods `allowed`.
pub(super) fn not_allowed(verb: &Verb, allowed: &'static str) -> Response<Reply> {
    let mut response = refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        &method_not_allowed(verb.as_str(), allowed),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allowed));
    response
}

pub(super) fn empty(status: StatusCode) -> Response<Reply> {
    let mut response = Response::new(Empty::new().boxed());
    *response.status_mut() = status;
    response
}

/// 202: a notification or a response, taken.
pub(super) fn accepted() -> Response<Reply> {
    empty(StatusCode::ACCEPTED)
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<Reply> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// `/metrics`: the counts, and the gauges read now.
pub(super) fn metrics_text(server: &Server) -> Response<Reply> {
    let gauges = Gauges {
        open_streams: server.streams.open_count(),
        in_flight: super::MAX_IN_FLIGHT.saturating_sub(server.in_flight.available_permits()),
        change_position: server.shared.position(),
    };
    let text = server.metrics.text(&gauges);
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

fn event_stream_headers(response: &mut Response<Reply>) {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies that buffer responses (nginx) would hold the events back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

/// An open event stream.
pub(super) fn events(stream: Stream) -> Response<Reply> {
    let mut response = Response::new(stream.boxed());
    event_stream_headers(&mut response);
    response
}

/// A cancelled legacy request: an event stream that ends without a message, as the
/// revision says a cancelled request gets no response.
pub(super) fn no_message() -> Response<Reply> {
    let mut response = empty(StatusCode::OK);
    event_stream_headers(&mut response);
    response
}

/// Why a stream was not opened.
pub(super) fn stream_refused(server: &Server, refused: Refused) -> Response<Reply> {
    match refused {
        Refused::TooMany => refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            &too_many_streams(server.shared.config.max_streams),
        ),
        // The caller's own excess (429), where the server's cap is its capacity (503).
        Refused::TooManyForCaller(who) => refusal(
            StatusCode::TOO_MANY_REQUESTS,
            &too_many_streams_for(&who.to_string(), server.streams.max_per_caller()),
        ),
        Refused::Closing => refusal(StatusCode::SERVICE_UNAVAILABLE, &shutting_down()),
        Refused::Busy => refusal(
            StatusCode::CONFLICT,
            &RpcError::new(
                crate::protocol::code::INVALID_REQUEST,
                "this session's GET stream is already open here; read that one",
            ),
        ),
    }
}
