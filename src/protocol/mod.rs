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
//! - `escape`: strings written as JSON string literals, eight bytes at a time.
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
mod escape;
pub(crate) mod http;
mod id;
mod notification;
mod outbound;
mod request;
mod results;
mod revision;
mod shape;
mod skills;

pub use era::{Negotiated, revision_of};
pub(crate) use error::code;
pub use error::{Failure, RpcError};
pub use id::RequestId;
pub(crate) use notification::{Changed, Lists, acknowledged, notification, stream_notification};
pub(crate) use outbound::{cancellation, elicitation_request, outbound_id};
pub use request::Envelope;
pub use request::Reply;
pub(crate) use request::{
    CallToolParams, CompleteParams, CompletionRef, Elicited, Era, ListenParams, Method,
};
pub use request::{GetPromptParams, Incoming, Notification, id_of, parse_line};
pub use results::InputRequest;
pub use results::Page;
pub use results::PromptOutcome;
pub use results::ReadResult;
pub use results::RenderedPrompt;
pub(crate) use results::{
    Block, Discovery, MediaKind, RenderedMessage, Tool, ToolList, ToolOutput,
};
pub use revision::Revision;
pub use shape::error_line;
pub(crate) use shape::{ShapedPage, Shaper, ToolAnswer, is_error_line};
pub use skills::Extensions;
pub(crate) use skills::{DirectoryChild, SKILLS_EXTENSION, SkillEntry, SkillFile};
