//! Claude Code commands (`.claude/commands/NAME.md`), and the bodies of skills, which Claude
//! Code fills in the same way (`claude_prompt`): `$ARGUMENTS` and `$0`..`$9` become
//! arguments (counted from 0 in a body that uses `$0`, else from 1), named after the
//! `argument-hint` where it gives names. As in Claude Code, a positional placeholder with no
//! value stays as written (`$2`), and a command with no placeholder at all gets the text
//! after the command as `ARGUMENTS: ...` at its end. The shell commands Claude Code runs
//! (`` !`cmd` ``, a block opened with ```` ```! ````) stay text and are warned about
//! (`claude_warning`).

use serde::Deserialize;

/// The argument `$ARGUMENTS` becomes: the whole text after the command.
pub(crate) const CLAUDE_ALL_ARGUMENTS: &str = "arguments";
/// Its description when no `argument-hint` gives one.
pub(crate) const CLAUDE_ALL_ARGUMENTS_DESCRIPTION: &str = "The text after the command";

use super::{
    CLAUDE_LEAD, Source, appended, finish, identifier, literal, runs_warning, translate, var,
};
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
pub(crate) const CLAUDE_HOST_KEYS: [&str; 3] =
    ["allowed-tools", "model", "disable-model-invocation"];

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
    let folder = source.command_folder.clone();
    let name = source.default_name;
    let mut prompt = claude_prompt(front, body, name, source)?;
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

