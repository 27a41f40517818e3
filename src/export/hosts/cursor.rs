//! Cursor commands: `.cursor/commands/NAME.md`, plain markdown without front matter. Cursor
//! puts the text typed after the command beside the file's text and fills in nothing, so each
//! argument is written `<name>` and a closing list says what each one is.

use super::{File, Lost, Source, Written, arguments_note, command_text, flat_file_name};

pub(super) fn file(source: &Source, lost: &mut Lost) -> Option<Written> {
    let prompt = source.prompt;
    if !prompt.icons.is_empty() {
        lost.say("its icons");
    }
    if !prompt.arguments.is_empty() {
        lost.arguments_in_text("they are named in the text, for the model");
    }
    lost.argument_details(prompt);
    let body = command_text(
        source,
        lost,
        |text| text.to_string(),
        |name, _| format!("<{name}>"),
    );
    let path = format!(".cursor/commands/{}.md", flat_file_name(&prompt.name));
    // A body that starts with `---` would read as front matter; a blank line keeps it text.
    let lead = if body.starts_with("---") { "\n" } else { "" };
    let text = format!(
        "{lead}{}{}\n",
        body.trim_end(),
        arguments_note(prompt).trim_end()
    );
    Some(Written {
        files: vec![File {
            path: path.clone(),
            bytes: text.into_bytes(),
        }],
        prompt_file: path,
    })
}
