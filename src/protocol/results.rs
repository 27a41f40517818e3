//! What handlers answer with: the plain values a result is shaped from, one kind per
//! method. They hold no JSON but the per-revision memo of a resource's content blocks,
//! which lets a resource kept by the server be escaped into JSON once, not per answer.

use std::sync::{Arc, OnceLock};

use base64::Engine;
use serde_json::value::RawValue;

use super::escape::{write_json_string, written_text};
use super::revision::Revision;
use crate::arguments::ObjectSchema;
use crate::model::{Content, Provenance, Role, StoredResource};

/// One page of a list.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
    /// The newest lastModified of the whole list (drives the TTL hint).
    pub last_modified: i64,
}

/// What discovery results say beyond the fixed capabilities.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Discovery {
    pub instructions: String,
    /// The newest change anywhere in the library (drives the TTL hint).
    pub last_modified: i64,
}

/// A resource and its content, as `resources/read` and embeds serve it.
#[derive(Debug, PartialEq)]
pub struct ReadResult {
    pub resource: StoredResource,
    pub body: Body,
    /// The JSON made from it, kept with it for as long as it is kept.
    pub(crate) shaped: ShapedBlocks,
}

impl ReadResult {
    pub(crate) fn new(resource: StoredResource, content: Content) -> ReadResult {
        ReadResult {
            resource,
            body: Body::of(&content),
            shaped: ShapedBlocks::default(),
        }
    }
}

/// A resource's content as every answer carries it: a JSON string literal (quotes
/// included) of its text, escaped, or of its bytes in base64. Made once, when the resource
/// is read, and then copied into answers as it is: a resource the server keeps holds its
/// content once, in this form, rather than as text and again as JSON (a 2 KB document took
/// about 6.6 KB kept, with both; docs/benchmarks.md, "One copy of a kept document").
#[derive(Debug, PartialEq)]
pub struct Body {
    is_text: bool,
    json: Box<str>,
}

impl Body {
    pub(crate) fn of(content: &Content) -> Body {
        let json = match content {
            Content::Text(text) => {
                let mut json = Vec::new();
                write_json_string(&mut json, text);
                written_text(json)
            }
            Content::Binary(bytes) => {
                let mut json = String::with_capacity(bytes.len().div_ceil(3) * 4 + 2);
                json.push('"');
                base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut json);
                json.push('"');
                json
            }
        };
        Body {
            is_text: content.is_text(),
            json: json.into_boxed_str(),
        }
    }

    /// The JSON string literal, quotes included.
    pub(crate) fn json(&self) -> &str {
        &self.json
    }

    /// Whether it is text (a `text` member) rather than bytes (a `blob`, in base64).
    pub(crate) fn is_text(&self) -> bool {
        self.is_text
    }

    /// The text, for a reader that shows it as it is; None for bytes.
    pub fn text(&self) -> Option<String> {
        self.is_text
            .then(|| serde_json::from_str(&self.json).ok())
            .flatten()
    }

    /// The bytes: the text's, or the decoded base64.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        if self.is_text {
            return self.text().unwrap_or_default().into_bytes();
        }
        let base64 = self.json.trim_matches('"');
        base64::engine::general_purpose::STANDARD
            .decode(base64)
            .unwrap_or_default()
    }
}

/// A resource's JSON as each revision writes it, made on first use: its contents' `_meta`
/// (as `resources/read` and embedded resources carry it) and, for a resource a prompt
/// names, its block in a prompt message. It depends only on the resource and the revision.
#[derive(Debug, Default)]
pub(crate) struct ShapedBlocks {
    /// The contents' `_meta` member, with its leading comma (`Shaper::write_contents`),
    /// or nothing in a revision without it: the rest of the contents is the body and the
    /// resource's URI and type.
    pub(super) meta: [OnceLock<Box<str>>; Revision::COUNT],
    /// Made only for a resource a prompt embeds or links, apart from `meta`: most kept
    /// resources are only read, and this is three times the size of `meta` empty.
    pub(super) blocks: OnceLock<Box<PromptBlocks>>,
}

/// A resource's blocks in prompt messages, per revision.
#[derive(Debug, Default)]
pub(crate) struct PromptBlocks {
    /// Embedded as a resource.
    pub(super) embedded: [OnceLock<Box<RawValue>>; Revision::COUNT],
    /// Its image or audio block, apart from `embedded`: one prompt may ask for both
    /// (`embed(uri, as="resource")`).
    pub(super) media: [OnceLock<Box<RawValue>>; Revision::COUNT],
    pub(super) linked: [OnceLock<Box<RawValue>>; Revision::COUNT],
}

impl ShapedBlocks {
    pub(super) fn blocks(&self) -> &PromptBlocks {
        self.blocks.get_or_init(Box::default)
    }
}

/// A memo is not part of the data: two results are alike whatever either has shaped yet.
impl PartialEq for ShapedBlocks {
    fn eq(&self, _: &ShapedBlocks) -> bool {
        true
    }
}

/// What a `prompts/get` comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptOutcome {
    /// `retried`: the result answers an `input_required` round trip, so is not cacheable.
    Rendered {
        prompt: RenderedPrompt,
        retried: bool,
    },
    InputRequired {
        requests: Vec<InputRequest>,
        state: String,
    },
}

/// One `elicitation/create` form to send.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    pub key: String,
    pub message: String,
    /// A flat JSON Schema object (the subset elicitation allows), its fields in the
    /// prompt's order.
    pub(crate) schema: ObjectSchema,
}

/// A prompt filled with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedPrompt {
    pub description: Option<String>,
    pub(crate) messages: Vec<RenderedMessage>,
    /// Where the prompt comes from, carried in the result's `_meta`.
    pub(crate) provenance: Provenance,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RenderedMessage {
    pub role: Role,
    pub block: Block,
}

/// One content block of a prompt message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
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
pub(crate) enum MediaKind {
    Image,
    Audio,
}

/// The tools the mirrors offer, as `tools/list` answers them.
#[derive(Debug)]
pub(crate) struct ToolList {
    pub tools: Vec<Tool>,
    /// The newest change the list depends on (the prompts `get_prompt` describes; drives
    /// the TTL hint).
    pub last_modified: i64,
}

/// One tool a mirror offers. Its input schema is the tool's own JSON Schema; what its
/// results look like (`outputSchema`, `structuredContent`) is the protocol's, by `output`.
#[derive(Debug)]
pub(crate) struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: String,
    pub input_schema: Box<RawValue>,
    pub output: ToolOutput,
}

/// The MCP result a tool mirrors, which its output is shaped as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolOutput {
    /// A page of `prompts/list`.
    Prompts,
    /// A rendered prompt, as `prompts/get`.
    Prompt,
    /// A page of `resources/list`.
    Resources,
    /// A resource's contents, as `resources/read`.
    Contents,
}
