//! One HTTP request to its response: the endpoint's methods (POST a message; GET a legacy
//! session's stream; DELETE a legacy session), the checks a request passes before its
//! message is read (`admit`: its `Origin`; `authenticate`: its bearer token, and so who the
//! caller is and what it sees; then the caller's request rate), the body read within
//! `--max-line`, the message
//! parsed by `protocol::parse_line`, its headers checked against it (`protocol::http`),
//! its legacy session read from its id, then routed (`server::route`, as on stdio) and
//! answered through `server::answer` (from what is kept on the async worker, as stdio's
//! reader does, otherwise on the blocking pool), or with a stream. Besides the
//! endpoint: `/healthz`, and `/metrics` behind the endpoint's credential; every response
//! and request is counted for `/metrics` on its way out.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming as Body};
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method as Verb, Request, Response, StatusCode};

use super::Server;
use super::callers::Who;
use super::cancel::Registered;
use super::metrics::{self, AnsweredError, Gauges, Guard, Outcome};
use super::oauth::{self, Problem};
use super::session_id::{self, LegacySession};
use super::streams::{Refused, Stream};
use crate::config::Auth;
use crate::oauth::{Verdict, Verifier};
use crate::protocol::http::{
    McpHeaders, access_token_refused, body_timed_out, check_legacy_version, check_modern,
    header as mcp, host_refused, insufficient_scope, legacy_refusal_status, method_not_allowed,
    modern_without_meta, not_found, origin_refused, over_in_flight_share, refusal_status,
    session_required, session_unknown, shutting_down, too_many_streams, too_many_streams_for,
    unauthorized, unserved_version,
};
use crate::protocol::{
    Envelope, Era, Failure, Incoming, Method, Negotiated, Notification, RequestId, Revision,
    RpcError, error_line, is_error_line, parse_line,
};
use crate::server::answer;
use crate::server::route::{Route, route};
use crate::server::session::Interest;
use crate::store::tokens::Presented;
use crate::visibility::Visibility;

/// A response's body: a whole message, nothing, or a stream of events.
pub(super) type Reply = BoxBody<Bytes, Infallible>;

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

/// Whether the request is let in at all, before its body is read or anything dispatched:
/// its `Host` (a name this server is reached by, against DNS rebinding; every path, `/metrics`
/// and `/healthz` too), then its `Origin`.
fn admit(server: &Server, parts: &Parts) -> Result<(), Refusal> {
    let host = parts.headers.get(header::HOST).map(HeaderValue::as_bytes);
    if !server.hosts.allows(host) {
        server.metrics.guarded(Guard::Host);
        let shown = String::from_utf8_lossy(host.unwrap_or_default()).into_owned();
        return Err(Refusal(StatusCode::FORBIDDEN, host_refused(&shown)));
    }
    let origin = parts.headers.get(header::ORIGIN).map(HeaderValue::as_bytes);
    if server.origins.allows(origin) {
        return Ok(());
    }
    let shown = String::from_utf8_lossy(origin.unwrap_or_default()).into_owned();
    Err(Refusal(StatusCode::FORBIDDEN, origin_refused(&shown)))
}

