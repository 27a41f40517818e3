//! Who may ask, decided before a request's body is read: `admit` lets a request in by its
//! `Host` (against DNS rebinding) and `Origin`; `authenticate` finds the caller and what it
//! sees from its credential, under the scheme the server runs (none, the library's bearer
//! tokens, or OAuth access tokens, `access`), and refuses one without a valid credential
//! with 401 (or 403 for scopes that grant nothing) and its `WWW-Authenticate` challenge.

use std::sync::Arc;

use hyper::header::{self, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};

use super::Server;
use super::callers::Who;
use super::metrics::Guard;
use super::oauth::{self, Problem};
use super::responses::{Refusal, Reply, refusal};
use crate::config::Auth;
use crate::oauth::{Verdict, Verifier};
use crate::protocol::RpcError;
use crate::protocol::http::{
    access_token_refused, host_refused, insufficient_scope, origin_refused, unauthorized,
};
use crate::store::tokens::Presented;
use crate::visibility::Visibility;

/// Who sent a request (for its limits) and what it sees.
#[derive(Clone)]
pub(super) struct Caller {
    pub(super) who: Who,
    pub(super) seen: Visibility,
    /// The bearer credential it presented (None under `--auth none`): a stream it opens is
    /// ended when the credential stops letting it in.
    pub(super) credential: Option<Arc<str>>,
}

/// Whether the request is let in at all, before its body is read or anything dispatched:
/// its `Host` (a name this server is reached by, against DNS rebinding; every path, `/metrics`
/// and `/healthz` too), then its `Origin`.
pub(super) fn admit(server: &Server, parts: &Parts) -> Result<(), Refusal> {
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
pub(super) async fn authenticate(
    server: &Arc<Server>,
    parts: &Parts,
) -> Result<Caller, Response<Reply>> {
    let served_channel = server.shared.config.channel.as_deref();
    if server.auth == Auth::None {
        return Ok(Caller {
            who: Who::Process,
            seen: Visibility::EVERYTHING.or_channel(served_channel),
            credential: None,
        });
    }
    let presented = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|value| std::str::from_utf8(value.as_bytes()).ok())
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        });
    if let Some(verifier) = &server.oauth {
        return access(verifier, presented, served_channel).await;
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
            seen: Visibility::of(&grant, served_channel),
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
    served_channel: Option<&str>,
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
            seen: seen.or_channel(served_channel),
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
