//! The request parser: any bytes as one input line through `protocol::parse_line`, then
//! what the dispatcher does with the result before a handler runs (`revision_of` with and
//! without a negotiated revision), and the error line for an invalid one, which must be
//! JSON that echoes the id as it was read.

#![no_main]

use libfuzzer_sys::fuzz_target;
use promptshelf::protocol::{
    Incoming, Notification, RequestId, Revision, RpcError, error_line, id_of, parse_line,
    revision_of,
};
use promptshelf_fuzz::check_answers;

/// The error line for `id` is one JSON-RPC line that carries `id` exactly as it was read.
fn check_error_line(id: &RequestId, error: &RpcError) {
    let line = error_line(id, error);
    check_answers(&line);
    let answer: serde_json::Value = serde_json::from_slice(&line).expect("checked");
    match answer.get("id") {
        None => assert!(
            id.is_null(),
            "the id {} is missing from {answer}",
            id.as_str()
        ),
        Some(echoed) => {
            let sent: serde_json::Value =
                serde_json::from_str(id.as_str()).expect("an id is JSON text");
            assert_eq!(echoed, &sent, "the id is not echoed as sent");
        }
    }
}

fuzz_target!(|line: &[u8]| {
    check_error_line(&id_of(line), &RpcError::panicked());
    match parse_line(line) {
        Incoming::Invalid { id, error } => check_error_line(&id, &error),
        Incoming::Request(envelope) => {
            assert_eq!(envelope.size, line.len(), "a request's size is its line's");
            for negotiated in std::iter::once(None).chain(Revision::LEGACY.map(Some)) {
                if let Err(error) = revision_of(&envelope, negotiated) {
                    check_error_line(&envelope.id, &error);
                }
            }
        }
        Incoming::Notification(Notification::Cancelled { request_id }) => {
            let _ = request_id.key();
        }
        Incoming::Notification(Notification::Other) | Incoming::Response => {}
    }
});
