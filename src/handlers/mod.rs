//! What each MCP method does, as plain functions of (request, store connection, settings)
//! returning plain values; `protocol` turns those into JSON for the client's revision.
//!
//! One module per method group. Handlers never see JSON-RPC, ids or the transport.

pub mod arguments;
pub mod completion;
pub mod discover;
mod paging;
pub mod prompts;
pub mod resources;
pub mod templates;

pub use discover::Discovery;
pub use paging::Page;
pub use prompts::{InputRequest, PromptOutcome};

use std::sync::Arc;

use crate::model::{Content, Role, StoredResource};
use crate::protocol::BlockMemo;
use crate::store::StoreError;

/// Why a request could not be served, in terms a person can act on. `protocol` picks the
/// error code for the revision in use.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The request named something that is not there or sent a value that is not allowed.
    InvalidParams(String),
    /// `resources/read` of a URI the library does not hold.
    ResourceNotFound { uri: String, message: String },
    /// Our fault: the database could not be read.
    Internal(String),
}

impl From<StoreError> for Failure {
    fn from(err: StoreError) -> Failure {
        tracing::error!("store: {err}");
        Failure::Internal(format!("the library could not be read: {err}"))
    }
}

/// The sentence a person reads for a failure (the CLI's error line).
pub fn describe_failure(failure: &Failure) -> &str {
    match failure {
        Failure::InvalidParams(message) | Failure::Internal(message) => message,
        Failure::ResourceNotFound { message, .. } => message,
    }
}

/// A resource and its content, as `resources/read` and embeds serve it.
#[derive(Debug, PartialEq)]
pub struct ReadResult {
    pub resource: StoredResource,
    pub content: Content,
    /// The content blocks shaped from it, kept with it for as long as it is kept.
    pub blocks: BlockMemo,
}

impl ReadResult {
    pub fn new(resource: StoredResource, content: Content) -> ReadResult {
        ReadResult {
            resource,
            content,
            blocks: BlockMemo::default(),
        }
    }
}

/// A prompt filled with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedPrompt {
    pub description: Option<String>,
    pub messages: Vec<RenderedMessage>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RenderedMessage {
    pub role: Role,
    pub block: Block,
}

/// One content block of a prompt message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    /// A resource's contents inside the message.
    Embedded(Arc<ReadResult>),
    /// An image or audio resource, as its own block type.
    Media {
        kind: MediaKind,
        read: Arc<ReadResult>,
    },
    /// A pointer the client may read later (its content is not sent).
    Link(Arc<ReadResult>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    Image,
    Audio,
}

/// A `completion/complete` answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub values: crate::complete::Values,
    pub total: u64,
    pub has_more: bool,
}

/// "a, b, c" or "a, b, c and 12 more", for error messages that list what exists.
pub fn some_of(names: &[String]) -> String {
    const SHOWN: usize = 10;
    if names.is_empty() {
        return "none".to_string();
    }
    let shown = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        format!("{shown} and {} more", names.len() - SHOWN)
    } else {
        shown
    }
}
