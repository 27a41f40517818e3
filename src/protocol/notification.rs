//! The notifications the server sends when the library changes: legacy ones (no id, no
//! subscription tag) and those on a modern `subscriptions/listen` stream, tagged with the
//! listen request's id, which the stream's acknowledgement opens.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::id::RequestId;

/// What changed, as a notification names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed<'a> {
    Prompts,
    Resources,
    /// The tool list (when a mirror's tools describe the prompts).
    Tools,
    /// One resource's content (`notifications/resources/updated`).
    Resource(&'a str),
}

impl Changed<'_> {
    fn method(self) -> &'static str {
        match self {
            Changed::Prompts => "notifications/prompts/list_changed",
            Changed::Resources => "notifications/resources/list_changed",
            Changed::Tools => "notifications/tools/list_changed",
            Changed::Resource(_) => "notifications/resources/updated",
        }
    }

    fn uri(self) -> Option<String> {
        match self {
            Changed::Resource(uri) => Some(uri.to_string()),
            Changed::Prompts | Changed::Resources | Changed::Tools => None,
        }
    }
}

/// A legacy change notification line.
pub(crate) fn notification(changed: Changed) -> Vec<u8> {
    match changed.uri() {
        Some(uri) => {
            line(&json!({"jsonrpc": "2.0", "method": changed.method(), "params": {"uri": uri}}))
        }
        None => line(&json!({"jsonrpc": "2.0", "method": changed.method()})),
    }
}

/// The `_meta` of a stream's message: the listen request's id, written as it was sent
/// (through `json!` a big integer id would become a float).
#[derive(Serialize)]
struct StreamMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    subscription: &'a RequestId,
}

#[derive(Serialize)]
struct StreamMessage<P: Serialize> {
    jsonrpc: &'static str,
    method: &'static str,
    params: P,
}

/// A change notification on a modern stream, tagged with the listen request's id.
pub(crate) fn stream_notification(changed: Changed, subscription: &RequestId) -> Vec<u8> {
    #[derive(Serialize)]
    struct Params<'a> {
        #[serde(rename = "_meta")]
        meta: StreamMeta<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    }
    line(&StreamMessage {
        jsonrpc: "2.0",
        method: changed.method(),
        params: Params {
            meta: StreamMeta { subscription },
            uri: changed.uri(),
        },
    })
}

/// Which list-changed notifications a stream will be sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Lists {
    pub prompts: bool,
    pub resources: bool,
    /// Honoured only when the tool list changes with the prompts (`serve --tools prompts`).
    pub tools: bool,
}

/// The first message of a stream: which of the requested notifications will be sent.
pub(crate) fn acknowledged(
    subscription: &RequestId,
    lists: Lists,
    uris: &BTreeSet<String>,
) -> Vec<u8> {
    #[derive(Serialize)]
    struct Params<'a> {
        #[serde(rename = "_meta")]
        meta: StreamMeta<'a>,
        notifications: Map<String, Value>,
    }
    let mut honoured = Map::new();
    if lists.prompts {
        honoured.insert("promptsListChanged".into(), json!(true));
    }
    if lists.resources {
        honoured.insert("resourcesListChanged".into(), json!(true));
    }
    if lists.tools {
        honoured.insert("toolsListChanged".into(), json!(true));
    }
    if !uris.is_empty() {
        honoured.insert("resourceSubscriptions".into(), json!(uris));
    }
    line(&StreamMessage {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: Params {
            meta: StreamMeta { subscription },
            notifications: honoured,
        },
    })
}

fn line(message: &impl Serialize) -> Vec<u8> {
    // Serializing plain members into a Vec cannot fail.
    let mut bytes = serde_json::to_vec(message).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}
