//! `promptshelf sync HOST...` under a temporary home and project: every host's folders at both
//! scopes, a second run that writes nothing, hand edits kept, files sync did not write never
//! touched, removed items' files gone, `--dry-run`, `--collection` and `--watch`. The hosts'
//! own command lines reading what sync wrote are in `hosts.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{Home, SEED_PROMPTS as SEED, command_on, describe, files_under};

/// A home with a project folder and the seed library.
struct Synced {
    home: Home,
}

impl Synced {
    fn new() -> Synced {
        let home = Home::new();
        crate::common::ok_on(&home.ctx.db, &["init"]);
        Synced { home }
    }

    fn project(&self) -> PathBuf {
        self.home.home().join("project")
    }

    /// `promptshelf sync ARGS` in the project folder with this home.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = command_on(&self.home.ctx.db, &[&["sync"], args].concat());
        command
            .current_dir(self.project())
            .env("HOME", self.home.home())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("APPDATA")
            .env_remove("PROMPTSHELF_TOKEN");
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run promptshelf sync")
    }

    /// Runs and expects success; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "{}",
            describe(args, &output, "expected success")
        );
        String::from_utf8(output.stdout).expect("UTF-8")
    }

    /// Runs and expects failure; returns stdout and stderr.
    fn fails(&self, args: &[&str]) -> (String, String) {
        let output = self.run(args);
        assert!(
            !output.status.success(),
            "{}",
            describe(args, &output, "expected failure")
        );
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    fn library(&self, args: &[&str]) -> String {
        crate::common::ok_on(&self.home.ctx.db, args)
    }
}

/// Each folder under `base` holds a file per seed prompt (`pattern` with NAME) and the record.
fn commands_are_written(base: &Path, folders: [(&str, &str); 4]) {
    for (folder, pattern) in folders {
        assert_eq!(files_under(&base.join(folder)), named(pattern), "{folder}");
    }
}

fn named(pattern: &str) -> Vec<String> {
    let mut names: Vec<String> = SEED
        .iter()
        .map(|name| pattern.replace("NAME", name))
        .collect();
    names.push(".promptshelf-sync.json".to_string());
    names.sort();
    names
}