/// Who is asking, and what the caller sees: without authentication the process, which
/// sees everything; with `--auth token`, the token by its name, seeing what it grants,
/// found by its keyed hash among the tokens this process keeps (`Tokens`, read again at
/// every commit the watcher sees, so a token removed with `promptshelf token rm` is refused
/// within `--poll-ms` on every instance), or else in the database (a token just made). A request
/// without a token, or with one the library does not hold or that expired, is refused
/// with 401 and `WWW-Authenticate: Bearer`. With `--auth oauth`, the access token's subject,
/// seeing what its scopes grant (`access`).
async fn authenticate(server: &Arc<Server>, parts: &Parts) -> Result<Caller, Response<Reply>> {
    if server.auth == Auth::None {
        return Ok(Caller {
            who: Who::Process,
            seen: Visibility::Everything,
            credential: None,
        });
    }
    let presented = header(parts, &header::AUTHORIZATION)
        .and_then(|value| std::str::from_utf8(value).ok())
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        });
    if let Some(verifier) = &server.oauth {
        return access(verifier, presented).await;
    }
    let Some(token) = presented else {
        return Err(unauthorized_response(
            "this server asks for a bearer token, and the request has none",
            None,
        ));
    };
    let credential: Arc<str> = token.into();
    // Checked in memory; only a token the kept table lacks (one made since the watcher last
    // looked, or none of ours) is looked up in the database, on the blocking pool.
    let found = match server.tokens.find(&credential, crate::store::now_ms()) {
        Presented::Unknown => {
            let shared = Arc::clone(&server.shared);
            let presented = Arc::clone(&credential);
            tokio::task::spawn_blocking(move || shared.token(&presented)).await
        }
        known => Ok(Ok(known)),
    };
    match found {
        Ok(Ok(Presented::Valid(grant))) => Ok(Caller {
            seen: Visibility::of(&grant),
            who: Who::Token(grant.name.into()),
            credential: Some(credential),
        }),
        Ok(Ok(Presented::Expired(_))) => Err(unauthorized_response(
            "the bearer token has expired",
            Some("the token has expired"),
        )),
        Ok(Ok(Presented::Unknown)) => Err(unauthorized_response(
            "the bearer token is not one of this library's",
            Some("the token is not known"),
        )),
        Ok(Err(err)) => {
            tracing::error!("looking up a bearer token: {err}");
            Err(refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                &RpcError::internal(format!("the token could not be looked up: {err}")),
            ))
        }
        Err(err) => {
            tracing::error!("a token lookup's task failed: {err}");
            Err(refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                &RpcError::panicked(),
            ))
        }
    }
}

/// `--auth oauth`: what the access token sees, checked on the blocking pool (a key id the
/// key set does not hold reads the set again, which may fetch it over the network); or 401
/// without a valid token, 403 for one whose scopes grant nothing, each with its challenge.
async fn access(
    verifier: &Arc<Verifier>,
    presented: Option<String>,
) -> Result<Caller, Response<Reply>> {
    let Some(token) = presented else {
        let error =
            access_token_refused("this server asks for an access token, and the request has none");
        let challenge = oauth::challenge(verifier, &Problem::Missing);
        return Err(challenged(StatusCode::UNAUTHORIZED, &error, &challenge));
    };
    let checking = Arc::clone(verifier);
    let credential: Arc<str> = token.into();
    let presented = Arc::clone(&credential);
    // A token found valid before is taken from memory, here; only one not seen yet is
    // checked on the blocking pool (that may fetch the key set).
    let checked = match verifier.kept(&credential) {
        Some(verdict) => Ok(verdict),
        None => tokio::task::spawn_blocking(move || checking.check(&presented)).await,
    };
    let verdict = match checked {
        Ok(verdict) => verdict,
        Err(err) => {
            tracing::error!("an access token's check failed: {err}");
            return Err(refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                &RpcError::panicked(),
            ));
        }
    };
    match verdict {
        Verdict::Granted { seen, subject } => Ok(Caller {
            seen,
            who: Who::Subject(subject.into()),
            credential: Some(credential),
        }),
        Verdict::Invalid(why) => {
            let challenge = oauth::challenge(verifier, &Problem::Invalid(why));
            Err(challenged(
                StatusCode::UNAUTHORIZED,
                &access_token_refused(why),
                &challenge,
            ))
        }
        Verdict::Insufficient => {
            let scopes = verifier.scopes();
            let error = insufficient_scope(&scopes.all(), scopes.prefix());
            let challenge = oauth::challenge(verifier, &Problem::Insufficient);
            Err(challenged(StatusCode::FORBIDDEN, &error, &challenge))
        }
    }
}

