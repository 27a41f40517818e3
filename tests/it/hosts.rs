//! Real hosts reading what `config HOST --write` and `export --format` wrote, with `HOME`
//! pointing at a temporary folder. NEEDS THE NPM REGISTRY (and `node` with `npm`): the hosts' own command lines, at the
//! versions pinned in `HOST_CLIS`, are installed into `<target>/host-clis` on first use and
//! reused after that, the way `interop` keeps the Python SDK in a virtual environment there.
//!
//! - Claude Code (`@anthropic-ai/claude-code`): `claude mcp list` starts the user-scope server
//!   and must report it connected. No account is needed to list.
//! - Gemini CLI (`@google/gemini-cli`): `gemini mcp list`, with `GEMINI_CLI_TRUST_WORKSPACE=true`
//!   (it starts servers only in a trusted folder), must report it connected.
//! - Codex (`@openai/codex`): `codex mcp get promptshelf --json` only prints the configuration
//!   it read (it starts nothing), so the entry it prints is checked.
//! - `sync codex --scope user`: Codex renders the model's prompt input, whose skills catalog
//!   must list a skill sync wrote into `~/.agents/skills`; `sync gemini --scope project` of
//!   an imported skill folder: `gemini skills list` must list it from `.gemini/skills`.
//! - `export --format skills`: Codex renders the model's prompt input (`codex debug
//!   prompt-input`), whose skills catalog must list the exported skill, and `gemini skills list` must list it
//!   enabled. Neither needs an account. Gemini CLI lists its custom commands only inside a
//!   session, and Claude Code lists commands and skills only in one, so those exports are
//!   checked by parsing their files (tests/it/exports.rs).
//!
//! The other hosts have no command line on npm that reads their MCP configuration: Claude
//! Desktop, VS Code, Cursor, Zed and Windsurf are desktop applications, Goose is not on npm,
//! and Continue's `cn` has no `mcp` subcommand. `tests/it/config.rs` checks their files.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

use crate::common::{BIN, Home, TestContext, describe, run_bounded, target_dir};

/// The versions these checks were written against, pinned so that a new release cannot fail
/// CI for reasons that have nothing to do with the server. Bump them on purpose.
const HOST_CLIS: &[(&str, &str)] = &[
    ("@anthropic-ai/claude-code", "2.1.197"),
    ("@google/gemini-cli", "0.61.0"),
    ("@openai/codex", "0.171.0"),
];

/// A bound on one host command (a listing starts the server and waits for its handshake).
const HOST_TIMEOUT: Duration = Duration::from_secs(180);
/// A bound on installing the three packages.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(900);

/// `<target>/host-clis/node_modules/.bin`, holding `claude`, `gemini` and `codex` at the
/// pinned versions; installed once per test run when any is missing or of another version.
fn host_bin() -> &'static Path {
    static BIN_DIR: OnceLock<PathBuf> = OnceLock::new();
    BIN_DIR.get_or_init(|| {
        let prefix = target_dir().join("host-clis");
        let installed = |(package, version): &(&str, &str)| {
            let manifest = prefix
                .join("node_modules")
                .join(package)
                .join("package.json");
            std::fs::read_to_string(manifest)
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                .is_some_and(|manifest| manifest["version"] == *version)
        };
        if !HOST_CLIS.iter().all(installed) {
            std::fs::create_dir_all(&prefix).expect("create the host-clis folder");
            let ctx = TestContext::new();
            let mut npm = lowly("npm");
            npm.arg("install")
                .arg("--prefix")
                .arg(&prefix)
                .args(["--no-audit", "--no-fund", "--loglevel=error"])
                .args(
                    HOST_CLIS
                        .iter()
                        .map(|(package, version)| format!("{package}@{version}")),
                );
            let (status, stdout, stderr) = run_bounded(npm, &ctx, "npm", INSTALL_TIMEOUT);
            assert!(
                status.success(),
                "could not install the hosts' command lines into {} (this test needs node, \
                 npm and the npm registry)\nstatus: {status}\n--- stdout\n{stdout}\n--- \
                 stderr\n{stderr}",
                prefix.display()
            );
        }
        prefix.join("node_modules").join(".bin")
    })
}