#[test]
fn sync_writes_every_hosts_folders_at_both_scopes_and_a_second_run_writes_nothing() {
    let synced = Synced::new();
    let hosts = [
        "claude-code",
        "vscode",
        "copilot-cli",
        "cursor",
        "gemini",
        "codex",
    ];
    let project_args = [&hosts[..], &["--scope", "project"]].concat();
    let first = synced.ok(&project_args);
    let project = synced.project();
    commands_are_written(
        &project,
        [
            (".claude/commands", "NAME.md"),
            (".github/prompts", "NAME.prompt.md"),
            (".cursor/commands", "NAME.md"),
            (".gemini/commands", "NAME.toml"),
        ],
    );
    // Hosts that show no MCP prompts get every prompt as a skill.
    for skills in [".agents/skills", ".github/skills"] {
        let written = files_under(&project.join(skills));
        for name in SEED {
            assert!(
                written.contains(&format!("{name}/SKILL.md")),
                "{skills}: {written:?}"
            );
        }
        assert!(written.contains(&"code-review/references/code-review-checklist.md".into()));
    }
    // The seed has no prompt from a skill folder: the hosts' own skills folders stay empty.
    assert!(!project.join(".claude/skills").exists());
    // What each host reads, as it reads it.
    let command = std::fs::read_to_string(project.join(".claude/commands/code-review.md"))
        .expect("read the command");
    assert!(command.starts_with("---\ndescription: "), "{command}");
    let toml: toml_edit::DocumentMut =
        std::fs::read_to_string(project.join(".gemini/commands/summarize.toml"))
            .expect("read the Gemini command")
            .parse()
            .expect("Gemini's command is TOML");
    assert!(
        toml["prompt"]
            .as_str()
            .is_some_and(|prompt| !prompt.is_empty())
    );
    let skill = std::fs::read_to_string(project.join(".agents/skills/code-review/SKILL.md"))
        .expect("read the skill");
    assert!(skill.starts_with("---\nname: code-review\n"), "{skill}");
    assert!(
        first.contains(".claude/commands (claude-code, claude-commands): 8 prompts, 8 written, 0 unchanged, 0 removed, 0 kept as they are"),
        "{first}"
    );
    // One folder two hosts read is written once, for both.
    assert!(
        first.contains(".github/skills (vscode, copilot-cli, skills): 8 prompts"),
        "{first}"
    );

    let record = project.join(".claude/commands/.promptshelf-sync.json");
    let recorded_at = std::fs::metadata(&record)
        .and_then(|m| m.modified())
        .unwrap();
    let again = synced.ok(&project_args);
    assert_eq!(
        std::fs::metadata(&record)
            .and_then(|m| m.modified())
            .unwrap(),
        recorded_at,
        "a run that changes nothing writes nothing, not even the record"
    );
    for line in again.lines() {
        assert!(line.contains(" 0 written,"), "{again}");
    }
    assert!(
        again.contains("8 prompts, 0 written, 8 unchanged"),
        "{again}"
    );

    // The user's folders, in this home.
    synced.ok(&hosts);
    let home = synced.home.home();
    commands_are_written(
        &home,
        [
            (".claude/commands", "NAME.md"),
            (".config/Code/User/prompts", "NAME.prompt.md"),
            (".cursor/commands", "NAME.md"),
            (".gemini/commands", "NAME.toml"),
        ],
    );
    for skills in [".agents/skills", ".copilot/skills"] {
        assert!(
            files_under(&home.join(skills)).contains(&"summarize/SKILL.md".to_string()),
            "{skills}"
        );
    }
}

