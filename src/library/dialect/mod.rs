//! The prompt files other tools keep, read as prompts of ours: Claude Code commands and VS Code
//! prompt files. Their placeholders become typed arguments substituted by minijinja, and
//! everything else in the body is escaped so that it comes out exactly as written.
//!
//! docs/format.md ("Prompt files from other tools") is the user-facing statement of both
//! mappings; keep the two in step.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::{FileError, heading_and_paragraph, role_marker, split_roles};
use crate::model::{Origin, Prompt, PromptArgument};

/// What a prompt file needs besides its front matter and body.
pub(super) struct Source<'a> {
    pub path: &'a str,
    /// The prompt's name unless the front matter gives one.
    pub default_name: &'a str,
    pub body_line: u64,
    pub origin: Origin,
}

// ---------------------------------------------------------------------------------------
// Claude Code commands
// ---------------------------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
struct ClaudeFront {
    description: Option<String>,
    #[serde(rename = "argument-hint")]
    argument_hint: Option<Hint>,
}

/// `argument-hint: [file] [focus]` is, to YAML, a list followed by junk, and `[file]` alone is
/// a one-item list; Claude Code reads both as text, so both are accepted.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Hint {
    Text(String),
    List(Vec<String>),
}

impl ClaudeFront {
    /// Claude Code's own reader is forgiving, so a front matter that is not valid YAML is read
    /// line by line as `key: value` rather than refused.
    fn read(yaml: Option<&str>) -> ClaudeFront {
        let Some(yaml) = yaml else {
            return ClaudeFront::default();
        };
        if yaml.trim().is_empty() {
            return ClaudeFront::default();
        }
        if let Ok(front) = serde_saphyr::from_str::<ClaudeFront>(yaml) {
            return front;
        }
        let mut front = ClaudeFront::default();
        for line in yaml.lines() {
            if line.starts_with([' ', '\t', '#']) {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = unquote(value.trim());
            match key.trim() {
                "description" => front.description = Some(value.to_string()),
                "argument-hint" => front.argument_hint = Some(Hint::Text(value.to_string())),
                _ => {}
            }
        }
        front
    }
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

/// The names an argument hint gives, in order: the words inside `[...]` or `<...>`, or else
/// the words of the hint.
fn hint_words(hint: &Hint) -> (String, Vec<String>) {
    match hint {
        Hint::List(items) => {
            let text = items
                .iter()
                .map(|item| format!("[{item}]"))
                .collect::<Vec<_>>()
                .join(" ");
            (text, items.clone())
        }
        Hint::Text(text) => {
            let mut words = Vec::new();
            let mut rest = text.as_str();
            while let Some(open) = rest.find(['[', '<']) {
                let close = if rest[open..].starts_with('[') {
                    ']'
                } else {
                    '>'
                };
                let Some(length) = rest[open + 1..].find(close) else {
                    break;
                };
                words.push(rest[open + 1..open + 1 + length].trim().to_string());
                rest = &rest[open + 1 + length + 1..];
            }
            if words.is_empty() {
                words = text.split_whitespace().map(str::to_string).collect();
            }
            (text.clone(), words)
        }
    }
}

/// A Claude Code command (`.claude/commands/NAME.md`): `$ARGUMENTS` becomes the argument
/// `arguments`, `$1`..`$9` become `arg1`..`arg9` or the names the argument hint gives.
pub(super) fn claude_command(
    front: Option<&str>,
    body: &str,
    source: Source,
) -> Result<Prompt, FileError> {
    let front = ClaudeFront::read(front);
    let (hint_text, hint_names) = match &front.argument_hint {
        Some(hint) => {
            let (text, words) = hint_words(hint);
            (Some(text), words)
        }
        None => (None, Vec::new()),
    };
    // First pass: which placeholders the body uses, so that names can be chosen before the
    // body is rewritten.
    let mut uses_all = false;
    let mut positions = [false; 9];
    scan_claude(body, |placeholder| match placeholder {
        ClaudePlaceholder::All => uses_all = true,
        ClaudePlaceholder::Position(n) => positions[n - 1] = true,
    });
    let mut arguments = Vec::new();
    if uses_all {
        arguments.push(PromptArgument {
            name: "arguments".to_string(),
            description: Some(
                hint_text
                    .clone()
                    .unwrap_or_else(|| "The text after the command".to_string()),
            ),
            ..PromptArgument::default()
        });
    }
    let mut position_names: [String; 9] = Default::default();
    for (index, used) in positions.iter().enumerate() {
        if !used {
            continue;
        }
        let hinted = hint_names
            .get(index)
            .and_then(|word| identifier(word))
            .filter(|name| !arguments.iter().any(|arg| &arg.name == name));
        let mut name = hinted.unwrap_or_else(|| format!("arg{}", index + 1));
        // A hint may name a later position's default (`[arg2] [x]`): keep names apart.
        while arguments.iter().any(|arg| arg.name == name) {
            name.push('_');
        }
        let description = match hint_names.get(index) {
            Some(word) if !word.is_empty() => format!("{word} (argument {})", index + 1),
            _ => format!("Argument {} of the command", index + 1),
        };
        position_names[index] = name.clone();
        arguments.push(PromptArgument {
            name,
            description: Some(description),
            ..PromptArgument::default()
        });
    }
    let template = translate(body, |rest| {
        if let Some(after) = rest.strip_prefix("$ARGUMENTS") {
            return Some((var("arguments"), rest.len() - after.len()));
        }
        let n = claude_position(rest)?;
        Some((var(&position_names[n - 1]), 2))
    });
    finish(
        front.description,
        arguments,
        body,
        &template,
        source.default_name,
        source,
    )
}

enum ClaudePlaceholder {
    All,
    Position(usize),
}

fn scan_claude(body: &str, mut found: impl FnMut(ClaudePlaceholder)) {
    for (at, _) in body.match_indices('$') {
        let rest = &body[at..];
        if rest.starts_with("$ARGUMENTS") {
            found(ClaudePlaceholder::All);
        } else if let Some(n) = claude_position(rest) {
            found(ClaudePlaceholder::Position(n));
        }
    }
}

/// `$1`..`$9` not followed by another digit (`$100` is an amount of money, not `$1` + "00").
fn claude_position(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    if bytes.first() != Some(&b'$') {
        return None;
    }
    let digit = *bytes.get(1)?;
    if !(b'1'..=b'9').contains(&digit) || bytes.get(2).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    Some(usize::from(digit - b'0'))
}

// ---------------------------------------------------------------------------------------
// VS Code prompt files
// ---------------------------------------------------------------------------------------

/// Front matter keys only VS Code prompt files use.
const VSCODE_KEYS: [&str; 5] = ["mode", "agent", "model", "tools", "argument-hint"];
/// Front matter keys only our own prompt files use.
const OUR_KEYS: [&str; 4] = ["kind", "title", "icons", "arguments"];

/// VS Code's editor variables: (variable, argument, description).
const VSCODE_VARIABLES: [(&str, &str, &str); 8] = [
    ("selection", "selection", "The selected text"),
    ("selectedText", "selection", "The selected text"),
    ("file", "file", "The path of the current file"),
    (
        "fileBasename",
        "file_basename",
        "The name of the current file",
    ),
    (
        "fileBasenameNoExtension",
        "file_basename_no_extension",
        "The name of the current file without its extension",
    ),
    (
        "fileDirname",
        "file_dirname",
        "The folder of the current file",
    ),
    (
        "workspaceFolder",
        "workspace_folder",
        "The path of the workspace folder",
    ),
    (
        "workspaceFolderBasename",
        "workspace_folder_basename",
        "The name of the workspace folder",
    ),
];

/// Whether a `*.prompt.md` file is VS Code's rather than ours: it has none of our own keys,
/// and it has a key only VS Code uses or a VS Code placeholder in its body.
pub(super) fn is_vscode_prompt(front: Option<&str>, body: &str) -> bool {
    let keys: Vec<String> = match front {
        Some(yaml) if !yaml.trim().is_empty() => {
            match serde_saphyr::from_str::<HashMap<String, IgnoredAny>>(yaml) {
                Ok(map) => map.into_keys().collect(),
                // Broken YAML: let our own reader report where.
                Err(_) => return false,
            }
        }
        _ => Vec::new(),
    };
    if keys.iter().any(|key| OUR_KEYS.contains(&key.as_str())) {
        return false;
    }
    keys.iter().any(|key| VSCODE_KEYS.contains(&key.as_str()))
        || body
            .match_indices("${")
            .any(|(at, _)| vscode_placeholder(&body[at..]).is_some())
}

#[derive(Debug, Default, Deserialize)]
struct VsCodeFront {
    name: Option<String>,
    description: Option<String>,
    // The keys below only steer VS Code's own chat; they are read so that their presence is
    // accepted, and otherwise left out.
    #[serde(rename = "argument-hint")]
    _argument_hint: Option<IgnoredAny>,
    #[serde(rename = "mode")]
    _mode: Option<IgnoredAny>,
    #[serde(rename = "agent")]
    _agent: Option<IgnoredAny>,
    #[serde(rename = "model")]
    _model: Option<IgnoredAny>,
    #[serde(rename = "tools")]
    _tools: Option<IgnoredAny>,
}

/// One `${...}` of a VS Code prompt file: the argument it becomes, its description, and how
/// many bytes it spans.
struct VsCodePlaceholder {
    argument: String,
    description: Option<String>,
    length: usize,
}

/// `${input:name}`, `${input:name:placeholder}` or one of the editor variables, at the start
/// of `rest`; anything else (`${env:HOME}`, a JavaScript template string) is not one.
fn vscode_placeholder(rest: &str) -> Option<VsCodePlaceholder> {
    let inner_start = rest.strip_prefix("${")?;
    let end = inner_start.find(['}', '\n'])?;
    if !inner_start[end..].starts_with('}') {
        return None;
    }
    let inner = &inner_start[..end];
    let length = 2 + end + 1;
    if let Some(input) = inner.strip_prefix("input:") {
        let (name, placeholder) = match input.split_once(':') {
            Some((name, placeholder)) => (name, Some(placeholder.trim())),
            None => (input, None),
        };
        return Some(VsCodePlaceholder {
            argument: identifier(name.trim())?,
            description: placeholder
                .filter(|text| !text.is_empty())
                .map(str::to_string),
            length,
        });
    }
    let (_, argument, description) = VSCODE_VARIABLES
        .iter()
        .find(|(variable, _, _)| *variable == inner)?;
    Some(VsCodePlaceholder {
        argument: argument.to_string(),
        description: Some(format!("{description} (VS Code's ${{{inner}}})")),
        length,
    })
}

/// A VS Code prompt file: `${input:name:placeholder}` becomes the required argument `name`
/// described by the placeholder; the editor variables become required arguments too.
pub(super) fn vscode_prompt(
    front: Option<&str>,
    body: &str,
    source: Source,
) -> Result<Prompt, FileError> {
    let front: VsCodeFront = match front {
        Some(yaml) => super::parse_yaml(source.path, yaml)?,
        None => VsCodeFront::default(),
    };
    let mut arguments: Vec<PromptArgument> = Vec::new();
    for (at, _) in body.match_indices("${") {
        let Some(placeholder) = vscode_placeholder(&body[at..]) else {
            continue;
        };
        match arguments
            .iter_mut()
            .find(|arg| arg.name == placeholder.argument)
        {
            // The first placeholder text given for an input describes it.
            Some(existing) => {
                if existing.description.is_none() {
                    existing.description = placeholder.description;
                }
            }
            None => arguments.push(PromptArgument {
                name: placeholder.argument,
                description: placeholder.description,
                required: true,
                ..PromptArgument::default()
            }),
        }
    }
    let template = translate(body, |rest| {
        let placeholder = vscode_placeholder(rest)?;
        Some((var(&placeholder.argument), placeholder.length))
    });
    let default_name = front
        .name
        .as_deref()
        .map(sanitize_name)
        .unwrap_or_else(|| source.default_name.to_string());
    finish(
        front.description,
        arguments,
        body,
        &template,
        &default_name,
        source,
    )
}

// ---------------------------------------------------------------------------------------
// Shared
// ---------------------------------------------------------------------------------------

fn finish(
    description: Option<String>,
    arguments: Vec<PromptArgument>,
    body: &str,
    template: &str,
    name: &str,
    source: Source,
) -> Result<Prompt, FileError> {
    // Title and description fall back to the body as the author wrote it, not to its
    // escaped template.
    let (heading, paragraph) = heading_and_paragraph(body);
    let messages = split_roles(template);
    if messages.is_empty() {
        return Err(FileError::new(
            source.path,
            Some(source.body_line),
            "the prompt has no body; write the prompt text after the front matter",
        ));
    }
    Ok(Prompt {
        name: sanitize_name(name),
        title: heading,
        description: description.or(paragraph),
        icons: Vec::new(),
        arguments,
        messages,
        origin: source.origin,
    })
}

/// `{{ name }}`.
fn var(name: &str) -> String {
    format!("{{{{ {name} }}}}")
}

/// Rewrites `body` into a minijinja template: where `placeholder` recognises the text at a
/// position it gives the replacement and the length it replaces; every `{{`, `{%` and `{#`
/// becomes a string expression printing those two characters, and a line that would switch
/// roles in our format is printed as it is, so the template renders to the body as written.
fn translate(body: &str, mut placeholder: impl FnMut(&str) -> Option<(String, usize)>) -> String {
    let mut out = String::with_capacity(body.len() + body.len() / 16);
    for line in body.split_inclusive('\n') {
        if role_marker(line).is_some() {
            // Printing its `<!--` from an expression keeps the line from being a marker.
            out.push_str(&line.replacen("<!--", "{{ \"<!--\" }}", 1));
            continue;
        }
        let mut at = 0;
        while at < line.len() {
            let rest = &line[at..];
            if let Some((replacement, length)) = placeholder(rest) {
                out.push_str(&replacement);
                at += length;
                continue;
            }
            if let Some(pair) = ["{{", "{%", "{#"].into_iter().find(|p| rest.starts_with(p)) {
                out.push_str(&format!("{{{{ \"{pair}\" }}}}"));
                at += 2;
                continue;
            }
            // A `{` right before a placeholder would open a tag with the `{{` that replaces it.
            if rest.starts_with('{') && placeholder(&rest[1..]).is_some() {
                out.push_str("{{ \"{\" }}");
                at += 1;
                continue;
            }
            let Some(c) = rest.chars().next() else { break };
            out.push(c);
            at += c.len_utf8();
        }
    }
    out
}

/// Words minijinja reads as literals or syntax, which an argument of that name would shadow.
const RESERVED: [&str; 21] = [
    "and",
    "or",
    "not",
    "in",
    "is",
    "if",
    "else",
    "elif",
    "endif",
    "for",
    "endfor",
    "true",
    "false",
    "none",
    "True",
    "False",
    "None",
    "loop",
    "self",
    "super",
    "namespace",
];

/// An argument name made from a name another tool allows (`pr-number` -> `pr_number`), or
/// None when nothing usable is left.
fn identifier(word: &str) -> Option<String> {
    let mut name: String = word
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let name_trimmed = name.trim_matches('_');
    if name_trimmed.is_empty() {
        return None;
    }
    name = name_trimmed.to_string();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert_str(0, "arg_");
    }
    if RESERVED.contains(&name.as_str()) {
        name.push('_');
    }
    Some(name)
}

/// A prompt name from a file name or another tool's `name:`: characters our names do not
/// allow become `-`.
fn sanitize_name(name: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    fn source() -> Source<'static> {
        Source {
            path: "commands/review.md",
            default_name: "review",
            body_line: 1,
            origin: Origin::default(),
        }
    }

