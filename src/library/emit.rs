//! The inverse of reading: an item written as a file of the folder format, such that reading
//! that file back at the same path gives the same item. `export` writes through here.
//!
//! Front matter carries only what the file cannot say by itself: a key whose value equals
//! its fallback (the name from the file name, the title from the first heading, the
//! description from the first paragraph, the MIME type from the file name) is left out.

use std::fmt::Write as _;

use super::front_matter::{opens_yaml_front_matter, split_front_matter};
use super::kept::Keys;
use super::media;
use super::paths::{Folder, has_extension, is_command_path, skill_file};
use super::prompt_file::PROMPT_KEYS;
use super::resource_file::RESOURCE_KEYS;
use super::summary::{heading_and_paragraph, prompt_heading_and_paragraph};
use super::yaml::{kept_field, list, number, quoted, scalar};
use crate::model::{
    ArgumentType, CompletionValue, Content, Icon, MessageTemplate, Meta, Prompt, PromptArgument,
    Resource, Role,
};

/// The text of a prompt file at `relative_path` that reads back as `prompt`.
pub(crate) fn prompt_file(prompt: &Prompt, relative_path: &str) -> String {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    let default_name = file_name
        .strip_suffix(".prompt.md")
        .or_else(|| file_name.strip_suffix(".md"))
        .unwrap_or(file_name);
    let body = prompt_body(&prompt.messages);
    let (heading, paragraph) = prompt_heading_and_paragraph(&body);
    let mut front = Yaml::default();
    // Outside `*.prompt.md` only `kind` makes a prompt; inside, it also keeps a body with a
    // `${...}` in it, or a kept key of VS Code's (`mode`), from being taken for a VS Code
    // prompt file.
    if !file_name.ends_with(".prompt.md") || body.contains("${") || !prompt.meta.is_empty() {
        front.field("kind", "prompt");
    }
    if prompt.name != default_name {
        front.field("name", &scalar(&prompt.name));
    }
    if prompt.title != heading {
        front.optional("title", prompt.title.as_deref());
    }
    if prompt.description != paragraph {
        front.optional("description", prompt.description.as_deref());
    }
    front.icons(&prompt.icons);
    if !prompt.arguments.is_empty() {
        front.line("arguments:");
        for argument in &prompt.arguments {
            front.argument(argument);
        }
    }
    front.kept(&prompt.meta, &PROMPT_KEYS);
    front.around(&body)
}

/// Role markers before every message but a first `user` one, which is where a body starts.
fn prompt_body(messages: &[MessageTemplate]) -> String {
    let mut body = String::new();
    for (at, message) in messages.iter().enumerate() {
        if at > 0 {
            body.push('\n');
        }
        if at > 0 || message.role != Role::User {
            let _ = writeln!(body, "<!-- {} -->", message.role.as_str());
        }
        body.push_str(&message.body);
        body.push('\n');
    }
    body
}

/// The bytes of a resource file at `relative_path` that reads back as `resource`. Only
/// markdown and text files have front matter; other files, and the files of a skill folder
/// (which are read as they are), are their content alone.
pub(crate) fn resource_file(resource: &Resource, relative_path: &str, folder: Folder) -> Vec<u8> {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    let text = match &resource.content {
        Content::Text(text) if carries_metadata(resource, relative_path, folder) => text,
        content => return content.as_bytes().to_vec(),
    };
    let (heading, paragraph) = if has_extension(file_name, &["md", "markdown"]) {
        heading_and_paragraph(text)
    } else {
        (None, None)
    };
    let mut front = Yaml::default();
    if is_command_path(relative_path, folder) {
        front.field("kind", "resource");
    }
    metadata(&mut front, resource, file_name, heading, paragraph);
    front.around(text).into_bytes()
}

/// Whether `resource_file` writes the resource's metadata into its file (as front matter):
/// otherwise the file is its bytes alone, and `metadata_file` holds what it cannot.
pub(crate) fn carries_metadata(resource: &Resource, relative_path: &str, folder: Folder) -> bool {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    resource.content.is_text()
        && has_extension(file_name, &["md", "markdown", "txt"])
        && skill_file(relative_path, folder).is_none()
}

/// The `NAME.meta.yaml` file (docs/format.md, "Metadata of other files") beside a resource
/// whose file cannot carry its metadata, or None when it has none to say.
pub(crate) fn metadata_file(resource: &Resource, relative_path: &str) -> Option<Vec<u8>> {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    let mut yaml = Yaml::default();
    metadata(&mut yaml, resource, file_name, None, None);
    (!yaml.lines.is_empty()).then(|| yaml.lines.into_bytes())
}

