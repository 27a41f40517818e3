//! `promptshelf template`.

use anyhow::Result;

use crate::cli::TemplateCommand;
use crate::store::Store;

pub fn run(store: &Store, command: TemplateCommand) -> Result<()> {
    let _ = (store, command);
    anyhow::bail!("template is being written")
}