/// A refusal with its `WWW-Authenticate` challenge.
fn challenged(status: StatusCode, error: &RpcError, challenge: &str) -> Response<Reply> {
    let mut response = refusal(status, error);
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// 401 with the challenge (RFC 6750): `error="invalid_token"` for a token that was sent.
fn unauthorized_response(why: &str, invalid: Option<&str>) -> Response<Reply> {
    let challenge = match invalid {
        Some(description) => format!(
            "Bearer realm=\"promptshelf\", error=\"invalid_token\", error_description=\"{description}\""
        ),
        None => "Bearer realm=\"promptshelf\"".to_string(),
    };
    challenged(StatusCode::UNAUTHORIZED, &unauthorized(why), &challenge)
}

/// Who sent a request (for its limits) and what it sees.
#[derive(Clone)]
struct Caller {
    who: Who,
    seen: Visibility,
    /// The bearer credential it presented (None under `--auth none`): a stream it opens is
    /// ended when the credential stops letting it in.
    credential: Option<Arc<str>>,
}

/// A request refused before its message is answered: the status, and the error said
/// without an id.
struct Refusal(StatusCode, RpcError);

impl Refusal {
    fn response(self) -> Response<Reply> {
        refusal(self.0, &self.1)
    }
}

/// The MCP headers as `HeaderName`s: a lookup by `&str` parses and lower-cases the name
/// first, every time (docs/benchmarks.md, `http`).
static PROTOCOL_VERSION: HeaderName = HeaderName::from_static(mcp::PROTOCOL_VERSION);
static MCP_METHOD: HeaderName = HeaderName::from_static(mcp::METHOD);
static MCP_NAME: HeaderName = HeaderName::from_static(mcp::NAME);
static SESSION_ID: HeaderName = HeaderName::from_static(mcp::SESSION_ID);

fn header<'a>(parts: &'a Parts, name: &HeaderName) -> Option<&'a [u8]> {
    parts.headers.get(name).map(HeaderValue::as_bytes)
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// POST: one JSON-RPC message.
async fn post(server: &Arc<Server>, parts: &Parts, body: Body, caller: Caller) -> Response<Reply> {
    // One of the caller's places, taken before its body is read and held until it is
    // answered: however many bodies one caller sends slowly, or never, it holds its share
    // and no more, and other callers' requests go on (`places`). Its body is not drained:
    // that could take as long as the caller likes.
    let Some(_place) = server.places.take(&caller.who) else {
        server.metrics.guarded(Guard::InFlightShare);
        let share = server.places.share_of(&caller.who);
        return refusal(
            StatusCode::TOO_MANY_REQUESTS,
            &over_in_flight_share(&caller.who.to_string(), share),
        );
    };
    let message = match body_of(server, parts, body).await {
        Ok(message) => message,
        Err(refused) => return refused,
    };
    // Taken once the body is whole: the requests answered at once, by all callers together,
    // are bounded too.
    let Ok(_permit) = server.in_flight.acquire().await else {
        return refusal(StatusCode::SERVICE_UNAVAILABLE, &shutting_down());
    };
    if message.trim_ascii_start().starts_with(b"[")
        && let Some(Ok(session)) = session_of(server, parts, &caller.who)
        && session.revision.has_batches()
    {
        return batch(server, parts, &message, caller).await;
    }
    one_message(server, parts, &message, caller).await
}

/// One JSON-RPC message (an array, a batch, is refused here as not a message).
async fn one_message(
    server: &Arc<Server>,
    parts: &Parts,
    message: &[u8],
    caller: Caller,
) -> Response<Reply> {
    match parse_line(message) {
        Incoming::Invalid { id, error } => {
            let error = if error.code == crate::protocol::code::UNSUPPORTED_VERSION {
                unserved_version(error, header(parts, &PROTOCOL_VERSION))
            } else {
                error
            };
            let status = status(refusal_status(&error));
            json(status, error_line(&id, &error))
        }
        Incoming::Notification(Notification::Cancelled { request_id }) => {
            if let Some(Ok(session)) = session_of(server, parts, &caller.who) {
                server.cancels.cancel(&session.nonce, request_id.key());
            }
            accepted()
        }
        // Nothing waits for a response over HTTP: this server sends no requests here.
        Incoming::Notification(Notification::Other) | Incoming::Response(_) => accepted(),
        Incoming::Request(envelope) => request(server, parts, envelope, caller).await,
    }
}

