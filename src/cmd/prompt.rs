//! `promptshelf prompt`.

use anyhow::Result;

use crate::cli::PromptCommand;
use crate::store::Store;

pub fn run(store: &Store, command: PromptCommand) -> Result<()> {
    let _ = (store, command);
    anyhow::bail!("prompt is being written")
}
