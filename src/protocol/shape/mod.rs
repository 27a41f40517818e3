//! Results and errors as the JSON each revision defines. Every response line is written
//! from one shape: the method's own members (`body`), then what every result
//! of the revision carries (`Close`: modern results get `resultType`, `serverInfo` and
//! caching hints). What is kept between answers (a list page's items, a resource's
//! contents) is kept as JSON text and copied in as it is.
//!
//! `items` writes list entries (prompts, resources, templates) and `content` a resource's
//! contents and prompt-message blocks, each losing in older revisions what they lack;
//! `tools` the tool mirrors' entries and results, around the results they mirror. Two
//! results' own members are written by hand, a rendered prompt's and a completion's
//! (`written_line`, each pinned by a test to its serde shape), with `escape` for their
//! strings.

mod content;
mod items;
mod skills;
mod tools;

pub(crate) use tools::ToolAnswer;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::error::RpcError;
use super::escape::{write_json_string, write_json_strings};
use super::id::RequestId;
use super::results::{Discovery, InputRequest, Page, PromptOutcome, ReadResult, RenderedPrompt};
use super::revision::Revision;
use super::skills::{Extensions, SKILLS_EXTENSION};
use crate::arguments::ObjectSchema;
use crate::complete::Ranking;
use crate::config::{CacheScope, Mirrors, ServeConfig};
use crate::model::{Provenance, StoredPrompt, StoredResource, StoredTemplate};

#[cfg(test)]
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// Shapes results for one revision, with the server's settings and the current time.
pub(crate) struct Shaper<'a> {
    pub revision: Revision,
    pub config: &'a ServeConfig,
    /// Unix milliseconds, for TTL hints.
    pub now: i64,
    /// The release channel the caller is served, which every provenance names.
    pub label: Option<&'a str>,
}

/// How a result may be cached.
#[derive(Debug, Clone, Copy)]
enum Hints {
    /// Depends on things last changed at this time (Unix ms), of this kind.
    Since(i64, Kind),
    NotCacheable,
}

/// What a cacheable result is, for the longest `ttlMs` it may get.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A list, or discovery (which names what the lists hold): `--list-ttl-max-ms`.
    List,
    /// A resource's contents: `--read-ttl-max-ms`.
    Contents,
}

/// A list page shaped for one revision, kept and served many times (the server caches it
/// until the library changes): its items as JSON, and what the rest of the result is made
/// from at each answer (`ttlMs` depends on the moment).
#[derive(Debug)]
pub(crate) struct ShapedPage {
    kind: ListKind,
    items: Box<RawValue>,
    next_cursor: Option<String>,
    last_modified: i64,
}

impl ShapedPage {
    /// How much memory keeping it costs, roughly.
    pub(crate) fn size(&self) -> usize {
        self.items.get().len()
    }

    /// The page's own members: its items under the list's name, and `nextCursor`.
    fn body(&self) -> ListBody<'_> {
        let items = self.items.as_ref();
        ListBody {
            items: match self.kind {
                ListKind::Prompts => ListItems::Prompts(items),
                ListKind::Resources => ListItems::Resources(items),
                ListKind::ResourceTemplates => ListItems::ResourceTemplates(items),
            },
            next_cursor: self.next_cursor.as_deref(),
        }
    }
}

/// Which list a page belongs to: the member its items go in.
#[derive(Debug, Clone, Copy)]
enum ListKind {
    Prompts,
    Resources,
    ResourceTemplates,
}

/// A success response, serialized from borrowed parts.
#[derive(Serialize)]
struct Response<'a, B: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: ResultObject<'a, B>,
}

/// A result: the method's own members, then the revision's closing members.
#[derive(Serialize)]
struct ResultObject<'a, B: Serialize> {
    #[serde(flatten)]
    body: B,
    #[serde(flatten)]
    close: Close<'a>,
}

/// What every result of a revision carries beyond its method's members. Legacy results
/// carry none of it.
#[derive(Serialize, Default)]
struct Close<'a> {
    #[serde(rename = "resultType", skip_serializing_if = "Option::is_none")]
    result_type: Option<&'static str>,
    #[serde(rename = "ttlMs", skip_serializing_if = "Option::is_none")]
    ttl_ms: Option<u64>,
    #[serde(rename = "cacheScope", skip_serializing_if = "Option::is_none")]
    cache_scope: Option<&'static str>,
    /// The result's one `_meta`: every key any part of the result needs goes here.
    #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
    meta: ResultMeta<'a>,
}

