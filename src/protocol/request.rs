//! From one line of input to a typed request: JSON-RPC validity, the era of the request
//! (modern `_meta` or legacy), and the method's parameters.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::{RpcError, code};
use super::id::{IdText, RequestId};
use super::revision::Revision;
use super::skills::{Extensions, reads_extensions};

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// What one line of input is.
#[derive(Debug)]
pub enum Incoming {
    Request(Envelope),
    Notification(Notification),
    /// A response from the client to one of the server's own requests (`elicitation/create`,
    /// the only kind it sends).
    Response(Reply),
    /// Not something that can be served; answer with this error (`id` null when unknown).
    Invalid {
        id: RequestId,
        error: RpcError,
    },
}

/// A notification from the client, as far as the server acts on it.
#[derive(Debug, PartialEq)]
pub enum Notification {
    /// `notifications/cancelled`: the client no longer wants the answer to this request
    /// (or, for a `subscriptions/listen`, the stream).
    Cancelled { request_id: RequestId },
    /// Anything else (initialized, progress, a cancellation without a usable id): nothing
    /// to do.
    Other,
}

/// A client's response to an `elicitation/create` of ours: the id we gave the request
/// (null when the response's cannot be read) and what the user did.
#[derive(Debug, PartialEq)]
pub struct Reply {
    pub id: RequestId,
    pub(crate) elicited: Elicited,
}

/// What an elicitation came to, as its response says.
#[derive(Debug, PartialEq)]
pub(crate) enum Elicited {
    /// The user submitted the form: its values by field name.
    Accepted(Map<String, Value>),
    Declined,
    Cancelled,
    /// An error response, or a result that is no `ElicitResult`: its words, for the log.
    Failed(String),
}

impl Elicited {
    fn of_result(result: &RawValue) -> Elicited {
        #[derive(Deserialize)]
        struct ElicitResult {
            action: String,
            #[serde(default)]
            content: Option<Map<String, Value>>,
        }
        match serde_json::from_str::<ElicitResult>(result.get()) {
            Ok(result) => match result.action.as_str() {
                "accept" => Elicited::Accepted(result.content.unwrap_or_default()),
                "decline" => Elicited::Declined,
                "cancel" => Elicited::Cancelled,
                other => Elicited::Failed(format!(
                    "the action '{other}' is not accept, decline or cancel"
                )),
            },
            Err(err) => Elicited::Failed(format!("the result is not an ElicitResult: {err}")),
        }
    }

    fn of_error(error: &RawValue) -> Elicited {
        #[derive(Deserialize)]
        struct ErrorObject {
            #[serde(default)]
            code: Option<i64>,
            #[serde(default)]
            message: Option<String>,
        }
        match serde_json::from_str::<ErrorObject>(error.get()) {
            Ok(error) => Elicited::Failed(format!(
                "the client answered with error {}: {}",
                error
                    .code
                    .map_or_else(|| "without a code".to_string(), |c| c.to_string()),
                error.message.unwrap_or_default()
            )),
            Err(_) => Elicited::Failed(format!("the client answered with error {}", error.get())),
        }
    }
}

/// The id of the message on `line`, as far as it can be read (null when it cannot): for
/// answering a line whose handling failed past parsing.
pub fn id_of(line: &[u8]) -> RequestId {
    #[derive(Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow, default)]
        id: Option<&'a RawValue>,
    }
    std::str::from_utf8(line)
        .ok()
        .and_then(|line| serde_json::from_str::<IdOnly>(line).ok())
        .and_then(|message| message.id)
        .and_then(|raw| match RequestId::read(raw) {
            IdText::Id(id) | IdText::NotAnInteger(id) => Some(id),
            IdText::Other => None,
        })
        .unwrap_or_else(RequestId::null)
}

/// A request that parsed: its id, its era and its typed method.
#[derive(Debug)]
pub struct Envelope {
    pub id: RequestId,
    pub(crate) era: Era,
    pub(crate) method: Method,
    /// The length of the request's line in bytes: a bound on what its arguments can make a
    /// template do.
    pub size: usize,
}

/// Which era a request belongs to; decided by its `_meta`, never by earlier requests.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Era {
    /// Carried `io.modelcontextprotocol/protocolVersion`: served statelessly.
    /// `elicits_forms`: the client declared form elicitation in its capabilities (read for
    /// `prompts/get` alone); `extensions`: the extensions they declare (read for the methods
    /// whose answer depends on them, `skills::reads_extensions`).
    Modern {
        elicits_forms: bool,
        extensions: Extensions,
    },
    /// No modern `_meta`: served under the revision `initialize` negotiated.
    Legacy,
}

