//! Cursor commands (`.cursor/commands/NAME.md`): plain markdown that Cursor sends as it is,
//! with the text typed after the command beside it, so the whole file is the prompt's text
//! and that text is its one optional argument, `arguments`, after a blank line.

use super::{BLANK_LINE_LEAD, Source, appended, finish, translate};
use crate::library::FileError;
use crate::library::dialect::{CLAUDE_ALL_ARGUMENTS, CLAUDE_ALL_ARGUMENTS_DESCRIPTION};
use crate::model::Prompt;

pub(in crate::library) fn cursor_command(body: &str, source: Source) -> Result<Prompt, FileError> {
    let template = translate(body, |_| None);
    let name = source.default_name.to_string();
    let prompt = finish(None, Vec::new(), body, &template, &name, source)?;
    Ok(appended(
        prompt,
        CLAUDE_ALL_ARGUMENTS,
        CLAUDE_ALL_ARGUMENTS_DESCRIPTION.to_string(),
        BLANK_LINE_LEAD,
    ))
}
