//! `promptshelf config HOST [--write] [--scope user|project]` for every host, with `HOME`
//! pointing at a temporary folder: the snippet printed, a missing file created, an existing
//! file merged into (its other servers, keys and comments kept, a backup written), a second
//! write changing nothing, a different entry replaced, a broken file refused untouched, and
//! `--via uvx|npx` entries that run the published package.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::{BIN, Home, describe};

/// How a test reads a host's file back.
#[derive(Clone, Copy, Debug)]
enum Format {
    Json,
    Jsonc,
    Toml,
    Yaml,
}

/// One host: its file under the test's home (user scope), the key its servers are under,
/// a file of its format with another server, another key and (where the format has them)
/// comments, the lines of it that must survive a merge byte for byte, and a broken file with
/// the line its error is on.
struct Case {
    host: &'static str,
    file: &'static str,
    format: Format,
    key: &'static str,
    existing: &'static str,
    kept: &'static [&'static str],
    broken: &'static str,
    broken_line: usize,
    tools_only: bool,
}

const STRICT_JSON: &str = r#"{
    "theme": "dark",
    "mcpServers": {
        "other": { "command": "other-server", "args": ["--flag"] }
    },
    "numStartups": 3
}
"#;
const STRICT_JSON_KEPT: &[&str] = &[
    "    \"theme\": \"dark\",\n",
    "        \"other\": { \"command\": \"other-server\", \"args\": [\"--flag\"] }",
    "    \"numStartups\": 3\n",
];
const BROKEN_JSON: &str = "{\n  \"theme\": \"dark\"\n  \"mcpServers\": {}\n}\n";

