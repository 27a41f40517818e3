//! Handler results and errors as the JSON each revision defines: modern results get
//! `resultType`, `serverInfo` and caching hints; older revisions lose what they lack
//! (`title`, `icons`, `resource_link`, `audio`) or get a faithful stand-in.

use std::io::Write;
use std::sync::{Arc, OnceLock};

use base64::Engine;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::escape::write_json_string;
use super::{Revision, RpcError};
use crate::config::{CacheScope, ServeConfig};
use crate::handlers::arguments;
use crate::handlers::{
    Block, Completion, Discovery, InputRequest, Page, PromptOutcome, ReadResult, RenderedPrompt,
};
use crate::model::{Icon, PromptArgument, StoredPrompt, StoredResource, StoredTemplate};
use crate::store::hex;

/// Our own `_meta` keys, under our prefix as the specification asks.
const META_HASH: &str = "promptshelf/contentHash";
const META_LAST_MODIFIED: &str = "promptshelf/lastModified";
const META_ARGUMENT_TYPE: &str = "promptshelf/type";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// Shapes results for one revision, with the server's settings and the current time.
pub struct Shaper<'a> {
    pub revision: Revision,
    pub config: &'a ServeConfig,
    /// Unix milliseconds, for TTL hints.
    pub now: i64,
}

/// A legacy change notification line (no id, no subscription tag); `uri` for
/// `notifications/resources/updated`.
pub fn notification(method: &str, uri: Option<&str>) -> Vec<u8> {
    match uri {
        Some(uri) => line(&json!({"jsonrpc": "2.0", "method": method, "params": {"uri": uri}})),
        None => line(&json!({"jsonrpc": "2.0", "method": method})),
    }
}

/// A change notification on a modern stream, tagged with the listen request's id.
pub fn stream_notification(method: &str, subscription: &Value, uri: Option<&str>) -> Vec<u8> {
    let mut params = Map::new();
    params.insert("_meta".into(), json!({ META_SUBSCRIPTION: subscription }));
    if let Some(uri) = uri {
        params.insert("uri".into(), json!(uri));
    }
    line(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// The first message of a stream: which of the requested notifications will be sent.
/// (`toolsListChanged` is never honoured: there are no tools.)
pub fn acknowledged(
    subscription: &Value,
    prompts: bool,
    resources: bool,
    uris: &std::collections::BTreeSet<String>,
) -> Vec<u8> {
    let mut honoured = Map::new();
    if prompts {
        honoured.insert("promptsListChanged".into(), json!(true));
    }
    if resources {
        honoured.insert("resourcesListChanged".into(), json!(true));
    }
    if !uris.is_empty() {
        honoured.insert("resourceSubscriptions".into(), json!(uris));
    }
    line(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": { META_SUBSCRIPTION: subscription }, "notifications": honoured}
    }))
}

fn line(message: &impl serde::Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap_or_else(|_| {
        br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"unserializable result"}}"#.to_vec()
    });
    bytes.push(b'\n');
    bytes
}

/// A success response, serialized from borrowed parts (building it as one `Value` would
/// copy the whole result).
#[derive(serde::Serialize)]
struct Response<'a, R> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: &'a R,
}

/// Resource contents, borrowed from the stored content.
#[derive(serde::Serialize)]
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

/// A `resources/read` result: its contents, then the fields every result carries.
#[derive(serde::Serialize)]
struct ReadBody<'a> {
    contents: [Contents<'a>; 1],
    #[serde(flatten)]
    rest: &'a Map<String, Value>,
}

/// A list page shaped for one revision, kept and served many times (the server caches it
/// until the library changes): the whole result, serialized, but `ttlMs`, which depends on
/// the moment and is spliced in per response.
#[derive(Debug, Clone)]
pub struct ShapedPage {
    /// The result object as JSON; never empty, ends with `}`.
    json: Vec<u8>,
    last_modified: i64,
}

