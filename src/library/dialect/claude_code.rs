//! Claude Code commands (`.claude/commands/NAME.md`): `$ARGUMENTS` and `$1`..`$9` become
//! arguments, named after the `argument-hint` where it gives names.

use serde::Deserialize;

use super::{Source, finish, identifier, translate, var};
use crate::library::FileError;
use crate::library::kept::Keys;
use crate::model::{Prompt, PromptArgument};

/// The keys a command's reader takes, and Claude Code's own that are kept for an export to
/// write back (docs/format.md).
pub(in crate::library) const CLAUDE_KEYS: Keys = Keys {
    read: &["description", "argument-hint", "arguments"],
    host: &CLAUDE_HOST_KEYS,
    ours: false,
};

/// Claude Code's own keys of a command, which it reads and an export writes back.
pub const CLAUDE_HOST_KEYS: [&str; 3] = ["allowed-tools", "model", "disable-model-invocation"];

#[derive(Debug, Default, Deserialize)]
struct ClaudeFront {
    description: Option<String>,
    #[serde(rename = "argument-hint")]
    argument_hint: Option<Hint>,
    /// The names of the positional arguments, in order, each usable as `$name`.
    arguments: Option<Hint>,
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
                "arguments" => front.arguments = Some(Hint::Text(value.to_string())),
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
pub(in crate::library) fn claude_command(
    front: Option<&str>,
    body: &str,
    source: Source,
) -> Result<Prompt, FileError> {
    let front = ClaudeFront::read(front);
    let (hint_text, mut hint_names) = match &front.argument_hint {
        Some(hint) => {
            let (text, words) = hint_words(hint);
            (Some(text), words)
        }
        None => (None, Vec::new()),
    };
    // `arguments` names the positions as Claude Code does (as a list or a string of words,
    // numbers left out), ahead of the hint.
    let named: Vec<String> = match &front.arguments {
        Some(Hint::List(items)) => items.clone(),
        Some(Hint::Text(text)) => text.split_whitespace().map(str::to_string).collect(),
        None => Vec::new(),
    }
    .into_iter()
    .filter(|name| !name.is_empty() && !name.chars().all(|c| c.is_ascii_digit()))
    .collect();
    if !named.is_empty() {
        hint_names = named.clone();
    }
    // Longest first, as Claude Code matches them.
    let mut by_length: Vec<(usize, &str)> = named
        .iter()
        .enumerate()
        .map(|(at, name)| (at + 1, name.as_str()))
        .collect();
    by_length.sort_by_key(|(_, name)| std::cmp::Reverse(name.len()));
    let placeholder = |rest: &str| claude_placeholder(rest, &by_length);
    // First pass: which placeholders the body uses, so that names can be chosen before the
    // body is rewritten.
    let mut uses_all = false;
    let mut positions: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
    for (at, _) in body.match_indices('$') {
        if body[..at].ends_with('\\') {
            continue;
        }
        match placeholder(&body[at..]) {
            Some((ClaudePlaceholder::All, _)) => uses_all = true,
            Some((ClaudePlaceholder::Position(n), _)) => {
                positions.insert(n);
            }
            Some((ClaudePlaceholder::Escaped, _)) | None => {}
        }
    }
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
    let mut position_names: std::collections::BTreeMap<usize, String> =
        std::collections::BTreeMap::new();
    for &position in &positions {
        let index = position - 1;
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
        position_names.insert(position, name.clone());
        arguments.push(PromptArgument {
            name,
            description: Some(description),
            ..PromptArgument::default()
        });
    }
    let template = translate(body, |rest| {
        let (found, length) = placeholder(rest)?;
        let replacement = match found {
            ClaudePlaceholder::All => var("arguments"),
            ClaudePlaceholder::Position(n) => var(position_names.get(&n)?),
            ClaudePlaceholder::Escaped => "$".to_string(),
        };
        Some((replacement, length))
    });
    let folder = source.command_folder.clone();
    let mut prompt = finish(
        front.description,
        arguments,
        body,
        &template,
        source.default_name,
        source,
    )?;
    // Claude Code lists a command of a subfolder with that folder beside it (`/commit`
    // "(project:git)"); the description is where a host shows it.
    if let Some(folder) = folder {
        prompt.description = Some(match prompt.description {
            Some(description) => format!("{description} ({folder})"),
            None => format!("({folder})"),
        });
    }
    Ok(prompt)
}

enum ClaudePlaceholder {
    /// `$ARGUMENTS`
    All,
    /// The argument at this position, from 1: `$1`, `$ARGUMENTS[0]`, or `$name` for the
    /// first name of `arguments`.
    Position(usize),
    /// `\$` before what would be a placeholder: a `$` of the text.
    Escaped,
}

/// The placeholder at the start of `rest` and its length. `names` are the names `arguments`
/// gives, with their positions, longest first.
fn claude_placeholder(rest: &str, names: &[(usize, &str)]) -> Option<(ClaudePlaceholder, usize)> {
    if let Some(after) = rest.strip_prefix("\\") {
        return claude_placeholder(after, names).map(|_| (ClaudePlaceholder::Escaped, 2));
    }
    let after = rest.strip_prefix('$')?;
    if let Some(index) = after.strip_prefix("ARGUMENTS[") {
        let digits = index.len() - index.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && index[digits..].starts_with(']') {
            // Claude Code counts these from 0.
            let n: usize = index[..digits].parse().ok()?;
            return Some((
                ClaudePlaceholder::Position(n.checked_add(1)?),
                "$ARGUMENTS[".len() + digits + 1,
            ));
        }
    }
    if after.starts_with("ARGUMENTS") {
        return Some((ClaudePlaceholder::All, "$ARGUMENTS".len()));
    }
    for (position, name) in names {
        if let Some(next) = after.strip_prefix(name)
            && !next.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '[')
        {
            return Some((ClaudePlaceholder::Position(*position), 1 + name.len()));
        }
    }
    claude_position(rest).map(|n| (ClaudePlaceholder::Position(n), 2))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::dialect::tests::{
        marked_values, rendered_text, source, substituted, tricky_bodies,
    };

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
        }
    }

    #[test]
    fn named_arguments_indexed_arguments_and_escapes() {
        let prompt = claude_command(
            Some("arguments: [file, level]\n"),
            "Fix $file at $level ($ARGUMENTS[0], $files, $file_x). Costs \\$5, not \\$level.\n",
            source(),
        )
        .unwrap();
        let names: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["file", "level"]);
        assert_eq!(
            prompt.messages[0].body,
            "Fix {{ file }} at {{ level }} ({{ file }}, $files, $file_x). Costs $5, not $level."
        );
        let prompt = claude_command(Some("arguments: a b\n"), "$b then $a\n", source()).unwrap();
        let names: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
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
}