const CASES: &[Case] = &[
    Case {
        host: "claude-desktop",
        file: ".config/Claude/claude_desktop_config.json",
        format: Format::Json,
        key: "mcpServers",
        existing: STRICT_JSON,
        kept: STRICT_JSON_KEPT,
        broken: BROKEN_JSON,
        broken_line: 2,
        tools_only: false,
    },
    Case {
        host: "claude-code",
        file: ".claude.json",
        format: Format::Json,
        key: "mcpServers",
        existing: STRICT_JSON,
        kept: STRICT_JSON_KEPT,
        broken: BROKEN_JSON,
        broken_line: 2,
        tools_only: false,
    },
    Case {
        host: "vscode",
        file: ".config/Code/User/mcp.json",
        format: Format::Jsonc,
        key: "servers",
        existing: r#"// My servers
{
  "inputs": [],
  "servers": {
    /* a block comment */
    "other": { "type": "stdio", "command": "other-server", }, // trailing comma
  },
}
"#,
        kept: &[
            "// My servers\n",
            "  \"inputs\": [],\n",
            "    /* a block comment */\n",
            "    \"other\": { \"type\": \"stdio\", \"command\": \"other-server\", }, // trailing comma\n",
        ],
        broken: "// servers\n{\n  \"servers\": {\n    \"other\" {}\n  }\n}\n",
        broken_line: 4,
        tools_only: false,
    },
    Case {
        host: "cursor",
        file: ".cursor/mcp.json",
        format: Format::Json,
        key: "mcpServers",
        existing: STRICT_JSON,
        kept: STRICT_JSON_KEPT,
        broken: BROKEN_JSON,
        broken_line: 2,
        tools_only: false,
    },
    Case {
        host: "zed",
        file: ".config/zed/settings.json",
        format: Format::Jsonc,
        key: "context_servers",
        existing: r#"// Zed settings
{
  "theme": "One Dark", // the theme
  "context_servers": {
    "other": {
      "command": "other-server",
      "args": [],
    },
  },
  "vim_mode": true,
}
"#,
        kept: &[
            "// Zed settings\n",
            "  \"theme\": \"One Dark\", // the theme\n",
            "    \"other\": {\n      \"command\": \"other-server\",\n      \"args\": [],\n    },\n",
            "  \"vim_mode\": true,\n",
        ],
        broken: "{\n  // comment\n  \"theme\": \"One\",,\n}\n",
        broken_line: 3,
        tools_only: false,
    },
    Case {
        host: "windsurf",
        file: ".codeium/windsurf/mcp_config.json",
        format: Format::Json,
        key: "mcpServers",
        existing: STRICT_JSON,
        kept: STRICT_JSON_KEPT,
        broken: BROKEN_JSON,
        broken_line: 2,
        tools_only: true,
    },
    Case {
        host: "codex",
        file: ".codex/config.toml",
        format: Format::Toml,
        key: "mcp_servers",
        existing: r#"# Codex settings
model = "o3" # the model

[mcp_servers.other]
command = "other-server"
args = ["--flag"]

[profiles.fast]
model = "mini"
"#,
        kept: &[
            "# Codex settings\nmodel = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"other-server\"\nargs = [\"--flag\"]\n",
            "[profiles.fast]\nmodel = \"mini\"\n",
        ],
        broken: "model = \"o3\"\n\n[mcp_servers.other\ncommand = \"x\"\n",
        broken_line: 3,
        tools_only: true,
    },
    Case {
        host: "gemini",
        file: ".gemini/settings.json",
        format: Format::Jsonc,
        key: "mcpServers",
        existing: r#"{
  // Gemini CLI settings
  "theme": "GitHub",
  "mcpServers": {
    "other": { "command": "other-server", "args": ["--flag"] }
  }
}
"#,
        kept: &[
            "  // Gemini CLI settings\n  \"theme\": \"GitHub\",\n",
            "    \"other\": { \"command\": \"other-server\", \"args\": [\"--flag\"] }",
        ],
        broken: BROKEN_JSON,
        broken_line: 2,
        tools_only: false,
    },
    Case {
        host: "continue",
        file: ".continue/config.yaml",
        format: Format::Yaml,
        key: "mcpServers",
        existing: r#"# Continue settings
name: My Assistant
version: 1.0.0
schema: v1
mcpServers:
  # the other one
  - name: other
    command: other-server # runs it
    args:
      - --flag
models: [] # none yet
"#,
        kept: &[
            "# Continue settings\nname: My Assistant\nversion: 1.0.0\nschema: v1\nmcpServers:\n  # the other one\n  - name: other\n    command: other-server # runs it\n    args:\n      - --flag\n",
            "models: [] # none yet\n",
        ],
        broken: "name: x\nmcpServers:\n  - name: a\n - name: b\n",
        broken_line: 4,
        tools_only: false,
    },
    Case {
        host: "goose",
        file: ".config/goose/config.yaml",
        format: Format::Yaml,
        key: "extensions",
        existing: r#"# Goose settings
GOOSE_PROVIDER: openai # the provider
extensions:
  developer:
    enabled: true
    name: developer
    type: builtin # built in
GOOSE_MODEL: gpt-4o
"#,
        kept: &[
            "# Goose settings\nGOOSE_PROVIDER: openai # the provider\nextensions:\n  developer:\n    enabled: true\n    name: developer\n    type: builtin # built in\n",
            "GOOSE_MODEL: gpt-4o\n",
        ],
        broken: "extensions:\n  developer:\n    enabled: true\n   name: x\n",
        broken_line: 4,
        tools_only: false,
    },
];

/// The paths an entry must name, and `config` run in the home.
impl Home {
    fn file(&self, case: &Case) -> PathBuf {
        self.home().join(case.file)
    }

    /// `promptshelf --db DB config ARGS` in the project folder, with this home and none of
    /// the machine's own host folders.
    fn command(&self, args: &[&str]) -> Command {
        self.config_on(&self.ctx.db, args)
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run promptshelf")
    }

    fn ok(&self, args: &[&str]) -> (String, String) {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "{}",
            describe(args, &output, "expected success")
        );
        (
            String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        )
    }

    fn fails(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            !output.status.success(),
            "{}",
            describe(args, &output, "expected failure")
        );
        String::from_utf8(output.stderr).expect("stderr is UTF-8")
    }

    /// The entry every host's file must hold: this binary, by its absolute path, serving
    /// the test's database by its absolute path.
    fn expected_command_and_args(&self, case: &Case) -> (String, Value) {
        let command = std::fs::canonicalize(BIN).expect("the binary's path");
        let mut args = vec![json!("--db"), json!(self.db_path()), json!("serve")];
        if case.tools_only {
            args.extend([json!("--tools"), json!("prompts,resources")]);
        }
        (command.display().to_string(), Value::Array(args))
    }
}

impl Home {
    /// The test's database by its absolute path, as an entry names it.
    fn db_path(&self) -> String {
        let folder = self.ctx.dir.path().canonicalize();
        let db = folder.expect("the temporary folder").join("library.db");
        db.display().to_string()
    }
}

