//! `promptshelf stats`.

use anyhow::Result;

use crate::cli::JsonFlag;
use crate::store::Store;

pub fn run(store: &Store, flags: JsonFlag) -> Result<()> {
    let _ = (store, flags);
    anyhow::bail!("stats is being written")
}