/// A JSON-RPC batch in a 2025-03-26 session, the one revision that has them: each message
/// answered as if it came alone (in order, within the POST's one place in flight), the
/// responses to its requests together in one array, or 202 when it held no request. An
/// `initialize` may not be in a batch (the revision says so), and an empty or malformed
/// batch is one error.
async fn batch(
    server: &Arc<Server>,
    parts: &Parts,
    message: &[u8],
    caller: Caller,
) -> Response<Reply> {
    let messages = match serde_json::from_slice::<Vec<&serde_json::value::RawValue>>(message) {
        Ok(messages) if !messages.is_empty() => messages,
        Ok(_) => {
            let error = RpcError::new(
                crate::protocol::code::INVALID_REQUEST,
                "the batch is empty; send at least one message in it",
            );
            return json(
                StatusCode::BAD_REQUEST,
                error_line(&RequestId::null(), &error),
            );
        }
        Err(err) => {
            let error = RpcError::new(
                crate::protocol::code::PARSE_ERROR,
                format!("the batch is not a JSON array of messages: {err}"),
            );
            return json(
                StatusCode::BAD_REQUEST,
                error_line(&RequestId::null(), &error),
            );
        }
    };
    let mut answers: Vec<Bytes> = Vec::new();
    for one in messages {
        let response = match parse_line(one.get().as_bytes()) {
            Incoming::Request(envelope) if matches!(envelope.method, Method::Initialize { .. }) => {
                let error = RpcError::new(
                    crate::protocol::code::INVALID_REQUEST,
                    "initialize may not be part of a batch; send it alone",
                );
                json(StatusCode::OK, error_line(&envelope.id, &error))
            }
            _ => one_message(server, parts, one.get().as_bytes(), caller.clone()).await,
        };
        // A notification's 202 and a cancelled request's empty stream answer nothing.
        if response.status() == StatusCode::ACCEPTED
            || response.headers().get(header::CONTENT_TYPE)
                != Some(&HeaderValue::from_static("application/json"))
        {
            continue;
        }
        // Reading a whole response's body cannot fail (its error type is `Infallible`).
        let Ok(body) = response.into_body().collect().await;
        answers.push(body.to_bytes());
    }
    if answers.is_empty() {
        return accepted();
    }
    let parts: Vec<&[u8]> = answers.iter().map(Bytes::as_ref).collect();
    json(
        StatusCode::OK,
        [&b"["[..], &parts.join(&b',')[..], b"]"].concat(),
    )
}

/// A POST's body, whole within `--max-line` and `--body-timeout`; or its refusal: 413 over
/// the limit, 408 (closing the connection) for a body not whole in time, 400 for one that
/// could not be read.
async fn body_of(server: &Server, parts: &Parts, body: Body) -> Result<Bytes, Response<Reply>> {
    let limit = server.shared.config.max_line;
    let too_long = || refusal(StatusCode::PAYLOAD_TOO_LARGE, &RpcError::too_long(limit));
    let declared = header(parts, &header::CONTENT_LENGTH)
        .and_then(|length| std::str::from_utf8(length).ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_long());
    }
    let read = tokio::time::timeout(server.body_timeout, Limited::new(body, limit).collect());
    match read.await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(err)) if err.downcast_ref::<LengthLimitError>().is_some() => Err(too_long()),
        Ok(Err(err)) => {
            let error = RpcError::new(
                crate::protocol::code::INVALID_REQUEST,
                format!("the request body could not be read ({err}); send it again"),
            );
            Err(refusal(StatusCode::BAD_REQUEST, &error))
        }
        Err(_) => {
            server.metrics.guarded(Guard::BodyTimeout);
            let mut response = refusal(
                StatusCode::REQUEST_TIMEOUT,
                &body_timed_out(server.body_timeout.as_secs()),
            );
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(response)
        }
    }
}

/// The legacy session the request's `Mcp-Session-Id` names, if `who` opened it: None
/// without one.
fn session_of(
    server: &Server,
    parts: &Parts,
    who: &Who,
) -> Option<Result<LegacySession, session_id::Rejected>> {
    let sent = header(parts, &SESSION_ID)?;
    let Some(secret) = server.secret() else {
        return Some(Err(session_id::Rejected::NotOurs));
    };
    Some(session_id::verify(
        &secret,
        sent,
        &who.binding(),
        now_secs(),
    ))
}

/// The legacy session a request after `initialize` must name, checked with its version
/// header; or the refusal (400 without an id or with a wrong version, 404 for an id not
/// taken or another caller's, so the client initializes again).
fn legacy_session(server: &Server, parts: &Parts, who: &Who) -> Result<LegacySession, Refusal> {
    let session = match session_of(server, parts, who) {
        None => return Err(Refusal(StatusCode::BAD_REQUEST, session_required())),
        Some(Err(rejected)) => {
            return Err(Refusal(
                StatusCode::NOT_FOUND,
                session_unknown(rejected.why()),
            ));
        }
        Some(Ok(session)) if server.streams.ended(&session.nonce) => {
            return Err(Refusal(
                StatusCode::NOT_FOUND,
                session_unknown("was ended with DELETE"),
            ));
        }
        Some(Ok(session)) => session,
    };
    check_legacy_version(header(parts, &PROTOCOL_VERSION), session.revision)
        .map_err(|error| Refusal(StatusCode::BAD_REQUEST, error))?;
    Ok(session)
}