impl Era {
    /// Whether the client declared form elicitation in this request's capabilities.
    pub(crate) fn can_elicit_forms(&self) -> bool {
        matches!(
            self,
            Era::Modern {
                elicits_forms: true,
                ..
            }
        )
    }

    /// The extensions this request's capabilities declare (none for a legacy request, whose
    /// client declared them in its `initialize`).
    pub(crate) fn extensions(&self) -> Extensions {
        match self {
            Era::Modern { extensions, .. } => *extensions,
            Era::Legacy => Extensions::default(),
        }
    }
}

#[derive(Debug)]
pub(crate) enum Method {
    Discover,
    Initialize {
        version: String,
        /// The client declared form elicitation: a revision that has `elicitation/create`
        /// may ask it for missing arguments.
        elicits_forms: bool,
        /// The extensions the client declared, for the whole session.
        extensions: Extensions,
    },
    Ping,
    ListPrompts {
        cursor: Option<String>,
    },
    GetPrompt(GetPromptParams),
    ListResources {
        cursor: Option<String>,
    },
    ListTemplates {
        cursor: Option<String>,
    },
    ReadResource {
        uri: String,
    },
    Complete(CompleteParams),
    Subscribe {
        uri: String,
    },
    Unsubscribe {
        uri: String,
    },
    Listen(ListenParams),
    /// Served only when a mirror is on (`serve --tools`): otherwise -32601, as a method
    /// this server does not serve.
    ListTools {
        cursor: Option<String>,
    },
    CallTool(CallToolParams),
    /// The Skills extension's methods: served only to a client that declared it (otherwise
    /// -32601, as methods this server does not serve).
    ListSkills {
        cursor: Option<String>,
    },
    GetSkill {
        uri: String,
    },
    /// `resources/directory/read`, the extension's optional `directoryRead`.
    ReadDirectory {
        uri: String,
        cursor: Option<String>,
    },
    /// A method this server does not serve (sampling, ...): -32601.
    Unknown(String),
}

impl Method {
    /// The method's name as a request spells it.
    pub(crate) fn name(&self) -> &str {
        match self {
            Method::Discover => "server/discover",
            Method::Initialize { .. } => "initialize",
            Method::Ping => "ping",
            Method::ListPrompts { .. } => "prompts/list",
            Method::GetPrompt(_) => "prompts/get",
            Method::ListResources { .. } => "resources/list",
            Method::ListTemplates { .. } => "resources/templates/list",
            Method::ReadResource { .. } => "resources/read",
            Method::Complete(_) => "completion/complete",
            Method::Subscribe { .. } => "resources/subscribe",
            Method::Unsubscribe { .. } => "resources/unsubscribe",
            Method::Listen(_) => "subscriptions/listen",
            Method::ListTools { .. } => "tools/list",
            Method::CallTool(_) => "tools/call",
            Method::ListSkills { .. } => "skills/list",
            Method::GetSkill { .. } => "skills/get",
            Method::ReadDirectory { .. } => "resources/directory/read",
            Method::Unknown(name) => name,
        }
    }

