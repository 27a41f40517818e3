//! `promptshelf completions SHELL`: prints the script that registers shell completion
//! (`shell` has the rest). It calls back the binary that printed it, by its full path, so a
//! script written by one build completes with that build.

use anyhow::{Context, Result};

use super::common;
use crate::shell::{self, Shell};

pub(super) fn run(shell: Shell) -> Result<()> {
    let binary = std::env::current_exe()
        .context("cannot tell where this promptshelf binary is, which the script must call back")?;
    let binary = binary.to_str().context(
        "the path of this promptshelf binary is not UTF-8, which a completion script cannot hold",
    )?;
    let mut out = common::stdout();
    shell::write_script(shell, binary, &mut out)?;
    std::io::Write::flush(&mut out)?;
    Ok(())
}