/// A resource's content blocks as each revision writes them, made on first use and kept
/// with the resource: the server keeps the small resources prompts embed, so a document is
/// escaped into JSON once rather than in every answer that embeds it. A block depends only
/// on the resource and the revision.
#[derive(Debug, Default)]
pub struct BlockMemo {
    embedded: [OnceLock<Box<RawValue>>; Revision::COUNT],
    linked: [OnceLock<Box<RawValue>>; Revision::COUNT],
}

/// A memo is not part of the data: two results are alike whatever either has shaped yet.
impl PartialEq for BlockMemo {
    fn eq(&self, _: &BlockMemo) -> bool {
        true
    }
}

/// The `_meta` member of every modern result, as JSON, made once for the answers written
/// by hand.
static SERVER_META: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("\"_meta\":{}", json!({ META_SERVER_INFO: server_info() }))
});

/// A prompt message's content block, ready to be written.
enum MessageBlock<'a> {
    Text(&'a str),
    Shaped(&'a RawValue),
}

/// `value` as raw JSON text, to be written into answers as it is.
fn raw(value: &impl serde::Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value)
        .unwrap_or_else(|_| RawValue::from_string("{}".into()).unwrap_or_default())
}

impl ShapedPage {
    /// How much memory keeping it costs, roughly.
    pub fn size(&self) -> usize {
        self.json.len()
    }
}