#[derive(Serialize, Default)]
struct ResultMeta<'a> {
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        skip_serializing_if = "Option::is_none"
    )]
    server_info: Option<&'static ServerInfo>,
    /// On the answer that closes a `subscriptions/listen` stream.
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        skip_serializing_if = "Option::is_none"
    )]
    subscription: Option<&'a RequestId>,
    /// On a `prompts/get` result: where the prompt comes from (`items::META_PROVENANCE`).
    #[serde(
        rename = "promptshelf/provenance",
        skip_serializing_if = "Option::is_none"
    )]
    provenance: Option<&'a Provenance>,
}

impl ResultMeta<'_> {
    fn is_empty(&self) -> bool {
        self.server_info.is_none() && self.subscription.is_none() && self.provenance.is_none()
    }
}

#[derive(Serialize)]
struct ServerInfo {
    name: &'static str,
    version: &'static str,
}

static SERVER_INFO: ServerInfo = ServerInfo {
    name: "promptshelf",
    version: env!("CARGO_PKG_VERSION"),
};

/// A result with no members of its own (`ping`, `resources/subscribe`, ...).
#[derive(Serialize)]
struct Empty {}

/// A list page's own members, the items under the list's name.
#[derive(Serialize)]
struct ListBody<'a> {
    #[serde(flatten)]
    items: ListItems<'a>,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum ListItems<'a> {
    Prompts(&'a RawValue),
    Resources(&'a RawValue),
    ResourceTemplates(&'a RawValue),
}

#[derive(Serialize)]
struct ReadBody<'a> {
    contents: [&'a RawValue; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InputRequiredBody<'a> {
    input_requests: BTreeMap<&'a str, Form<'a>>,
    request_state: &'a str,
}

/// An `elicitation/create` request carried by an `input_required` result: serialized from
/// the schema as it is, so its fields keep their order.
#[derive(Serialize)]
struct Form<'a> {
    method: &'static str,
    params: FormParams<'a>,
}

/// A form's `elicitation/create` params, the same whether a result carries them or the
/// server sends them to a legacy client itself (`protocol::outbound`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FormParams<'a> {
    /// Left out before 2025-11-25, whose elicitation has no modes.
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<&'static str>,
    message: &'a str,
    requested_schema: &'a ObjectSchema,
}

impl<'a> FormParams<'a> {
    pub(super) fn of(request: &'a InputRequest, revision: Revision) -> FormParams<'a> {
        FormParams {
            mode: revision.has_elicitation_modes().then_some("form"),
            message: &request.message,
            requested_schema: &request.schema,
        }
    }
}

/// Room for what a line holds around its result's items: `jsonrpc`, `id`, `resultType`,
/// `ttlMs`, `cacheScope`, `nextCursor`, `serverInfo` (about 300 bytes).
const CLOSE_BYTES: usize = 512;

/// `message` as one line of JSON and its newline, written into a buffer that starts with
/// room for `expected` bytes: what the caller knows of the line's size, or 0. A page of a
/// list or a document is tens of kilobytes, and a buffer grown to that by doubling was
/// copied and took fresh memory about ten times over (a cold `prompts/list` of the large
/// bench: 553 page faults instead of 592, docs/benchmarks.md).
pub(super) fn line(message: &impl Serialize, expected: usize) -> Vec<u8> {
    // serde_json's own start, for a line of unknown size.
    const SMALLEST: usize = 128;
    let mut bytes = Vec::with_capacity(expected.max(SMALLEST));
    if let Err(err) = serde_json::to_writer(&mut bytes, message) {
        tracing::error!("a response could not be serialized: {err}");
        bytes = br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"unserializable result"}}"#
            .to_vec();
    }
    bytes.push(b'\n');
    bytes
}

/// `value` as JSON text, to be kept and copied into answers as it is.
fn raw(value: &impl Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|err| {
        tracing::error!("a result part could not be serialized: {err}");
        RawValue::from_string("null".into()).unwrap_or_default()
    })
}

/// Whether a response line this module wrote is an error rather than a result. Every line
/// names `id` (when it has one) before `result` or `error`, and a quote inside a JSON
/// string is escaped, so the first `,"error":` or `,"result":` is the top-level member.
/// Only the bytes before a result's member are searched, so a long result is not scanned.
pub(crate) fn is_error_line(line: &[u8]) -> bool {
    let head = match memchr::memmem::find(line, b",\"result\":") {
        Some(result) => &line[..result],
        None => line,
    };
    memchr::memmem::find(head, b",\"error\":").is_some()
}

