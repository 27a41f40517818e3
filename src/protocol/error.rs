//! What goes wrong, and how each revision says so: `Failure` is what a handler reports in
//! words a person can act on; `RpcError` is the JSON-RPC error the client gets, with the
//! code the revision in use gives that failure.

use serde_json::{Value, json};

use super::revision::{Revision, legacy_names};
use crate::store::StoreError;

/// JSON-RPC and MCP error codes this server sends.
pub(crate) mod code {
    pub(crate) const PARSE_ERROR: i64 = -32700;
    pub(crate) const INVALID_REQUEST: i64 = -32600;
    pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
    pub(crate) const INVALID_PARAMS: i64 = -32602;
    pub(crate) const INTERNAL_ERROR: i64 = -32603;
    /// Legacy revisions' "resource not found".
    pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;
    /// Streamable HTTP: a required header is missing, invalid, or differs from the message.
    pub(crate) const HEADER_MISMATCH: i64 = -32020;
    pub(crate) const UNSUPPORTED_VERSION: i64 = -32022;
    /// Ours: too many requests of a kind (completion). MCP defines no such code and asks
    /// for new ones outside the JSON-RPC reserved range (-32768..=-32000); 429 as in HTTP.
    pub(crate) const RATE_LIMITED: i64 = -31429;
}

/// Why a request could not be served, in terms a person can act on. `into_rpc` picks the
/// error code for the revision in use.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The request named something that is not there or sent a value that is not allowed.
    InvalidParams(String),
    /// `resources/read` of a URI the library does not hold.
    ResourceNotFound { uri: String, message: String },
    /// Our fault, or the library's: the database could not be read, or what it holds
    /// cannot be served (a prompt that does not render, an invalid pattern).
    Internal(String),
}

impl From<StoreError> for Failure {
    fn from(err: StoreError) -> Failure {
        tracing::error!("store: {err}");
        Failure::Internal(format!("the library could not be read: {err}"))
    }
}

impl Failure {
    /// The sentence a person reads (the CLI's error line).
    pub(crate) fn message(&self) -> &str {
        match self {
            Failure::InvalidParams(message) | Failure::Internal(message) => message,
            Failure::ResourceNotFound { message, .. } => message,
        }
    }

    /// The error the client gets for this failure in `revision`.
    pub(crate) fn into_rpc(self, revision: Revision) -> RpcError {
        match self {
            Failure::InvalidParams(message) => RpcError::invalid_params(message),
            Failure::ResourceNotFound { uri, message } => {
                // 2026-07-28 folded "resource not found" into invalid params.
                let code = if revision.is_modern() {
                    code::INVALID_PARAMS
                } else {
                    code::RESOURCE_NOT_FOUND
                };
                RpcError::new(code, message).with_data(json!({ "uri": uri }))
            }
            Failure::Internal(message) => RpcError::internal(message),
        }
    }
}

/// An error answer: code, one actionable sentence, optional data.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(crate) fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INVALID_PARAMS, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INTERNAL_ERROR, message)
    }

    /// What a client gets when answering its request panicked (the panic is logged).
    pub fn panicked() -> RpcError {
        RpcError::internal("internal error while answering this request; it has been logged")
    }

    /// A line over the server's limit, skipped unread.
    pub(crate) fn too_long(limit: usize) -> RpcError {
        RpcError::new(
            code::INVALID_REQUEST,
            format!(
                "the message is longer than {limit} bytes and was skipped; send smaller messages or raise serve --max-line"
            ),
        )
    }

    /// A completion request over its caller's limit (the process on stdio, a token over
    /// HTTP); `data.retryAfterMs` says when a retry will be accepted.
    pub(crate) fn rate_limited(
        per_second: u32,
        burst: u32,
        retry_after: std::time::Duration,
    ) -> RpcError {
        let retry_ms = whole_ms(retry_after);
        RpcError::new(
            code::RATE_LIMITED,
            format!(
                "too many completion requests: this server answers {per_second} per second \
                 to each caller (bursts of {burst}); retry in {retry_ms} ms, or raise serve \
                 --completion-rate"
            ),
        )
        .with_data(json!({ "retryAfterMs": retry_ms, "limit": "--completion-rate" }))
    }

    /// Any request over its caller's request rate (`serve --rate-per-token`); `caller`
    /// says whose, `data.retryAfterMs` when a retry will be accepted.
    pub(crate) fn request_rate_limited(
        caller: &str,
        per_second: u32,
        burst: u32,
        retry_after: std::time::Duration,
    ) -> RpcError {
        let retry_ms = whole_ms(retry_after);
        RpcError::new(
            code::RATE_LIMITED,
            format!(
                "too many requests from {caller}: this server answers {per_second} requests \
                 per second to each caller (bursts of {burst}); retry in {retry_ms} ms, or \
                 raise serve --rate-per-token"
            ),
        )
        .with_data(json!({ "retryAfterMs": retry_ms, "limit": "--rate-per-token" }))
    }

    /// How long a rate-limited request should wait before it is sent again (an HTTP
    /// response's `Retry-After`); None for any other error.
    pub(crate) fn retry_after(&self) -> Option<std::time::Duration> {
        if self.code != code::RATE_LIMITED {
            return None;
        }
        let ms = self.data.as_ref()?.get("retryAfterMs")?.as_u64()?;
        Some(std::time::Duration::from_millis(ms))
    }

    pub(crate) fn unsupported_version(requested: &str) -> RpcError {
        RpcError::new(
            code::UNSUPPORTED_VERSION,
            format!(
                "unsupported protocol version '{requested}': per-request _meta supports {}; \
                 legacy clients send initialize with one of {}",
                Revision::MODERN.as_str(),
                legacy_names()
            ),
        )
        .with_data(json!({"supported": [Revision::MODERN.as_str()], "requested": requested}))
    }
}

/// A wait in whole milliseconds, rounded up (at least one): a retry sent that many
/// milliseconds later is accepted, never one too early.
fn whole_ms(wait: std::time::Duration) -> u128 {
    wait.as_nanos().div_ceil(1_000_000).max(1)
}