    /// What the request names, for the methods whose HTTP request carries it in
    /// `Mcp-Name`: a prompt's or tool's name, a resource's URI.
    pub(crate) fn named(&self) -> Option<&str> {
        match self {
            Method::GetPrompt(params) => Some(&params.name),
            Method::CallTool(params) => Some(&params.name),
            Method::ReadResource { uri } => Some(uri),
            _ => None,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptParams {
    pub name: String,
    /// A handful of names: a sorted map costs less than hashing them.
    #[serde(default)]
    pub arguments: BTreeMap<String, String>,
    /// Answers to an earlier `input_required` result, keyed as we asked.
    #[serde(default)]
    pub input_responses: Option<Map<String, Value>>,
    /// The opaque state an earlier `input_required` result carried.
    #[serde(default)]
    pub request_state: Option<String>,
}

impl GetPromptParams {
    /// Takes the content of a form the client accepted as the answer to the input request
    /// `key`, as a modern client would send it back in `inputResponses`.
    pub(crate) fn answer_form(&mut self, key: &str, content: Map<String, Value>) {
        let result = serde_json::json!({"action": "accept", "content": content});
        self.input_responses
            .get_or_insert_with(Map::new)
            .insert(key.to_string(), result);
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct CallToolParams {
    pub name: String,
    /// The tool's input, checked by the tool (a misfit is the tool's error, not the
    /// request's).
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum CompletionRef {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionArgument {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct CompletionContext {
    #[serde(default)]
    pub arguments: HashMap<String, String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompleteParams {
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    pub argument: CompletionArgument,
    #[serde(default)]
    pub context: Option<CompletionContext>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListenFilter {
    #[serde(default)]
    pub prompts_list_changed: bool,
    #[serde(default)]
    pub resources_list_changed: bool,
    #[serde(default)]
    pub tools_list_changed: bool,
    #[serde(default)]
    pub resource_subscriptions: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ListenParams {
    pub notifications: ListenFilter,
}

#[derive(Debug, Default, Deserialize)]
struct CursorParams {
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
struct UriParams {
    uri: String,
}

#[derive(Debug, Deserialize)]
struct DirectoryParams {
    uri: String,
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
    /// Read leniently: a capability the server does not act on is none of its business.
    #[serde(default)]
    capabilities: Option<Value>,
}

/// The client capabilities the server acts on.
#[derive(Deserialize)]
struct ClientCapabilities {
    #[serde(default)]
    elicitation: Option<Value>,
    #[serde(default)]
    extensions: Option<Value>,
}

impl ClientCapabilities {
    /// Form elicitation: an `elicitation` object that is empty (form mode, as 2025-06-18
    /// declares it and 2025-11-25 keeps for compatibility) or has `form`.
    fn elicits_forms(&self) -> bool {
        matches!(&self.elicitation, Some(Value::Object(elicitation))
            if elicitation.is_empty() || elicitation.contains_key("form"))
    }
}

/// The members of a JSON-RPC message, each still the JSON text it was sent as: the line is
/// scanned once and only what a request needs is parsed further (building a whole
/// `Value` tree first would allocate for every key and string).
#[derive(Deserialize)]
struct Frame<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    /// `null` is kept as a member (an invalid id), not taken for a missing one.
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Params<'a>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member that is there, whatever its value (`Option`'s own rule reads `null` as absent).
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// A request's params, read member by member in the same scan as the rest of the line:
/// each value stays JSON text, parsed once more by the method's own params type, so the
/// params are never scanned a third time. `_meta` is the era's, read in that same scan
/// (`Meta`) rather than kept as text and scanned again.
#[derive(Default)]
enum Params<'a> {
    Object {
        /// Every member but `_meta`: no params type has a use for it.
        members: Vec<(Key<'a>, &'a RawValue)>,
        /// The first `_meta`, when there is one.
        meta: Option<Meta<'a>>,
    },
    /// Absent or `null`: no params.
    #[default]
    None,
    /// Anything but an object or `null`.
    NotAnObject,
}

/// A member name, borrowed from the line unless it had escapes.
struct Key<'a>(std::borrow::Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for KeyVisitor<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Key<'a>, E> {
                Ok(Key(std::borrow::Cow::Owned(text.to_string())))
            }
        }
        deserializer.deserialize_str(KeyVisitor(std::marker::PhantomData))
    }
}

/// A JSON value that is read further only when it is an object.
enum Shape<T> {
    Object(T),
    Null,
    /// Anything else, passed over.
    Other,
}

/// How an object's members are read into a value, for `shape`.
trait ReadObject<'de> {
    type Value;
    fn read<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error>;
}

/// Reads the next value as `reader` reads an object, or says what else it is.
fn shape<'de, D, R>(deserializer: D, reader: R) -> Result<Shape<R::Value>, D::Error>
where
    D: serde::Deserializer<'de>,
    R: ReadObject<'de>,
{
    struct ShapeVisitor<R>(R);
    impl<'de, R: ReadObject<'de>> serde::de::Visitor<'de> for ShapeVisitor<R> {
        type Value = Shape<R::Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            self.0.read(map).map(Shape::Object)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Shape::Null)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Shape::Other)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Shape::Other)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Shape::Other)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Shape::Other)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Shape::Other)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Shape::Other)
        }
    }
    deserializer.deserialize_any(ShapeVisitor(reader))
}

impl<'de: 'a, 'a> Deserialize<'de> for Params<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> ReadObject<'de> for Members<'a> {
            type Value = Params<'a>;
            fn read<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Params<'a>, A::Error> {
                let mut members = Vec::new();
                let mut meta = None;
                while let Some(key) = map.next_key::<Key<'a>>()? {
                    if key.0 == "_meta" {
                        let read = map.next_value::<Meta<'a>>()?;
                        meta.get_or_insert(read);
                    } else {
                        members.push((key, map.next_value::<&'a RawValue>()?));
                    }
                }
                Ok(Params::Object { members, meta })
            }
        }
        Ok(
            match shape(deserializer, Members(std::marker::PhantomData))? {
                Shape::Object(params) => params,
                Shape::Null => Params::None,
                Shape::Other => Params::NotAnObject,
            },
        )
    }
}