fn parse(format: Format, text: &str) -> Value {
    match format {
        Format::Json => serde_json::from_str(text).expect("valid JSON"),
        Format::Jsonc => {
            jsonc_parser::parse_to_serde_value(text, &Default::default()).expect("valid JSONC")
        }
        Format::Toml => toml_edit::de::from_str(text).expect("valid TOML"),
        Format::Yaml => serde_saphyr::from_str(text).expect("valid YAML"),
    }
}

/// The `promptshelf` entry of a parsed file (Continue's servers are a list of named items).
fn entry<'a>(case: &Case, document: &'a Value) -> &'a Value {
    let servers = &document[case.key];
    let entry = match servers.as_array() {
        Some(list) => list
            .iter()
            .find(|server| server["name"] == "promptshelf")
            .unwrap_or(&Value::Null),
        None => &servers["promptshelf"],
    };
    assert!(
        entry.is_object(),
        "{}: no promptshelf entry in {document}",
        case.host
    );
    entry
}

/// Checks the entry starts this binary on the test's database the way the host expects.
fn check_entry(home: &Home, case: &Case, document: &Value) {
    let entry = entry(case, document);
    let (command, args) = home.expected_command_and_args(case);
    let command_key = if case.host == "goose" {
        "cmd"
    } else {
        "command"
    };
    assert_eq!(entry[command_key], command, "{}: {entry}", case.host);
    assert_eq!(entry["args"], args, "{}: {entry}", case.host);
    match case.host {
        "claude-code" | "vscode" | "continue" | "goose" => {
            assert_eq!(entry["type"], "stdio", "{}: {entry}", case.host)
        }
        _ => assert!(entry.get("type").is_none(), "{}: {entry}", case.host),
    }
    if case.host == "goose" {
        assert_eq!(entry["enabled"], true, "{entry}");
        assert_eq!(entry["name"], "promptshelf", "{entry}");
    }
}

/// The backup `--write` keeps of an existing file.
fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.file_name().expect("a file name").to_os_string();
    name.push(".bak");
    file.with_file_name(name)
}

#[test]
fn config_prints_each_hosts_snippet_alone_on_stdout_and_writes_nothing() {
    let home = Home::new();
    for case in CASES {
        let (stdout, stderr) = home.ok(&[case.host]);
        check_entry(&home, case, &parse(case.format, &stdout));
        let file = home.file(case);
        assert!(
            stderr.contains(&file.display().to_string()) && stderr.contains("--write"),
            "{}: the note names the file and --write: {stderr}",
            case.host
        );
        assert!(
            !file.exists(),
            "{}: printing wrote {}",
            case.host,
            file.display()
        );
    }
    assert!(!home.ctx.db.exists(), "config must not create the database");
}

#[test]
fn config_write_creates_a_missing_file_and_its_folder() {
    let home = Home::new();
    for case in CASES {
        let file = home.file(case);
        let (stdout, _) = home.ok(&[case.host, "--write"]);
        assert!(
            stdout.starts_with("created ") && stdout.contains(&file.display().to_string()),
            "{}: {stdout}",
            case.host
        );
        let text = std::fs::read_to_string(&file).expect("the file was written");
        check_entry(&home, case, &parse(case.format, &text));
        assert!(
            !backup_of(&file).exists(),
            "{}: a backup of nothing",
            case.host
        );
    }
}

#[test]
fn config_write_merges_into_an_existing_file_keeping_the_rest_and_a_backup() {
    let home = Home::new();
    for case in CASES {
        let file = home.file(case);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, case.existing).unwrap();

        let (stdout, _) = home.ok(&[case.host, "--write"]);
        let backup = backup_of(&file);
        assert!(
            stdout.contains("added ") && stdout.contains(&backup.display().to_string()),
            "{}: {stdout}",
            case.host
        );
        assert_eq!(
            std::fs::read_to_string(&backup).expect("a backup"),
            case.existing,
            "{}: the backup is the old file",
            case.host
        );
        let text = std::fs::read_to_string(&file).unwrap();
        for kept in case.kept {
            assert!(
                text.contains(kept),
                "{}: lost {kept:?} from\n{text}",
                case.host
            );
        }
        // Everything that was there is still there, with the entry beside it.
        let mut expected = parse(case.format, case.existing);
        let after = parse(case.format, &text);
        check_entry(&home, case, &after);
        let added = entry(case, &after).clone();
        match expected[case.key].as_array_mut() {
            Some(list) => list.push(added),
            None => {
                expected[case.key]["promptshelf"] = added;
            }
        }
        assert_eq!(after, expected, "{}:\n{text}", case.host);
    }
}