/// An error response line.
pub fn error_line(id: &RequestId, error: &RpcError) -> Vec<u8> {
    #[derive(Serialize)]
    struct ErrorResponse<'a> {
        jsonrpc: &'static str,
        /// MCP's schema has no null id: when the request's id could not be read, it is
        /// left out.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a RequestId>,
        error: ErrorBody<'a>,
    }
    #[derive(Serialize)]
    struct ErrorBody<'a> {
        code: i64,
        message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<&'a Value>,
    }
    line(
        &ErrorResponse {
            jsonrpc: "2.0",
            id: (!id.is_null()).then_some(id),
            error: ErrorBody {
                code: error.code,
                message: &error.message,
                data: error.data.as_ref(),
            },
        },
        0,
    )
}

pub(super) fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|ts| ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string())
}

/// What the server offers. `tools` only when a mirror is on; its list changes with the
/// prompts when `get_prompt` describes them. The Skills extension only to a client that
/// declared it (`declared`), with its `directoryRead` (`resources/directory/read`).
fn capabilities(mirrors: &Mirrors, declared: Extensions) -> Value {
    let mut offered = json!({
        "prompts": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "completions": {},
    });
    if mirrors.any() {
        offered["tools"] = if mirrors.follow_prompts() {
            json!({"listChanged": true})
        } else {
            json!({})
        };
    }
    if declared.skills {
        offered["extensions"] = json!({ SKILLS_EXTENSION: {"directoryRead": true} });
    }
    offered
}

