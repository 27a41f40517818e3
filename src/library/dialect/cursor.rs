//! Cursor commands (`.cursor/commands/NAME.md`): plain markdown that Cursor sends as it is,
//! with the text typed after the command beside it, so the whole file is the prompt's text
//! and there are no arguments.

use super::{Source, finish, translate};
use crate::library::FileError;
use crate::model::Prompt;

pub(in crate::library) fn cursor_command(body: &str, source: Source) -> Result<Prompt, FileError> {
    let template = translate(body, |_| None);
    let name = source.default_name.to_string();
    finish(None, Vec::new(), body, &template, &name, source)
}