    #[test]
    fn claude_placeholders_become_arguments_and_the_rest_is_escaped() {
        let prompt = claude_command(
            Some("description: Review\nargument-hint: [file] [focus]\n"),
            "Review $1 for $2, all: $ARGUMENTS. Costs $100. Keep {{ x }} and {% y %} {# z #}\n",
            source(),
        )
        .unwrap();
        let names: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["arguments", "file", "focus"]);
        assert_eq!(
            prompt.messages[0].body,
            "Review {{ file }} for {{ focus }}, all: {{ arguments }}. Costs $100. \
             Keep {{ \"{{\" }} x }} and {{ \"{%\" }} y %} {{ \"{#\" }} z #}"
        );
        assert_eq!(prompt.description.as_deref(), Some("Review"));
    }

    #[test]
    fn the_escaped_body_renders_as_written() {
        let prompt = claude_command(
            None,
            "Fix $1: keep {{ x }}, {% raw %}, {#c#}, {{{y}}} and \"{{\"\n",
            source(),
        )
        .unwrap();
        let values =
            std::collections::BTreeMap::from([("arg1".to_string(), "{{ bug }}".to_string())]);
        let rendered = crate::render::render(&crate::render::as_stored(prompt), &values)
            .expect("the command renders");
        assert_eq!(
            rendered[0].pieces,
            [crate::render::Piece::Text(
                "Fix {{ bug }}: keep {{ x }}, {% raw %}, {#c#}, {{{y}}} and \"{{\"".into()
            )]
        );
    }

    /// Bodies made of the pieces that matter to both translations, from a fixed-seed
    /// generator: many shapes, the same every run.
    fn tricky_bodies() -> Vec<String> {
        const PIECES: [&str; 24] = [
            "{{",
            "{%",
            "{#",
            "}}",
            "%}",
            "#}",
            "{",
            "}",
            "-",
            " ",
            "\n",
            "\r\n",
            "<!-- assistant -->",
            "<!-- user -->",
            "$",
            "1",
            "ARGUMENTS",
            "${",
            "input:",
            ":",
            "é",
            "\"",
            "raw",
            "x",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..2000)
            .map(|_| {
                let length = (next() % 24) as usize;
                (0..length)
                    .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn escaped_text_renders_exactly_as_written() {
        for body in tricky_bodies() {
            // Placeholders aside, the template must print the body as it is.
            let body = body.replace('$', "");
            let expected = body.trim_matches(['\n', '\r']);
            for prompt in [
                claude_command(None, &body, source()),
                vscode_prompt(None, &body, source()),
            ] {
                let Ok(prompt) = prompt else {
                    assert!(expected.trim().is_empty(), "{body:?} failed");
                    continue;
                };
                assert_eq!(prompt.messages.len(), 1, "{body:?}");
                let rendered = crate::render::render(
                    &crate::render::as_stored(prompt.clone()),
                    &std::collections::BTreeMap::<String, String>::new(),
                )
                .unwrap_or_else(|err| panic!("{body:?}: {err}"));
                let text: String = rendered[0]
                    .pieces
                    .iter()
                    .map(|piece| match piece {
                        crate::render::Piece::Text(text) => text.as_str(),
                        other => panic!("{body:?} rendered {other:?}"),
                    })
                    .collect();
                assert_eq!(text, expected, "{body:?}");
            }
        }
    }

    /// `body` with each placeholder replaced by what `value` gives for it, the way the
    /// rendered template should read.
    fn substituted(body: &str, mut value: impl FnMut(&str) -> Option<(String, usize)>) -> String {
        let mut out = String::new();
        let mut at = 0;
        while at < body.len() {
            if let Some((text, length)) = value(&body[at..]) {
                out.push_str(&text);
                at += length;
                continue;
            }
            let Some(c) = body[at..].chars().next() else {
                break;
            };
            out.push(c);
            at += c.len_utf8();
        }
        out.trim_matches(['\n', '\r']).to_string()
    }

    fn rendered_text(
        prompt: &Prompt,
        values: &std::collections::BTreeMap<String, String>,
        body: &str,
    ) -> String {
        let rendered = crate::render::render(&crate::render::as_stored(prompt.clone()), values)
            .unwrap_or_else(|err| panic!("{body:?}: {err}"));
        rendered
            .iter()
            .flat_map(|message| &message.pieces)
            .map(|piece| match piece {
                crate::render::Piece::Text(text) => text.clone(),
                other => panic!("{body:?} rendered {other:?}"),
            })
            .collect::<Vec<_>>()
            .join("")
    }

    /// Every argument's value is its name in angle brackets, to spot it in the output.
    fn marked_values(prompt: &Prompt) -> std::collections::BTreeMap<String, String> {
        prompt
            .arguments
            .iter()
            .map(|arg| (arg.name.clone(), format!("<{}>", arg.name)))
            .collect()
    }

    #[test]
    fn placeholders_in_any_body_render_their_values_and_nothing_else_changes() {
        for body in tricky_bodies() {
            if let Ok(prompt) = claude_command(None, &body, source()) {
                let values = marked_values(&prompt);
                let expected = substituted(&body, |rest| {
                    if rest.starts_with("$ARGUMENTS") {
                        return Some(("<arguments>".into(), "$ARGUMENTS".len()));
                    }
                    claude_position(rest).map(|n| (format!("<arg{n}>"), 2))
                });
                assert_eq!(rendered_text(&prompt, &values, &body), expected, "{body:?}");
            }
            if let Ok(prompt) = vscode_prompt(None, &body, source()) {
                let values = marked_values(&prompt);
                let expected = substituted(&body, |rest| {
                    vscode_placeholder(rest)
                        .map(|found| (format!("<{}>", found.argument), found.length))
                });
                assert_eq!(rendered_text(&prompt, &values, &body), expected, "{body:?}");
            }
        }
    }

    #[test]
    fn an_argument_hint_that_is_not_yaml_is_still_read() {
        let front = ClaudeFront::read(Some(
            "argument-hint: [pr-number] [priority]\ndescription: \"Fix\"\n",
        ));
        assert_eq!(front.description.as_deref(), Some("Fix"));
        let (_, words) = hint_words(&front.argument_hint.unwrap());
        assert_eq!(words, ["pr-number", "priority"]);
    }

    #[test]
    fn role_marker_lines_are_kept_as_text() {
        let prompt = claude_command(None, "a\n<!-- assistant -->\nb\n", source()).unwrap();
        assert_eq!(prompt.messages.len(), 1);
        assert_eq!(prompt.messages[0].role, Role::User);
        assert_eq!(
            prompt.messages[0].body,
            "a\n{{ \"<!--\" }} assistant -->\nb"
        );
    }

    #[test]
    fn vscode_inputs_and_variables_become_required_arguments() {
        let body = "Make ${input:component-name:Button} in ${file}; keep ${env:HOME} and `${x}`\n";
        assert!(is_vscode_prompt(Some("mode: agent\n"), body));
        assert!(is_vscode_prompt(None, body));
        assert!(!is_vscode_prompt(Some("arguments: []\n"), body));
        assert!(!is_vscode_prompt(
            Some("description: x\n"),
            "no placeholders"
        ));
        let prompt = vscode_prompt(
            Some("mode: agent\ntools: ['codebase']\nmodel: GPT-4o\n"),
            body,
            source(),
        )
        .unwrap();
        let args: Vec<(&str, Option<&str>, bool)> = prompt
            .arguments
            .iter()
            .map(|a| (a.name.as_str(), a.description.as_deref(), a.required))
            .collect();
        assert_eq!(
            args,
            [
                ("component_name", Some("Button"), true),
                (
                    "file",
                    Some("The path of the current file (VS Code's ${file})"),
                    true
                )
            ]
        );
        assert_eq!(
            prompt.messages[0].body,
            "Make {{ component_name }} in {{ file }}; keep ${env:HOME} and `${x}`"
        );
    }

    #[test]
    fn names_become_identifiers() {
        assert_eq!(identifier("pr-number").as_deref(), Some("pr_number"));
        assert_eq!(identifier("2nd").as_deref(), Some("arg_2nd"));
        assert_eq!(identifier("if").as_deref(), Some("if_"));
        assert_eq!(identifier("--"), None);
        assert_eq!(sanitize_name("my command"), "my-command");
    }
}
