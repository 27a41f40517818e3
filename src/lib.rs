//! promptshelf keeps a library of prompt templates, reference documents, resource templates
//! and completion tables in one SQLite file, with the history of every change, and is three
//! things over it: an MCP server (`serve`) on stdio or over Streamable HTTP (bearer tokens
//! or OAuth, each caller seeing its collections); an admin CLI that reads and writes the
//! library; and a bridge to the hosts' own files, importing their prompt, command and skill
//! files, exporting the library as them, and keeping the hosts' folders in step (`sync`).
//!
//! Layout of the crate (ARCHITECTURE.md has the map):
//! - `cli`, `cmd`, `config`, `logging`: the command line, each command carried out, the
//!   settings `serve` runs on, logs to stderr; `shell`: shell completion.
//! - `model`: the plain data (prompts, resources, templates, completion tables).
//! - `store`: the SQLite database: schema, reads, writes, history, search, tokens.
//! - `library`: the folder format, one file at a time (ours and other tools'); `seed` loads
//!   the embedded default library through it; `validate` and `check` judge what it reads.
//! - `import`, `export`, `sync`: whole folders into the store, back out (in our format or
//!   a host's), and kept in step in the hosts' own folders; `hosts`: the hosts, what each
//!   shows (`check --host`) and the settings files `config` registers the server in.
//! - `protocol`: JSON-RPC and MCP messages, both eras; the only module that knows JSON-RPC.
//! - `server`: both transports and their one request path: stdio's reader, pool and writer,
//!   Streamable HTTP on hyper (`server::http`), what is kept between requests, and the
//!   watcher that notices other processes' commits.
//! - `handlers`: one module per MCP method group, plain functions of (request, store).
//! - `render`: prompt templates (minijinja) to messages with embeds and links;
//!   `arguments`: argument types checked and described.
//! - `complete`: ranking of completion candidates, and the per-table indexes.
//! - `memo`: maps with a budget, for what the server keeps between requests.
//! - `uri_template`: RFC 6570 expansion and matching; `pattern`: compiled regular
//!   expressions with the memory each takes counted.
//! - `visibility`: what a caller sees; `oauth`: `serve --auth oauth`'s token check;
//!   `http_client`: the HTTP requests the program makes itself (OAuth key sets, `sync --from`).

// Only what main, the benches and the fuzz crate use is `pub`; the rest is `pub(crate)`, so
// rustc's dead_code lint finds what nothing uses, and this lint keeps a stray `pub` out.
#![warn(unreachable_pub)]

pub mod arguments;
mod check;
pub mod cli;
pub mod cmd;
pub mod complete;
pub mod config;
pub mod export;
pub mod handlers;
mod hosts;
mod http_client;
pub mod import;
pub mod library;
pub mod logging;
mod memo;
pub mod model;
mod oauth;
mod pattern;
pub mod protocol;
pub mod render;
pub mod seed;
pub mod server;
pub mod shell;
mod signing;
pub mod store;
mod suggest;
mod sync;
pub mod uri_template;
mod validate;
pub mod visibility;