impl Shaper<'_> {
    /// The response line: `body`, closed as this revision closes a result of `result_type`
    /// with `hints` (modern results then carry `ttlMs` and `cacheScope`).
    fn respond<B: Serialize>(
        &self,
        id: &RequestId,
        body: B,
        result_type: &'static str,
        hints: Option<Hints>,
    ) -> Vec<u8> {
        self.respond_with_meta(id, body, result_type, hints, ResultMeta::default(), 0)
    }

    /// `respond`, with the result's `_meta` members and the line's `expected` size (`line`).
    fn respond_with_meta<'a, B: Serialize>(
        &self,
        id: &'a RequestId,
        body: B,
        result_type: &'static str,
        hints: Option<Hints>,
        meta: ResultMeta<'a>,
        expected: usize,
    ) -> Vec<u8> {
        let close = self.close(result_type, hints, meta);
        let response = Response {
            jsonrpc: "2.0",
            id,
            result: ResultObject { body, close },
        };
        line(&response, expected)
    }

    /// What every result of this revision carries beyond its method's members.
    fn close<'a>(
        &self,
        result_type: &'static str,
        hints: Option<Hints>,
        meta: ResultMeta<'a>,
    ) -> Close<'a> {
        if self.revision.is_modern() {
            Close {
                result_type: Some(result_type),
                ttl_ms: hints.map(|hints| self.ttl_ms(hints)),
                cache_scope: hints.map(|_| self.cache_scope()),
                meta: ResultMeta {
                    server_info: Some(&SERVER_INFO),
                    ..meta
                },
            }
        } else {
            Close {
                meta,
                ..Close::default()
            }
        }
    }

    fn cache_scope(&self) -> &'static str {
        match self.config.cache_scope {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }

    /// HTTP-style heuristic freshness, 10% of the time since the last change, between
    /// `--ttl-min-ms` and the kind's maximum: what has not changed for long is probably
    /// stable, but a client that caches without listening for notifications shows a change
    /// at most the maximum late.
    fn ttl_ms(&self, hints: Hints) -> u64 {
        match hints {
            Hints::NotCacheable => 0,
            Hints::Since(last_modified, kind) => {
                let max = match kind {
                    Kind::List => self.config.list_ttl_max_ms,
                    Kind::Contents => self.config.read_ttl_max_ms,
                };
                let age = (self.now - last_modified).max(0) as u64;
                // `min` before `max`: never over the kind's maximum, even when a
                // configuration sets `ttl_min_ms` above it.
                (age / 10).max(self.config.ttl_min_ms).min(max)
            }
        }
    }

    /// `declared`: the extensions the request declares, which the capabilities then name.
    pub(crate) fn discover(
        &self,
        id: &RequestId,
        discovery: &Discovery,
        declared: Extensions,
    ) -> Vec<u8> {
        let mut body = Map::new();
        body.insert(
            "supportedVersions".into(),
            json!([Revision::MODERN.as_str()]),
        );
        body.insert(
            "capabilities".into(),
            capabilities(&self.config.mirrors, declared),
        );
        body.insert("instructions".into(), json!(discovery.instructions));
        self.respond(
            id,
            body,
            "complete",
            Some(Hints::Since(discovery.last_modified, Kind::List)),
        )
    }

    /// `declared`: the extensions the client declared, which the capabilities then name.
    pub(crate) fn initialize(
        &self,
        id: &RequestId,
        discovery: &Discovery,
        declared: Extensions,
    ) -> Vec<u8> {
        let mut body = Map::new();
        body.insert("protocolVersion".into(), json!(self.revision.as_str()));
        body.insert(
            "capabilities".into(),
            capabilities(&self.config.mirrors, declared),
        );
        body.insert("serverInfo".into(), json!(SERVER_INFO));
        body.insert("instructions".into(), json!(discovery.instructions));
        self.respond(id, body, "complete", None)
    }

    /// The answer that closes a `subscriptions/listen` stream on shutdown.
    pub(crate) fn listen_closed(&self, id: &RequestId) -> Vec<u8> {
        let meta = ResultMeta {
            subscription: Some(id),
            ..ResultMeta::default()
        };
        self.respond_with_meta(id, Empty {}, "complete", None, meta, 0)
    }

    pub(crate) fn empty(&self, id: &RequestId) -> Vec<u8> {
        self.respond(id, Empty {}, "complete", None)
    }

    pub(crate) fn prompts_page(&self, page: &Page<StoredPrompt>) -> ShapedPage {
        let items: Vec<_> = page.items.iter().map(|p| self.prompt(p)).collect();
        shaped_page(ListKind::Prompts, &items, page)
    }

    pub(crate) fn resources_page(&self, page: &Page<StoredResource>) -> ShapedPage {
        let items: Vec<Value> = page.items.iter().map(|r| self.resource(r)).collect();
        shaped_page(ListKind::Resources, &items, page)
    }

    pub(crate) fn templates_page(&self, page: &Page<StoredTemplate>) -> ShapedPage {
        let items: Vec<Value> = page.items.iter().map(|t| self.template(t)).collect();
        shaped_page(ListKind::ResourceTemplates, &items, page)
    }

    /// The response line for a shaped page, with the `ttlMs` of this moment.
    pub(crate) fn page_line(&self, id: &RequestId, page: &ShapedPage) -> Vec<u8> {
        let hints = Hints::Since(page.last_modified, Kind::List);
        let expected = page.size() + CLOSE_BYTES;
        self.respond_with_meta(
            id,
            page.body(),
            "complete",
            Some(hints),
            ResultMeta::default(),
            expected,
        )
    }

    /// A `resources/read` answer line (through `written_line`); the contents' body is
    /// copied in as it was made when the resource was read.
    pub(crate) fn read_line(&self, id: &RequestId, read: &ReadResult) -> Vec<u8> {
        let hints = Hints::Since(read.resource.last_modified, Kind::Contents);
        self.written_line(
            id,
            self.contents_size(read) + 16,
            Some(hints),
            ResultMeta::default(),
            |line| {
                line.extend_from_slice(b"\"contents\":[");
                self.write_contents(read, line);
                line.push(b']');
            },
        )
    }

    pub(crate) fn prompt_outcome(&self, id: &RequestId, outcome: &PromptOutcome) -> Vec<u8> {
        match outcome {
            PromptOutcome::Rendered { prompt, retried } => {
                // A result produced by answering input must not be cached.
                let hints = retried.then_some(Hints::NotCacheable);
                self.rendered_line(id, prompt, hints)
            }
            PromptOutcome::InputRequired { requests, state } => {
                let body = InputRequiredBody {
                    input_requests: input_requests(requests),
                    request_state: state,
                };
                self.respond(id, body, "input_required", None)
            }
        }
    }

    /// The `result` of a `prompts/get`, as `promptshelf prompt render --json` prints it:
    /// read back from the answer line, so that there is one way of writing it.
    pub(crate) fn prompt_result(&self, outcome: &PromptOutcome) -> Value {
        let line = self.prompt_outcome(&RequestId::null(), outcome);
        serde_json::from_slice::<Value>(&line)
            .map(|mut response| response["result"].take())
            .unwrap_or(Value::Null)
    }

    /// A response line whose result members are written by `members` (into the open result
    /// object, without braces), followed by what every result of this revision carries,
    /// `Close`, serialized as for every other result. For the two answers whose members are
    /// mostly strings new in every answer (see `rendered_line` and `completion`), escaped
    /// by `escape`: serde_json's writer took a fifth more instructions a `prompts/get` and
    /// a tenth more a completion (docs/benchmarks.md). For `read_line`, whose contents are
    /// JSON already: made a `RawValue` for serde, they would be read once more to be
    /// checked. A unit test pins each, parsed, to its serde-shaped result in every revision.
    fn written_line(
        &self,
        id: &RequestId,
        size: usize,
        hints: Option<Hints>,
        meta: ResultMeta,
        members: impl FnOnce(&mut Vec<u8>),
    ) -> Vec<u8> {
        let mut line = Vec::with_capacity(size + CLOSE_BYTES);
        line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        // Writing an id into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut line, id);
        line.extend_from_slice(b",\"result\":{");
        members(&mut line);
        if hints.is_none() && meta.is_empty() {
            // A completion's close: the same in every answer of a revision.
            line.extend_from_slice(self.plain_close());
        } else {
            self.write_close(&mut line, hints, meta);
        }
        line.extend_from_slice(b"}}\n");
        line
    }

    /// The members `Close` adds to a result with no caching hints and no `_meta` of its
    /// own, each after a comma: none in a legacy revision; in the modern one `resultType`
    /// and the server's info, serialized once rather than in every answer (a tenth of what
    /// a modern completion cost more than a legacy one: docs/benchmarks.md).
    fn plain_close(&self) -> &'static [u8] {
        static MODERN: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        if !self.revision.is_modern() {
            return b"";
        }
        MODERN.get_or_init(|| {
            let mut close = Vec::new();
            self.write_close(&mut close, None, ResultMeta::default());
            close
        })
    }

    /// `Close`'s members serialized at the end of `line`, after a comma (nothing when it
    /// has none): its object written in place, its braces then taken off.
    fn write_close(&self, line: &mut Vec<u8>, hints: Option<Hints>, meta: ResultMeta) {
        let start = line.len();
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *line, &self.close("complete", hints, meta));
        if line.len() - start > 2 {
            line[start] = b',';
            line.pop();
        } else {
            line.truncate(start);
        }
    }

    /// The answer line of a rendered prompt (through `written_line`).
    fn rendered_line(
        &self,
        id: &RequestId,
        prompt: &RenderedPrompt,
        hints: Option<Hints>,
    ) -> Vec<u8> {
        let messages: Vec<content::Message> =
            prompt.messages.iter().map(|m| self.message(m)).collect();
        let size = messages
            .iter()
            .map(content::Message::size_hint)
            .sum::<usize>()
            + 64;
        let provenance = self.provenance(prompt.provenance.clone());
        let meta = ResultMeta {
            provenance: Some(&provenance),
            ..ResultMeta::default()
        };
        self.written_line(id, size, hints, meta, |line| {
            if let Some(description) = &prompt.description {
                line.extend_from_slice(b"\"description\":");
                write_json_string(line, description);
                line.push(b',');
            }
            line.extend_from_slice(b"\"messages\":[");
            for (index, message) in messages.iter().enumerate() {
                if index > 0 {
                    line.push(b',');
                }
                message.write(line);
            }
            line.push(b']');
        })
    }

    /// A `completion/complete` answer line (through `written_line`).
    pub(crate) fn completion(&self, id: &RequestId, completion: &Ranking) -> Vec<u8> {
        let values = &completion.values;
        let size = values.text().len() + 3 * values.len() + 64;
        self.written_line(id, size, None, ResultMeta::default(), |line| {
            line.extend_from_slice(b"\"completion\":{\"values\":[");
            write_json_strings(line, values.text(), values.iter());
            line.push(b']');
            if let Some(total) = completion.total {
                line.extend_from_slice(b",\"total\":");
                line.extend_from_slice(itoa::Buffer::new().format(total).as_bytes());
            }
            line.extend_from_slice(if completion.has_more {
                b",\"hasMore\":true}"
            } else {
                b",\"hasMore\":false}"
            });
        })
    }
}

