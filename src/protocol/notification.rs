//! The notifications the server sends when the library changes: legacy ones (no id, no
//! subscription tag) and those on a modern `subscriptions/listen` stream, tagged with the
//! listen request's id, which the stream's acknowledgement opens.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::shape::META_SUBSCRIPTION;

/// What changed, as a notification names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed<'a> {
    Prompts,
    Resources,
    /// One resource's content (`notifications/resources/updated`).
    Resource(&'a str),
}

impl Changed<'_> {
    fn method(self) -> &'static str {
        match self {
            Changed::Prompts => "notifications/prompts/list_changed",
            Changed::Resources => "notifications/resources/list_changed",
            Changed::Resource(_) => "notifications/resources/updated",
        }
    }

    fn uri(self) -> Option<String> {
        match self {
            Changed::Resource(uri) => Some(uri.to_string()),
            Changed::Prompts | Changed::Resources => None,
        }
    }
}

/// A legacy change notification line.
pub fn notification(changed: Changed) -> Vec<u8> {
    match changed.uri() {
        Some(uri) => {
            line(&json!({"jsonrpc": "2.0", "method": changed.method(), "params": {"uri": uri}}))
        }
        None => line(&json!({"jsonrpc": "2.0", "method": changed.method()})),
    }
}

/// A change notification on a modern stream, tagged with the listen request's id.
pub fn stream_notification(changed: Changed, subscription: &Value) -> Vec<u8> {
    let mut params = Map::new();
    params.insert("_meta".into(), json!({ META_SUBSCRIPTION: subscription }));
    if let Some(uri) = changed.uri() {
        params.insert("uri".into(), json!(uri));
    }
    line(&json!({"jsonrpc": "2.0", "method": changed.method(), "params": params}))
}

/// The first message of a stream: which of the requested notifications will be sent.
/// (`toolsListChanged` is never honoured: there are no tools.)
pub fn acknowledged(
    subscription: &Value,
    prompts: bool,
    resources: bool,
    uris: &BTreeSet<String>,
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

fn line(message: &Value) -> Vec<u8> {
    let mut bytes = message.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}
