//! promptshelf keeps a library of prompt templates and reference documents in one SQLite
//! file and serves it to AI hosts over MCP stdio.
//!
//! Layout of the crate (ARCHITECTURE.md has the picture):
//! - `model`: the plain data (prompts, resources, templates, completion tables).
//! - `store`: the SQLite database: schema, reads, writes, content hashes.
//! - `library`: the markdown folder format, one file at a time; `seed` loads the embedded
//!   default library through it.
//! - `import`, `export`: whole folders into the store and back out.
//! - `protocol`: JSON-RPC and MCP messages, both eras; the only module that knows JSON-RPC.
//! - `server`: the stdio loop: the reader thread dispatches (and answers itself what is
//!   kept and quick), other requests run on tokio's blocking pool, one writer coalesces (an
//!   answer a waiting client is alone in wanting is written by its own thread); a watcher
//!   notices other processes' commits.
//! - `handlers`: one module per MCP method group, plain functions of (request, store).
//! - `render`: prompt templates (minijinja) to messages with embeds and links.
//! - `memo`: maps with a budget, for what the server keeps between requests.
//! - `complete`: ranking of completion candidates, and the per-table in-memory indexes that
//!   rank large completion tables.
//! - `uri_template`: RFC 6570 expansion and matching.
//! - `pattern`: compiled regular expressions (argument patterns, template matchers) with the
//!   memory each takes counted.
//! - `check`: the library lint behind `promptshelf check`.
//! - `oauth`: `serve --auth oauth`'s check of an access token (a JWT against the
//!   authorization server's keys) and what its scopes see.
//! - `visibility`: what a caller sees (the whole library, or a token's collections), which
//!   every answer is made for.
//! - `cli`, `cmd`, `config`, `logging`: the command line and what it runs on; `shell`: the
//!   shell completion scripts and the names they offer; `hosts`: the MCP hosts' own files
//!   that `config` writes the server's entry into.

pub mod arguments;
pub mod check;
pub mod cli;
pub mod cmd;
pub mod complete;
pub mod config;
pub mod export;
pub mod handlers;
pub mod hosts;
pub mod import;
pub mod library;
pub mod logging;
mod memo;
pub mod model;
pub mod oauth;
pub mod pattern;
pub mod protocol;
pub mod render;
pub mod seed;
pub mod server;
pub mod shell;
pub mod store;
pub mod suggest;
pub mod uri_template;
pub mod validate;
pub mod visibility;
