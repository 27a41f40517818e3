//! Interoperability with a client nobody here wrote: the official MCP Python SDK drives the real
//! binary through `tests/interop/python_client.py`. The SDK lives in a virtual environment under
//! the target directory, created (and the SDK installed from PyPI) on first use, so a fresh
//! machine needs only Python 3.10+ with `venv` and network access to PyPI.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::{BIN, TestContext, run_bounded, target_dir};
use crate::http::HttpServer;

/// The SDK version the script was written and tested against. Pinned because the script uses
/// the 2.x client API (`ClientSession.discover`, `protocol_version`, `server_capabilities`) and
/// expects the SDK's newest handshake revision to be 2025-11-25: a new SDK release could change
/// either and fail CI for reasons that have nothing to do with the server. Bump it on purpose,
/// after running the test against the new version.
const MCP_SDK: &str = "2.3.0";

/// The oldest Python the pinned SDK installs on (its `Requires-Python`).
const PYTHON_MIN: (u32, u32) = (3, 10);

/// A bound on the whole script; it bounds each era itself, this only catches a hung interpreter.
/// The client script that drives the official Python SDK.
const CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/interop/python_client.py"
);

pub(crate) const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

#[test]
fn the_official_python_sdk_can_use_the_server() {
    let python = interop_python();
    let ctx = TestContext::new();
    let command = python_client(&python, &ctx.db);
    let started = Instant::now();
    let (status, stdout, stderr) = run_bounded(command, &ctx, "interop", SCRIPT_TIMEOUT);
    let elapsed = started.elapsed();
    let shown = format!(
        "{} {} {BIN} {}\nstatus: {status}, after {elapsed:.1?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        python.display(),
        CLIENT,
        ctx.db.display()
    );
    assert!(
        status.success(),
        "the MCP Python SDK could not use the server\n{shown}"
    );
    // Exit status 0 with no summary (or "0 passed") would mean the script checked nothing.
    let summary = stdout
        .lines()
        .find_map(|line| line.strip_prefix("interop: "))
        .unwrap_or_else(|| panic!("the script printed no 'interop:' summary\n{shown}"));
    let passed = summary
        .strip_suffix(" passed, 0 failed")
        .and_then(|count| count.parse::<u32>().ok())
        .unwrap_or(0);
    assert!(
        passed > 0,
        "unexpected summary 'interop: {summary}'\n{shown}"
    );
    // The tool mirrors were used in both eras (a check that did not run is not a pass).
    for era in ["legacy", "modern"] {
        for tool in [
            "list_prompts",
            "get_prompt",
            "list_resources",
            "read_resource",
            "get_prompt with a bad argument",
        ] {
            let check = format!("ok   [{era} --tools] tools/call {tool}");
            assert!(
                stdout.lines().any(|line| line.starts_with(&check)),
                "no '{check}'\n{shown}"
            );
        }
    }
    // The server's own forms reached the SDK's callback in a legacy session.
    for outcome in [
        "accepted",
        "declined",
        "cancelled",
        "unanswered until --elicitation-timeout",
    ] {
        let check = format!("ok   [legacy] elicitation/create {outcome}");
        assert!(
            stdout.lines().any(|line| line.starts_with(&check)),
            "no '{check}'\n{shown}"
        );
    }
    // Shown with --nocapture: the negotiated versions and each check's result.
    println!("{shown}");
}

#[test]
fn the_official_python_sdk_can_use_the_server_over_http() {
    let python = interop_python();
    let ctx = TestContext::new();
    // Served as a team would: a bearer token on every request (the SDK's HTTP client sends
    // the header the script is given).
    let added = ctx.json(&["token", "add", "interop", "--json"]);
    let token = added["token"].as_str().expect("a token").to_string();
    let server = HttpServer::start(&ctx.db, &["--auth", "token"]);
    let mut command = python_client(&python, &ctx.db);
    command
        .arg("--http")
        .arg(server.url())
        .arg("--token")
        .arg(&token);
    let (status, stdout, stderr) = run_bounded(command, &ctx, "interop-http", SCRIPT_TIMEOUT);
    let shown = format!(
        "{} {} {BIN} {} --http {}\nstatus: {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- server's stderr\n{}",
        python.display(),
        CLIENT,
        ctx.db.display(),
        server.url(),
        server.stderr()
    );
    assert!(
        status.success(),
        "the MCP Python SDK could not use the server over HTTP\n{shown}"
    );
    assert!(
        stdout
            .lines()
            .any(|line| line.ends_with(" passed, 0 failed")),
        "no summary\n{shown}"
    );
    // Both eras ran over HTTP, each through the reads and the notification of a CLI write.
    for check in [
        "[legacy http] handshake",
        "[legacy http] prompts/get summarize",
        "[legacy http] resources/read text",
        "[legacy http] completion/complete code-review language",
        "[legacy http] list_changed notification",
        "[modern http] handshake",
        "[modern http] prompts/get summarize",
        "[modern http] resources/read text",
        "[modern http] completion/complete code-review language",
        "[modern http] subscriptions/listen notification",
    ] {
        let ok = format!("ok   {check}");
        assert!(
            stdout.lines().any(|line| line.starts_with(&ok)),
            "no '{ok}'\n{shown}"
        );
    }
    println!("{shown}");
}

