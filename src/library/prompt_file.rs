//! A prompt file of our own format: its front matter keys (name, title, description, icons,
//! typed arguments) checked and, with the body split at its role markers, made a `Prompt`.

use serde::Deserialize;

use super::FileError;
use super::front_matter::{argument_line, key_line, parse_yaml};
use super::kept::Keys;
use super::roles::split_roles;
use super::summary::prompt_heading_and_paragraph;
use crate::model::{ArgumentType, Icon, Origin, Prompt, PromptArgument};

/// The keys of our prompt files; any other is kept with the prompt (`kept`).
pub(super) const PROMPT_KEYS: Keys = Keys {
    read: &["kind", "name", "title", "description", "icons", "arguments"],
    host: &[],
    ours: true,
};

#[derive(Debug, Default, Deserialize)]
struct PromptFront {
    #[serde(rename = "kind")]
    _kind: Option<String>,
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    #[serde(default)]
    icons: Vec<Icon>,
    #[serde(default)]
    arguments: Vec<ArgumentFront>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArgumentFront {
    name: String,
    title: Option<String>,
    description: Option<String>,
    #[serde(default)]
    required: bool,
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    values: Vec<Scalar>,
    completion: Option<String>,
    default: Option<Scalar>,
    pattern: Option<String>,
    max_length: Option<u64>,
    min: Option<f64>,
    max: Option<f64>,
}

/// A YAML scalar taken as the string MCP will send (`default: 5` means "5").
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Bool(bool),
    Integer(i64),
    Float(f64),
    Text(String),
}

impl Scalar {
    fn into_string(self) -> String {
        match self {
            Scalar::Bool(value) => value.to_string(),
            Scalar::Integer(value) => value.to_string(),
            Scalar::Float(value) => value.to_string(),
            Scalar::Text(value) => value,
        }
    }
}

/// The prompt a file of our format holds: `front` is its front matter, `body_line` the line
/// its body starts on.
pub(super) fn prompt_from(
    front: Option<&str>,
    default_name: &str,
    body: &str,
    body_line: u64,
    path: &str,
    origin: Origin,
) -> Result<Prompt, FileError> {
    let yaml = front;
    let front: PromptFront = match front {
        Some(yaml) => parse_yaml(path, yaml)?,
        None => PromptFront::default(),
    };
    // A name the author wrote must be one; a file's name is made one.
    let name_line = yaml.and_then(|yaml| key_line(yaml, "name"));
    let (heading, paragraph) = prompt_heading_and_paragraph(body);
    let mut arguments: Vec<PromptArgument> = Vec::with_capacity(front.arguments.len());
    for arg in front.arguments {
        // An error about an argument is shown at its `- name:` line.
        let line = yaml.and_then(|yaml| argument_line(yaml, &arg.name));
        let argument = argument_from(arg).map_err(|message| FileError::new(path, line, message))?;
        if arguments.iter().any(|seen| seen.name == argument.name) {
            return Err(FileError::new(
                path,
                line,
                format!(
                    "argument '{}' is declared twice; give each argument its own name",
                    argument.name
                ),
            ));
        }
        arguments.push(argument);
    }
    let prompt = Prompt {
        name: front.name.unwrap_or_else(|| sanitize_name(default_name)),
        title: front.title.or(heading),
        description: front.description.or(paragraph),
        icons: front.icons,
        arguments,
        messages: split_roles(body),
        origin,
        meta: Default::default(),
    };
    if prompt.messages.is_empty() {
        return Err(FileError::new(
            path,
            Some(body_line),
            "the prompt has no body; write the prompt text after the front matter",
        ));
    }
    validate_name(&prompt.name).map_err(|message| FileError::new(path, name_line, message))?;
    Ok(prompt)
}

/// A prompt name from a file name or another tool's `name:`: characters our names do not
/// allow (a space, say) become `-`, so `code review.prompt.md` is `code-review`.
pub(super) fn sanitize_name(name: &str) -> String {
    let cleaned: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "prompt".to_string()
    } else {
        cleaned
    }
}

/// A prompt name is what a host shows and sends back: keep it to one plain token.
pub(crate) fn validate_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if ok {
        return Ok(());
    }
    // A name that looks right says which letter is not what it looks like.
    let looks = super::hidden::lookalike(name)
        .map(|found| format!(" ({})", found.text))
        .unwrap_or_default();
    Err(format!(
        "prompt name '{name}' must be letters, digits, '-', '_', '.' or '/'{looks}; write it \
         as one word, e.g. code-review"
    ))
}

fn argument_from(arg: ArgumentFront) -> Result<PromptArgument, String> {
    let valid_identifier = arg
        .name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && arg
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid_identifier {
        return Err(format!(
            "argument name '{}' must start with a letter and hold only letters, digits and '_' (e.g. file_path)",
            arg.name
        ));
    }
    let kind = match arg.kind.as_deref() {
        None => ArgumentType::String,
        Some(name) => ArgumentType::parse(name).ok_or_else(|| {
            format!(
                "argument '{}' has unknown type '{name}'; use one of: {}",
                arg.name,
                ArgumentType::ALL.map(|kind| kind.as_str()).join(", ")
            )
        })?,
    };
    let values: Vec<String> = arg.values.into_iter().map(Scalar::into_string).collect();
    if kind == ArgumentType::Enum && values.is_empty() {
        return Err(format!(
            "enum argument '{}' lists no values; add `values: [a, b]`",
            arg.name
        ));
    }
    if let Some(pattern) = &arg.pattern
        && pattern.is_empty()
    {
        return Err(format!("argument '{}' has an empty pattern", arg.name));
    }
    Ok(PromptArgument {
        name: arg.name,
        title: arg.title,
        description: arg.description,
        required: arg.required,
        kind,
        default: arg.default.map(Scalar::into_string),
        values,
        pattern: arg.pattern,
        max_length: arg.max_length,
        min: arg.min,
        max: arg.max,
        completion: arg.completion,
    })
}
