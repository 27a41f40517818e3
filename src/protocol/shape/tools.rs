//! Tool mirrors on the wire: `tools/list` entries and `tools/call` results, each wrapping
//! the result it mirrors. A tool's `structuredContent` is that result's own members (a list
//! page, a rendered prompt, a resource's contents) and its `outputSchema` says so; older
//! revisions, which have neither, get the same in `content` alone. Tools are described as
//! each revision defines them: `annotations` from 2025-03-26, `title` and `outputSchema`
//! from 2025-06-18.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::content::Message;
use super::{Hints, Kind, ReadBody, ShapedPage, Shaper, raw};
use crate::protocol::Revision;
use crate::protocol::id::RequestId;
use crate::protocol::results::{ReadResult, RenderedPrompt, Tool, ToolList, ToolOutput};

/// What a `tools/call` answers with, borrowed from the result it mirrors.
pub(crate) enum ToolAnswer<'a> {
    /// A page of `prompts/list` or `resources/list`, as kept.
    Page(&'a ShapedPage),
    Prompt(&'a RenderedPrompt),
    Read(&'a ReadResult),
    /// The call's input did not fit: this sentence, as a tool error (`isError`) the model
    /// can read and correct, rather than a protocol error it never sees.
    Refused(&'a str),
}

#[derive(Serialize)]
struct ListToolsBody<'a> {
    tools: Vec<ToolEntry<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolEntry<'a> {
    name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'static str>,
    description: &'a str,
    input_schema: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallToolBody<'a> {
    content: Vec<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
}

/// A rendered prompt's own members, as `prompts/get` has them.
#[derive(Serialize)]
struct PromptBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    messages: Vec<Message<'a>>,
}

impl Shaper<'_> {
    /// The `tools/list` answer line (one page: there are a handful of tools).
    pub(crate) fn tools_line(&self, id: &RequestId, list: &ToolList) -> Vec<u8> {
        let tools = list.tools.iter().map(|tool| self.tool(tool)).collect();
        let hints = Hints::Since(list.last_modified, Kind::List);
        self.respond(id, ListToolsBody { tools }, "complete", Some(hints))
    }

    fn tool<'a>(&self, tool: &'a Tool) -> ToolEntry<'a> {
        let titled = self.revision.has_titles_and_links();
        // Before 2025-06-18 a tool's only title is the annotations' one.
        let annotations = (self.revision >= Revision::V2025_03_26).then(|| {
            let mut hints = Map::new();
            if !titled {
                hints.insert("title".into(), json!(tool.title));
            }
            hints.insert("readOnlyHint".into(), json!(true));
            hints.insert("openWorldHint".into(), json!(false));
            Value::Object(hints)
        });
        ToolEntry {
            name: tool.name,
            title: titled.then_some(tool.title),
            description: &tool.description,
            input_schema: &tool.input_schema,
            output_schema: self
                .has_structured_content()
                .then(|| output_schema(tool.output)),
            annotations,
        }
    }

    /// `structuredContent` and `outputSchema` came with 2025-06-18.
    fn has_structured_content(&self) -> bool {
        self.revision >= Revision::V2025_06_18
    }

    /// The `tools/call` answer line.
    pub(crate) fn tool_line(&self, id: &RequestId, answer: &ToolAnswer) -> Vec<u8> {
        let text = |text: &str| raw(&json!({"type": "text", "text": text}));
        // The mirrored result's members, and the blocks `content` carries for a client that
        // reads no structured content.
        let (structured, blocks): (Box<RawValue>, Vec<Box<RawValue>>) = match answer {
            ToolAnswer::Page(page) => {
                let members = raw(&page.body());
                let blocks = vec![text(members.get())];
                (members, blocks)
            }
            ToolAnswer::Prompt(prompt) => {
                let messages: Vec<Message> =
                    prompt.messages.iter().map(|m| self.message(m)).collect();
                let blocks = messages.iter().map(|m| raw(m.content())).collect();
                let members = raw(&PromptBody {
                    description: prompt.description.as_deref(),
                    messages,
                });
                (members, blocks)
            }
            ToolAnswer::Read(read) => {
                let members = raw(&ReadBody {
                    contents: [&self.contents_value(read)],
                });
                (members, vec![raw(&self.embedded(read))])
            }
            ToolAnswer::Refused(message) => {
                let sentence = text(message);
                let body = CallToolBody {
                    content: vec![&sentence],
                    structured_content: None,
                    is_error: true,
                };
                return self.respond(id, body, "complete", None);
            }
        };
        let body = CallToolBody {
            content: blocks.iter().map(AsRef::as_ref).collect(),
            structured_content: self.has_structured_content().then_some(&*structured),
            is_error: false,
        };
        // A prompt filled by its tool says where it comes from as `prompts/get` does (a
        // resource read says it in its contents).
        let provenance = match answer {
            ToolAnswer::Prompt(prompt) => Some(self.provenance(prompt.provenance.clone())),
            _ => None,
        };
        let meta = super::ResultMeta {
            provenance: provenance.as_ref(),
            ..super::ResultMeta::default()
        };
        self.respond_with_meta(id, body, "complete", None, meta, 0)
    }
}

/// The JSON Schema of what a tool of `output` puts in `structuredContent`: the members of
/// the result it mirrors, as this server writes them.
fn output_schema(output: ToolOutput) -> Value {
    let object = json!({"type": "object"});
    let list = |member: &str, item: Value| {
        json!({
            "type": "object",
            "properties": {
                member: {"type": "array", "items": item},
                "nextCursor": {"type": "string"},
            },
            "required": [member],
        })
    };
    match output {
        ToolOutput::Prompts => list(
            "prompts",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        ),
        ToolOutput::Resources => list(
            "resources",
            json!({"type": "object", "properties": {"uri": {"type": "string"}, "name": {"type": "string"}}, "required": ["uri", "name"]}),
        ),
        ToolOutput::Prompt => json!({
            "type": "object",
            "properties": {
                "description": {"type": "string"},
                "messages": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "role": {"enum": ["user", "assistant"]},
                            "content": object,
                        },
                        "required": ["role", "content"],
                    },
                },
            },
            "required": ["messages"],
        }),
        ToolOutput::Contents => json!({
            "type": "object",
            "properties": {
                "contents": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"uri": {"type": "string"}, "mimeType": {"type": "string"}},
                        "required": ["uri"],
                    },
                },
            },
            "required": ["contents"],
        }),
    }
}