#[test]
fn config_write_a_second_time_changes_nothing_and_says_so() {
    let home = Home::new();
    for case in CASES {
        let file = home.file(case);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, case.existing).unwrap();
        home.ok(&[case.host, "--write"]);
        let written = std::fs::read(&file).unwrap();
        let backup = backup_of(&file);
        let backed_up = std::fs::read(&backup).unwrap();
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();

        let (stdout, _) = home.ok(&[case.host, "--write"]);
        assert!(
            stdout.starts_with("unchanged: ") && stdout.contains("nothing written"),
            "{}: {stdout}",
            case.host
        );
        assert_eq!(std::fs::read(&file).unwrap(), written, "{}", case.host);
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            modified,
            "{}: the file was rewritten",
            case.host
        );
        assert_eq!(std::fs::read(&backup).unwrap(), backed_up, "{}", case.host);
    }
}

#[test]
fn config_write_replaces_a_promptshelf_entry_that_differs() {
    let home = Home::new();
    let other_db = home.ctx.path("other.db");
    for case in CASES {
        let file = home.file(case);
        // An entry written for another database, then one for this one.
        let output = home
            .config_on(&other_db, &[case.host, "--write"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            describe(&[case.host], &output, "first")
        );
        let old = std::fs::read_to_string(&file).unwrap();

        let (stdout, _) = home.ok(&[case.host, "--write"]);
        assert!(
            stdout.starts_with("replaced ") && stdout.contains("already there was different"),
            "{}: {stdout}",
            case.host
        );
        assert_eq!(std::fs::read_to_string(backup_of(&file)).unwrap(), old);
        let after = parse(case.format, &std::fs::read_to_string(&file).unwrap());
        check_entry(&home, case, &after);
        if let Some(list) = after[case.key].as_array() {
            assert_eq!(list.len(), 1, "{}: one entry, not two: {after}", case.host);
        }
    }
}

#[test]
fn config_write_refuses_a_broken_file_naming_its_line_and_leaves_it_alone() {
    let home = Home::new();
    for case in CASES {
        let file = home.file(case);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, case.broken).unwrap();
        let stderr = home.fails(&[case.host, "--write"]);
        let line = format!("line {}", case.broken_line);
        assert!(
            stderr.contains(&file.display().to_string())
                && stderr.contains(&line)
                && stderr.contains("column")
                && stderr.contains("left as it was"),
            "{}: expected the file and {line}: {stderr}",
            case.host
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), case.broken);
        assert!(
            !backup_of(&file).exists(),
            "{}: a backup was written",
            case.host
        );
        // Nor a temporary file half-written.
        let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(".promptshelf-") || name.ends_with(".bak"))
            .collect();
        assert!(leftovers.is_empty(), "{}: left {leftovers:?}", case.host);
    }
}

