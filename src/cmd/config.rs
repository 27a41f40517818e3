//! `promptshelf config HOST`: prints host registration.

use std::path::Path;

use anyhow::Result;

use crate::cli::Host;

pub fn run(db: &Path, host: Host) -> Result<()> {
    let _ = (db, host);
    anyhow::bail!("config is being written")
}