/// The prompt `name` of a body Claude Code runs as a command or a skill, as Claude Code fills
/// it in: its placeholders as arguments, described by `argument-hint` and named by
/// `arguments`; and when it has none, the text after the command added at the end, as
/// `ARGUMENTS: ...`.
pub(super) fn claude_prompt(
    front: Option<&str>,
    body: &str,
    name: &str,
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
    let found: Vec<ClaudePlaceholder> = body
        .match_indices('$')
        .filter(|(at, _)| !body[..*at].ends_with('\\'))
        .filter_map(|(at, _)| placeholder(&body[at..]).map(|(found, _)| found))
        .collect();
    // Claude Code's current documentation makes `$0` the first argument and `$1` the second;
    // its older commands page made `$1` the first. A body that uses `$0` was written for the
    // first, so its `$N` count from 0; any other for the second, so they count from 1.
    let zero_based = found
        .iter()
        .any(|found| matches!(found, ClaudePlaceholder::Numbered(0)));
    let position = |found: &ClaudePlaceholder| match found {
        ClaudePlaceholder::Position(n) => Some(*n),
        ClaudePlaceholder::Numbered(n) => Some(n + usize::from(zero_based)),
        ClaudePlaceholder::All | ClaudePlaceholder::Escaped => None,
    };
    let uses_all = found
        .iter()
        .any(|found| matches!(found, ClaudePlaceholder::All));
    let positions: std::collections::BTreeSet<usize> = found.iter().filter_map(position).collect();
    let mut arguments = Vec::new();
    if uses_all {
        arguments.push(PromptArgument {
            name: CLAUDE_ALL_ARGUMENTS.to_string(),
            description: Some(
                hint_text
                    .clone()
                    .unwrap_or_else(|| CLAUDE_ALL_ARGUMENTS_DESCRIPTION.to_string()),
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
            ClaudePlaceholder::All => var(CLAUDE_ALL_ARGUMENTS),
            // Claude Code leaves a placeholder it has no value for as written.
            ClaudePlaceholder::Position(_) | ClaudePlaceholder::Numbered(_) => format!(
                "{{{{ {} or {} }}}}",
                position_names.get(&position(&found)?)?,
                literal(&rest[..length])
            ),
            ClaudePlaceholder::Escaped => "$".to_string(),
        };
        Some((replacement, length))
    });
    let takes_nothing = arguments.is_empty();
    let prompt = finish(front.description, arguments, body, &template, name, source)?;
    if !takes_nothing {
        return Ok(prompt);
    }
    // No placeholder takes the text after the command: Claude Code adds it at the end.
    let description = hint_text.unwrap_or_else(|| CLAUDE_ALL_ARGUMENTS_DESCRIPTION.into());
    Ok(appended(
        prompt,
        CLAUDE_ALL_ARGUMENTS,
        description,
        CLAUDE_LEAD,
    ))
}

enum ClaudePlaceholder {
    /// `$ARGUMENTS`
    All,
    /// The argument at this position, from 1: `$ARGUMENTS[0]`, or `$name` for the first name
    /// of `arguments`.
    Position(usize),
    /// `$0`..`$9`, the argument at this position from 0 or from 1, as the body counts.
    Numbered(usize),
    /// `\$` before what would be a placeholder: a `$` of the text.
    Escaped,
}

/// The placeholder at the start of `rest` and its length. `names` are the names `arguments`
/// gives, with their positions, longest first.
fn claude_placeholder(rest: &str, names: &[(usize, &str)]) -> Option<(ClaudePlaceholder, usize)> {
    if let Some(after) = rest.strip_prefix('\\') {
        // Only a `$` right after it: in `\\$1` the first `\` is text and the second escapes.
        return (after.starts_with('$') && claude_placeholder(after, names).is_some())
            .then_some((ClaudePlaceholder::Escaped, 2));
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
    claude_number(rest).map(|n| (ClaudePlaceholder::Numbered(n), 2))
}

/// Whether an import reads the `$` at the start of `rest` as a placeholder of a command whose
/// front matter `arguments` lists `names`: the `$`s an export must write `\$` to keep as text.
/// Exactly those, so that an import of the export reads every `\$` back as `$` and the next
/// export escapes the same ones again, never one more.
pub(crate) fn claude_substitutes(rest: &str, names: &[&str]) -> bool {
    let positions: Vec<(usize, &str)> = names
        .iter()
        .enumerate()
        .map(|(at, name)| (at + 1, *name))
        .collect();
    rest.starts_with('$') && claude_placeholder(rest, &positions).is_some()
}

/// The shell commands Claude Code would run in the body of a command: `` !`cmd` `` at the start
/// of a line or after a space, and blocks opened with ```` ```! ````; `body_line` is the line of
/// the file the body starts on.
pub(in crate::library) fn claude_warning(
    body: &str,
    body_line: u64,
    path: &str,
) -> Option<FileError> {
    let mut found = Vec::new();
    for (index, line) in body.lines().enumerate() {
        let inline = line.match_indices("!`").any(|(at, _)| {
            line[..at].chars().last().is_none_or(char::is_whitespace)
                && line[at + 2..].find('`').is_some_and(|end| end > 0)
        });
        if inline || line.trim_start().starts_with("```!") {
            found.push(("run a shell command (`!`...``)", body_line + index as u64));
        }
    }
    runs_warning(path, "Claude Code", &found)
}

/// `$0`..`$9` not followed by another digit (`$100` is an amount of money, not `$1` + "00").
fn claude_number(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    if bytes.first() != Some(&b'$') {
        return None;
    }
    let digit = *bytes.get(1)?;
    if !digit.is_ascii_digit() || bytes.get(2).is_some_and(u8::is_ascii_digit) {
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
            "Review {{ file or \"$1\" }} for {{ focus or \"$2\" }}, all: {{ arguments }}. Costs \
             $100. Keep {{ \"{{\" }} x }} and {{ \"{%\" }} y %} {{ \"{#\" }} z #}"
        );
        assert_eq!(prompt.description.as_deref(), Some("Review"));
    }

    #[test]
    fn placeholders_in_any_body_render_their_values_and_nothing_else_changes() {
        for body in tricky_bodies() {
            if let Ok(prompt) = claude_command(None, &body, source()) {
                let values = marked_values(&prompt);
                let mut takes_nothing = true;
                let mut expected = substituted(&body, |rest| {
                    let found = if rest.starts_with("$ARGUMENTS") {
                        Some(("<arguments>".into(), "$ARGUMENTS".len()))
                    } else {
                        claude_number(rest).map(|n| (format!("<arg{n}>"), 2))
                    };
                    takes_nothing &= found.is_none();
                    found
                });
                // With no placeholder, the text after the command comes at the end.
                if takes_nothing {
                    expected.push_str("\n\nARGUMENTS: <arguments>");
                }
                assert_eq!(rendered_text(&prompt, &values, &body), expected, "{body:?}");
            }
        }
    }

    #[test]
    fn a_body_that_uses_dollar_0_counts_from_0() {
        let prompt = claude_command(None, "Move $0 from $1 to $ARGUMENTS[2].\n", source()).unwrap();
        let names: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["arg1", "arg2", "arg3"]);
        assert_eq!(
            prompt.messages[0].body,
            "Move {{ arg1 or \"$0\" }} from {{ arg2 or \"$1\" }} to {{ arg3 or \
             \"$ARGUMENTS[2]\" }}."
        );
        // An escaped `$0` is text, and leaves `$1` the first argument.
        let prompt = claude_command(None, "Move $1 for \\$0.\n", source()).unwrap();
        assert_eq!(prompt.arguments[0].name, "arg1");
        assert_eq!(prompt.messages[0].body, "Move {{ arg1 or \"$1\" }} for $0.");
        assert!(claude_substitutes("$0 off", &[]) && !claude_substitutes("$05", &[]));
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
            "Fix {{ file or \"$file\" }} at {{ level or \"$level\" }} ({{ file or \
             \"$ARGUMENTS[0]\" }}, $files, $file_x). Costs $5, not $level."
        );
        // A `\` before an escape is text: `\\$1` is `\` and the text `$1`.
        let prompt = claude_command(None, "a \\\\$1 b \\$100\n", source()).unwrap();
        assert_eq!(prompt.arguments[0].name, CLAUDE_ALL_ARGUMENTS);
        assert!(
            prompt.messages[0]
                .body
                .starts_with("a \\$1 b \\$100{% if arguments %}")
        );
        assert!(claude_substitutes("$file.", &["file"]) && !claude_substitutes("$100", &[]));
        let prompt = claude_command(Some("arguments: a b\n"), "$b then $a\n", source()).unwrap();
        let names: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn unfilled_positions_stay_as_written_and_a_command_without_placeholders_takes_the_text() {
        let prompt = claude_command(None, "Insert VALUES ($1, $2).\n", source()).unwrap();
        let values = std::collections::BTreeMap::from([("arg1".to_string(), "'a'".to_string())]);
        assert_eq!(
            rendered_text(&prompt, &values, ""),
            "Insert VALUES ('a', $2)."
        );
        let prompt = claude_command(None, "Optimize this {\n", source()).unwrap();
        let none = std::collections::BTreeMap::<String, String>::new();
        assert_eq!(rendered_text(&prompt, &none, ""), "Optimize this {");
        let values =
            std::collections::BTreeMap::from([("arguments".to_string(), "a.rs".to_string())]);
        assert_eq!(
            rendered_text(&prompt, &values, ""),
            "Optimize this {\n\nARGUMENTS: a.rs"
        );
        let found = claude_warning("a\n!`git diff` and x!`no`\n```!\nls\n```\n", 3, "c.md");
        let found = found.expect("a warning");
        assert_eq!(found.line, Some(4));
        assert!(found.message.contains("lines 4, 5"), "{found}");
        assert_eq!(claude_warning("KEY=!`cmd` and !`` no\n", 1, "c.md"), None);
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
