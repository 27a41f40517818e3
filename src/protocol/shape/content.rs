//! A resource's contents and the content blocks of a prompt message, as each revision
//! writes them. What comes from a resource is shaped once per revision and kept in the
//! resource's memo (`ShapedBlocks`), so a document kept by the server is escaped into JSON
//! once rather than in every answer that embeds it; text blocks are new in every answer.

use base64::Engine;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::escape::write_json_string;
use super::items::{META_HASH, META_LAST_MODIFIED, META_PROVENANCE};
use super::{Shaper, iso, raw};
use crate::model::{Content, StoredResource};
use crate::protocol::Revision;
use crate::protocol::results::{Block, MediaKind, ReadResult, RenderedMessage};
use crate::store::hex;

/// One message of a `prompts/get` result.
#[derive(Serialize)]
pub(super) struct Message<'a> {
    role: &'static str,
    content: MessageContent<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum MessageContent<'a> {
    Text(TextBlock<'a>),
    /// A block made from a resource, from its memo.
    Shaped(&'a RawValue),
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// `{uri, mimeType, text | blob}`, borrowing the content so that it is written out once
/// rather than copied first.
#[derive(Serialize)]
struct Contents<'a> {
    uri: &'a str,
    #[serde(rename = "mimeType")]
    mime_type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blob: Option<String>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Value>,
}

/// An embedded resource block.
#[derive(Serialize)]
pub(super) struct Embedded<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    resource: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<Value>,
}

impl Message<'_> {
    /// The message's one block.
    pub(super) fn content(&self) -> &impl Serialize {
        &self.content
    }

    /// About how many bytes `write` writes.
    pub(super) fn size_hint(&self) -> usize {
        match &self.content {
            MessageContent::Text(block) => block.text.len() + block.text.len() / 8 + 64,
            MessageContent::Shaped(shaped) => shaped.get().len() + 32,
        }
    }

    /// Appends the message as JSON, as serde would write it (see `Shaper::rendered_line`).
    pub(super) fn write(&self, line: &mut Vec<u8>) {
        line.extend_from_slice(b"{\"role\":\"");
        line.extend_from_slice(self.role.as_bytes());
        line.extend_from_slice(b"\",\"content\":");
        match &self.content {
            MessageContent::Text(block) => {
                line.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                write_json_string(line, block.text);
                line.push(b'}');
            }
            MessageContent::Shaped(shaped) => line.extend_from_slice(shaped.get().as_bytes()),
        }
        line.push(b'}');
    }
}

impl Shaper<'_> {
    /// A message and its one block.
    pub(super) fn message<'a>(&self, message: &'a RenderedMessage) -> Message<'a> {
        let at = self.revision.index();
        let content = match &message.block {
            Block::Text(text) => MessageContent::Text(TextBlock { kind: "text", text }),
            Block::Embedded(read) => MessageContent::Shaped(
                read.shaped.embedded[at].get_or_init(|| raw(&self.embedded(read))),
            ),
            Block::Media { kind, read } => MessageContent::Shaped(
                read.shaped.media[at].get_or_init(|| raw(&self.media(*kind, read))),
            ),
            Block::Link(read) => MessageContent::Shaped(
                read.shaped.linked[at].get_or_init(|| raw(&self.link(&read.resource))),
            ),
        };
        Message {
            role: message.role.as_str(),
            content,
        }
    }

    /// The resource's contents as `resources/read` and embedded resources carry them.
    pub(super) fn contents<'a>(&self, read: &'a ReadResult) -> &'a RawValue {
        read.shaped.contents[self.revision.index()].get_or_init(|| {
            let (text, blob) = match &read.content {
                Content::Text(text) => (Some(text.as_str()), None),
                Content::Binary(bytes) => (
                    None,
                    Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
                ),
            };
            // Contents have no annotations, so the freshness a cache needs goes in `_meta`,
            // with where the resource comes from.
            let meta = (self.revision >= Revision::V2025_06_18).then(|| {
                json!({
                    META_HASH: hex(&read.resource.content_hash),
                    META_LAST_MODIFIED: iso(read.resource.last_modified),
                    META_PROVENANCE: read.resource.provenance(),
                })
            });
            raw(&Contents {
                uri: &read.resource.info.uri,
                mime_type: &read.resource.info.mime_type,
                text,
                blob,
                meta,
            })
        })
    }

    /// The resource as an embedded resource block.
    pub(super) fn embedded<'a>(&self, read: &'a ReadResult) -> Embedded<'a> {
        Embedded {
            kind: "resource",
            resource: self.contents(read),
            annotations: self.annotations(&read.resource),
        }
    }

    fn media(&self, kind: MediaKind, read: &ReadResult) -> Value {
        let data = base64::engine::general_purpose::STANDARD.encode(read.content.as_bytes());
        let mime = &read.resource.info.mime_type;
        match kind {
            MediaKind::Audio if !self.revision.has_audio() => json!({
                "type": "text",
                "text": format!("[audio {} ({mime}) is not shown: this protocol revision has no audio content]", read.resource.info.uri)
            }),
            MediaKind::Audio => json!({"type": "audio", "data": data, "mimeType": mime}),
            MediaKind::Image => json!({"type": "image", "data": data, "mimeType": mime}),
        }
    }

    fn link(&self, stored: &StoredResource) -> Value {
        if self.revision.has_titles_and_links() {
            let mut map = self.resource_fields(stored);
            map.insert("type".into(), json!("resource_link"));
            Value::Object(map)
        } else {
            let label = stored.info.title.as_deref().unwrap_or(&stored.info.name);
            json!({"type": "text", "text": format!("Resource: {label} <{}> ({})", stored.info.uri, stored.info.mime_type)})
        }
    }
}
