//! List entries as each revision writes them: prompts (with their arguments), resources
//! and resource templates. Older revisions lose `title` and `icons`; our own facts
//! (content hash, last change, argument type) go under our `_meta` prefix.

use serde_json::{Map, Value, json};

use super::{Shaper, iso};
use crate::arguments;
use crate::model::{Icon, PromptArgument, StoredPrompt, StoredResource, StoredTemplate};
use crate::protocol::Revision;
use crate::store::hex;

/// Our own `_meta` keys, under our prefix as the specification asks.
pub(super) const META_HASH: &str = "promptshelf/contentHash";
pub(super) const META_LAST_MODIFIED: &str = "promptshelf/lastModified";
const META_ARGUMENT_TYPE: &str = "promptshelf/type";

fn put(map: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    if let Some(value) = value {
        map.insert(key.into(), Value::String(value.to_string()));
    }
}

impl Shaper<'_> {
    pub(super) fn prompt(&self, stored: &StoredPrompt) -> Value {
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
    pub(super) fn annotations(&self, stored: &StoredResource) -> Option<Value> {
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
        (!annotations.is_empty()).then_some(Value::Object(annotations))
    }

    /// The fields a `Resource` and a `resource_link` share.
    pub(super) fn resource_fields(&self, stored: &StoredResource) -> Map<String, Value> {
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
        if let Some(annotations) = self.annotations(stored) {
            map.insert("annotations".into(), annotations);
        }
        self.add_icons(&mut map, &info.icons);
        map
    }

    pub(super) fn resource(&self, stored: &StoredResource) -> Value {
        let mut map = self.resource_fields(stored);
        map.insert(
            "_meta".into(),
            json!({ META_HASH: hex(&stored.content_hash) }),
        );
        Value::Object(map)
    }

    pub(super) fn template(&self, stored: &StoredTemplate) -> Value {
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
}
