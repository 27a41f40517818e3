//! Gemini CLI commands: `.gemini/commands/NAME.toml` with `description` and `prompt`; a name
//! with `/` nests (`git/commit` is `git/commit.toml`, run as `/git:commit`). Gemini CLI passes
//! the text after the command as one `{{args}}`, so a prompt with one argument writes it
//! there; with more, each is written `<name>` and named in a closing list, and Gemini CLI
//! appends the text after the command (it does so when the prompt has no `{{args}}`).

use super::{File, Lost, Source, Written, arguments_note, command_text};
use crate::export::safe_segment;

pub(super) fn file(source: &Source, lost: &mut Lost) -> Option<Written> {
    let prompt = source.prompt;
    if !prompt.icons.is_empty() {
        lost.say("its icons");
    }
    let single = prompt.arguments.len() == 1;
    if prompt.arguments.len() > 1 {
        lost.arguments_in_text("Gemini CLI passes one text; they are named in it");
    }
    lost.argument_details(prompt);
    let body = command_text(
        source,
        lost,
        |text| text.to_string(),
        |name, _| {
            if single && prompt.arguments[0].name == name {
                "{{args}}".to_string()
            } else {
                format!("<{name}>")
            }
        },
    );
    // A Gemini CLI command's own `!{...}` and `@{...}` do in Gemini CLI what they did before
    // (a prompt read from a `.toml` file is a Gemini CLI command's: no other file is one).
    let from_gemini = prompt
        .origin
        .path
        .as_deref()
        .is_some_and(|path| path.ends_with(".toml"));
    if !from_gemini
        && source.pieces.iter().any(|piece| {
            matches!(piece, crate::export::body::Piece::Text(text)
            if text.contains("{{args}}") || text.contains("!{") || text.contains("@{"))
        })
    {
        lost.say(
            "text with `{{args}}`, `!{` or `@{` in it, which Gemini CLI fills in, runs as a \
             shell command or reads as a file",
        );
    }
    let note = if single {
        String::new()
    } else {
        arguments_note(prompt)
    };
    let mut document = toml_edit::DocumentMut::new();
    if let Some(description) = &prompt.description {
        document["description"] = toml_edit::value(description.as_str());
    }
    document["prompt"] = toml_edit::value(format!("{}{}\n", body.trim_end(), note.trim_end()));
    let segments: Vec<String> = prompt.name.split('/').map(safe_segment).collect();
    let path = format!(".gemini/commands/{}.toml", segments.join("/"));
    Some(Written {
        files: vec![File {
            path: path.clone(),
            bytes: document.to_string().into_bytes(),
        }],
        prompt_file: path,
    })
}