fn shaped_page<T>(kind: ListKind, items: &[impl Serialize], page: &Page<T>) -> ShapedPage {
    ShapedPage {
        kind,
        items: raw(&items),
        next_cursor: page.next_cursor.clone(),
        last_modified: page.last_modified,
    }
}

fn input_requests(requests: &[InputRequest]) -> BTreeMap<&str, Form<'_>> {
    requests
        .iter()
        .map(|request| {
            let form = Form {
                method: "elicitation/create",
                params: FormParams::of(request, Revision::MODERN),
            };
            (request.key.as_str(), form)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde::de::IgnoredAny;

    use super::*;
    use crate::protocol::results::{Block, MediaKind, RenderedMessage};

    #[test]
    fn error_lines_are_told_from_results() {
        let error = RpcError::internal("no");
        assert!(is_error_line(&error_line(&RequestId::null(), &error)));
        assert!(is_error_line(
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":1}}"#
        ));
        let result = br#"{"jsonrpc":"2.0","id":"a,\"error\":","result":{"a":1,"error":2}}"#;
        assert!(!is_error_line(result));
    }

    /// A response whose result may hold `_meta` once: serde refuses a duplicate field.
    #[derive(Deserialize)]
    struct Once {
        result: OnceResult,
    }

    #[derive(Deserialize)]
    struct OnceResult {
        #[serde(rename = "_meta", default)]
        _meta: Option<IgnoredAny>,
        #[serde(rename = "resultType", default)]
        result_type: Option<String>,
    }

    /// The provenance of an item imported from a git working tree.
    fn imported() -> Provenance {
        Provenance {
            label: None,
            origin: crate::model::Origin {
                collection: Some("team".into()),
                path: Some("prompts/a \"b\".prompt.md".into()),
                commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
            },
            version: Some(7),
            content_hash: [3; 32],
        }
    }

    fn every_answer(shaper: &Shaper) -> Vec<Vec<u8>> {
        let id = crate::protocol::id_of(br#"{"id":7}"#);
        let rendered = |retried| PromptOutcome::Rendered {
            prompt: RenderedPrompt {
                description: Some("d".into()),
                messages: vec![RenderedMessage {
                    role: crate::model::Role::User,
                    block: Block::Text("hello \"world\"\n".into()),
                }],
                provenance: imported(),
            },
            retried,
        };
        let discovery = Discovery {
            instructions: "i".into(),
            last_modified: 0,
        };
        let empty_page = Page::<StoredPrompt> {
            items: Vec::new(),
            next_cursor: Some("c".into()),
            last_modified: 0,
        };
        vec![
            shaper.discover(&id, &discovery, Extensions { skills: true }),
            shaper.initialize(&id, &discovery, Extensions::default()),
            shaper.empty(&id),
            shaper.listen_closed(&id),
            shaper.page_line(&id, &shaper.prompts_page(&empty_page)),
            shaper.prompt_outcome(&id, &rendered(false)),
            shaper.prompt_outcome(&id, &rendered(true)),
            shaper.prompt_outcome(
                &id,
                &PromptOutcome::InputRequired {
                    requests: vec![InputRequest {
                        key: "arguments".into(),
                        message: "m".into(),
                        schema: ObjectSchema::of(&[], |_| Map::new(), Vec::new(), false),
                    }],
                    state: "s".into(),
                },
            ),
            shaper.completion(
                &id,
                &Ranking {
                    values: ["a", "b"].into_iter().collect(),
                    total: Some(2),
                    has_more: false,
                },
            ),
            shaper.tools_line(
                &id,
                &crate::protocol::ToolList {
                    tools: vec![crate::protocol::Tool {
                        name: "t",
                        title: "T",
                        description: "d".into(),
                        input_schema: raw(&json!({"type": "object"})),
                        output: crate::protocol::ToolOutput::Prompt,
                    }],
                    last_modified: 0,
                },
            ),
            shaper.tool_line(&id, &ToolAnswer::Refused("no")),
            shaper.tool_line(&id, &ToolAnswer::Page(&shaper.prompts_page(&empty_page))),
        ]
    }

    /// The serde shape of a rendered prompt's result, which `rendered_line` writes by hand.
    #[derive(Serialize)]
    struct PromptBody<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
        messages: Vec<content::Message<'a>>,
    }

    fn resource(
        uri: &str,
        mime: &str,
        content: crate::model::Content,
    ) -> std::sync::Arc<ReadResult> {
        let info = crate::model::ResourceInfo {
            meta: Default::default(),
            uri: uri.into(),
            name: "n".into(),
            title: Some("T \"q\"".into()),
            description: Some("d".into()),
            mime_type: mime.into(),
            annotations: crate::model::Annotations {
                audience: vec![crate::model::Role::User],
                priority: Some(0.5),
            },
            icons: Vec::new(),
            origin: Default::default(),
        };
        let stored = StoredResource {
            info,
            size: content.as_bytes().len() as u64,
            is_text: matches!(content, crate::model::Content::Text(_)),
            blob_hash: [3; 32],
            content_hash: [7; 32],
            last_modified: 1_700_000_000_000,
            version: Some(3),
        };
        std::sync::Arc::new(ReadResult::new(stored, content))
    }

    /// The serde shape of a resource's contents, which `Shaper::write_contents` writes by
    /// hand.
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
        meta: Option<ContentsMeta>,
    }

    /// The serde shape of the contents' `_meta`, its members in the order written (a `json!`
    /// map would sort the provenance's).
    #[derive(Serialize)]
    struct ContentsMeta {
        #[serde(rename = "promptshelf/contentHash")]
        hash: String,
        #[serde(rename = "promptshelf/lastModified")]
        last_modified: String,
        #[serde(rename = "promptshelf/provenance")]
        provenance: crate::model::Provenance,
    }

    /// The hand-written contents are, byte for byte, what serde writes, and the read's line
    /// says, parsed, what the serde-shaped result says: every revision, text that needs
    /// escapes, empty text, binary of every byte value and of one byte.
    #[test]
    fn the_read_line_is_the_serde_shaped_result() {
        use crate::model::Content;
        use base64::Engine as _;
        let config = ServeConfig::default();
        let reads = [
            (
                "shelf://a b/\"q\"\\.md",
                "text/markdown",
                Content::Text("# A\n\"b\"\t\u{1} back \\ é ✓ 🦀\u{7f}".repeat(40)),
            ),
            ("shelf://e.md", "text/plain", Content::Text(String::new())),
            (
                "shelf://i.png",
                "image/png",
                Content::Binary((0..=255).collect()),
            ),
            (
                "shelf://1.bin",
                "application/octet-stream",
                Content::Binary(vec![7]),
            ),
        ];
        for (uri, mime, content) in reads {
            let read = &resource(uri, mime, content.clone());
            // The body gives back what it was made from.
            assert_eq!(read.body.bytes(), content.as_bytes(), "{uri}");
            assert_eq!(
                read.body.text().is_some(),
                matches!(content, Content::Text(_)),
                "{uri}"
            );
            for revision in std::iter::once(Revision::MODERN).chain(Revision::LEGACY) {
                let shaper = Shaper {
                    revision,
                    config: &config,
                    now: 0,
                    label: None,
                };
                let (text, blob) = match &content {
                    Content::Text(text) => (Some(text.as_str()), None),
                    Content::Binary(bytes) => (
                        None,
                        Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
                    ),
                };
                let meta = (revision >= Revision::V2025_06_18).then(|| ContentsMeta {
                    hash: crate::store::hex(&read.resource.content_hash),
                    last_modified: iso(read.resource.last_modified),
                    provenance: shaper.provenance(read.resource.provenance()),
                });
                let shaped = serde_json::to_string(&Contents {
                    uri: &read.resource.info.uri,
                    mime_type: &read.resource.info.mime_type,
                    text,
                    blob,
                    meta,
                })
                .expect("serde writes the contents");
                let mut contents = Vec::new();
                shaper.write_contents(read, &mut contents);
                assert_eq!(
                    String::from_utf8(contents).expect("contents are UTF-8"),
                    shaped,
                    "{}",
                    revision.as_str()
                );
                let id = crate::protocol::id_of(br#"{"id":"r-1"}"#);
                let written: Value = serde_json::from_slice(&shaper.read_line(&id, read))
                    .expect("the hand-written line is JSON");
                let contents = RawValue::from_string(shaped).expect("serde wrote JSON");
                let hints = Hints::Since(read.resource.last_modified, Kind::Contents);
                let body = ReadBody {
                    contents: [&contents],
                };
                let shaped: Value =
                    serde_json::from_slice(&shaper.respond(&id, body, "complete", Some(hints)))
                        .expect("the serde line is JSON");
                assert_eq!(written, shaped, "{}", revision.as_str());
            }
        }
    }

    /// The serde shape of a completion's result, which `completion` writes by hand.
    #[derive(Serialize)]
    struct CompletionBody<'a> {
        completion: CompletionValues<'a>,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct CompletionValues<'a> {
        #[serde(serialize_with = "values")]
        values: &'a crate::complete::Values,
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
        has_more: bool,
    }

    fn values<S: serde::Serializer>(
        values: &&crate::complete::Values,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(values.iter())
    }

    /// The hand-written completion line says, parsed, what the serde shape says, in every
    /// revision, with values that need escapes, none, and more than are shown, counted or
    /// not.
    #[test]
    fn the_completion_line_is_the_serde_shaped_result() {
        let config = ServeConfig::default();
        let lists: [&[&str]; 3] = [&[], &["a", "b \"q\"", "c\\d\n", "é ✓ 🦀\u{1}"], &["x"; 100]];
        for (values, total, has_more) in [
            (lists[0], Some(0), false),
            (lists[1], Some(4), false),
            (lists[2], Some(12_345), true),
            (lists[2], None, true),
        ] {
            let completion = Ranking {
                values: values.iter().copied().collect(),
                total,
                has_more,
            };
            for revision in std::iter::once(Revision::MODERN).chain(Revision::LEGACY) {
                let shaper = Shaper {
                    revision,
                    config: &config,
                    now: 0,
                    label: None,
                };
                let id = crate::protocol::id_of(br#"{"id":42}"#);
                let written: Value = serde_json::from_slice(&shaper.completion(&id, &completion))
                    .expect("the hand-written line is JSON");
                let body = CompletionBody {
                    completion: CompletionValues {
                        values: &completion.values,
                        total,
                        has_more,
                    },
                };
                let shaped: Value =
                    serde_json::from_slice(&shaper.respond(&id, body, "complete", None))
                        .expect("the serde line is JSON");
                assert_eq!(written, shaped, "{}", revision.as_str());
            }
        }
    }

    /// The hand-written prompt line says, parsed, what the serde shape says: every revision,
    /// retried or not, with text that needs escapes, no description, and every block kind.
    #[test]
    fn the_rendered_prompt_line_is_the_serde_shaped_result() {
        use crate::model::{Content, Role};
        let config = ServeConfig::default();
        let doc = resource(
            "shelf://a.md",
            "text/markdown",
            Content::Text("# A\n\"b\"\t\u{1}".into()),
        );
        let image = resource(
            "shelf://i.png",
            "image/png",
            Content::Binary(vec![0, 159, 146, 150]),
        );
        let audio = resource("shelf://s.wav", "audio/wav", Content::Binary(vec![1, 2, 3]));
        let message = |role, block| RenderedMessage { role, block };
        let messages = vec![
            message(Role::User, Block::Text("plain".into())),
            message(
                Role::Assistant,
                Block::Text("quote \" back \\ nl \n tab \t ctl \u{7} é ✓ 🦀".repeat(5)),
            ),
            message(Role::User, Block::Embedded(doc.clone())),
            message(Role::User, Block::Link(doc)),
            message(
                Role::User,
                Block::Media {
                    kind: MediaKind::Image,
                    read: image,
                },
            ),
            message(
                Role::User,
                Block::Media {
                    kind: MediaKind::Audio,
                    read: audio,
                },
            ),
        ];
        for description in [None, Some("a \"described\"\nprompt".to_string())] {
            let prompt = RenderedPrompt {
                description: description.clone(),
                messages: messages.clone(),
                provenance: imported(),
            };
            for revision in std::iter::once(Revision::MODERN).chain(Revision::LEGACY) {
                let shaper = Shaper {
                    revision,
                    config: &config,
                    now: 1_800_000_000_000,
                    label: None,
                };
                for retried in [false, true] {
                    let id = crate::protocol::id_of(br#"{"id":"r-1"}"#);
                    let outcome = PromptOutcome::Rendered {
                        prompt: prompt.clone(),
                        retried,
                    };
                    let written: Value =
                        serde_json::from_slice(&shaper.prompt_outcome(&id, &outcome))
                            .expect("the hand-written line is JSON");
                    let body = PromptBody {
                        description: prompt.description.as_deref(),
                        messages: prompt.messages.iter().map(|m| shaper.message(m)).collect(),
                    };
                    let hints = retried.then_some(Hints::NotCacheable);
                    let meta = ResultMeta {
                        provenance: Some(&prompt.provenance),
                        ..ResultMeta::default()
                    };
                    let line = shaper.respond_with_meta(&id, body, "complete", hints, meta, 0);
                    let shaped: Value =
                        serde_json::from_slice(&line).expect("the serde line is JSON");
                    assert_eq!(written, shaped, "{} retried={retried}", revision.as_str());
                }
            }
        }
    }

    /// Every answer of every revision is one JSON line whose result carries `_meta` at most
    /// once (the listen stream's closing answer has two keys in it), and `resultType` in
    /// the modern revision only.
    #[test]
    fn every_result_writes_its_meta_once_and_closes_as_its_revision_does() {
        let config = ServeConfig::default();
        for revision in std::iter::once(Revision::MODERN).chain(Revision::LEGACY) {
            let shaper = Shaper {
                revision,
                config: &config,
                now: 0,
                label: None,
            };
            for line in every_answer(&shaper) {
                let text = String::from_utf8_lossy(&line);
                assert!(
                    text.ends_with('\n') && !text[..text.len() - 1].contains('\n'),
                    "{text}"
                );
                let parsed: Once = serde_json::from_slice(&line)
                    .unwrap_or_else(|err| panic!("{}: {err}: {text}", revision.as_str()));
                assert_eq!(
                    parsed.result.result_type.is_some(),
                    revision.is_modern(),
                    "{text}"
                );
            }
        }
        let modern = Shaper {
            revision: Revision::MODERN,
            config: &config,
            now: 0,
            label: None,
        };
        let closed: Value = serde_json::from_slice(
            &modern.listen_closed(&crate::protocol::id_of(br#"{"id":"L"}"#)),
        )
        .expect("the closing answer is JSON");
        assert_eq!(
            closed["result"]["_meta"],
            json!({META_SUBSCRIPTION: "L", "io.modelcontextprotocol/serverInfo": SERVER_INFO})
        );
    }
}
