//! VS Code prompt files (`*.prompt.md` with VS Code's keys or placeholders): `${input:...}`
//! and the editor variables become required arguments. A file without an input takes the
//! text typed after `/NAME`, which VS Code passes on with it, as one optional argument,
//! `arguments`, after a blank line.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::{BLANK_LINE_LEAD, Source, appended, finish, identifier, sanitize_name, translate, var};
use crate::library::FileError;
use crate::library::dialect::{CLAUDE_ALL_ARGUMENTS, CLAUDE_ALL_ARGUMENTS_DESCRIPTION};
use crate::library::front_matter::parse_yaml;
use crate::library::kept::Keys;
use crate::model::{Prompt, PromptArgument};

/// Front matter keys only VS Code prompt files use: VS Code reads them, and an export writes
/// them back.
pub(crate) const VSCODE_HOST_KEYS: [&str; 5] = ["mode", "agent", "model", "tools", "argument-hint"];

/// The keys a VS Code prompt file's reader takes, and VS Code's own, which are kept for an
/// export to write back.
pub(in crate::library) const VSCODE_KEYS: Keys = Keys {
    read: &["name", "description"],
    host: &VSCODE_HOST_KEYS,
    ours: false,
};
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
pub(in crate::library) fn is_vscode_prompt(front: Option<&str>, body: &str) -> bool {
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
    keys.iter()
        .any(|key| VSCODE_HOST_KEYS.contains(&key.as_str()))
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
    let (variable, argument, description) = VSCODE_VARIABLES
        .iter()
        .find(|(variable, _, _)| *variable == inner)?;
    Some(VsCodePlaceholder {
        argument: argument.to_string(),
        description: Some(variable_description(variable, description)),
        length,
    })
}

/// The description an editor variable's argument gets, which names the variable: it is how
/// an export knows the argument for the variable it was.
fn variable_description(variable: &str, description: &str) -> String {
    format!("{description} (VS Code's ${{{variable}}})")
}

/// Whether VS Code fills in the `${...}` at the start of `rest` (an input or an editor
/// variable), so that text holding it would not stay text in a prompt file.
pub(crate) fn vscode_fills(rest: &str) -> bool {
    vscode_placeholder(rest).is_some()
}

/// The editor variable (`file`, `selection`, ...) that `argument` is what an import made of:
/// its name and description as the import gives them. An export writes it back as that
/// variable, which VS Code fills in itself, rather than as an input the user must type.
pub(crate) fn vscode_variable(argument: &PromptArgument) -> Option<&'static str> {
    VSCODE_VARIABLES
        .iter()
        .find(|(variable, name, description)| {
            argument.name == *name
                && argument.description.as_deref()
                    == Some(variable_description(variable, description).as_str())
        })
        .map(|(variable, _, _)| *variable)
}

/// A VS Code prompt file: `${input:name:placeholder}` becomes the required argument `name`
/// described by the placeholder; the editor variables become required arguments too.
pub(in crate::library) fn vscode_prompt(
    front: Option<&str>,
    body: &str,
    source: Source,
) -> Result<Prompt, FileError> {
    let front: VsCodeFront = match front {
        Some(yaml) => parse_yaml(source.path, yaml)?,
        None => VsCodeFront::default(),
    };
    let mut arguments: Vec<PromptArgument> = Vec::new();
    let mut takes_input = false;
    for (at, _) in body.match_indices("${") {
        let Some(placeholder) = vscode_placeholder(&body[at..]) else {
            continue;
        };
        takes_input |= body[at..].starts_with("${input:");
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
    let prompt = finish(
        front.description,
        arguments,
        body,
        &template,
        &default_name,
        source,
    )?;
    if takes_input {
        return Ok(prompt);
    }
    // What is typed after `/NAME` goes to the model with the prompt (`/create-api for listing
    // customers`); where no input takes it, it is added at the end, as Cursor's is.
    Ok(appended(
        prompt,
        CLAUDE_ALL_ARGUMENTS,
        CLAUDE_ALL_ARGUMENTS_DESCRIPTION.to_string(),
        BLANK_LINE_LEAD,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::dialect::tests::{
        marked_values, rendered_text, source, substituted, tricky_bodies,
    };

    #[test]
    fn placeholders_in_any_body_render_their_values_and_nothing_else_changes() {
        for body in tricky_bodies() {
            if let Ok(prompt) = vscode_prompt(None, &body, source()) {
                let values = marked_values(&prompt);
                let mut takes_input = false;
                let mut expected = substituted(&body, |rest| {
                    let found = vscode_placeholder(rest)?;
                    takes_input |= rest.starts_with("${input:");
                    Some((format!("<{}>", found.argument), found.length))
                });
                // Without an input, the text after the command comes at the end.
                if !takes_input {
                    expected.push_str("\n\n<arguments>");
                }
                assert_eq!(rendered_text(&prompt, &values, &body), expected, "{body:?}");
            }
        }
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
        // The argument made of `${file}` is known as that variable; an input is not.
        assert_eq!(vscode_variable(&prompt.arguments[1]), Some("file"));
        assert_eq!(vscode_variable(&prompt.arguments[0]), None);
        let input = vscode_prompt(None, "Open ${input:file}\n", source()).unwrap();
        assert_eq!(vscode_variable(&input.arguments[0]), None);
        let selected = vscode_prompt(None, "Fix ${selectedText}\n", source()).unwrap();
        assert_eq!(
            vscode_variable(&selected.arguments[0]),
            Some("selectedText")
        );
        assert!(vscode_fills("${workspaceFolder}/x") && !vscode_fills("${env:HOME}"));
    }
}
