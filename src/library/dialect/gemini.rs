//! Gemini CLI commands (`.gemini/commands/NAME.toml`, or any `.toml` of a command's shape:
//! a `prompt` string, perhaps a `description`): `prompt` is the text, `description` the
//! description, and `{{args}}` (the text after the command) becomes the optional argument
//! `args`; without `{{args}}`, `args` is still the text after the command, which Gemini CLI
//! appends after a blank line as the whole command typed (`/NAME text`). `!{...}` and
//! `@{...}`, which Gemini CLI runs or reads, stay text and are warned about
//! (`gemini_warning`). Other keys are kept with the prompt (`GEMINI_KEYS`).

use super::{Source, appended, finish, gemini_lead, runs_warning, translate, var};
use crate::library::FileError;
use crate::library::dialect::CLAUDE_ALL_ARGUMENTS_DESCRIPTION;
use crate::library::kept::Keys;
use crate::model::{Prompt, PromptArgument};

/// The keys of a command that Gemini CLI reads, and so does its reader here; any other is
/// kept with the prompt, with a warning.
pub(in crate::library) const GEMINI_KEYS: Keys = Keys {
    read: &["prompt", "description"],
    host: &[],
    ours: false,
};

/// The placeholder Gemini CLI fills with the text after the command.
const ARGS: &str = "{{args}}";

/// Whether a `.toml` file's bytes have a Gemini CLI command's shape: TOML whose `prompt` is a
/// string, and whose other keys are at most a `description` string.
pub(in crate::library) fn is_gemini_command(bytes: &[u8]) -> bool {
    let Some(document) = std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| text.parse::<toml_edit::DocumentMut>().ok())
    else {
        return false;
    };
    document.get("prompt").is_some_and(|item| item.is_str())
        && document.iter().all(|(key, item)| match key {
            "prompt" => true,
            "description" => item.is_str(),
            _ => false,
        })
}

pub(in crate::library) fn gemini_command(text: &str, source: Source) -> Result<Prompt, FileError> {
    let document: toml_edit::DocumentMut = text.parse().map_err(|err: toml_edit::TomlError| {
        let line = err
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() as u64 + 1);
        FileError::new(
            source.path,
            line,
            format!("not valid TOML: {}", err.message()),
        )
    })?;
    let line_of = |key: &str| {
        text.lines()
            .position(|line| line.trim_start().starts_with(key))
            .map(|index| index as u64 + 1)
    };
    let string = |key: &str| -> Result<Option<String>, FileError> {
        match document.get(key) {
            None => Ok(None),
            Some(item) => match item.as_str() {
                Some(text) => Ok(Some(text.to_string())),
                None => Err(FileError::new(
                    source.path,
                    line_of(key),
                    format!("`{key}` must be a string, e.g. {key} = \"...\""),
                )),
            },
        }
    };
    let description = string("description")?;
    let Some(body) = string("prompt")? else {
        return Err(FileError::new(
            source.path,
            Some(1),
            "a Gemini CLI command needs its text in `prompt = \"...\"`",
        ));
    };
    let mut arguments = Vec::new();
    let takes_args = body.contains(ARGS);
    if takes_args {
        arguments.push(PromptArgument {
            name: "args".to_string(),
            description: Some(CLAUDE_ALL_ARGUMENTS_DESCRIPTION.to_string()),
            ..PromptArgument::default()
        });
    }
    let template = translate(&body, |rest| {
        rest.starts_with(ARGS).then(|| (var("args"), ARGS.len()))
    });
    let name = source.default_name.to_string();
    let prompt = finish(description, arguments, &body, &template, &name, source)?;
    if takes_args {
        return Ok(prompt);
    }
    let description = CLAUDE_ALL_ARGUMENTS_DESCRIPTION.to_string();
    Ok(appended(prompt, "args", description, &gemini_lead(&name)))
}

/// What Gemini CLI would run (`!{...}`) or read (`@{...}`) in the `prompt` of the command
/// `text`, at their lines of the file.
pub(in crate::library) fn gemini_warning(text: &str, path: &str) -> Option<FileError> {
    let document = toml_edit::Document::parse(text).ok()?;
    let span = document.as_table().get("prompt")?.span()?;
    let raw = text.get(span.clone())?;
    let mut found: Vec<(usize, &str)> = Vec::new();
    for (trigger, what) in [
        ("!{", "run a shell command (`!{...}`)"),
        ("@{", "read a file (`@{...}`)"),
    ] {
        found.extend(raw.match_indices(trigger).map(|(at, _)| (at, what)));
    }
    found.sort();
    let lines: Vec<(&str, u64)> = found
        .into_iter()
        .map(|(at, what)| {
            let line = text[..span.start + at].matches('\n').count() as u64 + 1;
            (what, line)
        })
        .collect();
    runs_warning(path, "Gemini CLI", &lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::dialect::tests::source;

    #[test]
    fn args_becomes_the_argument_and_the_rest_is_text() {
        let prompt = gemini_command(
            "description = \"Commit\"\nprompt = \"\"\"\nCommit {{args}}; run !{git diff} {{ x }}\"\"\"\n",
            source(),
        )
        .unwrap();
        assert_eq!(prompt.description.as_deref(), Some("Commit"));
        assert_eq!(prompt.arguments[0].name, "args");
        assert_eq!(
            prompt.messages[0].body,
            "Commit {{ args }}; run !{git diff} {{ \"{{\" }} x }}"
        );
    }

    #[test]
    fn what_gemini_cli_runs_or_reads_in_the_prompt_is_warned_about_at_its_lines() {
        let text = "description = \"Uses !{x} and @{y}\"\nprompt = \"\"\"\nRead @{a.md}\n\
                    then !{ls} and !{pwd}\n\"\"\"\n";
        let warning = gemini_warning(text, "c.toml").expect("a warning");
        assert_eq!(warning.line, Some(3));
        assert!(
            warning.message.contains("read a file (`@{...}`) on line 3")
                && warning
                    .message
                    .contains("and run a shell command (`!{...}`) on line 4 when"),
            "{warning}"
        );
        assert_eq!(
            gemini_warning("prompt = \"Plain {{args}}\"\n", "c.toml"),
            None
        );
        let prompt = gemini_command("prompt = \"Do it\"\n", source()).unwrap();
        assert_eq!(
            prompt.messages[0].body,
            "Do it{% if args %}\n\n/review {{ args }}{% endif %}"
        );
    }

    #[test]
    fn the_shape_of_a_command_is_a_prompt_string_and_a_description() {
        assert!(is_gemini_command(b"description = \"d\"\nprompt = \"p\"\n"));
        assert!(!is_gemini_command(b"prompt = 3\n"));
        assert!(!is_gemini_command(b"[package]\nname = \"x\"\n"));
        assert!(!is_gemini_command(b"prompt = \"p\"\nmodel = \"m\"\n"));
        assert!(!is_gemini_command(b"not toml = = \n"));
    }

    #[test]
    fn bad_files_are_refused_at_their_line() {
        let err = gemini_command("description = \"x\"\nprompt = \n", source()).unwrap_err();
        assert_eq!(err.line, Some(2), "{err}");
        let err = gemini_command("description = \"x\"\n", source()).unwrap_err();
        assert_eq!(err.line, Some(1), "{err}");
        assert!(err.message.contains("prompt = "), "{err}");
        let err = gemini_command("prompt = 3\n", source()).unwrap_err();
        assert_eq!(err.line, Some(1), "{err}");
        assert!(err.message.contains("must be a string"), "{err}");
    }
}
