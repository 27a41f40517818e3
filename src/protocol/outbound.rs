//! The server's own requests to the client: the `elicitation/create` that asks a legacy
//! client for a prompt's missing arguments, the ids those requests carry, and the
//! notification that withdraws one.

use serde::Serialize;

use super::id::RequestId;
use super::results::InputRequest;
use super::revision::Revision;
use super::shape::{FormParams, line};

/// What every id of ours starts with.
const ID_PREFIX: &str = "promptshelf-elicitation-";

/// The id of the server's `n`th request: a string with our prefix, never an integer.
/// The client picks the ids of its own requests and the SDKs number them with integers;
/// ours never equal one of those, so a line that echoes an id (a response, a log, a client
/// that keeps one table of ids for both directions) is never taken for the other side's.
/// The server looks a response up only among its own waiting requests, and a client's
/// cancellation only among the client's requests, so even a client that picks ids with our
/// prefix is never confused with us.
pub(crate) fn outbound_id(n: u64) -> RequestId {
    RequestId::of_string(&format!("{ID_PREFIX}{n}"))
}

/// The `elicitation/create` request `id` sending `request`'s form, as `revision` writes it.
pub(crate) fn elicitation_request(
    id: &RequestId,
    revision: Revision,
    request: &InputRequest,
) -> Vec<u8> {
    #[derive(Serialize)]
    struct Request<'a> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        method: &'static str,
        params: FormParams<'a>,
    }
    line(
        &Request {
            jsonrpc: "2.0",
            id,
            method: "elicitation/create",
            params: FormParams::of(request, revision),
        },
        0,
    )
}

/// `notifications/cancelled` for our request `id`: its answer is no longer wanted.
pub(crate) fn cancellation(id: &RequestId, reason: &str) -> Vec<u8> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Params<'a> {
        request_id: &'a RequestId,
        reason: &'a str,
    }
    #[derive(Serialize)]
    struct Notification<'a> {
        jsonrpc: &'static str,
        method: &'static str,
        params: Params<'a>,
    }
    line(
        &Notification {
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: Params {
                request_id: id,
                reason,
            },
        },
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_ids_are_prefixed_strings() {
        assert_eq!(outbound_id(7).as_str(), "\"promptshelf-elicitation-7\"");
        assert_ne!(outbound_id(1), outbound_id(2));
    }
}