impl<'a> Params<'a> {
    fn members(&self) -> &[(Key<'a>, &'a RawValue)] {
        match self {
            Params::Object { members, .. } => members,
            Params::None | Params::NotAnObject => &[],
        }
    }

    fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.members()
            .iter()
            .find(|(key, _)| key.0 == name)
            .map(|(_, value)| *value)
    }

    /// The modern members of `_meta`, when it is an object naming each at most once.
    fn modern_meta(&self) -> Option<ModernMeta<'a>> {
        match self {
            Params::Object {
                meta: Some(Meta(modern)),
                ..
            } => *modern,
            _ => None,
        }
    }
}

/// `params._meta` as the era reads it: its modern members, or None when it is not an
/// object or names one of them twice (the request is then legacy).
struct Meta<'a>(Option<ModernMeta<'a>>);

/// The members of `_meta` that make a request modern, each still JSON text (None: absent).
#[derive(Clone, Copy)]
struct ModernMeta<'a> {
    version: Option<&'a RawValue>,
    capabilities: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Meta<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> ReadObject<'de> for Members<'a> {
            type Value = Option<ModernMeta<'a>>;
            fn read<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let (mut version, mut capabilities, mut twice) = (None, None, false);
                while let Some(key) = map.next_key::<Key<'a>>()? {
                    let member = match key.0.as_ref() {
                        META_VERSION => &mut version,
                        META_CAPABILITIES => &mut capabilities,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    twice |= member.is_some();
                    *member = Some(map.next_value::<&'a RawValue>()?);
                }
                Ok((!twice).then_some(ModernMeta {
                    version,
                    capabilities,
                }))
            }
        }
        Ok(Meta(
            match shape(deserializer, Members(std::marker::PhantomData))? {
                Shape::Object(modern) => modern,
                Shape::Null | Shape::Other => None,
            },
        ))
    }
}

fn parse_error(err: impl std::fmt::Display) -> Incoming {
    Incoming::Invalid {
        id: RequestId::null(),
        error: RpcError::new(
            code::PARSE_ERROR,
            format!("the line is not valid JSON ({err}); send one JSON-RPC message per line"),
        ),
    }
}

/// Whether raw JSON text is an object (it has been parsed, so its first byte says).
fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// Reads one line (without its newline) as a JSON-RPC message.
pub fn parse_line(line: &[u8]) -> Incoming {
    let starts_as_object = line
        .iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .is_some_and(|byte| *byte == b'{');
    if !starts_as_object {
        return match serde_json::from_slice::<IgnoredAny>(line) {
            Ok(_) => invalid_request(
                RequestId::null(),
                "a JSON-RPC message must be a JSON object",
            ),
            Err(err) => parse_error(err),
        };
    }
    // Checked as UTF-8 once, in one fast pass: every member captured below then needs no
    // check of its own.
    let line = match std::str::from_utf8(line) {
        Ok(line) => line,
        Err(err) => return parse_error(format!("it is not UTF-8: {err}")),
    };
    let frame: Frame = match serde_json::from_str(line) {
        Ok(frame) => frame,
        Err(err) if err.classify() == serde_json::error::Category::Data => {
            return invalid_request(RequestId::null(), &err.to_string());
        }
        Err(err) => return parse_error(err),
    };
    // Kept as sent: an integer of any size is echoed digit for digit.
    let id = frame.id.map(RequestId::read);
    let id_for_errors = match &id {
        Some(IdText::Id(id) | IdText::NotAnInteger(id)) => id.clone(),
        _ => RequestId::null(),
    };
    let is_version_2 = frame.jsonrpc.is_some_and(|raw| {
        raw.get() == "\"2.0\""
            || serde_json::from_str::<std::borrow::Cow<str>>(raw.get()).is_ok_and(|v| v == "2.0")
    });
    if !is_version_2 {
        return invalid_request(id_for_errors, "\"jsonrpc\" must be \"2.0\"");
    }
    let method = match frame.method {
        Some(raw) => match serde_json::from_str::<std::borrow::Cow<str>>(raw.get()) {
            Ok(method) => method,
            Err(_) => return invalid_request(id_for_errors, "\"method\" must be a string"),
        },
        None if id.is_some() => {
            let elicited = match (frame.result, frame.error) {
                (Some(result), _) => Elicited::of_result(result),
                (None, Some(error)) => Elicited::of_error(error),
                (None, None) => {
                    return invalid_request(id_for_errors, "the message has no \"method\"");
                }
            };
            return Incoming::Response(Reply {
                id: id_for_errors,
                elicited,
            });
        }
        None => return invalid_request(id_for_errors, "the message has no \"method\""),
    };
    let params = frame.params;
    let Some(id) = id else {
        return Incoming::Notification(notification(&method, &params));
    };
    let id = match id {
        IdText::Id(id) => id,
        IdText::NotAnInteger(id) => {
            return invalid_request(
                id,
                "\"id\" must be a string or an integer (this number has a fraction or an exponent)",
            );
        }
        IdText::Other => {
            return invalid_request(RequestId::null(), "\"id\" must be a string or a number");
        }
    };
    if let Params::NotAnObject = params {
        return Incoming::Invalid {
            id,
            error: RpcError::invalid_params("\"params\" must be an object"),
        };
    }
    let era = match era_of(&params, &method) {
        Ok(era) => era,
        Err(error) => return Incoming::Invalid { id, error },
    };
    // A modern request for a method only the legacy revisions define is not malformed but
    // not served (-32601), whatever its params hold.
    let legacy_only = ["initialize", "resources/subscribe", "resources/unsubscribe"];
    let typed = if matches!(era, Era::Modern { .. }) && legacy_only.contains(&method.as_ref()) {
        Ok(Method::Unknown(method.to_string()))
    } else {
        typed_method(&method, &params)
    };
    match typed {
        Ok(method) => Incoming::Request(Envelope {
            id,
            era,
            method,
            size: line.len(),
        }),
        Err(error) => Incoming::Invalid { id, error },
    }
}

