//! A resource's contents and the content blocks of a prompt message, as each revision
//! writes them. A resource's content is escaped into JSON once, when it is read (`Body`),
//! and what else comes from it is shaped once per revision and kept with it
//! (`ShapedBlocks`), so a document kept by the server is not escaped again in every answer
//! that reads or embeds it; text blocks are new in every answer.

use base64::Engine;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::items::{META_HASH, META_LAST_MODIFIED, META_PROVENANCE};
use super::{Shaper, iso, raw};
use crate::model::StoredResource;
use crate::protocol::Revision;
use crate::protocol::escape::{write_json_string, written_text};
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

/// An embedded resource block.
#[derive(Serialize)]
pub(super) struct Embedded {
    #[serde(rename = "type")]
    kind: &'static str,
    resource: Box<RawValue>,
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
                read.shaped.blocks().embedded[at].get_or_init(|| raw(&self.embedded(read))),
            ),
            Block::Media { kind, read } => MessageContent::Shaped(
                read.shaped.blocks().media[at].get_or_init(|| raw(&self.media(*kind, read))),
            ),
            Block::Link(read) => MessageContent::Shaped(
                read.shaped.blocks().linked[at].get_or_init(|| raw(&self.link(&read.resource))),
            ),
        };
        Message {
            role: message.role.as_str(),
            content,
        }
    }

    /// Appends the resource's contents as `resources/read` and embedded resources carry
    /// them: `{uri, mimeType, text | blob, _meta}`. Written by hand, as `rendered_line` is,
    /// around the body made when the resource was read (`Body`), copied in as it is: a
    /// document's text is most of its answer, and escaping it with serde_json's writer was a
    /// third of a read's instructions (docs/benchmarks.md, "A read not kept").
    pub(super) fn write_contents(&self, read: &ReadResult, out: &mut Vec<u8>) {
        let resource = &read.resource;
        let meta = self.contents_meta(read);
        out.extend_from_slice(b"{\"uri\":");
        write_json_string(out, &resource.info.uri);
        out.extend_from_slice(b",\"mimeType\":");
        write_json_string(out, &resource.info.mime_type);
        out.extend_from_slice(if read.body.is_text() {
            b",\"text\":"
        } else {
            b",\"blob\":"
        });
        out.extend_from_slice(read.body.json().as_bytes());
        out.extend_from_slice(meta.as_bytes());
        out.push(b'}');
    }

    /// About how many bytes `write_contents` writes: what its callers reserve.
    pub(super) fn contents_size(&self, read: &ReadResult) -> usize {
        let info = &read.resource.info;
        info.uri.len() + info.mime_type.len() + read.body.json().len() + 256
    }

    /// The contents' `_meta` member with its leading comma, kept per revision: contents have
    /// no annotations, so the freshness a cache needs goes in `_meta`, with where the
    /// resource comes from. Empty before 2025-06-18.
    fn contents_meta<'a>(&self, read: &'a ReadResult) -> &'a str {
        read.shaped.meta[self.revision.index()].get_or_init(|| {
            if self.revision < Revision::V2025_06_18 {
                return Box::default();
            }
            let resource = &read.resource;
            let mut out = Vec::with_capacity(256);
            out.extend_from_slice(b",\"_meta\":{");
            write_json_string(&mut out, META_HASH);
            out.push(b':');
            write_json_string(&mut out, &hex(&resource.content_hash));
            out.push(b',');
            write_json_string(&mut out, META_LAST_MODIFIED);
            out.push(b':');
            write_json_string(&mut out, &iso(resource.last_modified));
            out.push(b',');
            write_json_string(&mut out, META_PROVENANCE);
            out.push(b':');
            // A few short fields: serde's writer is fine for them (into a Vec it cannot
            // fail).
            let provenance = serde_json::to_vec(&self.provenance(resource.provenance()))
                .unwrap_or_else(|_| b"{}".to_vec());
            out.extend_from_slice(&provenance);
            out.push(b'}');
            written_text(out).into_boxed_str()
        })
    }

    /// The contents as a `RawValue`, for the results serde writes (an embedded resource, a
    /// tool's answer): checked as JSON once more, which `read_line` spares a read.
    pub(super) fn contents_value(&self, read: &ReadResult) -> Box<RawValue> {
        let mut contents = Vec::with_capacity(self.contents_size(read));
        self.write_contents(read, &mut contents);
        RawValue::from_string(written_text(contents)).unwrap_or_else(|err| {
            tracing::error!("a resource's contents were written as invalid JSON: {err}");
            RawValue::from_string("null".into()).unwrap_or_default()
        })
    }

    /// The resource as an embedded resource block.
    pub(super) fn embedded(&self, read: &ReadResult) -> Embedded {
        Embedded {
            kind: "resource",
            resource: self.contents_value(read),
            annotations: self.annotations(&read.resource),
        }
    }

    fn media(&self, kind: MediaKind, read: &ReadResult) -> Value {
        // A media block's data is always base64, which a binary body already is.
        let data = if read.body.is_text() {
            base64::engine::general_purpose::STANDARD.encode(read.body.bytes())
        } else {
            read.body.json().trim_matches('"').to_string()
        };
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
