//! The request parser: any bytes as one input line through `protocol::parse_line`, then
//! what the dispatcher does with the result before a handler runs (`revision_of` with and
//! without a negotiated revision and extensions, with the tool mirrors on), and the error line for an invalid one, which must be
//! JSON that echoes the id as it was read.

#![no_main]

use libfuzzer_sys::fuzz_target;
use promptshelf::protocol::{
    Extensions, Incoming, Negotiated, Notification, RequestId, Revision, RpcError, error_line,
    id_of, parse_line, revision_of,
};
use promptshelf_fuzz::check_answers;
use serde_json::value::RawValue;

/// The error line for `id` is one JSON-RPC line that carries `id` exactly as it was read.
fn check_error_line(id: &RequestId, error: &RpcError) {
    #[derive(serde::Deserialize)]
    struct Echo<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
    }
    let line = error_line(id, error);
    check_answers(&line);
    let echo: Echo = serde_json::from_slice(&line).expect("checked");
    match echo.id {
        None => assert!(id.is_null(), "the id {} is missing", id.as_str()),
        Some(echoed) => assert_eq!(echoed.get(), id.as_str(), "the id is not echoed as sent"),
    }
}

fuzz_target!(|line: &[u8]| {
    check_error_line(&id_of(line), &RpcError::panicked());
    match parse_line(line) {
        Incoming::Invalid { id, error } => check_error_line(&id, &error),
        Incoming::Request(envelope) => {
            assert_eq!(envelope.size, line.len(), "a request's size is its line's");
            let mirrors = promptshelf_fuzz::config().mirrors;
            // No legacy session, or one of each revision, its client declaring the Skills
            // extension or not.
            let sessions = Revision::LEGACY.into_iter().flat_map(|revision| {
                [false, true].map(|skills| Negotiated {
                    revision,
                    extensions: Extensions { skills },
                })
            });
            for negotiated in std::iter::once(None).chain(sessions.map(Some)) {
                if let Err(error) = revision_of(&envelope, negotiated, &mirrors) {
                    check_error_line(&envelope.id, &error);
                }
            }
        }
        Incoming::Notification(Notification::Cancelled { request_id }) => {
            let _ = request_id.key();
        }
        Incoming::Notification(Notification::Other) | Incoming::Response(_) => {}
    }
});
