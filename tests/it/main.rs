//! The integration tests: one test crate (so the binary and the schemas are built and loaded
//! once), one module per part. Every test runs the real `promptshelf` binary against a real
//! SQLite file in a temporary folder.

mod common;

mod advice;
mod channels;
mod check_host;
mod cli;
mod collections;
mod collections_real;
mod commands;
mod completion;
mod config;
mod conformance;
mod edit;
mod elicitation;
mod exports;
mod hidden;
mod history;
mod host_semantics;
mod hosts;
mod http;
mod http_guards;
mod http_ops;
mod import;
mod interop;
mod keep;
mod labels;
mod metadata;
mod modules;
mod namespaces;
mod node;
mod notifications;
mod oauth;
mod ownership;
mod provenance;
mod readonly;
mod render;
mod replaced;
mod replica;
mod round_trip;
mod search;
mod server;
mod signing;
mod skill_folders;
mod skills;
mod sqlite_tools;
mod store_errors;
mod sync;
mod terminal;
mod tokens;
mod tools;
mod validate;
