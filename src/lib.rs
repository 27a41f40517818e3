//! promptshelf keeps a library of prompt templates and reference documents in one SQLite
//! file and serves it to AI hosts over MCP stdio.
//!
//! Layout of the crate:
//! - `model`: the plain data (prompts, resources, templates, completion tables).
//! - `store`: the SQLite database: schema, reads, writes, content hashes.

pub mod cli;
pub mod cmd;
pub mod library;
pub mod logging;
pub mod model;
pub mod seed;
pub mod store;
