//! The prompt files other tools keep, read as prompts of ours: Claude Code commands, VS Code
//! prompt files, Cursor and Gemini CLI commands, Agent Skills' `SKILL.md`, and CSV lists of
//! prompts (`prompt_list`). Their placeholders become typed arguments substituted by minijinja, and
//! everything else in the body is escaped so that it comes out exactly as written.
//!
//! `claude_code`, `vscode`, `cursor`, `gemini` and `skill` each find their tool's placeholders
//! and arguments; this file
//! holds what both share: the body rewritten into an escaped template, argument and prompt
//! names made from the names other tools allow, the prompt put together, the text typed after
//! a command without a placeholder added at its end as its host adds it (`appended`), and the
//! one warning of a file for what its host would run or read (`runs_warning`).
//!
//! docs/format.md ("Prompt files from other tools") is the user-facing statement of both
//! mappings; keep the two in step.

mod claude_code;
mod cursor;
mod gemini;
mod prompt_list;
mod skill;
mod vscode;

pub(crate) use claude_code::{
    CLAUDE_ALL_ARGUMENTS, CLAUDE_ALL_ARGUMENTS_DESCRIPTION, CLAUDE_HOST_KEYS, claude_substitutes,
};
pub(super) use claude_code::{CLAUDE_KEYS, claude_command, claude_warning};
pub(super) use cursor::cursor_command;
pub(super) use gemini::{GEMINI_KEYS, gemini_command, gemini_warning, is_gemini_command};
pub(crate) use prompt_list::prompt_list;
pub(crate) use skill::{
    MAX_SKILL_DESCRIPTION, SKILL_FRONT_MATTER_KEYS, SKILL_HOST_KEYS, skill_front_matter,
    validate_skill_name,
};
pub(super) use skill::{SKILL_KEYS, description_warning, skill};
pub(crate) use vscode::{VSCODE_HOST_KEYS, vscode_fills, vscode_variable};
pub(super) use vscode::{VSCODE_KEYS, is_vscode_prompt, vscode_prompt};

use super::FileError;
use super::prompt_file::sanitize_name;
use super::roles::{role_marker, split_roles};
use super::summary::prompt_heading_and_paragraph;
use crate::model::{Origin, Prompt, PromptArgument};

/// What a prompt file needs besides its front matter and body.
pub(super) struct Source<'a> {
    pub path: &'a str,
    /// The prompt's name unless the front matter gives one.
    pub default_name: &'a str,
    pub body_line: u64,
    pub origin: Origin,
    /// The folders between a command's `commands` folder and its file (`git` for
    /// `commands/git/commit.md`), which Claude Code shows with the command.
    pub command_folder: Option<String>,
}

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
    let (heading, paragraph) = prompt_heading_and_paragraph(body);
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
        meta: Default::default(),
        arguments,
        messages,
        origin: source.origin,
    })
}

/// `{{ name }}`.
fn var(name: &str) -> String {
    format!("{{{{ {name} }}}}")
}

/// What the hosts put before the text typed after a command that has no placeholder for it:
/// Claude Code `ARGUMENTS: ` after a blank line, Cursor and VS Code a blank line (neither says
/// how it joins the two), Gemini CLI a blank line and the whole command as typed (`/NAME `
/// and the text).
const CLAUDE_LEAD: &str = "\n\nARGUMENTS: ";
const BLANK_LINE_LEAD: &str = "\n\n";

/// The lead Gemini CLI puts before the text after the command `name` (`git/commit` is typed
/// `/git:commit`).
fn gemini_lead(name: &str) -> String {
    format!("\n\n/{} ", name.replace('/', ":"))
}

/// Whether `text` is what a host puts before the text typed after a command without a
/// placeholder for it, as an import writes it (`appended`): how an export knows the end of a
/// prompt for the host's own appending, which it leaves to the host.
pub(crate) fn is_appended_lead(text: &str) -> bool {
    text == CLAUDE_LEAD
        || text == BLANK_LINE_LEAD
        || text
            .strip_prefix("\n\n/")
            .and_then(|rest| rest.strip_suffix(' '))
            .is_some_and(|name| !name.is_empty() && !name.contains(['\n', '\r']))
}

