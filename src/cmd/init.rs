//! `promptshelf init`: creates the library database, with the seed library or empty, and
//! says where it is. Every other command creates a missing database from the seed too;
//! `init` is for starting on purpose, and the only way to start empty.

use std::path::Path;

use anyhow::{Result, anyhow};

use super::common;
use crate::store::{self, Access, Store};

pub(super) fn run(db: &Path, empty: bool) -> Result<()> {
    let shown = std::path::absolute(db)
        .unwrap_or_else(|_| db.to_path_buf())
        .display()
        .to_string();
    if db.exists() {
        return Err(anyhow!(
            "{shown} already exists; pick another file with --db PATH, or remove it first to \
             start again (its prompts and resources go with it)"
        ));
    }
    let store = if empty {
        Store::open(db, Access::ReadWrite, |_| Ok(()))?
    } else {
        Store::open(db, Access::ReadWrite, crate::seed::load)?
    };
    let stats = store::read::stats(&*store.conn()?)?;
    store.close();
    let what = if empty {
        "an empty library".to_string()
    } else {
        format!(
            "the seed library ({}, {})",
            common::count(stats.prompts, "prompt", "prompts"),
            common::count(stats.resources, "resource", "resources")
        )
    };
    common::say(&format!("created {shown} with {what}"))
}
