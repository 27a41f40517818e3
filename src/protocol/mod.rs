//! JSON-RPC 2.0 and MCP on the wire, both eras: parsing a line into a typed request, and
//! shaping handler results and errors into the JSON each protocol revision expects.
//!
//! This is the only module that knows JSON-RPC: the server moves bytes and the handlers
//! work on plain Rust values.

mod escape;
mod request;
mod shape;

pub use request::{
    CompleteParams, CompletionRef, Envelope, Era, GetPromptParams, Incoming, ListenParams, Method,
    parse_line,
};
pub use shape::{
    BlockMemo, Hints, ShapedPage, Shaper, acknowledged, error_line, notification,
    stream_notification,
};

use serde_json::{Value, json};

/// Every revision this server speaks, newest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

impl Revision {
    /// The one modern revision (per-request `_meta`, no handshake).
    pub const MODERN: Revision = Revision::V2026_07_28;
    /// Revisions spoken after `initialize`, newest first.
    pub const LEGACY: [Revision; 4] = [
        Revision::V2025_11_25,
        Revision::V2025_06_18,
        Revision::V2025_03_26,
        Revision::V2024_11_05,
    ];

    /// How many revisions there are: `index` is below it.
    pub const COUNT: usize = 5;

    /// A dense number for each revision, oldest 0, for tables kept per revision.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    pub fn parse(text: &str) -> Option<Revision> {
        std::iter::once(Revision::MODERN)
            .chain(Revision::LEGACY)
            .find(|revision| revision.as_str() == text)
    }

    pub fn is_modern(self) -> bool {
        self == Revision::MODERN
    }

    /// `title` on prompts, resources and arguments; `resource_link` blocks.
    pub fn has_titles_and_links(self) -> bool {
        self >= Revision::V2025_06_18
    }

    pub fn has_icons(self) -> bool {
        self >= Revision::V2025_11_25
    }

    pub fn has_audio(self) -> bool {
        self >= Revision::V2025_03_26
    }
}

/// The names of the legacy revisions, for error messages.
pub fn legacy_names() -> String {
    Revision::LEGACY.map(Revision::as_str).join(", ")
}

/// JSON-RPC and MCP error codes this server sends.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Legacy revisions' "resource not found".
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    pub const MISSING_CAPABILITY: i64 = -32021;
    pub const UNSUPPORTED_VERSION: i64 = -32022;
    /// Ours: too many requests of a kind (completion). MCP defines no such code and asks
    /// for new ones outside the JSON-RPC reserved range (-32768..=-32000); 429 as in HTTP.
    pub const RATE_LIMITED: i64 = -31429;
}

/// An error answer: code, one actionable sentence, optional data.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INVALID_PARAMS, message)
    }

    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INTERNAL_ERROR, message)
    }

    /// A completion request over the per-process limit; `data.retryAfterMs` says when a
    /// retry will be accepted.
    pub fn rate_limited(per_second: u32, burst: u32, retry_after: std::time::Duration) -> RpcError {
        let retry_ms = retry_after.as_millis().max(1);
        RpcError::new(
            code::RATE_LIMITED,
            format!(
                "too many completion requests: this server answers {per_second} per second \
                 (bursts of {burst}); retry in {retry_ms} ms, or raise serve --completion-rate"
            ),
        )
        .with_data(json!({ "retryAfterMs": retry_ms }))
    }

    pub fn unsupported_version(requested: &str) -> RpcError {
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
