//! Claude Code commands: `.claude/commands/NAME.md` with `description`, `argument-hint` and
//! `arguments` (the names, in order) in the front matter, and each argument written `$name`,
//! but the argument `arguments`, written `$ARGUMENTS` (the whole text after the command), as
//! an import of a command with `$ARGUMENTS` makes it. The text after the command that a
//! command without placeholders takes at its end (`Source::appended`) is written as no
//! placeholder at all: Claude Code appends it itself, and its description is the hint.
//!
//! Named placeholders rather than positions: Claude Code counts `$0` as the first argument
//! while its older documentation counted from `$1`, and a name means the same in both.

use std::cell::Cell;

use super::{File, Lost, Source, Written, command_text, flat_file_name, kept_front};
use crate::library::yaml::scalar;
use crate::library::{CLAUDE_ALL_ARGUMENTS, CLAUDE_ALL_ARGUMENTS_DESCRIPTION, claude_substitutes};

pub(super) fn file(source: &Source, lost: &mut Lost) -> Option<Written> {
    let prompt = source.prompt;
    // The argument `arguments` is `$ARGUMENTS`, the whole text after the command, as an
    // import reads it; the others are named positions.
    let all = prompt
        .arguments
        .iter()
        .find(|a| a.name == CLAUDE_ALL_ARGUMENTS);
    let names: Vec<&str> = prompt
        .arguments
        .iter()
        .map(|a| a.name.as_str())
        .filter(|name| *name != CLAUDE_ALL_ARGUMENTS)
        .collect();
    if !prompt.icons.is_empty() {
        lost.say("its icons");
    }
    lost.argument_details(prompt);
    if prompt.arguments.iter().any(|a| a.required) {
        lost.say("which arguments are required (a command runs with or without them)");
    }
    // Whether the text so far ends in `\`, which would make the next placeholder an escape;
    // and whether one did. Claude Code has no way to write a `\` right before a placeholder,
    // nor `$ARGUMENTS` right before `[`, which would read as `$ARGUMENTS[N]`.
    let backslash_last = Cell::new(false);
    let unwritable = Cell::new(false);
    let body = command_text(
        source,
        lost,
        |text| {
            let escaped = escape(text, &names);
            backslash_last.set(escaped.ends_with('\\'));
            escaped
        },
        |name, after| {
            if name == CLAUDE_ALL_ARGUMENTS && all.is_some() {
                unwritable.set(unwritable.get() || backslash_last.get() || after == Some('['));
                return "$ARGUMENTS".to_string();
            }
            let index = names.iter().position(|n| *n == name);
            if index.is_some() && backslash_last.get() {
                unwritable.set(true);
            }
            match (index, after) {
                // Where a name would run into the text after it (`$lang_x`), its position
                // is used.
                (Some(index), Some(c)) if c.is_alphanumeric() || c == '_' || c == '[' => {
                    format!("$ARGUMENTS[{index}]")
                }
                (Some(_), _) => format!("${name}"),
                // A variable that is no argument renders empty, as minijinja would.
                (None, _) => String::new(),
            }
        },
    );
    if unwritable.get() {
        lost.say(
            "an argument right after a `\\` (Claude Code's escape) or `$ARGUMENTS` right \
             before a `[`: it is text",
        );
    }
    let mut front = String::new();
    if let Some(description) = &prompt.description {
        front.push_str(&format!("description: {}\n", scalar(description)));
    }
    // The hint names the positions; with none, it is what describes `$ARGUMENTS`, which an
    // import takes as that argument's description.
    let hint = if names.is_empty() {
        all.or(source.appended)
            .and_then(|all| all.description.clone())
            .filter(|description| description != CLAUDE_ALL_ARGUMENTS_DESCRIPTION)
    } else {
        let hint: Vec<String> = names.iter().map(|name| format!("[{name}]")).collect();
        Some(hint.join(" "))
    };
    if let Some(hint) = hint {
        front.push_str(&format!("argument-hint: {}\n", scalar(&hint)));
    }
    if !names.is_empty() {
        // Quoted where YAML would read a name as something else (`yes`, `null`), which
        // Claude Code would then leave out.
        let listed: Vec<String> = names.iter().map(|name| scalar(name)).collect();
        front.push_str(&format!("arguments: [{}]\n", listed.join(", ")));
    }
    front.push_str(&kept_front(prompt, &crate::library::CLAUDE_HOST_KEYS));
    let path = format!(".claude/commands/{}.md", flat_file_name(&prompt.name));
    let text = if front.is_empty() && !body.starts_with("---") {
        format!("{}\n", body.trim_end())
    } else {
        format!("---\n{front}---\n{}\n", body.trim_end())
    };
    Some(Written {
        files: vec![File {
            path: path.clone(),
            bytes: text.into_bytes(),
        }],
        prompt_file: path,
    })
}

/// Text with a `\` before every `$` that Claude Code would take for a placeholder, as an
/// import reads them: `$0`..`$9`, `$ARGUMENTS`, or one of the command's argument names not
/// followed by a word character. `$10` and `$100` are text to both and stay as they are.
fn escape(text: &str, names: &[&str]) -> String {
    let mut out = String::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        if claude_substitutes(&text[at..], names) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollar_text_claude_would_substitute_is_escaped() {
        assert_eq!(
            escape("costs $5, $ARGUMENTS, $file and $files", &["file"]),
            "costs \\$5, \\$ARGUMENTS, \\$file and $files"
        );
        // What an import reads as text is left alone, so escaping never grows.
        assert_eq!(
            escape("$100, $0, $10 and \\$", &[]),
            "$100, \\$0, $10 and \\$"
        );
        assert_eq!(escape("\\$1", &[]), "\\\\$1");
    }
}
