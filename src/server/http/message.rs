//! The transport's rules for one POSTed message: the caller's place and the body, read
//! within `--max-line` and `--body-timeout`; the message parsed by `protocol::parse_line`,
//! its headers checked against it (`protocol::http`), its legacy session read from its id
//! (`session_id`), then routed (`server::route`, as on stdio) and answered through
//! `server::answer` (from what is kept on the async worker, as stdio's reader does,
//! otherwise on the blocking pool), or with a stream. A 2025-03-26 session's batch is each
//! of its messages so. Everything up to the answer runs under the panic guard stdio's lines
//! run under (`server::guard`).

use std::sync::Arc;
use std::time::Instant;

use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming as Body};
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};

use super::Server;
use super::admission::Caller;
use super::callers::Who;
use super::cancel::Registered;
use super::metrics::{self, AnsweredError, Guard, Outcome};
use super::responses::{
    Refusal, Reply, accepted, events, json, no_message, refusal, retry_after, status,
    stream_refused,
};
use super::session_id::{self, LegacySession};
use crate::protocol::http::{
    McpHeaders, body_timed_out, check_legacy_version, check_modern, header as mcp,
    legacy_refusal_status, modern_without_meta, over_in_flight_share, refusal_status,
    session_required, session_unknown, shutting_down, unserved_version,
};
use crate::protocol::{
    Envelope, Era, Failure, Incoming, Method, Negotiated, Notification, RequestId, Revision,
    RpcError, error_line, id_of, parse_line,
};
use crate::server::answer::{self, Reach};
use crate::server::guard::guarded;
use crate::server::route::{Route, route};
use crate::server::session::Interest;
use crate::visibility::Visibility;

/// The MCP headers as `HeaderName`s: a lookup by `&str` parses and lower-cases the name
/// first, every time (docs/benchmarks.md, `http`).
static PROTOCOL_VERSION: HeaderName = HeaderName::from_static(mcp::PROTOCOL_VERSION);
static MCP_METHOD: HeaderName = HeaderName::from_static(mcp::METHOD);
static MCP_NAME: HeaderName = HeaderName::from_static(mcp::NAME);
pub(super) static SESSION_ID: HeaderName = HeaderName::from_static(mcp::SESSION_ID);

pub(super) fn header<'a>(parts: &'a Parts, name: &HeaderName) -> Option<&'a [u8]> {
    parts.headers.get(name).map(HeaderValue::as_bytes)
}

pub(super) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// POST: one JSON-RPC message.
pub(super) async fn post(
    server: &Arc<Server>,
    parts: &Parts,
    body: Body,
    caller: Caller,
) -> Response<Reply> {
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
    one_message(server, parts, &message, caller, false).await
}

