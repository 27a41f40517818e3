//! One HTTP request to its response, in the order a request is let in: `Host` and `Origin`
//! (`admission::admit`), the path (`/mcp`, `/healthz`, the OAuth metadata, `/metrics`
//! behind the endpoint's credential), the credential (`admission::authenticate`), the
//! caller's request rate, then the endpoint's method: POST a message (`message`), GET a
//! legacy session's stream, DELETE a legacy session. Every response is counted for
//! `/metrics` on its way out.
//!
//! - `admission`: who may ask, before the body is read.
//! - `message`: the transport's rules for a POSTed message, to its answer.
//! - `responses`: the responses themselves.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming as Body;
use hyper::header;
use hyper::http::request::Parts;
use hyper::{Method as Verb, Request, Response, StatusCode};

use super::Server;
use super::admission::{Caller, admit, authenticate};
use super::callers::Who;
use super::message::{SESSION_ID, header, legacy_session, now_secs, post};
use super::oauth;
use super::responses::{
    Reply, empty, events, json, metrics_text, not_allowed, plain, refusal, stream_refused,
};
use crate::protocol::RpcError;
use crate::protocol::http::{not_found, shutting_down};

/// The endpoint's path.
pub(super) const ENDPOINT: &str = "/mcp";
const HEALTH: &str = "/healthz";
/// The most of a refused request's body read before its refusal is sent, and for how long.
const DRAIN_LIMIT: usize = 64 * 1024;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(1);
const METRICS: &str = "/metrics";

/// Answers one request; never fails (a refusal is a response too). Its status is counted
/// for `/metrics`.
pub(super) async fn respond(server: Arc<Server>, request: Request<Body>) -> Response<Reply> {
    let response = handle(&server, request).await;
    server.metrics.responded(response.status().as_u16());
    response
}

async fn handle(server: &Arc<Server>, request: Request<Body>) -> Response<Reply> {
    let (parts, body) = request.into_parts();
    if let Err(refused) = admit(server, &parts) {
        return refused.response();
    }
    let path = parts.uri.path();
    if path == HEALTH && parts.method == Verb::GET {
        return plain(StatusCode::OK, "ok\n");
    }
    if let Some(verifier) = &server.oauth
        && oauth::is_metadata_path(path)
    {
        // Asked for before a token is had: served to anyone.
        if parts.method != Verb::GET {
            return not_allowed(&parts.method, "GET");
        }
        return json(StatusCode::OK, oauth::metadata(verifier));
    }
    if path == METRICS && parts.method == Verb::GET {
        // Asked for with the same credential as the endpoint: counts by method say how a
        // library is used, which is no business of whoever can reach the port.
        return match authenticate(server, &parts).await {
            Ok(_) => metrics_text(server),
            Err(refused) => refused,
        };
    }
    if path != ENDPOINT {
        return refusal(StatusCode::NOT_FOUND, &not_found(path, ENDPOINT));
    }
    if server.closing.load(Ordering::Acquire) {
        return refusal(StatusCode::SERVICE_UNAVAILABLE, &shutting_down());
    }
    let caller = match authenticate(server, &parts).await {
        Ok(caller) => caller,
        Err(refused) => {
            drain(body).await;
            return refused;
        }
    };
    // Before the body is read: a caller over its rate costs one short answer. The body is
    // drained as for a refused credential, so the connection stays open for the request
    // after the wait (left unread, hyper closed it, and the client's next request on it
    // failed with the peer gone).
    if let Err(wait) = server.callers.request(&caller.who, Instant::now()) {
        drain(body).await;
        let rate = server.callers.requests();
        let error = RpcError::request_rate_limited(
            &caller.who.to_string(),
            rate.per_second,
            rate.burst,
            wait,
        );
        return refusal(StatusCode::TOO_MANY_REQUESTS, &error);
    }
    match parts.method {
        Verb::POST => post(server, &parts, body, caller).await,
        Verb::GET => stream(server, &parts, caller),
        Verb::DELETE => delete(server, &parts, &caller.who),
        _ => not_allowed(&parts.method, "POST, GET, DELETE"),
    }
}

/// Reads and drops a small body (within `DRAIN_LIMIT` and `DRAIN_TIME`) of a request refused
/// before its body was read. hyper closes a connection whose request body is left unread,
/// and a body that arrives after the close makes the kernel reset the connection, which can
/// lose the response before the client reads it: the 401 and its challenge, which is how
/// a client learns where to get a token.
async fn drain(body: Body) {
    let _ = tokio::time::timeout(DRAIN_TIME, Limited::new(body, DRAIN_LIMIT).collect()).await;
}

/// GET: a legacy session's stream of notifications.
fn stream(server: &Arc<Server>, parts: &Parts, caller: Caller) -> Response<Reply> {
    if header(parts, &SESSION_ID).is_none() {
        return not_allowed(&parts.method, "POST");
    }
    let accepts = header(parts, &header::ACCEPT)
        .is_some_and(|accept| accept.windows(17).any(|part| part == b"text/event-stream"));
    if !accepts {
        let error = RpcError::new(
            crate::protocol::code::INVALID_REQUEST,
            "a GET opens a stream of events; send Accept: text/event-stream",
        );
        return refusal(StatusCode::NOT_ACCEPTABLE, &error);
    }
    let session = match legacy_session(server, parts, &caller.who) {
        Ok(session) => session,
        Err(refused) => return refused.response(),
    };
    match server
        .streams
        .legacy(&session.nonce, caller.seen, &caller.who, caller.credential)
    {
        Ok(stream) => events(stream),
        Err(refused) => stream_refused(server, refused),
    }
}

/// DELETE: the client ends its legacy session. Nothing remembers ids, so the id itself
/// stays valid until it expires; what this instance holds for it ends.
fn delete(server: &Server, parts: &Parts, who: &Who) -> Response<Reply> {
    if header(parts, &SESSION_ID).is_none() {
        return not_allowed(&parts.method, "POST");
    }
    match legacy_session(server, parts, who) {
        Ok(session) => {
            server
                .streams
                .end_session(&session.nonce, session.expires, now_secs());
            empty(StatusCode::NO_CONTENT)
        }
        Err(refused) => refused.response(),
    }
}