#[test]
fn a_hand_edit_is_kept_and_reported_and_force_replaces_it() {
    let synced = Synced::new();
    synced.ok(&["claude-code", "--scope", "project"]);
    let file = synced.project().join(".claude/commands/summarize.md");
    let edited = "My own summary command.\n";
    std::fs::write(&file, edited).expect("edit the command");
    let (stdout, stderr) = synced.fails(&["claude-code", "--scope", "project"]);
    assert!(
        stderr.contains(&format!(
            "kept {}: changed by hand since sync wrote it; `--force` replaces it",
            Path::new(".")
                .join(".claude/commands/summarize.md")
                .display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 files are not as the library has them"),
        "{stderr}"
    );
    assert!(
        stdout.contains("7 unchanged, 0 removed, 1 kept as they are"),
        "{stdout}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    // Kept on every run until forced.
    synced.fails(&["claude-code", "--scope", "project"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    synced.ok(&["claude-code", "--scope", "project", "--force"]);
    assert_ne!(std::fs::read_to_string(&file).unwrap(), edited);
    synced.ok(&["claude-code", "--scope", "project"]);
}

#[test]
fn a_file_sync_did_not_write_is_never_touched_even_forced() {
    let synced = Synced::new();
    let mine = synced.project().join(".claude/commands/summarize.md");
    std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
    std::fs::write(&mine, "Mine.\n").unwrap();
    let other = synced.project().join(".claude/commands/my-own.md");
    std::fs::write(&other, "Also mine.\n").unwrap();
    for args in [
        &["claude-code", "--scope", "project"][..],
        &["claude-code", "--scope", "project", "--force"],
    ] {
        let (_, stderr) = synced.fails(args);
        assert!(
            stderr.contains("summarize.md: sync did not write this file and never touches it"),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "Mine.\n");
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "Also mine.\n");
    }
    // The other prompts are written beside them.
    assert!(
        synced
            .project()
            .join(".claude/commands/code-review.md")
            .exists()
    );
}

#[test]
fn a_removed_items_files_go_with_its_skill_folder_and_an_edited_one_stays() {
    let synced = Synced::new();
    synced.ok(&["claude-code", "codex", "--scope", "project"]);
    let project = synced.project();
    let skill = project.join(".agents/skills/code-review");
    assert!(skill.join("references/code-review-checklist.md").exists());
    let edited = project.join(".claude/commands/summarize.md");
    std::fs::write(&edited, "Edited.\n").unwrap();
    synced.library(&["prompt", "rm", "code-review", "--detach"]);
    synced.library(&["prompt", "rm", "summarize", "--detach"]);
    let (stdout, stderr) = synced.fails(&["claude-code", "codex", "--scope", "project"]);
    assert!(!skill.exists(), "the skill's folder is removed whole");
    assert!(!project.join(".claude/commands/code-review.md").exists());
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), "Edited.\n");
    assert!(stderr.contains("summarize.md: changed by hand"), "{stderr}");
    assert!(
        stdout.contains(".claude/commands (claude-code, claude-commands): 6 prompts, 0 written, 6 unchanged, 1 removed, 1 kept as they are"),
        "{stdout}"
    );
    let record = std::fs::read_to_string(project.join(".agents/skills/.promptshelf-sync.json"))
        .expect("read the record");
    assert!(!record.contains("code-review"), "{record}");
    // Forced, the edited file of the removed prompt goes too, and the record with no file
    // left in a folder goes with it.
    synced.ok(&["claude-code", "--scope", "project", "--force"]);
    assert!(!edited.exists());
    for name in SEED {
        if !["code-review", "summarize"].contains(&name) {
            synced.library(&["prompt", "rm", name, "--detach"]);
        }
    }
    synced.ok(&["claude-code", "--scope", "project"]);
    assert_eq!(
        files_under(&project.join(".claude/commands")),
        Vec::<String>::new()
    );
}

#[test]
fn a_dry_run_says_what_it_would_do_and_writes_nothing() {
    let synced = Synced::new();
    let stdout = synced.ok(&["gemini", "--scope", "project", "--dry-run"]);
    assert!(
        stdout.contains(&format!(
            "write {}",
            Path::new(".")
                .join(".gemini/commands/summarize.toml")
                .display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("dry run (nothing written): ./.gemini/commands (gemini, gemini-commands): 8 prompts, 8 written"),
        "{stdout}"
    );
    assert!(!synced.project().join(".gemini").exists());
    synced.ok(&["gemini", "--scope", "project"]);
    synced.library(&["prompt", "rm", "summarize", "--detach"]);
    let stdout = synced.ok(&["gemini", "--scope", "project", "--dry-run"]);
    assert!(
        stdout.contains("remove ./.gemini/commands/summarize.toml"),
        "{stdout}"
    );
    assert!(
        synced
            .project()
            .join(".gemini/commands/summarize.toml")
            .exists()
    );
}

#[test]
fn sync_takes_only_the_collections_named_and_names_an_unknown_one() {
    let synced = Synced::new();
    synced.home.ctx.write(
        "notes/standup.prompt.md",
        "---\ndescription: Plan the standup.\n---\n\nWhat did we do?\n",
    );
    synced.library(&[
        "import",
        &synced.home.ctx.path("notes").display().to_string(),
        "--collection",
        "notes",
    ]);
    synced.ok(&["cursor", "--scope", "project", "--collection", "notes"]);
    assert_eq!(
        files_under(&synced.project().join(".cursor/commands")),
        vec![
            ".promptshelf-sync.json".to_string(),
            "standup.md".to_string()
        ]
    );
    let (_, stderr) = synced.fails(&["cursor", "--scope", "project", "--collection", "nope"]);
    assert!(
        stderr.contains("no collection 'nope'; the library has library, local, notes"),
        "{stderr}"
    );
}

#[test]
fn a_record_naming_a_path_outside_its_folder_is_refused() {
    let synced = Synced::new();
    synced.ok(&["cursor", "--scope", "project"]);
    let victim = synced.project().join("keep.txt");
    std::fs::write(&victim, "x").unwrap();
    let record = synced
        .project()
        .join(".cursor/commands/.promptshelf-sync.json");
    std::fs::write(
        &record,
        r#"{"files": {"../../keep.txt": "blake3:2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"}}"#,
    )
    .unwrap();
    let (_, stderr) = synced.fails(&["cursor", "--scope", "project"]);
    assert!(
        stderr.contains("records \"../../keep.txt\", which is not a path inside its folder"),
        "{stderr}"
    );
    assert!(victim.exists());
}

#[test]
fn watch_brings_a_library_change_into_the_folders() {
    let synced = Synced::new();
    let mut watching = synced
        .command(&["claude-code", "--scope", "project", "--watch"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start sync --watch");
    let folder = synced.project().join(".claude/commands");
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let start = Instant::now();
        while !done() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "sync --watch: {what} did not happen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        start.elapsed()
    };
    wait_for("the first sync", &|| folder.join("summarize.md").exists());
    synced
        .home
        .ctx
        .write("more/standup.prompt.md", "What did we do?\n");
    synced.library(&[
        "import",
        &synced.home.ctx.path("more").display().to_string(),
    ]);
    let took = wait_for("the new prompt's file", &|| {
        folder.join("standup.md").exists()
    });
    synced.library(&["prompt", "rm", "summarize", "--detach"]);
    wait_for("the removed prompt's file going", &|| {
        !folder.join("summarize.md").exists()
    });
    let _ = watching.kill();
    let _ = watching.wait();
    eprintln!("sync --watch wrote a new prompt {took:?} after its import");
}

/// `token add NAME ARGS --json`'s token.
fn token(synced: &Synced, name: &str, args: &[&str]) -> String {
    let made: serde_json::Value =
        serde_json::from_str(&synced.library(&[&["token", "add", name, "--json"], args].concat()))
            .expect("token add --json prints JSON");
    made["token"].as_str().expect("a token").to_string()
}

/// A library with the seed and a collection `team` of one prompt, and a `team` folder to
/// import it again from.
fn with_team(synced: &Synced) -> String {
    let folder = synced.home.ctx.path("team");
    synced.home.ctx.write(
        "team/standup.prompt.md",
        "---\ndescription: Plan the standup.\n---\n\nWhat did we do?\n",
    );
    let folder = folder.display().to_string();
    synced.library(&["import", &folder, "--collection", "team"]);
    folder
}

#[test]
fn sync_from_a_team_server_writes_what_the_token_sees_as_a_local_sync_would() {
    let synced = Synced::new();
    with_team(&synced);
    let server = crate::http::HttpServer::start(&synced.home.ctx.db, &["--auth", "token"]);
    let url = server.url();

    // A token of the `team` collection sees its one prompt.
    let team = token(&synced, "team", &["--collections", "team"]);
    let output = synced
        .command(&["claude-code", "--scope", "project", "--from", &url])
        .env("PROMPTSHELF_TOKEN", &team)
        .output()
        .expect("run sync --from");
    assert!(
        output.status.success(),
        "{}",
        describe(&["sync", "--from"], &output, "sync")
    );
    let commands = synced.project().join(".claude/commands");
    assert_eq!(
        files_under(&commands),
        [".promptshelf-sync.json", "standup.md"]
    );

    // The prompt files it reads answer as the prompts do: another collection's is not there.
    for (name, found) in [("standup", true), ("code-review", false)] {
        let (headers, body) = crate::http::modern_request(
            1,
            "resources/read",
            serde_json::json!({"uri": format!("promptshelf://prompt/{name}")}),
        );
        let mut headers: Vec<(&str, &str)> =
            headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let bearer = format!("Bearer {team}");
        headers.push(("authorization", &bearer));
        let reply = server.post(&headers, &body);
        let text = reply.json()["result"]["contents"][0]["text"]
            .as_str()
            .map(str::to_string);
        assert_eq!(text.is_some(), found, "{name}: {}", reply.body);
        if let Some(text) = text {
            assert!(
                text.starts_with("---\nname: standup\ndescription: Plan the standup.\n"),
                "{text}"
            );
        } else {
            // 2026-07-28's code for a resource there is not.
            assert_eq!(reply.code(), -32602, "{}", reply.body);
        }
    }

    // A token of the whole library, from a file, into another project: the same files a
    // sync of the library itself writes.
    let all = token(&synced, "all", &[]);
    let token_file = synced.home.ctx.write("token.txt", format!("{all}\n"));
    std::fs::create_dir_all(synced.home.home().join("other")).unwrap();
    let output = synced
        .command(&[
            "claude-code",
            "codex",
            "--scope",
            "project",
            "--project",
            "../other",
            "--from",
            &url,
            "--token-file",
            &token_file.display().to_string(),
        ])
        .env_remove("PROMPTSHELF_TOKEN")
        .output()
        .expect("run sync --from");
    assert!(
        output.status.success(),
        "{}",
        describe(&["sync", "--from"], &output, "sync")
    );
    std::fs::remove_dir_all(synced.project().join(".claude")).unwrap();
    synced.ok(&["claude-code", "codex", "--scope", "project"]);
    for folder in [".claude/commands", ".agents/skills"] {
        let here = synced.project().join(folder);
        let there = synced.home.home().join("other").join(folder);
        let listed = files_under(&here);
        assert_eq!(listed, files_under(&there), "{folder}");
        for file in listed.iter().filter(|file| !file.ends_with(".json")) {
            assert_eq!(
                std::fs::read(here.join(file)).unwrap(),
                std::fs::read(there.join(file)).unwrap(),
                "{folder}/{file} from the server differs from the library's"
            );
        }
    }

    // No token: the server's refusal, with the way to give one.
    let (_, stderr) = synced.fails(&["codex", "--from", &url]);
    assert!(
        stderr.contains("refused prompts/list without a valid token (401): give one with --token, --token-file or PROMPTSHELF_TOKEN"),
        "{stderr}"
    );
}

#[test]
fn sync_watch_from_a_server_follows_its_changes_and_outlives_its_restart() {
    let synced = Synced::new();
    let folder = with_team(&synced);
    let all = token(&synced, "all", &[]);
    let db = synced.home.ctx.db.clone();
    let server = crate::http::HttpServer::start(&db, &["--auth", "token"]);
    let url = server.url();
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut watching = synced
        .command(&[
            "claude-code",
            "--scope",
            "project",
            "--from",
            &url,
            "--watch",
        ])
        .env("PROMPTSHELF_TOKEN", &all)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start sync --from --watch");
    let commands = synced.project().join(".claude/commands");
    let wait_for = |what: &str, file: &str| {
        let start = Instant::now();
        while !commands.join(file).exists() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "sync --from --watch: {what} did not come"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        start.elapsed()
    };
    wait_for("the first sync", "standup.md");
    synced
        .home
        .ctx
        .write("team/retro.prompt.md", "What went well?\n");
    synced.library(&["import", &folder, "--collection", "team"]);
    let took = wait_for("a prompt added on the server", "retro.md");

    // The server goes away and comes back where it was: sync listens again and catches up.
    drop(server);
    synced
        .home
        .ctx
        .write("team/plan.prompt.md", "What is next?\n");
    synced.library(&["import", &folder, "--collection", "team"]);
    let _again = crate::http::HttpServer::start_at(&db, &address, &["--auth", "token"]);
    wait_for("a prompt added while the server was down", "plan.md");
    let _ = watching.kill();
    let _ = watching.wait();
    eprintln!("sync --from --watch wrote a new prompt {took:?} after its import");
}