fn notification(method: &str, params: &Params) -> Notification {
    let request_id = (method == "notifications/cancelled")
        .then(|| params.get("requestId"))
        .flatten()
        .and_then(|raw| match RequestId::read(raw) {
            IdText::Id(id) => Some(id),
            IdText::NotAnInteger(_) | IdText::Other => None,
        });
    match request_id {
        Some(request_id) => Notification::Cancelled { request_id },
        None => Notification::Other,
    }
}

fn invalid_request(id: RequestId, message: &str) -> Incoming {
    Incoming::Invalid {
        id,
        error: RpcError::new(code::INVALID_REQUEST, format!("invalid request: {message}")),
    }
}

/// The era of a request for `method` with these params. The client's capabilities are read
/// only where they change the answer: form elicitation for `prompts/get` (the one request
/// that can ask the client for input), extensions for the methods that depend on them.
fn era_of(params: &Params, method: &str) -> Result<Era, RpcError> {
    let Some(ModernMeta {
        version,
        capabilities,
    }) = params.modern_meta()
    else {
        return Ok(Era::Legacy);
    };
    if version.is_none() && capabilities.is_none() {
        return Ok(Era::Legacy);
    }
    // The version as clients write it, without escapes, is known without a parse.
    let plain = version.is_some_and(|raw| {
        raw.get()
            .strip_prefix('"')
            .and_then(|text| text.strip_suffix('"'))
            == Some(Revision::MODERN.as_str())
    });
    if !plain {
        let version = match version
            .map(|raw| serde_json::from_str::<std::borrow::Cow<str>>(raw.get()))
        {
            Some(Ok(version)) => version,
            Some(Err(_)) => {
                return Err(RpcError::invalid_params(format!(
                    "_meta[\"{META_VERSION}\"] must be a string such as \"{}\"",
                    Revision::MODERN.as_str()
                )));
            }
            None => {
                return Err(RpcError::invalid_params(format!(
                    "params._meta lacks \"{META_VERSION}\"; a modern request must name its protocol version (\"{}\")",
                    Revision::MODERN.as_str()
                )));
            }
        };
        if Revision::parse(&version) != Some(Revision::MODERN) {
            return Err(RpcError::unsupported_version(&version));
        }
    }
    match capabilities {
        Some(raw) if is_object(raw) => {
            let may_elicit = method == "prompts/get";
            let declared = (may_elicit || reads_extensions(method))
                .then(|| serde_json::from_str::<ClientCapabilities>(raw.get()).ok())
                .flatten();
            Ok(Era::Modern {
                elicits_forms: may_elicit && declared.as_ref().is_some_and(|c| c.elicits_forms()),
                extensions: declared
                    .map(|c| Extensions::declared_in(c.extensions.as_ref()))
                    .unwrap_or_default(),
            })
        }
        Some(_) => Err(RpcError::invalid_params(format!(
            "_meta[\"{META_CAPABILITIES}\"] must be an object ({{}} when the client has none)"
        ))),
        None => Err(RpcError::invalid_params(format!(
            "params._meta lacks \"{META_CAPABILITIES}\"; send {{}} when the client has no optional capabilities"
        ))),
    }
}

