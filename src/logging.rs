//! Logs go to stderr through `tracing`, level from `RUST_LOG` (default: warnings), so stdout
//! carries nothing but protocol messages and command output.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

pub fn init() {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal());
    // Without RUST_LOG a plain level does: building an EnvFilter costs a start about as much
    // as answering a request.
    let _ = match std::env::var_os(EnvFilter::DEFAULT_ENV) {
        Some(_) => builder
            .with_env_filter(
                EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
            )
            .try_init(),
        None => builder.with_max_level(LevelFilter::WARN).try_init(),
    };
}
