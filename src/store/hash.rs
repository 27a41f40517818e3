//! Content hashes: blake3 over a canonical form of each item, so that equal content (whatever
//! path it came by, and wherever it came from) hashes equal and `lastModified` moves only
//! when something a client can see has changed.

use crate::model::{ContentHash, Icon, Meta, Prompt, Resource, ResourceTemplate};

/// Feeds fields into a hasher with their lengths, so that ("ab","c") and ("a","bc") differ.
struct Canonical(blake3::Hasher);

impl Canonical {
    fn new(kind: &str) -> Self {
        let mut canonical = Canonical(blake3::Hasher::new());
        canonical.text(kind);
        canonical
    }

    fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    fn text(&mut self, text: &str) -> &mut Self {
        self.bytes(text.as_bytes())
    }

    fn opt(&mut self, text: Option<&str>) -> &mut Self {
        match text {
            Some(text) => self.bytes(b"1").text(text),
            None => self.bytes(b"0"),
        }
    }

    /// A list of values as one field: joined by newlines, each with its backslashes and
    /// newlines escaped, so that ["a\nb"] and ["a", "b"] differ while a list without either
    /// hashes as it always has (stored hashes stay valid).
    fn values(&mut self, values: &[String]) -> &mut Self {
        let mut joined = String::new();
        for (index, value) in values.iter().enumerate() {
            if index > 0 {
                joined.push('\n');
            }
            for c in value.chars() {
                match c {
                    '\\' => joined.push_str("\\\\"),
                    '\n' => joined.push_str("\\n"),
                    c => joined.push(c),
                }
            }
        }
        self.text(&joined)
    }

    fn icons(&mut self, icons: &[Icon]) -> &mut Self {
        let json = serde_json::to_string(icons).unwrap_or_default();
        self.text(&json)
    }

    /// Kept front matter, only when there is some, so that the hashes of items without it
    /// stay as they were.
    fn meta(&mut self, meta: &Meta) -> &mut Self {
        if !meta.is_empty() {
            self.text("meta")
                .text(&serde_json::to_string(meta).unwrap_or_default());
        }
        self
    }

    fn finish(&self) -> ContentHash {
        *self.0.finalize().as_bytes()
    }
}

pub fn hash_prompt(prompt: &Prompt) -> ContentHash {
    let mut h = Canonical::new("prompt");
    h.text(&prompt.name)
        .opt(prompt.title.as_deref())
        .opt(prompt.description.as_deref())
        .icons(&prompt.icons);
    for arg in &prompt.arguments {
        h.text("argument")
            .text(&arg.name)
            .opt(arg.title.as_deref())
            .opt(arg.description.as_deref())
            .text(if arg.required { "required" } else { "optional" })
            .text(arg.kind.as_str())
            .opt(arg.default.as_deref())
            .values(&arg.values)
            .opt(arg.pattern.as_deref())
            .opt(arg.max_length.map(|n| n.to_string()).as_deref())
            .opt(arg.min.map(|n| n.to_string()).as_deref())
            .opt(arg.max.map(|n| n.to_string()).as_deref())
            .opt(arg.completion.as_deref());
    }
    for message in &prompt.messages {
        h.text("message")
            .text(message.role.as_str())
            .text(&message.body);
    }
    h.meta(&prompt.meta);
    h.finish()
}

/// The blob's own hash (what `blobs` is keyed by) is the plain blake3 of the bytes; this one
/// also covers the metadata a client sees.
pub(crate) fn hash_resource(resource: &Resource) -> ContentHash {
    let info = &resource.info;
    let mut h = Canonical::new("resource");
    h.text(&info.uri)
        .text(&info.name)
        .opt(info.title.as_deref())
        .opt(info.description.as_deref())
        .text(&info.mime_type)
        .text(&info.annotations.audience_names().join(","))
        .opt(info.annotations.priority.map(|p| p.to_string()).as_deref())
        .icons(&info.icons)
        .text(if resource.content.is_text() {
            "text"
        } else {
            "binary"
        })
        .bytes(blake3::hash(resource.content.as_bytes()).as_bytes())
        .meta(&info.meta);
    h.finish()
}

pub(crate) fn hash_template(template: &ResourceTemplate) -> ContentHash {
    let mut h = Canonical::new("template");
    h.text(&template.uri_template)
        .text(&template.name)
        .opt(template.title.as_deref())
        .opt(template.description.as_deref())
        .opt(template.mime_type.as_deref())
        .icons(&template.icons);
    // The store keeps variables in name order, whatever order they were given in.
    let mut completions: Vec<&(String, String)> = template.completions.iter().collect();
    completions.sort();
    for (variable, table) in completions {
        h.text(variable).text(table);
    }
    h.finish()
}

/// Lower-case hex, for showing hashes to people and in `_meta`.
pub(crate) fn hex(hash: &ContentHash) -> String {
    blake3::Hash::from_bytes(*hash).to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ArgumentType, Origin, PromptArgument};

    fn choosing(values: &[&str]) -> Prompt {
        Prompt {
            meta: Default::default(),
            name: "pick".into(),
            title: None,
            description: None,
            icons: Vec::new(),
            arguments: vec![PromptArgument {
                name: "language".into(),
                kind: ArgumentType::Enum,
                values: values.iter().map(|v| v.to_string()).collect(),
                ..PromptArgument::default()
            }],
            messages: Vec::new(),
            origin: Origin::default(),
        }
    }

    #[test]
    fn enum_values_with_newlines_or_backslashes_hash_apart() {
        let hash = |values: &[&str]| hash_prompt(&choosing(values));
        assert_ne!(hash(&["a\nb"]), hash(&["a", "b"]));
        assert_ne!(hash(&["a\\nb"]), hash(&["a\nb"]));
        assert_ne!(hash(&["a\\", "b"]), hash(&["a\\\nb"]));
    }

    #[test]
    fn plain_enum_values_hash_as_they_did_before() {
        // The hash of this prompt when enum values were joined without escapes: the stored
        // hashes of existing libraries must stay valid.
        assert_eq!(
            hex(&hash_prompt(&choosing(&["rust", "python"]))),
            "7a71a71770939b387eaaf55ab2efa8027989dbcceb3ba81eb7f6e464b51d28bd"
        );
    }
}