#[test]
fn config_write_refuses_a_file_whose_servers_key_is_not_a_mapping() {
    let home = Home::new();
    let file = home.home().join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let text = "{\"mcpServers\": [\"a\"]}\n";
    std::fs::write(&file, text).unwrap();
    let stderr = home.fails(&["cursor", "--write"]);
    assert!(
        stderr.contains("mcpServers holds a list, not a mapping"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn config_project_scope_writes_under_the_current_folder() {
    let home = Home::new();
    let project = home.home().join("project");
    for (host, file) in [
        ("claude-code", ".mcp.json"),
        ("vscode", ".vscode/mcp.json"),
        ("cursor", ".cursor/mcp.json"),
        ("zed", ".zed/settings.json"),
        ("codex", ".codex/config.toml"),
        ("gemini", ".gemini/settings.json"),
        ("continue", ".continue/mcpServers/promptshelf.yaml"),
    ] {
        let (stdout, _) = home.ok(&[host, "--write", "--scope", "project"]);
        let file = project.join(file);
        assert!(
            stdout.contains(&file.display().to_string()),
            "{host}: {stdout}"
        );
        assert!(file.is_file(), "{host}: no {}", file.display());
    }
    // Continue reads a block file only with its name, version and schema.
    let block: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(project.join(".continue/mcpServers/promptshelf.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(block["schema"], "v1", "{block}");
    assert_eq!(block["name"], "promptshelf", "{block}");
    assert_eq!(block["mcpServers"][0]["name"], "promptshelf", "{block}");
}

#[test]
fn config_project_scope_is_refused_for_hosts_that_have_none() {
    let home = Home::new();
    for host in ["claude-desktop", "windsurf", "goose"] {
        let stderr = home.fails(&[host, "--write", "--scope", "project"]);
        assert!(
            stderr.contains("has no project configuration file; use --scope user"),
            "{host}: {stderr}"
        );
    }
}

#[test]
fn config_honours_codex_home_and_xdg_config_home() {
    let home = Home::new();
    let codex = home.ctx.path("codex-home");
    let xdg = home.ctx.path("xdg");
    let mut command = home.command(&["codex"]);
    command.env("CODEX_HOME", &codex);
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&codex.join("config.toml").display().to_string()),
        "{stderr}"
    );
    let mut command = home.command(&["goose", "--write"]);
    command.env("XDG_CONFIG_HOME", &xdg);
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        describe(&["goose"], &output, "goose")
    );
    assert!(xdg.join("goose/config.yaml").is_file());
}

#[cfg(unix)]
#[test]
fn config_write_keeps_a_symlinked_file_a_symlink_and_its_permissions() {
    use std::os::unix::fs::PermissionsExt;

    let home = Home::new();
    let real = home.ctx.write("dotfiles/claude.json", STRICT_JSON);
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = home.home().join(".claude.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();

    home.ok(&["claude-code", "--write"]);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.contains("promptshelf"), "{text}");
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(
        std::fs::read_to_string(backup_of(&real)).unwrap(),
        STRICT_JSON
    );
}

#[test]
fn continues_own_parser_reads_both_files_config_writes_when_they_are_new() {
    let home = Home::new();
    home.ok(&["continue", "--write"]);
    home.ok(&["continue", "--write", "--scope", "project"]);
    let user = home.home().join(".continue/config.yaml");
    let project = home
        .home()
        .join("project/.continue/mcpServers/promptshelf.yaml");
    let mut parse = crate::node::node_tools().script("continue_config.mjs");
    parse.arg(&user).arg(&project);
    let output = parse.output().expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "Continue's parser refused a file config wrote:\n{stdout}\n{}\n--- {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        user.display(),
        std::fs::read_to_string(&user).unwrap_or_default()
    );
    assert_eq!(stdout.matches(": ok").count(), 2, "{stdout}");
}

#[test]
fn config_via_a_package_runner_writes_the_runners_command_and_the_same_arguments() {
    let home = Home::new();
    let db = home.db_path();

    home.ok(&["claude-desktop", "--via", "npx", "--write"]);
    let file = home
        .home()
        .join(".config/Claude/claude_desktop_config.json");
    let written = std::fs::read_to_string(&file).expect("the Claude Desktop file");
    assert_eq!(
        serde_json::from_str::<Value>(&written).expect("valid JSON"),
        json!({"mcpServers": {"promptshelf": {
            "command": "npx",
            "args": ["-y", "promptshelf", "--db", db, "serve"],
        }}}),
        "{written}"
    );

    home.ok(&["codex", "--via", "uvx", "--write"]);
    let file = home.home().join(".codex/config.toml");
    let written = std::fs::read_to_string(&file).expect("the Codex file");
    assert_eq!(
        written,
        format!(
            "[mcp_servers.promptshelf]\ncommand = \"uvx\"\nargs = [\"promptshelf\", \"--db\", \"{db}\", \"serve\", \"--tools\", \"prompts,resources\"]\n"
        )
    );

    // Goose's key for the command is its own (`cmd`).
    let (stdout, _) = home.ok(&["goose", "--via", "uvx"]);
    let entry = &parse(Format::Yaml, &stdout)["extensions"]["promptshelf"];
    assert_eq!(entry["cmd"], "uvx", "{stdout}");
    assert_eq!(
        entry["args"],
        json!(["promptshelf", "--db", db, "serve"]),
        "{stdout}"
    );
}
