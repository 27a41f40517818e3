//! JSON-RPC 2.0 and MCP on the wire, both eras. This is the only module that knows
//! JSON-RPC: the server moves bytes and keeps per-process state, the handlers work on the
//! plain values defined here.
//!
//! - `request`: one line into a typed message (request, notification, response, or the
//!   error to answer), with the request's era and typed parameters, in one scan.
//! - `http`: the Streamable HTTP headers checked against the message, and the errors of a
//!   request refused before it is answered, with their HTTP status.
//! - `era`: which revision answers a request and which methods each era serves.
//! - `revision`: the revisions and what each one's results may carry.
//! - `results`: the plain values handlers answer with.
//! - `error`: `Failure` (a handler's words) and `RpcError` (the client's error, with the
//!   code the revision gives it).
//! - `shape`: results and errors into response lines, per revision (a tool's result
//!   wraps the result it mirrors).
//! - `notification`: change notifications, legacy and on modern streams.
//! - `outbound`: the server's own requests (`elicitation/create` for a legacy client),
//!   their ids, and their cancellation.
//! - `skills`: the Skills extension (SEP-2640): its identifier, the client's declaration,
//!   and the values `skills/list` and `skills/get` answer with.

mod era;
mod error;
pub mod http;
mod id;
mod notification;
mod outbound;
mod request;
mod results;
mod revision;
mod shape;
mod skills;

pub use era::{Negotiated, revision_of};
pub use error::{Failure, RpcError, code};
pub use id::RequestId;
pub use notification::{Changed, Lists, acknowledged, notification, stream_notification};
pub use outbound::{cancellation, elicitation_request, outbound_id};
pub use request::{
    CallToolParams, CompleteParams, CompletionRef, Elicited, Envelope, Era, GetPromptParams,
    Incoming, ListenParams, Method, Notification, Reply, id_of, parse_line,
};
pub use results::{
    Block, Discovery, InputRequest, MediaKind, Page, PromptOutcome, ReadResult, RenderedMessage,
    RenderedPrompt, ShapedBlocks, Tool, ToolList, ToolOutput,
};
pub use revision::{Revision, legacy_names};
pub use shape::{ShapedPage, Shaper, ToolAnswer, error_line, is_error_line};
pub use skills::{DirectoryChild, Extensions, SKILLS_EXTENSION, SkillEntry, SkillFile};