/// The method's params type, from the members read with the line.
fn typed<T: DeserializeOwned>(method: &str, params: &Params) -> Result<T, RpcError> {
    let members = params
        .members()
        .iter()
        .map(|(key, value)| (key.0.as_ref(), *value));
    T::deserialize(serde::de::value::MapDeserializer::new(members)).map_err(
        |err: serde_json::Error| {
            RpcError::invalid_params(format!("invalid params for {method}: {err}"))
        },
    )
}

fn typed_method(method: &str, params: &Params) -> Result<Method, RpcError> {
    Ok(match method {
        "server/discover" => Method::Discover,
        "initialize" => {
            let params = typed::<InitializeParams>(method, params)?;
            let declared = params.capabilities.and_then(|capabilities| {
                serde_json::from_value::<ClientCapabilities>(capabilities).ok()
            });
            Method::Initialize {
                elicits_forms: declared.as_ref().is_some_and(|c| c.elicits_forms()),
                extensions: declared
                    .map(|c| Extensions::declared_in(c.extensions.as_ref()))
                    .unwrap_or_default(),
                version: params.protocol_version,
            }
        }
        "ping" => Method::Ping,
        "prompts/list" => Method::ListPrompts {
            cursor: typed::<CursorParams>(method, params)?.cursor,
        },
        "prompts/get" => Method::GetPrompt(typed(method, params)?),
        "resources/list" => Method::ListResources {
            cursor: typed::<CursorParams>(method, params)?.cursor,
        },
        "resources/templates/list" => Method::ListTemplates {
            cursor: typed::<CursorParams>(method, params)?.cursor,
        },
        "resources/read" => Method::ReadResource {
            uri: typed::<UriParams>(method, params)?.uri,
        },
        "completion/complete" => Method::Complete(typed(method, params)?),
        "resources/subscribe" => Method::Subscribe {
            uri: typed::<UriParams>(method, params)?.uri,
        },
        "resources/unsubscribe" => Method::Unsubscribe {
            uri: typed::<UriParams>(method, params)?.uri,
        },
        "subscriptions/listen" => Method::Listen(typed(method, params)?),
        "tools/list" => Method::ListTools {
            cursor: typed::<CursorParams>(method, params)?.cursor,
        },
        "tools/call" => Method::CallTool(typed(method, params)?),
        "skills/list" => Method::ListSkills {
            cursor: typed::<CursorParams>(method, params)?.cursor,
        },
        "skills/get" => Method::GetSkill {
            uri: typed::<UriParams>(method, params)?.uri,
        },
        "resources/directory/read" => {
            let params = typed::<DirectoryParams>(method, params)?;
            Method::ReadDirectory {
                uri: params.uri,
                cursor: params.cursor,
            }
        }
        other => Method::Unknown(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Incoming {
        fn notification(self) -> Option<Notification> {
            match self {
                Incoming::Notification(notification) => Some(notification),
                _ => None,
            }
        }
    }

    fn error_code(line: &str) -> i64 {
        match parse_line(line.as_bytes()) {
            Incoming::Invalid { error, .. } => error.code,
            other => panic!("expected an error for {line}, got {other:?}"),
        }
    }

    #[test]
    fn malformed_lines_get_the_right_codes() {
        assert_eq!(error_code("{"), code::PARSE_ERROR);
        assert_eq!(error_code("[1]"), code::INVALID_REQUEST);
        assert_eq!(
            error_code(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            code::INVALID_REQUEST
        );
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":5}}"#),
            code::INVALID_PARAMS
        );
        assert_eq!(
            error_code(
                r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#
            ),
            code::UNSUPPORTED_VERSION
        );
    }

    #[test]
    fn members_are_read_as_json_rpc_means_them() {
        // A null id is an id that is wrong, not a notification: it is answered.
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            code::INVALID_REQUEST
        );
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#),
            code::INVALID_REQUEST
        );
        assert_eq!(
            error_code(r#"  [{"jsonrpc":"2.0"}]"#),
            code::INVALID_REQUEST
        );
        assert_eq!(error_code(r#"{"jsonrpc":"2.0","id":1,"#), code::PARSE_ERROR);
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#),
            code::INVALID_PARAMS
        );
        assert_eq!(
            error_code(r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            code::INVALID_REQUEST
        );
        // Escapes spell the same strings.
        let Incoming::Request(envelope) = parse_line(
            br#"{"jsonrpc":"2\u002e0","id":"a","method":"resources\/read","params":{"uri":"x:\/y"}}"#,
        ) else {
            panic!("an escaped request was not read");
        };
        assert_eq!(envelope.id.as_str(), "\"a\"");
        assert_eq!(envelope.era, Era::Legacy);
        assert!(matches!(envelope.method, Method::ReadResource { uri } if uri == "x:/y"));
        // `null` params are no params.
        assert!(matches!(
            parse_line(br#"{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":null}"#),
            Incoming::Request(Envelope {
                method: Method::ListPrompts { cursor: None },
                ..
            })
        ));
        assert_eq!(
            parse_line(
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
            )
            .notification(),
            Some(Notification::Cancelled {
                request_id: id_of(br#"{"id":4}"#)
            })
        );
        assert_eq!(
            parse_line(
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}"#,
            )
            .notification(),
            Some(Notification::Other)
        );
    }

    /// `_meta` is read in the same scan as the other params (`Meta`), and means what it
    /// meant when it was read again on its own: the first `_meta` decides, a request is
    /// modern only when it is an object naming each modern member at most once, however
    /// spelled, and it never reaches the method's params.
    #[test]
    fn the_era_is_read_from_the_first_meta_object() {
        let era = |params: &str| {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{params}}}"#
            );
            match parse_line(line.as_bytes()) {
                Incoming::Request(envelope) => {
                    assert!(matches!(envelope.method, Method::Complete(_)), "{params}");
                    Ok(envelope.era)
                }
                Incoming::Invalid { error, .. } => Err(error.code),
                other => panic!("{params}: {other:?}"),
            }
        };
        let modern = Ok(Era::Modern {
            elicits_forms: false,
            extensions: Extensions::default(),
        });
        let target =
            r#""ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"}"#;
        let version = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
        let capabilities = r#""io.modelcontextprotocol/clientCapabilities":{}"#;
        let meta = format!(r#""_meta":{{{version},"other":[1,{{"x":null}}],{capabilities}}}"#);
        assert_eq!(era(&format!("{{{target},{meta}}}")), modern);
        assert_eq!(era(&format!("{{{meta},{target}}}")), modern);
        let escaped = r#""_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol\/clientCapabilities":{}}"#;
        assert_eq!(
            era(&format!(r#"{{"\u005fmeta":0,{escaped},{target}}}"#)),
            Ok(Era::Legacy)
        );
        assert_eq!(era(&format!("{{{escaped},{target}}}")), modern);
        let spelled = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026\u002d07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        assert_eq!(era(&format!("{{{target},{spelled}}}")), modern);
        assert_eq!(era(&format!(r#"{{{target},{meta},"_meta":5}}"#)), modern);
        for not_modern in [
            r#""_meta":null"#.to_string(),
            r#""_meta":[{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}]"#.to_string(),
            r#""_meta":{"progressToken":1}"#.to_string(),
            format!(r#""_meta":{{{version},{version},{capabilities}}}"#),
            format!(r#""_meta":5,{meta}"#),
        ] {
            assert_eq!(
                era(&format!("{{{target},{not_modern}}}")),
                Ok(Era::Legacy),
                "{not_modern}"
            );
        }
        for (wrong, code) in [
            (
                format!(r#""_meta":{{{capabilities}}}"#),
                code::INVALID_PARAMS,
            ),
            (
                format!(
                    r#""_meta":{{"io.modelcontextprotocol/protocolVersion":null,{capabilities}}}"#
                ),
                code::INVALID_PARAMS,
            ),
            (format!(r#""_meta":{{{version}}}"#), code::INVALID_PARAMS),
            (
                format!(r#""_meta":{{{version},"io.modelcontextprotocol/clientCapabilities":[]}}"#),
                code::INVALID_PARAMS,
            ),
        ] {
            assert_eq!(era(&format!("{{{target},{wrong}}}")), Err(code), "{wrong}");
        }
    }

    #[test]
    fn notifications_and_responses_are_told_apart() {
        assert!(matches!(
            parse_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Notification(Notification::Other)
        ));
        assert!(matches!(
            parse_line(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Incoming::Response(Reply {
                elicited: Elicited::Failed(_),
                ..
            })
        ));
    }

    fn elicited(line: &str) -> Elicited {
        match parse_line(line.as_bytes()) {
            Incoming::Response(reply) => reply.elicited,
            other => panic!("expected a response for {line}, got {other:?}"),
        }
    }

    #[test]
    fn responses_to_elicitations_are_typed() {
        let accepted = elicited(
            r#"{"jsonrpc":"2.0","id":"promptshelf-1","result":{"action":"accept","content":{"a":"x","n":3}}}"#,
        );
        let Elicited::Accepted(content) = accepted else {
            panic!("not accepted: {accepted:?}");
        };
        assert_eq!(
            Value::Object(content),
            serde_json::json!({"a": "x", "n": 3})
        );
        assert_eq!(
            elicited(r#"{"jsonrpc":"2.0","id":"p","result":{"action":"decline"}}"#),
            Elicited::Declined
        );
        assert_eq!(
            elicited(r#"{"jsonrpc":"2.0","id":"p","result":{"action":"cancel"}}"#),
            Elicited::Cancelled
        );
        assert!(matches!(
            elicited(r#"{"jsonrpc":"2.0","id":"p","error":{"code":-1,"message":"no"}}"#),
            Elicited::Failed(words) if words.contains("-1") && words.contains("no")
        ));
        assert!(matches!(
            elicited(r#"{"jsonrpc":"2.0","id":"p","result":{"action":"maybe"}}"#),
            Elicited::Failed(words) if words.contains("maybe")
        ));
    }

    #[test]
    fn initialize_reads_form_elicitation() {
        let elicits = |capabilities: &str| {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{capabilities}}}}}"#
            );
            match parse_line(line.as_bytes()) {
                Incoming::Request(Envelope {
                    method: Method::Initialize { elicits_forms, .. },
                    ..
                }) => elicits_forms,
                other => panic!("not an initialize: {other:?}"),
            }
        };
        assert!(elicits(r#"{"elicitation":{}}"#));
        assert!(elicits(r#"{"elicitation":{"form":{}}}"#));
        assert!(!elicits(r#"{"elicitation":{"url":{}}}"#));
        assert!(!elicits(r#"{"elicitation":true}"#));
        assert!(!elicits(r#"{"sampling":{}}"#));
        assert!(!elicits("{}"));
    }

    #[test]
    fn extensions_are_read_from_initialize_and_from_a_modern_request() {
        let skills = r#"{"extensions":{"io.modelcontextprotocol/skills":{}}}"#;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{skills}}}}}"#
        );
        assert!(matches!(
            parse_line(line.as_bytes()),
            Incoming::Request(Envelope {
                method: Method::Initialize {
                    extensions: Extensions { skills: true },
                    ..
                },
                ..
            })
        ));
        let modern = |method: &str, capabilities: &str| {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}}}}}}}"#
            );
            match parse_line(line.as_bytes()) {
                Incoming::Request(envelope) => envelope.era.extensions().skills,
                other => panic!("not a request: {other:?}"),
            }
        };
        assert!(modern("skills/list", skills));
        assert!(modern("server/discover", skills));
        assert!(!modern("skills/list", "{}"));
        // Other methods do not read what they do not act on.
        assert!(!modern("prompts/list", skills));
    }

    /// Any JSON value, a few levels deep.
    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |n| n.is_finite())
                .prop_map(Value::from),
            "(?s).{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                proptest::collection::btree_map("[a-z_/.]{0,10}", inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever the bytes, a line is read to an answer or to nothing; never a panic.
        #[test]
        fn any_bytes_are_read_without_panicking(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let _ = parse_line(&bytes);
        }

        /// Requests of every method with params of any shape, `_meta` included.
        #[test]
        fn any_params_of_any_method_are_read_without_panicking(
            method in proptest::sample::select(vec![
                "server/discover", "initialize", "ping", "prompts/list", "prompts/get",
                "resources/list", "resources/templates/list", "resources/read",
                "completion/complete", "resources/subscribe", "resources/unsubscribe",
                "subscriptions/listen", "tools/list", "tools/call", "skills/list", "skills/get",
                "resources/directory/read",
                "notifications/cancelled",
            ]),
            params in json_value(),
            meta in json_value(),
            id in json_value(),
        ) {
            let mut params = params;
            if let Value::Object(map) = &mut params {
                map.insert("_meta".into(), meta);
            }
            let request = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            let _ = parse_line(request.to_string().as_bytes());
            let notification = serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params});
            let _ = parse_line(notification.to_string().as_bytes());
        }
    }
}
