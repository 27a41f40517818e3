//! From one line of input to a typed request: JSON-RPC validity, the era of the request
//! (modern `_meta` or legacy), and the method's parameters.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{Revision, RpcError, code};

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// What one line of input is.
#[derive(Debug)]
pub enum Incoming {
    Request(Envelope),
    Notification {
        method: String,
        params: Value,
    },
    /// A response from the client; this server sends no requests, so there is nothing to do.
    Response,
    /// Not something that can be served; answer with this error (`id` null when unknown).
    Invalid {
        id: Value,
        error: RpcError,
    },
}

/// A request that parsed: its id, its era and its typed method.
#[derive(Debug)]
pub struct Envelope {
    pub id: Value,
    pub era: Era,
    pub method: Method,
}

/// Which era a request belongs to; decided by its `_meta`, never by earlier requests.
#[derive(Debug, Clone, PartialEq)]
pub enum Era {
    /// Carried `io.modelcontextprotocol/protocolVersion`: served statelessly.
    Modern { capabilities: Value },
    /// No modern `_meta`: served under the revision `initialize` negotiated.
    Legacy,
}

impl Era {
    /// Whether the client declared form elicitation in this request's capabilities.
    pub fn can_elicit_forms(&self) -> bool {
        match self {
            Era::Modern { capabilities } => match capabilities.get("elicitation") {
                Some(Value::Object(elicitation)) => {
                    // An empty object means form mode, for compatibility with older clients.
                    elicitation.is_empty() || elicitation.contains_key("form")
                }
                _ => false,
            },
            Era::Legacy => false,
        }
    }
}

#[derive(Debug)]
pub enum Method {
    Discover,
    Initialize {
        version: String,
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
    /// A method this server does not serve (tools, sampling, ...): -32601.
    Unknown(String),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptParams {
    pub name: String,
    #[serde(default)]
    pub arguments: HashMap<String, String>,
    /// Answers to an earlier `input_required` result, keyed as we asked.
    #[serde(default)]
    pub input_responses: Option<Map<String, Value>>,
    /// The opaque state an earlier `input_required` result carried.
    #[serde(default)]
    pub request_state: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionRef {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

#[derive(Debug, Deserialize)]
pub struct CompletionArgument {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Default, Deserialize)]
pub struct CompletionContext {
    #[serde(default)]
    pub arguments: HashMap<String, String>,
}

#[derive(Debug, Deserialize)]
pub struct CompleteParams {
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    pub argument: CompletionArgument,
    #[serde(default)]
    pub context: Option<CompletionContext>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenFilter {
    #[serde(default)]
    pub prompts_list_changed: bool,
    #[serde(default)]
    pub resources_list_changed: bool,
    #[serde(default)]
    pub resource_subscriptions: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct ListenParams {
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
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
}

/// Reads one line (without its newline) as a JSON-RPC message.
pub fn parse_line(line: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(err) => {
            return Incoming::Invalid {
                id: Value::Null,
                error: RpcError::new(
                    code::PARSE_ERROR,
                    format!(
                        "the line is not valid JSON ({err}); send one JSON-RPC message per line"
                    ),
                ),
            };
        }
    };
    let Value::Object(mut object) = value else {
        return invalid_request(Value::Null, "a JSON-RPC message must be a JSON object");
    };
    let id = object.remove("id");
    let id_for_errors = match &id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid_request(id_for_errors, "\"jsonrpc\" must be \"2.0\"");
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => return invalid_request(id_for_errors, "\"method\" must be a string"),
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            return Incoming::Response;
        }
        None => return invalid_request(id_for_errors, "the message has no \"method\""),
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    let Some(id) = id else {
        return Incoming::Notification { method, params };
    };
    if !matches!(id, Value::String(_) | Value::Number(_)) {
        return invalid_request(Value::Null, "\"id\" must be a string or a number");
    }
    if !matches!(params, Value::Object(_) | Value::Null) {
        return Incoming::Invalid {
            id,
            error: RpcError::invalid_params("\"params\" must be an object"),
        };
    }
    let era = match era_of(&params) {
        Ok(era) => era,
        Err(error) => return Incoming::Invalid { id, error },
    };
    match typed_method(&method, params) {
        Ok(method) => Incoming::Request(Envelope { id, era, method }),
        Err(error) => Incoming::Invalid { id, error },
    }
}

fn invalid_request(id: Value, message: &str) -> Incoming {
    Incoming::Invalid {
        id,
        error: RpcError::new(code::INVALID_REQUEST, format!("invalid request: {message}")),
    }
}

fn era_of(params: &Value) -> Result<Era, RpcError> {
    let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
        return Ok(Era::Legacy);
    };
    let version = meta.get(META_VERSION);
    let capabilities = meta.get(META_CAPABILITIES);
    if version.is_none() && capabilities.is_none() {
        return Ok(Era::Legacy);
    }
    let version = match version {
        Some(Value::String(version)) => version,
        Some(_) => {
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
    if Revision::parse(version) != Some(Revision::MODERN) {
        return Err(RpcError::unsupported_version(version));
    }
    match capabilities {
        Some(capabilities @ Value::Object(_)) => Ok(Era::Modern {
            capabilities: capabilities.clone(),
        }),
        Some(_) => Err(RpcError::invalid_params(format!(
            "_meta[\"{META_CAPABILITIES}\"] must be an object ({{}} when the client has none)"
        ))),
        None => Err(RpcError::invalid_params(format!(
            "params._meta lacks \"{META_CAPABILITIES}\"; send {{}} when the client has no optional capabilities"
        ))),
    }
}

fn typed<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, RpcError> {
    let params = match params {
        Value::Null => Value::Object(Map::new()),
        params => params,
    };
    serde_json::from_value(params)
        .map_err(|err| RpcError::invalid_params(format!("invalid params for {method}: {err}")))
}

fn typed_method(method: &str, params: Value) -> Result<Method, RpcError> {
    Ok(match method {
        "server/discover" => Method::Discover,
        "initialize" => Method::Initialize {
            version: typed::<InitializeParams>(method, params)?.protocol_version,
        },
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
        other => Method::Unknown(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn notifications_and_responses_are_told_apart() {
        assert!(matches!(
            parse_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Notification { .. }
        ));
        assert!(matches!(
            parse_line(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Incoming::Response
        ));
    }
}