/// One JSON-RPC message (an array, a batch, is refused here as not a message; `in_batch`:
/// it is one of a batch's), handled as far as its answer under the panic guard, then
/// answered; a request is counted for `/metrics` by method, outcome and time taken.
async fn one_message(
    server: &Arc<Server>,
    parts: &Parts,
    message: &[u8],
    caller: Caller,
    in_batch: bool,
) -> Response<Reply> {
    let started = Instant::now();
    let handled = guarded(
        || id_of(message),
        || handle(server, parts, message, caller, in_batch),
    );
    let (method, routed) = match handled {
        Ok(Handled::Other(response)) => return response,
        Ok(Handled::Request(method, routed)) => (method, routed),
        Err(panicked) => return json(StatusCode::INTERNAL_SERVER_ERROR, panicked),
    };
    let response = match routed {
        Routed::Done(response) => response,
        Routed::Answer(answering) => answered(server, *answering).await,
    };
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

/// What a message comes to before anything is awaited.
enum Handled {
    /// Not a request answered (an invalid message, a notification, a response, an
    /// `initialize` in a batch): not counted.
    Other(Response<Reply>),
    /// A request, under its method's label for `/metrics`.
    Request(String, Routed),
}

/// What routing made of a request.
enum Routed {
    /// Responded to as it was routed: refused, a stream opened, a subscription changed.
    Done(Response<Reply>),
    /// To be answered through `server::answer` (boxed: a response is far smaller).
    Answer(Box<Answering>),
}

/// A request to answer through `server::answer`.
struct Answering {
    envelope: Envelope,
    revision: Revision,
    seen: Visibility,
    /// A legacy request in a session, registered to be cancelled.
    registered: Option<Registered>,
    /// A legacy `initialize`: the id of the session it opens.
    session_id: Option<HeaderValue>,
}

/// The message parsed, checked and routed: everything done before anything is awaited,
/// and so what the panic guard covers.
fn handle(
    server: &Server,
    parts: &Parts,
    message: &[u8],
    caller: Caller,
    in_batch: bool,
) -> Handled {
    let envelope = match parse_line(message) {
        Incoming::Invalid { id, error } => {
            let error = if error.code == crate::protocol::code::UNSUPPORTED_VERSION {
                unserved_version(error, header(parts, &PROTOCOL_VERSION))
            } else {
                error
            };
            let status = status(refusal_status(&error));
            return Handled::Other(json(status, error_line(&id, &error)));
        }
        Incoming::Notification(Notification::Cancelled { request_id }) => {
            if let Some(Ok(session)) = session_of(server, parts, &caller.who) {
                server.cancels.cancel(&session.nonce, request_id.key());
            }
            return Handled::Other(accepted());
        }
        // Nothing waits for a response over HTTP: this server sends no requests here.
        Incoming::Notification(Notification::Other) | Incoming::Response(_) => {
            return Handled::Other(accepted());
        }
        Incoming::Request(envelope) => envelope,
    };
    if in_batch && matches!(envelope.method, Method::Initialize { .. }) {
        let error = RpcError::new(
            crate::protocol::code::INVALID_REQUEST,
            "initialize may not be part of a batch; send it alone",
        );
        return Handled::Other(json(StatusCode::OK, error_line(&envelope.id, &error)));
    }
    let method = metrics::label(&envelope.method);
    Handled::Request(method, routed(server, parts, envelope, caller))
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
        let response = one_message(server, parts, one.get().as_bytes(), caller.clone(), true).await;
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
pub(super) fn legacy_session(
    server: &Server,
    parts: &Parts,
    who: &Who,
) -> Result<LegacySession, Refusal> {
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

/// Where a request goes: its headers checked against it (a modern one) or its legacy
/// session read (a legacy one after `initialize`), then routed as on stdio.
fn routed(server: &Server, parts: &Parts, envelope: Envelope, caller: Caller) -> Routed {
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
        Routed::Done(response)
    };
    // In a legacy session a 404 means "this session is gone" and sends the client back to
    // `initialize`, so an error answering the message itself (a method the revision does
    // not define, bad params) comes with 200, as the legacy transport has it.
    let refuse_in_session = |error: RpcError| {
        Routed::Done(json(
            status(legacy_refusal_status(&error)),
            error_line(&envelope.id, &error),
        ))
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
            Err(refused) => return Routed::Done(refused.response()),
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
    let done = match route {
        Route::Initialize { extensions, .. } => {
            let negotiated = Negotiated {
                revision,
                extensions,
            };
            return initialize(server, envelope, negotiated, seen, &who);
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
            return Routed::Answer(Box::new(Answering {
                envelope,
                revision,
                seen,
                registered,
                session_id: None,
            }));
        }
    };
    Routed::Done(done)
}

/// A legacy `initialize`: to be answered, with the id of the session it opens, bound to
/// `who`.
fn initialize(
    server: &Server,
    envelope: Envelope,
    negotiated: Negotiated,
    seen: Visibility,
    who: &Who,
) -> Routed {
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
            return Routed::Done(json(
                StatusCode::INTERNAL_SERVER_ERROR,
                error_line(&envelope.id, &error),
            ));
        }
    };
    Routed::Answer(Box::new(Answering {
        envelope,
        revision: negotiated.revision,
        seen,
        registered: None,
        session_id: HeaderValue::from_str(&id).ok(),
    }))
}

/// Answers a request through `server::answer`, as stdio does: `answer::kept` on this async
/// worker (what is kept, in bounded time, never the database), then, when the answer needs
/// the database, `answer::stored` on the blocking pool (the database is never read on an
/// async worker). The hop to the pool and back is two thread wake-ups, which cost more CPU
/// than answering a kept page, resource, prompt or completion (docs/benchmarks.md). A
/// legacy request `registered` for cancellation ends without a message when its session
/// cancels it; any request's answer is dropped unsent when its client closes the
/// connection (hyper drops this future).
async fn answered(server: &Arc<Server>, answering: Answering) -> Response<Reply> {
    let Answering {
        envelope,
        revision,
        seen,
        registered,
        session_id,
    } = answering;
    // Over HTTP no form of ours is sent to a legacy client (`forms` off): its prompts/get
    // lacking arguments is answered with the error naming them.
    let mut response = match answer::kept(
        &server.shared,
        &seen,
        &envelope,
        revision,
        Reach::Kept,
        false,
    ) {
        Some(line) => json(StatusCode::OK, line),
        None => {
            let shared = Arc::clone(&server.shared);
            let id = envelope.id.clone();
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
    };
    if let Some(value) = session_id {
        response.headers_mut().insert(mcp::SESSION_ID, value);
    }
    response
}
