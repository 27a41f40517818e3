//! The one guard against a panic while a message is handled, the same on both transports:
//! around stdio's handling of a line on the reader, HTTP's of a message on its worker, and
//! every answer made (`answer`, on whichever thread). A panic is logged by the panic hook
//! and answered -32603, so the client is not left waiting and the server goes on serving.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::protocol::{RequestId, RpcError, error_line};

/// Runs `work`; a panic in it comes back as the error line answering the request `id`
/// names (read only then: from a line, as far as it can be).
pub(super) fn guarded<T>(
    id: impl FnOnce() -> RequestId,
    work: impl FnOnce() -> T,
) -> Result<T, Vec<u8>> {
    // What a panic leaves half-done is its own request's: what requests share is kept
    // behind locks whose users recover from poisoning, and caches keep only whole values.
    catch_unwind(AssertUnwindSafe(work)).map_err(|_| error_line(&id(), &RpcError::panicked()))
}