/// The metadata keys of a resource that differ from what its file would give it.
fn metadata(
    front: &mut Yaml,
    resource: &Resource,
    file_name: &str,
    heading: Option<String>,
    paragraph: Option<String>,
) {
    let info = &resource.info;
    let guessed = media::of(file_name, resource.content.as_bytes()).mime_type;
    if info.name != file_name {
        front.field("name", &scalar(&info.name));
    }
    if info.title != heading {
        front.optional("title", info.title.as_deref());
    }
    if info.description != paragraph {
        front.optional("description", info.description.as_deref());
    }
    if info.mime_type != guessed {
        front.field("mimeType", &scalar(&info.mime_type));
    }
    if !info.annotations.audience.is_empty() {
        let roles: Vec<String> = info
            .annotations
            .audience
            .iter()
            .map(|role| role.as_str().to_string())
            .collect();
        front.field("audience", &list(&roles));
    }
    if let Some(priority) = info.annotations.priority {
        front.field("priority", &number(priority));
    }
    front.icons(&info.icons);
    front.kept(&info.meta, &RESOURCE_KEYS);
}

/// A completion table's file: `.txt` (one value a line) when that can hold it, else `.csv`
/// with the `value,weight,context` header. Returns the extension and the bytes.
pub(crate) fn values_file(values: &[CompletionValue]) -> (&'static str, Vec<u8>) {
    let plain = values.iter().all(|value| {
        value.weight == 0.0
            && value.context.is_none()
            && !value.value.is_empty()
            && value.value.trim() == value.value
            && !value.value.starts_with('#')
            && !value.value.contains(['\n', '\r'])
    });
    let mut out = String::new();
    if plain {
        for value in values {
            out.push_str(&value.value);
            out.push('\n');
        }
        return ("txt", out.into_bytes());
    }
    out.push_str("value,weight,context\n");
    for value in values {
        let context = value
            .context
            .as_ref()
            .map(|(name, value)| format!("{name}={value}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{},{},{}",
            csv_field(&value.value),
            value.weight,
            csv_field(&context)
        );
    }
    ("csv", out.into_bytes())
}

/// Quoted when it holds a separator, a quote or a line break, or starts with `#` (which the
/// reader takes for a comment at the start of a line).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) || text.starts_with('#') {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Front matter being written: `key: value` lines in the order the format documents them.
#[derive(Default)]
struct Yaml {
    lines: String,
}

impl Yaml {
    fn line(&mut self, line: &str) {
        self.lines.push_str(line);
        self.lines.push('\n');
    }

    fn field(&mut self, key: &str, value: &str) {
        let _ = writeln!(self.lines, "{key}: {value}");
    }

    /// A missing value whose body gives a fallback cannot be written (the format has no
    /// "none"); `export` reads every file back and reports such a difference.
    fn optional(&mut self, key: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.field(key, &scalar(value));
        }
    }

    fn icons(&mut self, icons: &[Icon]) {
        if icons.is_empty() {
            return;
        }
        self.line("icons:");
        for icon in icons {
            let _ = writeln!(self.lines, "  - src: {}", scalar(&icon.src));
            if let Some(mime_type) = &icon.mime_type {
                let _ = writeln!(self.lines, "    mimeType: {}", scalar(mime_type));
            }
            if let Some(sizes) = &icon.sizes {
                let _ = writeln!(self.lines, "    sizes: {}", list(sizes));
            }
            if let Some(theme) = &icon.theme {
                let _ = writeln!(self.lines, "    theme: {}", scalar(theme));
            }
        }
    }

    /// The kept keys of another tool, after our own, as they were; a key of our own
    /// format (from a file another reader read, say a command's `title`) would mean
    /// something else here, and is left out.
    fn kept(&mut self, meta: &Meta, ours: &Keys) {
        for (key, value) in meta {
            if !ours.read.contains(&key.as_str()) {
                self.lines.push_str(&kept_field(key, value));
            }
        }
    }

    fn argument(&mut self, arg: &PromptArgument) {
        let _ = writeln!(self.lines, "  - name: {}", scalar(&arg.name));
        let mut field = |key: &str, value: String| {
            let _ = writeln!(self.lines, "    {key}: {value}");
        };
        if let Some(title) = &arg.title {
            field("title", scalar(title));
        }
        if let Some(description) = &arg.description {
            field("description", scalar(description));
        }
        if arg.required {
            field("required", "true".into());
        }
        if arg.kind != ArgumentType::String {
            field("type", arg.kind.as_str().into());
        }
        if !arg.values.is_empty() {
            field("values", list(&arg.values));
        }
        if let Some(completion) = &arg.completion {
            field("completion", scalar(completion));
        }
        if let Some(default) = &arg.default {
            // Always quoted: `default: 5` would be read back as the number, which is the same
            // string, but `default: yes` might not be.
            field("default", quoted(default));
        }
        if let Some(pattern) = &arg.pattern {
            field("pattern", scalar(pattern));
        }
        if let Some(max_length) = arg.max_length {
            field("max_length", max_length.to_string());
        }
        if let Some(min) = arg.min {
            field("min", number(min));
        }
        if let Some(max) = arg.max {
            field("max", number(max));
        }
    }

    /// The front matter (when there is any) and then `body`. A body that would itself read
    /// as front matter, closed or not, gets an empty one before it.
    fn around(self, body: &str) -> String {
        let (looks_like_front, _, _) = split_front_matter(body);
        if self.lines.is_empty()
            && looks_like_front.is_none()
            && !opens_yaml_front_matter(body)
            && !body.starts_with('\u{feff}')
        {
            return body.to_string();
        }
        format!("---\n{}---\n{body}", self.lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::{Collection, DEFAULT_SCHEME, Item, parse_file_in, parse_file_kept};
    use crate::model::{Annotations, Origin, ResourceInfo};

    fn collection() -> Collection {
        Collection {
            name: "docs".into(),
            scheme: DEFAULT_SCHEME.into(),
        }
    }

    fn read_prompt(path: &str, text: &str) -> Prompt {
        match parse_file_kept(&collection(), path, Folder::Plain, text.as_bytes()) {
            Ok(Some(Item::Prompt(prompt))) => prompt,
            other => panic!("{path} did not read as a prompt: {other:?}\n{text}"),
        }
    }

    #[test]
    fn a_prompt_with_every_field_reads_back_the_same() {
        let prompt = Prompt {
            // Another tool's keys, kept: VS Code's `mode` must not make the file VS Code's.
            meta: [
                ("mode", serde_json::json!("agent")),
                ("applyTo", serde_json::json!("**/*.rs")),
                ("tools", serde_json::json!(["a: b", "yes", 1.5, null])),
                ("enabled", serde_json::json!(false)),
                ("nested", serde_json::json!({"k": ["v"], "n": -3})),
            ]
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect(),
            name: "odd.name/x".into(),
            title: Some("A title: with \"quotes\"".into()),
            description: Some("yes".into()),
            icons: vec![Icon {
                src: "data:image/svg+xml;base64,AAAA".into(),
                mime_type: Some("image/svg+xml".into()),
                sizes: Some(vec!["48x48".into(), "any".into()]),
                theme: Some("dark".into()),
            }],
            arguments: vec![
                PromptArgument {
                    name: "code".into(),
                    title: Some("Code".into()),
                    description: Some("# not a comment\nsecond line".into()),
                    required: true,
                    ..PromptArgument::default()
                },
                PromptArgument {
                    name: "level".into(),
                    kind: ArgumentType::Enum,
                    values: vec!["1".into(), "true".into(), "a, b".into()],
                    default: Some("1".into()),
                    completion: Some("levels".into()),
                    ..PromptArgument::default()
                },
                PromptArgument {
                    name: "n".into(),
                    kind: ArgumentType::Number,
                    min: Some(0.5),
                    max: Some(1e20),
                    ..PromptArgument::default()
                },
                PromptArgument {
                    name: "s".into(),
                    pattern: Some("^[a-z]+\\d$".into()),
                    max_length: Some(20),
                    ..PromptArgument::default()
                },
            ],
            messages: vec![
                MessageTemplate {
                    role: Role::Assistant,
                    body: "---\nI start.\u{7f}".into(),
                },
                MessageTemplate {
                    role: Role::User,
                    body: "{{ code }}".into(),
                },
                MessageTemplate {
                    role: Role::User,
                    body: "again ${x}".into(),
                },
            ],
            origin: Origin::default(),
        };
        for path in ["p.prompt.md", "commands/p.md", "notes/p.md"] {
            let text = prompt_file(&prompt, path);
            let mut read = read_prompt(path, &text);
            read.origin = Origin::default();
            assert_eq!(read, prompt, "{path}:\n{text}");
        }
    }

    #[test]
    fn any_strings_in_front_matter_read_back_the_same() {
        const PIECES: [&str; 30] = [
            ":", "#", "-", "'", "\"", "\\", "\n", "yes", "null", "1", " ", "é", "\u{7f}", "\u{85}",
            "\u{2028}", "[", "]", "{", "}", ",", "*", "&", "!", "|", ">", "%", "@", "`", "\t", "a",
        ];
        let mut state: u64 = 0x1234_5678_9abc_def1;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut text = || {
            let length = (next() % 8) as usize;
            (0..length)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect::<String>()
        };
        for _ in 0..500 {
            let prompt = Prompt {
                meta: Default::default(),
                name: "p".into(),
                title: Some(text()),
                description: Some(text()),
                icons: vec![Icon {
                    src: text(),
                    mime_type: Some(text()),
                    sizes: Some(vec![text(), text()]),
                    theme: Some(text()),
                }],
                arguments: vec![PromptArgument {
                    name: "x".into(),
                    title: Some(text()),
                    description: Some(text()),
                    default: Some(text()),
                    values: vec![text(), text()],
                    completion: Some(text()),
                    // The format refuses an empty pattern.
                    pattern: Some(format!("a{}", text())),
                    ..PromptArgument::default()
                }],
                messages: vec![MessageTemplate {
                    role: Role::User,
                    body: "Body".into(),
                }],
                origin: Origin::default(),
            };
            let file = prompt_file(&prompt, "p.prompt.md");
            let mut read = read_prompt("p.prompt.md", &file);
            read.origin = Origin::default();
            assert_eq!(read, prompt, "{file}");
        }
    }

    #[test]
    fn fallbacks_are_left_out() {
        let prompt = read_prompt("review.prompt.md", "# Review\n\nLook at it.\n");
        assert_eq!(
            prompt_file(&prompt, "review.prompt.md"),
            "# Review\n\nLook at it.\n"
        );
    }

    #[test]
    fn resources_read_back_the_same() {
        let resource = Resource {
            info: ResourceInfo {
                meta: Default::default(),
                uri: "shelf://docs/commands/a.md".into(),
                name: "Another name".into(),
                title: Some("T".into()),
                description: Some("D".into()),
                mime_type: "text/x-special".into(),
                annotations: Annotations {
                    audience: vec![Role::User, Role::Assistant],
                    priority: Some(0.8),
                },
                icons: Vec::new(),
                origin: Origin {
                    collection: Some("docs".into()),
                    path: Some("commands/a.md".into()),
                    commit: None,
                },
            },
            content: Content::Text("---\nnot: front\n---\nbody".into()),
        };
        for folder in [Folder::Plain, Folder::Commands] {
            let bytes = resource_file(&resource, "commands/a.md", folder);
            let read = parse_file_in(&collection(), "commands/a.md", folder, &bytes);
            assert_eq!(
                read,
                Ok(Some(Item::Resource(resource.clone()))),
                "{}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }

    #[test]
    fn a_body_that_opens_unclosed_front_matter_keeps_an_empty_one_before_it() {
        let file = b"---\n---\n---\nnot: front matter\ntext\n";
        let read = parse_file_in(&collection(), "doc.md", Folder::Plain, file);
        let Ok(Some(Item::Resource(resource))) = read else {
            panic!("doc.md reads as a resource: {read:?}");
        };
        assert_eq!(
            resource.content,
            Content::Text("---\nnot: front matter\ntext\n".into())
        );
        let bytes = resource_file(&resource, "doc.md", Folder::Plain);
        assert_eq!(
            parse_file_in(&collection(), "doc.md", Folder::Plain, &bytes),
            Ok(Some(Item::Resource(resource))),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }

    #[test]
    fn tables_are_txt_when_they_can_be() {
        let plain = vec![CompletionValue {
            value: "rust".into(),
            weight: 0.0,
            context: None,
        }];
        assert_eq!(values_file(&plain), ("txt", b"rust\n".to_vec()));
        let rich = vec![CompletionValue {
            value: "#a,\"b\"".into(),
            weight: 2.5,
            context: Some(("language".into(), "python".into())),
        }];
        let (extension, bytes) = values_file(&rich);
        assert_eq!(extension, "csv");
        assert_eq!(
            crate::library::parse_values_csv("v.csv", &bytes).unwrap(),
            rich
        );
    }
}
