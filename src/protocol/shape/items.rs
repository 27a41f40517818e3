//! List entries as each revision writes them: prompts (with their arguments), resources
//! and resource templates. Older revisions lose `title` and `icons`; our own facts
//! (content hash, last change, provenance, argument type) go under our `_meta` prefix.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Shaper, iso};
use crate::arguments;
use crate::model::{
    Icon, PromptArgument, Provenance, StoredPrompt, StoredResource, StoredTemplate,
};
use crate::protocol::Revision;
use crate::store::hex;

/// Our own `_meta` keys, under our prefix as the specification asks.
pub(super) const META_HASH: &str = "promptshelf/contentHash";
pub(super) const META_LAST_MODIFIED: &str = "promptshelf/lastModified";
/// Where the item comes from (`model::Provenance`); a result's `_meta` names it too
/// (`ResultMeta`, a `prompts/get`).
pub(super) const META_PROVENANCE: &str = "promptshelf/provenance";

fn put(map: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    if let Some(value) = value {
        map.insert(key.into(), Value::String(value.to_string()));
    }
}

/// A prompt as a list entry, written straight from the stored prompt: a page holds up to
/// `--page-size` of them, each with its arguments, and building a `Value` tree for each
/// (then dropping it) cost more than writing it (callgrind, a first `prompts/list` page
/// of 50 prompts of the large bench's library: docs/benchmarks.md, "A shorter start").
#[derive(Serialize)]
pub(super) struct PromptEntry<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    /// As lists show it (`model::listed_description`).
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<std::borrow::Cow<'a, str>>,
    arguments: Vec<ArgumentEntry<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icons: Option<&'a [Icon]>,
    #[serde(rename = "_meta")]
    meta: PromptMeta,
}

/// A prompt's `_meta`: its content hash, last change and provenance, under `META_HASH`,
/// `META_LAST_MODIFIED` and `META_PROVENANCE` as a resource's contents carry them.
struct PromptMeta {
    content_hash: String,
    last_modified: String,
    provenance: Provenance,
}

impl Serialize for PromptMeta {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry(META_HASH, &self.content_hash)?;
        map.serialize_entry(META_LAST_MODIFIED, &self.last_modified)?;
        map.serialize_entry(META_PROVENANCE, &self.provenance)?;
        map.end()
    }
}

#[derive(Serialize)]
struct ArgumentEntry<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    description: String,
    required: bool,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<ArgumentMeta<'a>>,
}

/// The argument's type as a JSON Schema, under our prefix.
#[derive(Serialize)]
struct ArgumentMeta<'a> {
    #[serde(rename = "promptshelf/type")]
    schema: arguments::ArgumentSchema<'a>,
}

impl Shaper<'_> {
    /// Where an item comes from, as this caller is served it: with the label of the release
    /// channel it is served on, when it is.
    pub(super) fn provenance(&self, provenance: Provenance) -> Provenance {
        Provenance {
            label: self.label.map(str::to_string),
            ..provenance
        }
    }

    pub(super) fn prompt<'a>(&self, stored: &'a StoredPrompt) -> PromptEntry<'a> {
        let prompt = &stored.prompt;
        let titles = self.revision.has_titles_and_links();
        PromptEntry {
            name: &prompt.name,
            title: prompt.title.as_deref().filter(|_| titles),
            description: prompt
                .description
                .as_deref()
                .map(crate::model::listed_description),
            arguments: prompt.arguments.iter().map(|a| self.argument(a)).collect(),
            icons: self.icons(&prompt.icons),
            meta: PromptMeta {
                content_hash: hex(&stored.content_hash),
                last_modified: iso(stored.last_modified),
                provenance: self.provenance(stored.provenance()),
            },
        }
    }

    fn argument<'a>(&self, arg: &'a PromptArgument) -> ArgumentEntry<'a> {
        ArgumentEntry {
            name: &arg.name,
            title: arg
                .title
                .as_deref()
                .filter(|_| self.revision.has_titles_and_links()),
            description: arguments::describe(arg),
            required: arg.required,
            meta: (self.revision >= Revision::V2025_06_18).then(|| ArgumentMeta {
                schema: arguments::json_schema(arg),
            }),
        }
    }

    /// A list entry's icons, when it has any and the revision shows them.
    fn icons<'a>(&self, icons: &'a [Icon]) -> Option<&'a [Icon]> {
        (self.revision.has_icons() && !icons.is_empty()).then_some(icons)
    }

    fn add_icons(&self, map: &mut Map<String, Value>, icons: &[Icon]) {
        if let Some(icons) = self.icons(icons) {
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
            json!({
                META_HASH: hex(&stored.content_hash),
                META_PROVENANCE: self.provenance(stored.provenance()),
            }),
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
        map.insert(
            "_meta".into(),
            json!({ META_PROVENANCE: self.provenance(stored.provenance()) }),
        );
        Value::Object(map)
    }
}
