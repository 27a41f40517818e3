//! Claude Code commands: `.claude/commands/NAME.md` with `description`, `argument-hint` and
//! `arguments` (the names, in order) in the front matter, and each argument written `$name`.
//!
//! Named placeholders rather than positions: Claude Code counts `$0` as the first argument
//! while its older documentation counted from `$1`, and a name means the same in both.

use super::{File, Lost, Source, Written, command_text, flat_file_name, kept_front};
use crate::library::emit::scalar;

pub(super) fn file(source: &Source, lost: &mut Lost) -> Option<Written> {
    let prompt = source.prompt;
    let names: Vec<&str> = prompt.arguments.iter().map(|a| a.name.as_str()).collect();
    if prompt.title.is_some() {
        lost.say("its title");
    }
    if !prompt.icons.is_empty() {
        lost.say("its icons");
    }
    lost.argument_details(prompt, false);
    if prompt.arguments.iter().any(|a| a.required) {
        lost.say("which arguments are required (a command runs with or without them)");
    }
    let body = command_text(
        source,
        lost,
        |text| escape(text, &names),
        |name, after| {
            let index = names.iter().position(|n| *n == name);
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
    let mut front = String::new();
    if let Some(description) = &prompt.description {
        front.push_str(&format!("description: {}\n", scalar(description)));
    }
    if !names.is_empty() {
        let hint: Vec<String> = names.iter().map(|name| format!("[{name}]")).collect();
        front.push_str(&format!("argument-hint: {}\n", scalar(&hint.join(" "))));
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

/// Text with a `\` before every `$` that Claude Code would take for a placeholder: a digit,
/// `ARGUMENTS`, or one of the command's argument names not followed by a word character.
fn escape(text: &str, names: &[&str]) -> String {
    let mut out = String::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        if c == '$' && is_placeholder(&text[at + 1..], names) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn is_placeholder(after: &str, names: &[&str]) -> bool {
    after.starts_with(|c: char| c.is_ascii_digit())
        || after.starts_with("ARGUMENTS")
        || names.iter().any(|name| {
            after.strip_prefix(name).is_some_and(|rest| {
                !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '[')
            })
        })
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
    }
}
