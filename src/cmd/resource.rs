//! `promptshelf resource`.

use anyhow::Result;

use crate::cli::ResourceCommand;
use crate::store::Store;

pub fn run(store: &Store, command: ResourceCommand) -> Result<()> {
    let _ = (store, command);
    anyhow::bail!("resource is being written")
}