/// A request, answered and counted for `/metrics` by method, outcome and time taken.
async fn request(
    server: &Arc<Server>,
    parts: &Parts,
    envelope: Envelope,
    caller: Caller,
) -> Response<Reply> {
    let started = Instant::now();
    let method = metrics::label(&envelope.method);
    let response = routed(server, parts, envelope, caller).await;
    let outcome = if !response.status().is_success() {
        Outcome::Refused
    } else if response.extensions().get::<AnsweredError>().is_some() {
        Outcome::Error
    } else {
        Outcome::Ok
    };
    server.metrics.request(method, outcome, started.elapsed());
    response
}

async fn routed(
    server: &Arc<Server>,
    parts: &Parts,
    envelope: Envelope,
    caller: Caller,
) -> Response<Reply> {
    let Caller {
        who,
        seen,
        credential,
    } = caller;
    let refuse = |error: RpcError| {
        let mut response = json(
            status(refusal_status(&error)),
            error_line(&envelope.id, &error),
        );
        retry_after(&mut response, &error);
        response
    };
    // In a legacy session a 404 means "this session is gone" and sends the client back to
    // `initialize`, so an error answering the message itself (a method the revision does
    // not define, bad params) comes with 200, as the legacy transport has it.
    let refuse_in_session = |error: RpcError| {
        json(
            status(legacy_refusal_status(&error)),
            error_line(&envelope.id, &error),
        )
    };
    let session = match (&envelope.era, &envelope.method) {
        (Era::Modern { .. }, _) => {
            let headers = McpHeaders {
                version: header(parts, &PROTOCOL_VERSION),
                method: header(parts, &MCP_METHOD),
                name: header(parts, &MCP_NAME),
            };
            if let Err(error) = check_modern(&envelope, &headers) {
                return refuse(error);
            }
            None
        }
        // Opening a session (a legacy client sends no version header with it).
        (Era::Legacy, Method::Initialize { .. }) => None,
        (Era::Legacy, _)
            if header(parts, &PROTOCOL_VERSION) == Some(Revision::MODERN.as_str().as_bytes()) =>
        {
            return refuse(modern_without_meta());
        }
        // Probing without a session (answered in the modern shape).
        (Era::Legacy, Method::Discover) => None,
        (Era::Legacy, _) => match legacy_session(server, parts, &who) {
            Ok(session) => Some(session),
            Err(refused) => return refused.response(),
        },
    };
    let negotiated = session.as_ref().map(LegacySession::negotiated);
    let routed = server
        .callers
        .completions(&who, Instant::now(), |completions| {
            route(&server.shared, &envelope, negotiated, completions)
        });
    let (revision, route) = match routed {
        Ok(routed) => routed,
        Err(error) if session.is_some() => return refuse_in_session(error),
        Err(error) => return refuse(error),
    };
    match route {
        Route::Initialize { extensions, .. } => {
            let negotiated = Negotiated {
                revision,
                extensions,
            };
            initialize(server, envelope, negotiated, seen, &who).await
        }
        Route::Listen(params) => match Interest::of(&server.shared.config, params, seen) {
            Ok(interest) => match server
                .streams
                .listen(&envelope.id, interest, &who, credential)
            {
                Ok(stream) => events(stream),
                Err(refused) => stream_refused(server, refused),
            },
            Err(sentence) => {
                let error = Failure::InvalidParams(sentence).into_rpc(revision);
                json(StatusCode::OK, error_line(&envelope.id, &error))
            }
        },
        Route::Subscribe { uri, subscribed } => {
            let Some(session) = &session else {
                return refuse(session_required());
            };
            let config = &server.shared.config;
            let line = match server
                .streams
                .subscribe(config, session, uri, subscribed, now_secs())
            {
                Ok(()) => server.shared.shaper(revision).empty(&envelope.id),
                Err(sentence) => {
                    let error = Failure::InvalidParams(sentence).into_rpc(revision);
                    error_line(&envelope.id, &error)
                }
            };
            json(StatusCode::OK, line)
        }
        Route::Answer => {
            let registered = session
                .as_ref()
                .map(|session| server.cancels.register(&session.nonce, envelope.id.key()));
            answered(server, envelope, revision, registered, seen).await
        }
    }
}