/// A command run at the lowest CPU priority where `nice` exists: node starting up takes a
/// core for seconds, and the suite's other tests wait for servers with a deadline.
fn lowly(program: impl AsRef<std::ffi::OsStr>) -> Command {
    if cfg!(unix) {
        let mut command = Command::new("nice");
        command.args(["-n", "19"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// The hosts' command lines run in the home.
impl Home {
    /// `promptshelf config HOST --write --scope user` into this home.
    fn write_config(&self, host: &str) {
        let args = [host, "--write", "--scope", "user"];
        let output = self
            .config_on(&self.ctx.db, &args)
            .output()
            .expect("run promptshelf");
        assert!(
            output.status.success(),
            "{}",
            describe(&args, &output, "config --write")
        );
    }

    /// Runs a host's command line in the project folder with this home; returns its status,
    /// stdout and stderr, shown together for assertion messages.
    fn host(&self, program: &str, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
        // One host at a time, for the same reason as `lowly`.
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let _turn = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut command = lowly(host_bin().join(program));
        command
            .args(args)
            .current_dir(self.home().join("project"))
            .env("HOME", self.home())
            .envs(env.iter().copied())
            // The machine's own settings folders must not be read instead of this home's.
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME");
        let (status, stdout, stderr) = run_bounded(command, &self.ctx, program, HOST_TIMEOUT);
        let shown = format!(
            "{program} {}\nstatus: {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            args.join(" ")
        );
        (status.success(), stdout, shown)
    }
}

#[test]
fn claude_code_connects_to_the_server_config_wrote() {
    let home = Home::new();
    home.write_config("claude-code");
    let (ok, stdout, shown) =
        home.host("claude", &["mcp", "list"], &[("DISABLE_AUTOUPDATER", "1")]);
    assert!(ok, "{shown}");
    let line = stdout
        .lines()
        .find(|line| line.starts_with("promptshelf: "))
        .unwrap_or_else(|| panic!("claude does not list promptshelf\n{shown}"));
    assert!(
        line.contains(BIN_NAME) && line.contains("Connected") && !line.contains("Failed"),
        "{shown}"
    );
}

#[test]
fn gemini_cli_connects_to_the_server_config_wrote() {
    let home = Home::new();
    home.write_config("gemini");
    let (ok, _, shown) = home.host(
        "gemini",
        &["mcp", "list"],
        &[("GEMINI_CLI_TRUST_WORKSPACE", "true")],
    );
    assert!(ok, "{shown}");
    // It writes its listing on stderr or stdout depending on the version: look in both.
    let line = shown
        .lines()
        .find(|line| line.contains("promptshelf:"))
        .unwrap_or_else(|| panic!("gemini does not list promptshelf\n{shown}"));
    assert!(
        line.contains(BIN_NAME) && line.contains("- Connected"),
        "{shown}"
    );
}

#[test]
fn codex_reads_the_entry_config_wrote() {
    let home = Home::new();
    home.write_config("codex");
    let (ok, stdout, shown) = home.host("codex", &["mcp", "get", "promptshelf", "--json"], &[]);
    assert!(ok, "{shown}");
    let server: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|err| panic!("codex printed no JSON ({err})\n{shown}"));
    let command = std::fs::canonicalize(BIN).expect("the binary's path");
    let db = home
        .ctx
        .dir
        .path()
        .canonicalize()
        .expect("the temporary folder")
        .join("library.db");
    assert_eq!(server["name"], "promptshelf", "{shown}");
    assert_eq!(server["enabled"], true, "{shown}");
    assert_eq!(server["transport"]["type"], "stdio", "{shown}");
    assert_eq!(
        server["transport"]["command"],
        command.display().to_string(),
        "{shown}"
    );
    assert_eq!(
        server["transport"]["args"],
        serde_json::json!([
            "--db",
            db.display().to_string(),
            "serve",
            "--tools",
            "prompts,resources"
        ]),
        "{shown}"
    );
}

/// What the listings show of the command: the binary's path ends with its name.
const BIN_NAME: &str = "promptshelf --db ";

impl Home {
    /// `promptshelf export . --format skills` in the project folder: the seed library's
    /// prompts as `.agents/skills/NAME/SKILL.md`.
    fn export_skills(&self) {
        let output =
            crate::common::command_on(&self.ctx.db, &["export", ".", "--format", "skills"])
                .current_dir(self.home().join("project"))
                .output()
                .expect("run promptshelf");
        assert!(
            output.status.success(),
            "{}",
            describe(&["export"], &output, "export --format skills")
        );
    }
}

impl Home {
    /// `promptshelf sync ARGS` in the project folder with this home, which must succeed.
    fn sync(&self, args: &[&str]) {
        let args = [&["sync"], args].concat();
        let output = crate::common::command_on(&self.ctx.db, &args)
            .current_dir(self.home().join("project"))
            .env("HOME", self.home())
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .expect("run promptshelf");
        assert!(
            output.status.success(),
            "{}",
            describe(&args, &output, "sync")
        );
    }

    /// `gemini skills list` in the project folder, which must succeed (it reads only a
    /// trusted folder's skills); its command, status and output, for assertions.
    fn gemini_skills(&self) -> String {
        let (ok, _, shown) = self.host(
            "gemini",
            &["skills", "list"],
            &[("GEMINI_CLI_TRUST_WORKSPACE", "true")],
        );
        assert!(ok, "{shown}");
        shown
    }
}

/// The seed's code-review prompt as a skill, as a host lists it.
const SKILL_DESCRIPTION: &str = "Review code for correctness, security, design, tests and readability, with findings ranked by severity.";

#[test]
fn codex_lists_the_skills_export_wrote() {
    let home = Home::new();
    home.export_skills();
    // The model's prompt input holds the skills catalog; rendering it needs no account.
    let (ok, stdout, shown) = home.host("codex", &["debug", "prompt-input", "hello"], &[]);
    assert!(ok, "{shown}");
    let entry = format!("- code-review: {SKILL_DESCRIPTION} (file: ");
    assert!(
        stdout.contains(&entry),
        "codex lists no code-review skill\n{shown}"
    );
    assert!(stdout.contains("code-review/SKILL.md)"), "{shown}");
}

#[test]
fn gemini_cli_lists_the_skills_export_wrote() {
    let home = Home::new();
    home.export_skills();
    let shown = home.gemini_skills();
    assert!(shown.contains("code-review [Enabled]"), "{shown}");
    assert!(
        shown.contains(&format!("Description: {SKILL_DESCRIPTION}")),
        "{shown}"
    );
    assert!(
        shown.contains(".agents/skills/code-review/SKILL.md"),
        "{shown}"
    );
}

#[test]
fn codex_lists_the_skills_sync_wrote_into_the_users_folder() {
    let home = Home::new();
    home.sync(&["codex"]);
    assert!(
        home.home()
            .join(".agents/skills/code-review/SKILL.md")
            .exists()
    );
    let (ok, stdout, shown) = home.host("codex", &["debug", "prompt-input", "hello"], &[]);
    assert!(ok, "{shown}");
    let entry = format!("- code-review: {SKILL_DESCRIPTION} (file: ");
    assert!(
        stdout.contains(&entry),
        "codex lists no code-review skill\n{shown}"
    );
    // Codex names the folder it found the skill in as a root, and the skill under it.
    let root = format!("= `{}`", home.home().join(".agents/skills").display());
    assert!(stdout.contains(&root), "{shown}");
    assert!(stdout.contains("/code-review/SKILL.md)"), "{shown}");
}

#[test]
fn gemini_cli_lists_a_skill_sync_wrote_into_the_projects_folder() {
    let home = Home::new();
    home.ctx.write(
        "src/.claude/skills/release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: Write release notes from the pull requests merged since the last tag.\n---\n\n# Release notes\n\nGroup the merged pull requests by kind.\n",
    );
    let db = &home.ctx.db;
    crate::common::ok_on(db, &["init", "--empty"]);
    crate::common::ok_on(db, &["import", &home.ctx.path("src").display().to_string()]);
    home.sync(&["gemini", "--scope", "project"]);
    let shown = home.gemini_skills();
    assert!(shown.contains("release-notes [Enabled]"), "{shown}");
    assert!(
        shown.contains(".gemini/skills/release-notes/SKILL.md"),
        "{shown}"
    );
}
