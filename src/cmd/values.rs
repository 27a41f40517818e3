//! `promptshelf values`.

use anyhow::Result;

use crate::cli::ValuesCommand;
use crate::store::Store;

pub fn run(store: &Store, command: ValuesCommand) -> Result<()> {
    let _ = (store, command);
    anyhow::bail!("values is being written")
}
