//! The `promptshelf` binary: parses the command line, runs the command, turns the outcome
//! into an exit code. A closed stdout (e.g. `promptshelf prompt list | head -1`) is normal.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

fn main() -> ExitCode {
    // A completion script asking for candidates gets them, and the process ends there.
    clap_complete::CompleteEnv::with_factory(promptshelf::cli::Cli::command)
        .var(promptshelf::shell::VARIABLE)
        .complete();
    let cli = promptshelf::cli::Cli::parse();
    promptshelf::logging::init();
    match promptshelf::cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("promptshelf: {err:#}");
            ExitCode::from(promptshelf::cmd::exit_code(&err))
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