/// The text typed after a command that has no placeholder for it, which the host adds after
/// the command's text, as the optional argument `name` rendered after `lead` only when it is
/// given: `{% if name %}LEAD{{ name }}{% endif %}` at the end of the last message.
fn appended(mut prompt: Prompt, name: &str, description: String, lead: &str) -> Prompt {
    if let Some(last) = prompt.messages.last_mut() {
        // A `{` of the text at the end would open a tag with the `{%` that follows.
        if last.body.ends_with('{') {
            last.body.pop();
            last.body.push_str("{{ \"{\" }}");
        }
        last.body.push_str(&format!(
            "{{% if {name} %}}{}{}{{% endif %}}",
            translate(lead, |_| None),
            var(name)
        ));
    }
    prompt.arguments.push(PromptArgument {
        name: name.to_string(),
        description: Some(description),
        ..PromptArgument::default()
    });
    prompt
}

/// A minijinja string literal of `text`.
fn literal(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .replace('\r', "\\r");
    format!("\"{escaped}\"")
}

/// What a host would run or read when the command is used, found at these lines of the file:
/// one warning for the file, at the first, naming them all. `found` is (what, line), in the
/// order of the file.
fn runs_warning(path: &str, host: &str, found: &[(&str, u64)]) -> Option<FileError> {
    let first = found.iter().map(|(_, line)| *line).min()?;
    let mut kinds: Vec<(&str, Vec<u64>)> = Vec::new();
    for (what, line) in found {
        match kinds.iter_mut().find(|(kind, _)| kind == what) {
            Some((_, lines)) if !lines.contains(line) => lines.push(*line),
            Some(_) => {}
            None => kinds.push((what, vec![*line])),
        }
    }
    let parts: Vec<String> = kinds
        .iter()
        .map(|(what, lines)| {
            let numbers: Vec<String> = lines.iter().map(u64::to_string).collect();
            let noun = if lines.len() == 1 { "line" } else { "lines" };
            format!("{what} on {noun} {}", numbers.join(", "))
        })
        .collect();
    Some(FileError::new(
        path,
        Some(first),
        format!(
            "{host} would {} when the command is used; imported as text, nothing is run or read",
            parts.join(" and ")
        ),
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    pub(super) fn source() -> Source<'static> {
        Source {
            path: "commands/review.md",
            default_name: "review",
            body_line: 1,
            origin: Origin::default(),
            command_folder: None,
        }
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
        let rendered = crate::render::render(
            &crate::render::as_stored(prompt),
            &values,
            &crate::render::Templates::default(),
        )
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
    pub(super) fn tricky_bodies() -> Vec<String> {
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
                    &crate::render::Templates::default(),
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
    pub(super) fn substituted(
        body: &str,
        mut value: impl FnMut(&str) -> Option<(String, usize)>,
    ) -> String {
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

    pub(super) fn rendered_text(
        prompt: &Prompt,
        values: &std::collections::BTreeMap<String, String>,
        body: &str,
    ) -> String {
        let rendered = crate::render::render(
            &crate::render::as_stored(prompt.clone()),
            values,
            &crate::render::Templates::default(),
        )
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
    pub(super) fn marked_values(prompt: &Prompt) -> std::collections::BTreeMap<String, String> {
        prompt
            .arguments
            .iter()
            .map(|arg| (arg.name.clone(), format!("<{}>", arg.name)))
            .collect()
    }

    #[test]
    fn role_marker_lines_are_kept_as_text() {
        let prompt = claude_command(None, "a\n<!-- assistant -->\nb\n", source()).unwrap();
        assert_eq!(prompt.messages.len(), 1);
        assert_eq!(prompt.messages[0].role, Role::User);
        assert_eq!(
            prompt.messages[0].body,
            "a\n{{ \"<!--\" }} assistant -->\nb{% if arguments %}\n\nARGUMENTS: {{ arguments }}{% endif %}"
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
