//! `promptshelf serve`: the MCP server on stdin/stdout.

use std::path::Path;

use anyhow::Result;

use crate::cli::ServeArgs;

pub fn run(db: &Path, args: ServeArgs) -> Result<()> {
    let _ = (db, args);
    anyhow::bail!("serve is being written")
}