/// The Python interpreter of `<target>/interop-venv`, with `mcp==MCP_SDK` installed.
///
/// Fails (never skips) with what to install when Python, `venv` or `pip` is missing: a missing
/// tool must not turn the interop check into a silent pass. Tests running at once wait for
/// one install: a second `venv --clear` would empty the folder under the first one's pip.
/// `python tests/interop/python_client.py BIN DB`, the official SDK's client driving this
/// binary on the library `db`, with the environment's own Python paths left out; callers add
/// the mode's arguments. Our variables must not steer the interpreter or the server it starts.
pub(crate) fn python_client(python: &Path, db: &Path) -> Command {
    let mut command = Command::new(python);
    command
        .arg(CLIENT)
        .arg(BIN)
        .arg(db)
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME");
    command
}

pub(crate) fn interop_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(install_interop_python).clone()
}

fn install_interop_python() -> PathBuf {
    let venv = target_dir().join("interop-venv");
    let python = venv_python(&venv);

    if python.exists() && installed_sdk(&python).as_deref() == Some(MCP_SDK) {
        return python;
    }

    if !python.exists() || run(Command::new(&python).arg("--version")).is_none() {
        check_system_python();
        // --clear: a folder left by an interrupted run is rebuilt rather than trusted.
        let output = run(Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv))
        .expect("python3 ran a moment ago");
        assert!(
            output.status.success(),
            "could not create the virtual environment {} (on Debian and Ubuntu, install \
             python3-venv)\n{}",
            venv.display(),
            show(&output)
        );
    }

    let requirement = format!("mcp=={MCP_SDK}");
    let output = run(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        &requirement,
    ]))
    .expect("the virtual environment's python runs");
    assert!(
        output.status.success(),
        "could not install {requirement} into {} (it needs pip in the virtual environment and \
         network access to PyPI)\n{}",
        venv.display(),
        show(&output)
    );
    let installed = installed_sdk(&python);
    assert_eq!(
        installed.as_deref(),
        Some(MCP_SDK),
        "pip reported success, yet `import mcp` fails or finds another version in {}",
        venv.display()
    );
    python
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// The `mcp` version that `import mcp` finds, or None when the import fails.
fn installed_sdk(python: &Path) -> Option<String> {
    let output = run(Command::new(python).args([
        "-c",
        "import importlib.metadata, mcp; print(importlib.metadata.version('mcp'))",
    ]))?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Panics with what to install unless `python3` runs and is new enough for the SDK.
fn check_system_python() {
    let (major, minor) = PYTHON_MIN;
    let output =
        run(Command::new("python3")
            .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]))
        .unwrap_or_else(|| {
            panic!(
                "python3 is not installed; the interop test needs Python {major}.{minor} or newer \
             with the venv module (e.g. apt-get install python3 python3-venv) and network access \
             to PyPI"
            )
        });
    let found = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let version: Option<(u32, u32)> = found
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
    assert!(
        output.status.success() && version.is_some_and(|found| found >= PYTHON_MIN),
        "the interop test needs Python {major}.{minor} or newer (mcp {MCP_SDK} requires it); \
         python3 is '{found}'\n{}",
        show(&output)
    );
}

/// Runs to completion, capturing output; None when the program cannot be started.
fn run(command: &mut Command) -> Option<Output> {
    command
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME")
        .stdin(Stdio::null())
        .output()
        .ok()
}

fn show(output: &Output) -> String {
    format!(
        "status: {}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The official MCP TypeScript SDK over HTTP with a bearer token: its v1 package
/// (`@modelcontextprotocol/sdk`, the `initialize` handshake) and its v2 client
/// (`@modelcontextprotocol/client`) in both eras, through `tests/interop/ts_client.mjs`, at
/// the versions pinned in `tests/interop/package.json`.
#[test]
fn the_official_typescript_sdk_can_use_the_server_over_http() {
    let tools = crate::node::node_tools();
    let ctx = TestContext::new();
    let added = ctx.json(&["token", "add", "ts-interop", "--json"]);
    let token = added["token"].as_str().expect("a token").to_string();
    let server = HttpServer::start(&ctx.db, &["--auth", "token"]);
    let mut command = tools.script("ts_client.mjs");
    command.arg(server.url()).arg(&token);
    let (status, stdout, stderr) = run_bounded(command, &ctx, "ts-interop", SCRIPT_TIMEOUT);
    let shown = format!(
        "node ts_client.mjs {} TOKEN\nstatus: {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- server's stderr\n{}",
        server.url(),
        server.stderr()
    );
    assert!(
        status.success(),
        "the MCP TypeScript SDK could not use the server over HTTP\n{shown}"
    );
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with("ts-interop: ") && line.ends_with(" passed, 0 failed")),
        "no summary\n{shown}"
    );
    // Every client ran every check (a check that did not run is not a pass).
    for client in ["[legacy sdk]", "[legacy client]", "[modern client]"] {
        for check in [
            "handshake",
            "prompts/list",
            "prompts/get summarize",
            "resources/read text",
            "resources/read blob",
            "completion/complete code-review language",
            "resources/templates/list",
        ] {
            let ok = format!("ok   {client} {check}");
            assert!(
                stdout.lines().any(|line| line.starts_with(&ok)),
                "no '{ok}'\n{shown}"
            );
        }
    }
    // The eras the clients say they negotiated.
    for (client, version) in [
        ("[legacy sdk]", "2025-11-25"),
        ("[legacy client]", "2025-11-25"),
        ("[modern client]", "2026-07-28"),
    ] {
        let line = format!("ok   {client} handshake (protocol {version})");
        assert!(stdout.lines().any(|l| l == line), "no '{line}'\n{shown}");
    }
    println!("{shown}");
}
