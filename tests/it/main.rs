//! The integration tests: one test crate (so the binary and the schemas are built and loaded
//! once), one module per part. Every test runs the real `promptshelf` binary against a real
//! SQLite file in a temporary folder.

mod common;

mod cli;
mod commands;
mod completion;
mod config;
mod elicitation;
mod exports;
mod hosts;
mod import;
mod interop;
mod notifications;
mod readonly;
mod render;
mod replaced;
mod replica;
mod search;
mod server;
mod store_errors;
mod terminal;
mod tools;
mod validate;