fn response_line(id: &Value, result: &impl serde::Serialize) -> Vec<u8> {
    line(&Response {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// An error response line.
pub fn error_line(id: &Value, error: &RpcError) -> Vec<u8> {
    let mut body = json!({"code": error.code, "message": error.message});
    if let Some(data) = &error.data {
        body["data"] = data.clone();
    }
    // MCP's schema has no null id: when the request's id could not be read, it is left out.
    if id.is_null() {
        line(&json!({"jsonrpc": "2.0", "error": body}))
    } else {
        line(&json!({"jsonrpc": "2.0", "id": id, "error": body}))
    }
}

fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|ts| ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string())
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    if let Some(value) = value {
        map.insert(key.into(), Value::String(value.to_string()));
    }
}

impl Shaper<'_> {
    /// A success response line; `hints` = the newest lastModified the result depends on,
    /// when it is cacheable (modern results then carry `ttlMs` and `cacheScope`).
    pub fn success(&self, id: &Value, result: Map<String, Value>, hints: Option<Hints>) -> Vec<u8> {
        response_line(id, &self.complete(result, hints))
    }

    /// A complete result body: modern results get `resultType`, `serverInfo` and, when
    /// cacheable, the caching hints.
    fn complete(&self, mut result: Map<String, Value>, hints: Option<Hints>) -> Map<String, Value> {
        if self.revision.is_modern() {
            result.insert("resultType".into(), json!("complete"));
            if let Some(hints) = hints {
                result.insert("ttlMs".into(), json!(self.ttl_ms(hints)));
                result.insert("cacheScope".into(), json!(self.cache_scope()));
            }
            self.add_server_info(&mut result);
        }
        result
    }

    fn add_server_info(&self, result: &mut Map<String, Value>) {
        let meta = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(META_SERVER_INFO.into(), server_info());
        }
    }

    fn cache_scope(&self) -> &'static str {
        match self.config.cache_scope {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }

    /// HTTP-style heuristic freshness: 10% of the time since the last change, clamped.
    fn ttl_ms(&self, hints: Hints) -> u64 {
        match hints {
            Hints::NotCacheable => 0,
            Hints::Since(last_modified) => {
                let age = (self.now - last_modified).max(0) as u64;
                (age / 10).clamp(self.config.ttl_min_ms, self.config.ttl_max_ms)
            }
        }
    }

    pub fn discover(&self, id: &Value, discovery: &Discovery) -> Vec<u8> {
        let mut result = Map::new();
        result.insert(
            "supportedVersions".into(),
            json!([Revision::MODERN.as_str()]),
        );
        result.insert("capabilities".into(), capabilities());
        result.insert("instructions".into(), json!(discovery.instructions));
        self.success(id, result, Some(Hints::Since(discovery.last_modified)))
    }

    pub fn initialize(&self, id: &Value, discovery: &Discovery) -> Vec<u8> {
        let mut result = Map::new();
        result.insert("protocolVersion".into(), json!(self.revision.as_str()));
        result.insert("capabilities".into(), capabilities());
        result.insert("serverInfo".into(), server_info());
        result.insert("instructions".into(), json!(discovery.instructions));
        self.success(id, result, None)
    }

    /// The answer that closes a `subscriptions/listen` stream on shutdown.
    pub fn listen_closed(&self, id: &Value) -> Vec<u8> {
        let mut result = Map::new();
        result.insert("_meta".into(), json!({ META_SUBSCRIPTION: id }));
        self.success(id, result, None)
    }

    pub fn empty(&self, id: &Value) -> Vec<u8> {
        self.success(id, Map::new(), None)
    }

    pub fn prompts_page(&self, page: &Page<StoredPrompt>) -> ShapedPage {
        let items: Vec<Value> = page.items.iter().map(|p| self.prompt(p)).collect();
        self.page("prompts", items, page)
    }

    pub fn resources_page(&self, page: &Page<StoredResource>) -> ShapedPage {
        let items: Vec<Value> = page.items.iter().map(|r| self.resource(r)).collect();
        self.page("resources", items, page)
    }

    pub fn templates_page(&self, page: &Page<StoredTemplate>) -> ShapedPage {
        let items: Vec<Value> = page.items.iter().map(|t| self.template(t)).collect();
        self.page("resourceTemplates", items, page)
    }

    fn page<T>(&self, key: &str, items: Vec<Value>, page: &Page<T>) -> ShapedPage {
        let mut result = Map::new();
        result.insert(key.into(), Value::Array(items));
        if let Some(cursor) = &page.next_cursor {
            result.insert("nextCursor".into(), json!(cursor));
        }
        self.cacheable(result, page.last_modified)
    }

    /// A cacheable result made whole but for `ttlMs`, serialized for `page_line`.
    fn cacheable(&self, result: Map<String, Value>, last_modified: i64) -> ShapedPage {
        let result = self.cacheable_fields(result);
        ShapedPage {
            json: serde_json::to_vec(&result).unwrap_or_else(|_| b"{}".to_vec()),
            last_modified,
        }
    }

    /// `result` with what every complete cacheable result of this revision carries but
    /// `ttlMs` (which depends on the moment of the answer).
    fn cacheable_fields(&self, result: Map<String, Value>) -> Map<String, Value> {
        let mut result = self.complete(result, None);
        if self.revision.is_modern() {
            result.insert("cacheScope".into(), json!(self.cache_scope()));
        }
        result
    }

    /// The response line for a shaped page, with the `ttlMs` of this moment spliced in. A
    /// page nobody else holds (a large read, never kept) becomes the line in place rather
    /// than being copied: a second copy of a large document is what a server's memory peak
    /// is made of.
    pub fn page_line(&self, id: &Value, page: Arc<ShapedPage>) -> Vec<u8> {
        let last_modified = page.last_modified;
        let (mut line, shared) = match Arc::try_unwrap(page) {
            Ok(owned) => (owned.json, None),
            Err(shared) => (Vec::with_capacity(shared.json.len() + 96), Some(shared)),
        };
        // The envelope goes in front: after what is there for an owned page, into the
        // empty line otherwise.
        let body_start = line.len();
        open_result(&mut line, id);
        let envelope = line.len() - body_start;
        match &shared {
            Some(shared) => line.extend_from_slice(&shared.json),
            None => line.rotate_right(envelope),
        }
        // The page ends with its closing brace; ttlMs goes in before it.
        if self.revision.is_modern() && line.last() == Some(&b'}') {
            line.pop();
            let ttl = self.ttl_ms(Hints::Since(last_modified));
            let _ = write!(line, ",\"ttlMs\":{ttl}}}");
        }
        line.extend_from_slice(b"}\n");
        line
    }

    fn prompt(&self, stored: &StoredPrompt) -> Value {
        let prompt = &stored.prompt;
        let mut map = Map::new();
        map.insert("name".into(), json!(prompt.name));
        if self.revision.has_titles_and_links() {
            put(&mut map, "title", prompt.title.as_deref());
        }
        put(&mut map, "description", prompt.description.as_deref());
        let arguments: Vec<Value> = prompt.arguments.iter().map(|a| self.argument(a)).collect();
        map.insert("arguments".into(), Value::Array(arguments));
        self.add_icons(&mut map, &prompt.icons);
        map.insert(
            "_meta".into(),
            json!({
                META_HASH: hex(&stored.content_hash),
                META_LAST_MODIFIED: iso(stored.last_modified),
            }),
        );
        Value::Object(map)
    }

    fn argument(&self, arg: &PromptArgument) -> Value {
        let mut map = Map::new();
        map.insert("name".into(), json!(arg.name));
        if self.revision.has_titles_and_links() {
            put(&mut map, "title", arg.title.as_deref());
        }
        map.insert("description".into(), json!(arguments::describe(arg)));
        map.insert("required".into(), json!(arg.required));
        if self.revision >= Revision::V2025_06_18 {
            map.insert(
                "_meta".into(),
                json!({ META_ARGUMENT_TYPE: arguments::json_schema(arg) }),
            );
        }
        Value::Object(map)
    }

    fn add_icons(&self, map: &mut Map<String, Value>, icons: &[Icon]) {
        if self.revision.has_icons() && !icons.is_empty() {
            map.insert("icons".into(), json!(icons));
        }
    }

    /// The resource's annotations, when it has any in this revision.
    fn add_annotations(&self, map: &mut Map<String, Value>, stored: &StoredResource) {
        let given = &stored.info.annotations;
        let mut annotations = Map::new();
        if !given.audience.is_empty() {
            annotations.insert("audience".into(), json!(given.audience_names()));
        }
        if let Some(priority) = given.priority {
            annotations.insert("priority".into(), json!(priority));
        }
        // lastModified joined Annotations in 2025-06-18.
        if self.revision >= Revision::V2025_06_18 {
            annotations.insert("lastModified".into(), json!(iso(stored.last_modified)));
        }
        if !annotations.is_empty() {
            map.insert("annotations".into(), Value::Object(annotations));
        }
    }

    /// The fields a `Resource` and a `resource_link` share.
    fn resource_fields(&self, stored: &StoredResource) -> Map<String, Value> {
        let info = &stored.info;
        let mut map = Map::new();
        map.insert("uri".into(), json!(info.uri));
        map.insert("name".into(), json!(info.name));
        if self.revision.has_titles_and_links() {
            put(&mut map, "title", info.title.as_deref());
        }
        put(&mut map, "description", info.description.as_deref());
        map.insert("mimeType".into(), json!(info.mime_type));
        map.insert("size".into(), json!(stored.size));
        self.add_annotations(&mut map, stored);
        self.add_icons(&mut map, &info.icons);
        map
    }

    fn resource(&self, stored: &StoredResource) -> Value {
        let mut map = self.resource_fields(stored);
        map.insert(
            "_meta".into(),
            json!({ META_HASH: hex(&stored.content_hash) }),
        );
        Value::Object(map)
    }

    fn template(&self, stored: &StoredTemplate) -> Value {
        let template = &stored.template;
        let mut map = Map::new();
        map.insert("uriTemplate".into(), json!(template.uri_template));
        map.insert("name".into(), json!(template.name));
        if self.revision.has_titles_and_links() {
            put(&mut map, "title", template.title.as_deref());
        }
        put(&mut map, "description", template.description.as_deref());
        put(&mut map, "mimeType", template.mime_type.as_deref());
        self.add_icons(&mut map, &template.icons);
        Value::Object(map)
    }

    /// `{uri, mimeType, text | blob}` as in `resources/read` and embedded resources,
    /// borrowing the content so that it is written out once rather than copied first.
    fn contents<'a>(&self, read: &'a ReadResult) -> Contents<'a> {
        let (text, blob) = match &read.content {
            crate::model::Content::Text(text) => (Some(text.as_str()), None),
            crate::model::Content::Binary(bytes) => (
                None,
                Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
            ),
        };
        // Contents have no annotations, so the freshness a cache needs goes in `_meta`.
        let meta = (self.revision >= Revision::V2025_06_18).then(|| {
            json!({
                META_HASH: hex(&read.resource.content_hash),
                META_LAST_MODIFIED: iso(read.resource.last_modified),
            })
        });
        Contents {
            uri: &read.resource.info.uri,
            mime_type: &read.resource.info.mime_type,
            text,
            blob,
            meta,
        }
    }

    /// A `resources/read` result, shaped once to be served until the resource changes.
    pub fn read_page(&self, read: &ReadResult) -> ShapedPage {
        let body = ReadBody {
            contents: [self.contents(read)],
            rest: &self.cacheable_fields(Map::new()),
        };
        ShapedPage {
            json: serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec()),
            last_modified: read.resource.last_modified,
        }
    }

    pub fn prompt_outcome(&self, id: &Value, outcome: &PromptOutcome) -> Vec<u8> {
        match outcome {
            PromptOutcome::Rendered { prompt, retried } => self.rendered_line(id, prompt, *retried),
            PromptOutcome::InputRequired { requests, state } => {
                response_line(id, &self.input_required(requests, state))
            }
        }
    }

    /// The `result` of a `prompts/get`, as `promptshelf prompt render --json` prints it:
    /// read back from the answer line, so that there is one way of writing it.
    pub fn prompt_result(&self, outcome: &PromptOutcome) -> Value {
        let line = self.prompt_outcome(&Value::Null, outcome);
        serde_json::from_slice::<Value>(&line)
            .map(|mut response| response["result"].take())
            .unwrap_or(Value::Null)
    }
    /// The answer line of a rendered prompt, written out by hand: its text blocks are the
    /// one part that is new in every answer (escaped eight bytes at a time), and everything
    /// taken from a resource comes from the resource's memo as it is.
    fn rendered_line(&self, id: &Value, prompt: &RenderedPrompt, retried: bool) -> Vec<u8> {
        let blocks: Vec<MessageBlock> = prompt
            .messages
            .iter()
            .map(|message| self.message_block(&message.block))
            .collect();
        let size: usize = blocks
            .iter()
            .map(|block| match block {
                MessageBlock::Text(text) => text.len() + text.len() / 8 + 80,
                MessageBlock::Shaped(shaped) => shaped.get().len() + 48,
            })
            .sum();
        let mut line = Vec::with_capacity(size + 256);
        open_result(&mut line, id);
        line.push(b'{');
        if let Some(description) = &prompt.description {
            line.extend_from_slice(b"\"description\":");
            write_json_string(&mut line, description);
            line.push(b',');
        }
        line.extend_from_slice(b"\"messages\":[");
        for (index, (message, shaped)) in prompt.messages.iter().zip(&blocks).enumerate() {
            if index > 0 {
                line.push(b',');
            }
            line.extend_from_slice(b"{\"role\":\"");
            line.extend_from_slice(message.role.as_str().as_bytes());
            line.extend_from_slice(b"\",\"content\":");
            match shaped {
                MessageBlock::Shaped(shaped) => line.extend_from_slice(shaped.get().as_bytes()),
                MessageBlock::Text(text) => {
                    line.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                    write_json_string(&mut line, text);
                    line.push(b'}');
                }
            }
            line.push(b'}');
        }
        line.push(b']');
        // A result produced by answering input must not be cached.
        self.close_result(&mut line, retried.then_some(Hints::NotCacheable));
        line
    }

    /// Ends an answer line written by hand: the members every result of this revision
    /// carries (`hints` as `complete`), then the result's and the response's braces.
    fn close_result(&self, line: &mut Vec<u8>, hints: Option<Hints>) {
        if self.revision.is_modern() {
            line.extend_from_slice(b",\"resultType\":\"complete\"");
            if let Some(hints) = hints {
                let hints = format!(
                    ",\"ttlMs\":{},\"cacheScope\":\"{}\"",
                    self.ttl_ms(hints),
                    self.cache_scope()
                );
                line.extend_from_slice(hints.as_bytes());
            }
            line.push(b',');
            line.extend_from_slice(SERVER_META.as_bytes());
        }
        line.extend_from_slice(b"}}\n");
    }

    /// A message's block: text as it is (new in every answer), a resource's as its memo
    /// keeps it for this revision.
    fn message_block<'a>(&self, block: &'a Block) -> MessageBlock<'a> {
        let at = self.revision.index();
        MessageBlock::Shaped(match block {
            Block::Text(text) => return MessageBlock::Text(text),
            Block::Embedded(read) => {
                read.blocks.embedded[at].get_or_init(|| raw(&self.embedded(read)))
            }
            Block::Media { kind, read } => {
                read.blocks.embedded[at].get_or_init(|| raw(&self.media(*kind, read)))
            }
            Block::Link(read) => {
                read.blocks.linked[at].get_or_init(|| raw(&self.link(&read.resource)))
            }
        })
    }

    fn embedded(&self, read: &ReadResult) -> Value {
        let mut map = Map::new();
        map.insert("type".into(), json!("resource"));
        map.insert("resource".into(), json!(self.contents(read)));
        self.add_annotations(&mut map, &read.resource);
        Value::Object(map)
    }

    fn media(&self, kind: crate::handlers::MediaKind, read: &ReadResult) -> Value {
        let data = base64::engine::general_purpose::STANDARD.encode(read.content.as_bytes());
        let mime = &read.resource.info.mime_type;
        match kind {
            crate::handlers::MediaKind::Audio if !self.revision.has_audio() => json!({
                "type": "text",
                "text": format!("[audio {} ({mime}) is not shown: this protocol revision has no audio content]", read.resource.info.uri)
            }),
            crate::handlers::MediaKind::Audio => {
                json!({"type": "audio", "data": data, "mimeType": mime})
            }
            crate::handlers::MediaKind::Image => {
                json!({"type": "image", "data": data, "mimeType": mime})
            }
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

    fn input_required(&self, requests: &[InputRequest], state: &str) -> Map<String, Value> {
        let mut input_requests = Map::new();
        for request in requests {
            input_requests.insert(
                request.key.clone(),
                json!({
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": request.message,
                        "requestedSchema": request.schema,
                    }
                }),
            );
        }
        let mut result = Map::new();
        result.insert("resultType".into(), json!("input_required"));
        result.insert("inputRequests".into(), Value::Object(input_requests));
        result.insert("requestState".into(), json!(state));
        self.add_server_info(&mut result);
        result
    }

    /// A `completion/complete` answer line, written out by hand like a rendered prompt's:
    /// a hundred values escaped eight bytes at a time.
    pub fn completion(&self, id: &Value, completion: &Completion) -> Vec<u8> {
        let values = &completion.values;
        let mut line = Vec::with_capacity(values.iter().map(|v| v.len() + 3).sum::<usize>() + 256);
        open_result(&mut line, id);
        line.extend_from_slice(b"{\"completion\":{\"values\":[");
        for (index, value) in values.iter().enumerate() {
            if index > 0 {
                line.push(b',');
            }
            write_json_string(&mut line, value);
        }
        // Writing into a Vec cannot fail.
        let _ = write!(
            line,
            "],\"total\":{},\"hasMore\":{}}}",
            completion.total, completion.has_more
        );
        self.close_result(&mut line, None);
        line
    }
}

/// How a result may be cached.
#[derive(Debug, Clone, Copy)]
pub enum Hints {
    /// Depends on things last changed at this time (Unix ms).
    Since(i64),
    NotCacheable,
}

/// Starts a response line: the envelope up to the result's value.
fn open_result(line: &mut Vec<u8>, id: &Value) {
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    // Writing a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *line, id);
    line.extend_from_slice(b",\"result\":");
}

fn server_info() -> Value {
    json!({"name": "promptshelf", "version": env!("CARGO_PKG_VERSION")})
}

fn capabilities() -> Value {
    json!({
        "prompts": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "completions": {},
    })
}
