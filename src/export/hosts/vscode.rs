//! VS Code prompt files: `.github/prompts/NAME.prompt.md` with `name` (when the file name
//! cannot be it), `description` and `agent` in the front matter, and each argument written
//! `${input:name:description}`, which VS Code asks for when the prompt is run, except the
//! arguments an import made of VS Code's editor variables, written back as those variables
//! (`${file}`, `${selection}`), which VS Code fills in itself.

use super::{File, Lost, Source, Written, command_text, flat_file_name, kept_front};
use crate::export::body::Piece;
use crate::library::yaml::scalar;
use crate::library::{vscode_fills, vscode_variable};

pub(super) fn file(source: &Source, lost: &mut Lost) -> Option<Written> {
    let prompt = source.prompt;
    if !prompt.icons.is_empty() {
        lost.say("its icons");
    }
    lost.argument_details(prompt);
    if prompt.arguments.iter().any(|a| !a.required) {
        lost.say("optional arguments (VS Code asks for every ${input:...})");
    }
    let mut described = Vec::new();
    let body = command_text(
        source,
        lost,
        |text| text.to_string(),
        |name, _| {
            let Some(argument) = prompt.arguments.iter().find(|a| a.name == name) else {
                return String::new();
            };
            // An editor variable stays one: VS Code fills it in, nobody types it.
            if let Some(variable) = vscode_variable(argument) {
                return format!("${{{variable}}}");
            }
            let placeholder = argument
                .description
                .as_ref()
                .or(argument.title.as_ref())
                .filter(|_| !described.contains(&argument.name))
                // VS Code ends the placeholder at its first `}`, and a line break ends the
                // variable; the read back says when the description changes.
                .map(|text| text.replace(['}', '\n', '\r'], " ").trim().to_string())
                .filter(|text| !text.is_empty());
            described.push(argument.name.clone());
            match placeholder {
                Some(text) => format!("${{input:{name}:{text}}}"),
                None => format!("${{input:{name}}}"),
            }
        },
    );
    let fills = |text: &str| {
        text.match_indices("${")
            .any(|(at, _)| vscode_fills(&text[at..]))
    };
    if source
        .pieces
        .iter()
        .any(|piece| matches!(piece, Piece::Text(text) | Piece::Code(text) if fills(text)))
    {
        lost.say("text that VS Code fills in as a variable (`${file}`, `${input:...}`)");
    }
    let file_name = flat_file_name(&prompt.name);
    let mut front = String::new();
    if file_name != prompt.name {
        front.push_str(&format!("name: {}\n", scalar(&prompt.name)));
    }
    if let Some(description) = &prompt.description {
        front.push_str(&format!("description: {}\n", scalar(description)));
    }
    // A key only VS Code uses, so that an import reads the file as VS Code's (its text as
    // written) rather than as a template of ours: the file's own when it kept one.
    let kept = kept_front(prompt, &crate::library::VSCODE_HOST_KEYS);
    if !["agent", "mode"]
        .iter()
        .any(|key| prompt.meta.contains_key(*key))
    {
        front.push_str("agent: agent\n");
    }
    front.push_str(&kept);
    let path = format!(".github/prompts/{file_name}.prompt.md");
    let text = format!("---\n{front}---\n{}\n", body.trim_end());
    Some(Written {
        files: vec![File {
            path: path.clone(),
            bytes: text.into_bytes(),
        }],
        prompt_file: path,
    })
}
