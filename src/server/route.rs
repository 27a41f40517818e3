//! Where a parsed request goes, the same on every transport: the revision that answers it
//! (`protocol::revision_of`, given the revision the caller's legacy session negotiated),
//! the completion rate limit, and which requests are the transport's to keep state for
//! (`initialize`, subscriptions) rather than `answer`'s.

use super::rate_limit::TokenBucket;
use super::state::Shared;
use crate::protocol::{
    Envelope, Extensions, ListenParams, Method, Negotiated, Revision, RpcError, revision_of,
};

/// What the transport does with a request, once it is known to be served.
pub(super) enum Route<'a> {
    /// A legacy client opens: the transport keeps the negotiated revision (and whether the
    /// client declared form elicitation, and the extensions it declared), then answers it
    /// through `answer`.
    Initialize {
        elicits_forms: bool,
        extensions: Extensions,
    },
    /// A modern `subscriptions/listen`: the transport opens a stream.
    Listen(&'a ListenParams),
    /// A legacy `resources/subscribe` (true) or `resources/unsubscribe`.
    Subscribe { uri: &'a str, subscribed: bool },
    /// Everything else: answered through `answer`.
    Answer,
}

/// Routes `envelope` for a caller whose legacy session negotiated `negotiated` (None:
/// none has), spending a completion token from `completions` (None: no limit); refused
/// with the error to answer.
pub(super) fn route<'a>(
    shared: &Shared,
    envelope: &'a Envelope,
    negotiated: Option<Negotiated>,
    completions: Option<&mut TokenBucket>,
) -> Result<(Revision, Route<'a>), RpcError> {
    let revision = revision_of(envelope, negotiated, &shared.config.mirrors)?;
    let route = match &envelope.method {
        Method::Initialize {
            elicits_forms,
            extensions,
            ..
        } => Route::Initialize {
            elicits_forms: *elicits_forms,
            extensions: *extensions,
        },
        Method::Listen(params) => Route::Listen(params),
        Method::Subscribe { uri } => Route::Subscribe {
            uri,
            subscribed: true,
        },
        Method::Unsubscribe { uri } => Route::Subscribe {
            uri,
            subscribed: false,
        },
        Method::Complete(_) => {
            if let Some(bucket) = completions
                && let Err(wait) = bucket.take(std::time::Instant::now())
            {
                let config = &shared.config;
                return Err(RpcError::rate_limited(
                    config.completion_rate,
                    config.completion_burst,
                    wait,
                ));
            }
            Route::Answer
        }
        _ => Route::Answer,
    };
    Ok((revision, route))
}