/// A legacy `initialize`: answered, with the id of the session it opens, bound to `who`.
async fn initialize(
    server: &Arc<Server>,
    envelope: Envelope,
    negotiated: Negotiated,
    seen: Visibility,
    who: &Who,
) -> Response<Reply> {
    let minted = server
        .secret()
        .ok_or_else(|| "the served database could not be read".to_string())
        .and_then(|secret| {
            session_id::mint(&secret, negotiated, &who.binding(), now_secs())
                .map_err(|err| format!("no randomness for a session id: {err}"))
        });
    let id = match minted {
        Ok(id) => id,
        Err(why) => {
            tracing::error!("initialize over HTTP: {why}");
            let error = RpcError::internal(format!("no session could be opened: {why}"));
            return json(
                StatusCode::INTERNAL_SERVER_ERROR,
                error_line(&envelope.id, &error),
            );
        }
    };
    let mut response = answered(server, envelope, negotiated.revision, None, seen).await;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(mcp::SESSION_ID, value);
    }
    response
}

/// Answers `envelope` through `server::answer`, as stdio does: `answer::kept` on this async
/// worker (what is kept, in bounded time, never the database), then, when the answer needs
/// the database, `answer::stored` on the blocking pool (the database is never read on an
/// async worker). The hop to the pool and back is two thread
/// wake-ups, which cost more CPU than answering a kept page, resource, prompt or
/// completion (docs/benchmarks.md). A legacy request `registered` for cancellation ends
/// without a message when its session cancels it; any request's answer is dropped
/// unsent when its client closes the connection (hyper drops this future).
async fn answered(
    server: &Arc<Server>,
    envelope: Envelope,
    revision: Revision,
    registered: Option<Registered>,
    seen: Visibility,
) -> Response<Reply> {
    if let Some(line) = answer::kept(&server.shared, &seen, &envelope, revision, false) {
        return json(StatusCode::OK, line);
    }
    let shared = Arc::clone(&server.shared);
    let id = envelope.id.clone();
    // Over HTTP no form of ours is sent to a legacy client (`forms` off): its prompts/get
    // lacking arguments is answered with the error naming them.
    let task = tokio::task::spawn_blocking(move || {
        answer::stored_line(&shared, &seen, &envelope, revision)
    });
    let done = match registered {
        Some(mut registered) => tokio::select! {
            done = task => done,
            Ok(()) = &mut registered.cancelled => return no_message(),
        },
        None => task.await,
    };
    match done {
        Ok(line) => json(StatusCode::OK, line),
        Err(err) => {
            tracing::error!("a request's task failed: {err}");
            json(
                StatusCode::INTERNAL_SERVER_ERROR,
                error_line(&id, &RpcError::panicked()),
            )
        }
    }
}

fn stream_refused(server: &Server, refused: Refused) -> Response<Reply> {
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

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST)
}

fn json(status: StatusCode, mut line: Vec<u8>) -> Response<Reply> {
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
fn refusal(status: StatusCode, error: &RpcError) -> Response<Reply> {
    let mut response = json(status, error_line(&RequestId::null(), error));
    retry_after(&mut response, error);
    response
}

/// `Retry-After` (whole seconds, rounded up) on the answer to a rate-limited request.
fn retry_after(response: &mut Response<Reply>, error: &RpcError) {
    if let Some(wait) = error.retry_after() {
        let seconds = wait.as_millis().div_ceil(1000).max(1);
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(u64::try_from(seconds).unwrap_or(u64::MAX)),
        );
    }
}

fn not_allowed(verb: &Verb, allowed: &'static str) -> Response<Reply> {
    let mut response = refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        &method_not_allowed(verb.as_str(), allowed),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allowed));
    response
}

fn empty(status: StatusCode) -> Response<Reply> {
    let mut response = Response::new(Empty::new().boxed());
    *response.status_mut() = status;
    response
}

fn accepted() -> Response<Reply> {
    empty(StatusCode::ACCEPTED)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Reply> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// `/metrics`: the counts, and the gauges read now.
fn metrics_text(server: &Server) -> Response<Reply> {
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

fn events(stream: Stream) -> Response<Reply> {
    let mut response = Response::new(stream.boxed());
    event_stream_headers(&mut response);
    response
}

/// A cancelled legacy request: an event stream that ends without a message, as the
/// revision says a cancelled request gets no response.
fn no_message() -> Response<Reply> {
    let mut response = empty(StatusCode::OK);
    event_stream_headers(&mut response);
    response
}
