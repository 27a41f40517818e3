//! Importing libraries people keep, from the samples of public collections under
//! tests/fixtures/collections/ (each with a NOTICE naming its source and licence): a skills
//! repository whose root is a Claude Code plugin (anthropics/skills), a plugin marketplace
//! (wshobson/agents), a Gemini CLI extension's commands (gemini-cli-extensions/security) and
//! the awesome-chatgpt-prompts CSV. Each is imported by the real binary into a real library,
//! and what a host would see of it is checked.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{MODERN, TestContext, validate};

/// The sample of a public collection.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/collections")
        .join(name)
}

/// Copies the sample `name` (hidden folders too) into the test's folder, where files can be
/// added to it; returns the copy.
pub fn copy_of(ctx: &TestContext, name: &str) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("create folder");
        for entry in std::fs::read_dir(from).expect("read fixture folder") {
            let entry = entry.expect("fixture entry");
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).expect("copy fixture file");
            }
        }
    }
    let target = ctx.path(name);
    copy(&fixture(name), &target);
    target
}

/// `prompt edit NAME` with an editor that runs the shell line `script` on the file ("$1").
pub fn edit_with(ctx: &TestContext, name: &str, script: &str) -> std::process::Output {
    let editor = ctx.write(&format!("editors/{name}"), format!("#!/bin/sh\n{script}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755))
            .expect("make the editor executable");
    }
    ctx.command(&["prompt", "edit", name])
        .env_remove("VISUAL")
        .env("EDITOR", &editor)
        .output()
        .expect("run promptshelf")
}

pub(crate) fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// `import PATH --json`, which must succeed with no failure; returns its report.
pub(crate) fn imported(ctx: &TestContext, path: &Path, more: &[&str]) -> Value {
    let mut args = vec!["import", arg(path), "--json"];
    args.extend_from_slice(more);
    let report = ctx.json(&args);
    assert_eq!(report["failed"], 0, "{report:#}");
    report
}

/// The keys (prompt names, resource URIs) of the changes of an import's report, by kind.
fn added(report: &Value, kind: &str) -> Vec<String> {
    let mut keys: Vec<String> = report["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter(|change| change["kind"] == kind && change["action"] == "add")
        .map(|change| change["key"].as_str().unwrap_or_default().to_string())
        .collect();
    keys.sort();
    keys
}

fn resource(ctx: &TestContext, uri: &str) -> Value {
    ctx.json(&["resource", "show", uri, "--json"])
}

fn prompt(ctx: &TestContext, name: &str) -> Value {
    ctx.json(&["prompt", "show", name, "--json"])
}

/// Scripts a skill ships for the model to read, by extensions that name no text type, or a
/// video format (`.ts`), or none; each with the MIME type it is served as.
const SCRIPTS: [(&str, &str, &str); 6] = [
    (
        "build.ts",
        "export const greeting: string = 'zanzibar-typescript';\n",
        "text/x-typescript",
    ),
    (
        "deploy.ps1",
        "Write-Host 'zanzibar-powershell'\n",
        "text/plain",
    ),
    (
        "main.tf",
        "resource \"null_resource\" \"zanzibar\" {}\n",
        "text/plain",
    ),
    (
        "infra.bicep",
        "param location string = 'zanzibar'\n",
        "text/plain",
    ),
    (
        "Dockerfile",
        "FROM scratch\nCOPY zanzibar /\n",
        "text/plain",
    ),
    (
        "LICENSE",
        "Permission is granted, zanzibar.\n",
        "text/plain",
    ),
];

/// The start of a PNG image: bytes that are not text.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01";

#[test]
fn a_plugin_roots_skills_are_skills_and_their_scripts_text_whatever_the_extension() {
    let ctx = TestContext::new();
    let root = copy_of(&ctx, "anthropics-skills");
    let skill = root.join("skills/internal-comms");
    for (file, text, _) in SCRIPTS {
        ctx.write(
            &format!("anthropics-skills/skills/internal-comms/scripts/{file}"),
            text,
        );
    }
    ctx.write(
        "anthropics-skills/skills/internal-comms/assets/logo.png",
        PNG,
    );
    let report = imported(&ctx, &root, &[]);
    // The repository's root holds `.claude-plugin/`: its `skills/NAME/SKILL.md` are skills, as
    // Claude Code reads them, with their files at `skill://NAME/...`.
    assert_eq!(
        added(&report, "prompt"),
        ["brand-guidelines", "internal-comms", "theme-factory"],
        "{report:#}"
    );
    let skill_md = resource(&ctx, "skill://internal-comms/SKILL.md");
    assert_eq!(skill_md["mimeType"], "text/markdown");
    for (file, _, mime) in SCRIPTS {
        let shown = resource(&ctx, &format!("skill://internal-comms/scripts/{file}"));
        assert_eq!(
            (&shown["mimeType"], &shown["text"]),
            (&json!(mime), &json!(true)),
            "{file}: {shown:#}"
        );
    }
    let license = resource(&ctx, "skill://internal-comms/LICENSE.txt");
    assert_eq!(license["text"], true, "{license:#}");
    let logo = resource(&ctx, "skill://internal-comms/assets/logo.png");
    assert_eq!(
        (&logo["mimeType"], &logo["text"]),
        (&json!("image/png"), &json!(false))
    );
    // Text is searchable, and `check` reads it as text without a complaint.
    let hits = ctx.json(&["search", "zanzibar", "--json"]);
    let mut keys: Vec<&str> = hits
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|hit| hit["key"].as_str())
        .collect();
    keys.sort_unstable();
    let mut wanted: Vec<String> = SCRIPTS
        .iter()
        .map(|(file, _, _)| format!("skill://internal-comms/scripts/{file}"))
        .collect();
    wanted.sort_unstable();
    assert_eq!(keys, wanted);
    assert_eq!(ctx.json(&["check", "--json"]), json!([]));
    // The skills folder on its own (in a library of its own: the skills' URIs are the
    // plugin's) exports every file back byte for byte.
    let other = TestContext::new();
    let report = imported(&other, &root.join("skills"), &[]);
    assert_eq!(report["collection"], "skills");
    let out = ctx.path("out/skills");
    other.ok(&["export", arg(&out), "--collection", "skills"]);
    for file in SCRIPTS
        .iter()
        .map(|(file, _, _)| format!("scripts/{file}"))
        .chain(["assets/logo.png".to_string(), "LICENSE.txt".to_string()])
    {
        let written = std::fs::read(out.join("internal-comms").join(&file)).expect("exported");
        let source = std::fs::read(skill.join(&file)).expect("source");
        assert!(written == source, "{file} did not export as it was");
    }
}

#[test]
fn a_text_file_of_a_plain_folder_is_text_and_exports_without_metadata() {
    let ctx = TestContext::new();
    ctx.write("notes/LICENSE", "Plain words of a licence.\n");
    ctx.write("notes/tools/build.ts", "export const x = 1;\n");
    imported(&ctx, &ctx.path("notes"), &[]);
    let license = resource(&ctx, "shelf://notes/LICENSE");
    assert_eq!(
        (&license["mimeType"], &license["text"]),
        (&json!("text/plain"), &json!(true))
    );
    let script = resource(&ctx, "shelf://notes/tools/build.ts");
    assert_eq!(script["mimeType"], "text/x-typescript");
    let out = ctx.path("out");
    ctx.ok(&["export", arg(&out), "--collection", "notes"]);
    assert_eq!(
        std::fs::read_to_string(out.join("tools/build.ts")).expect("exported"),
        "export const x = 1;\n"
    );
    // The type is what the file itself gives, so no metadata file says it.
    assert!(!out.join("tools/build.ts.meta.yaml").exists());
    assert!(!out.join("LICENSE.meta.yaml").exists());
}

#[test]
fn a_plugin_marketplaces_skills_and_commands_are_found() {
    let ctx = TestContext::new();
    let report = imported(&ctx, &fixture("wshobson-agents"), &[]);
    assert_eq!(
        added(&report, "prompt"),
        ["block-no-verify", "block-no-verify-hook"],
        "{report:#}"
    );
    let skill = resource(&ctx, "skill://block-no-verify-hook/SKILL.md");
    assert_eq!(skill["mimeType"], "text/markdown");
    let hook = prompt(&ctx, "block-no-verify-hook");
    assert!(
        hook["description"]
            .as_str()
            .is_some_and(|text| !text.is_empty()),
        "the skill's description is its front matter's: {hook:#}"
    );

    // The plugin's own folder, which holds `.claude-plugin/`, reads the same.
    let ctx = TestContext::new();
    let plugin = fixture("wshobson-agents/plugins/block-no-verify");
    let report = imported(&ctx, &plugin, &[]);
    assert_eq!(
        added(&report, "prompt"),
        ["block-no-verify", "block-no-verify-hook"],
        "{report:#}"
    );
    assert_eq!(
        added(&report, "resource"),
        ["skill://block-no-verify-hook/SKILL.md"]
    );
}

#[test]
fn gemini_commands_are_found_by_their_shape_and_a_readme_is_a_document() {
    let ctx = TestContext::new();
    let extension = copy_of(&ctx, "gemini-security");
    ctx.write(
        "gemini-security/commands/README.md",
        "# Commands\n\nThe commands of this extension, one a file.\n",
    );
    let report = imported(&ctx, &extension, &[]);
    assert_eq!(added(&report, "prompt"), ["security/analyze"], "{report:#}");
    let command = prompt(&ctx, "security/analyze");
    assert_eq!(
        command["description"],
        "Analyzes code changes on your current branch for common security vulnerabilities and \
         privacy violations."
    );
    let readme = resource(&ctx, "shelf://gemini-security/commands/README.md");
    assert_eq!(readme["title"], "Commands", "{readme:#}");
    let manifest = resource(&ctx, "shelf://gemini-security/gemini-extension.json");
    assert_eq!(manifest["mimeType"], "application/json");

    // `~/.gemini/commands` imported itself: the same command, named from its folder.
    let ctx = TestContext::new();
    let report = imported(&ctx, &extension.join("commands"), &[]);
    assert_eq!(added(&report, "prompt"), ["security/analyze"], "{report:#}");
    assert_eq!(
        added(&report, "resource"),
        ["shelf://commands/README.md"],
        "{report:#}"
    );
}

#[test]
fn a_toml_file_without_a_commands_shape_stays_a_document() {
    let ctx = TestContext::new();
    ctx.write("tools/pyproject.toml", "[project]\nname = \"demo\"\n");
    ctx.write("tools/ask.toml", "prompt = 3\n");
    let report = imported(&ctx, &ctx.path("tools"), &[]);
    assert!(added(&report, "prompt").is_empty(), "{report:#}");
    assert_eq!(
        added(&report, "resource"),
        ["shelf://tools/ask.toml", "shelf://tools/pyproject.toml"]
    );
}

/// The sample of awesome-chatgpt-prompts' `prompts.csv`, copied into the test's folder.
fn prompts_csv(ctx: &TestContext) -> PathBuf {
    copy_of(ctx, "awesome-chatgpt-prompts").join("prompts.csv")
}

/// An argument of a shown prompt: (required, default, title).
fn argument(shown: &Value, name: &str) -> (Value, Value, Value) {
    let argument = shown["arguments"]
        .as_array()
        .expect("arguments")
        .iter()
        .find(|argument| argument["name"] == name)
        .unwrap_or_else(|| panic!("no argument {name}: {shown:#}"));
    (
        argument["required"].clone(),
        argument["default"].clone(),
        argument["title"].clone(),
    )
}

#[test]
fn the_awesome_chatgpt_prompts_csv_imports_as_prompts_with_arguments() {
    let ctx = TestContext::new();
    let csv = prompts_csv(&ctx);
    let report = imported(&ctx, &csv, &[]);
    assert_eq!(report["collection"], "prompts");
    assert_eq!(report["added"], 43, "{report:#}");
    // Two names had to be made: a title that repeats, and one with no letters of a-z.
    let warnings: Vec<(Value, String)> = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|warning| {
            let message = warning["message"].as_str().unwrap_or_default();
            (warning["line"].clone(), message.to_string())
        })
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].1.contains("'virtual-doctor-2'"), "{warnings:?}");
    assert!(warnings[1].1.contains("'prompt-108'"), "{warnings:?}");
    assert_eq!(warnings[1].0, 108);

    let devops = prompt(&ctx, "devops-engineer");
    assert_eq!(devops["title"], "Devops Engineer");
    assert_eq!(devops["description"], "Tags: text, for-devs");
    assert_eq!(
        argument(&devops, "Company_Type"),
        (json!(false), json!("Big Company"), json!("Company Type"))
    );
    let travel = prompt(&ctx, "travel-planner-prompt");
    assert_eq!(
        argument(&travel, "city"),
        (json!(true), Value::Null, Value::Null)
    );
    // The placeholder is the argument: rendered with its value, or its default.
    let rendered = ctx.ok(&[
        "prompt",
        "render",
        "devops-engineer",
        "--arg",
        "Title=Staff",
    ]);
    assert!(
        rendered.contains("You are a Staff DevOps engineer working at Big Company."),
        "{rendered}"
    );
    // Code in a prompt keeps its `${...}`, which names no argument.
    let code = prompt(&ctx, "trello-integration-skill");
    let body = code["messages"][0]["body"].as_str().unwrap_or_default();
    assert!(body.contains("${response.status}"), "{body}");
    assert!(
        code["arguments"]
            .as_array()
            .is_some_and(|arguments| arguments.iter().all(|a| a["name"] != "response")),
        "{code:#}"
    );

    // Imported again unchanged, nothing changes.
    let again = imported(&ctx, &csv, &[]);
    assert_eq!(
        (&again["added"], &again["updated"], &again["unchanged"]),
        (&json!(0), &json!(0), &json!(43)),
        "{again:#}"
    );
}

#[test]
fn a_csv_arguments_default_is_offered_as_its_completion() {
    let ctx = TestContext::new();
    imported(&ctx, &prompts_csv(&ctx), &[]);
    let mut server = ctx.server();
    let complete = |server: &mut crate::common::Server, name: &str, argument: &str| {
        let response = server.modern(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": name},
                "argument": {"name": argument, "value": ""}
            }),
        );
        validate(MODERN, "JSONRPCMessage", &response);
        response["result"]["completion"]["values"].clone()
    };
    assert_eq!(
        complete(&mut server, "job-interviewer", "Position"),
        json!(["Software Developer"])
    );
    assert_eq!(
        complete(&mut server, "travel-planner-prompt", "city"),
        json!([])
    );
    server.close();
}

#[test]
fn a_row_that_cannot_be_a_prompt_is_refused_at_its_line_and_nothing_imported() {
    let ctx = TestContext::new();
    let csv = ctx.write(
        "team.csv",
        "Title,Content,Category\n\
         Reviewer,\"Review ${file} for bugs\",code\n\
         Empty,,code\n\
         Broken,\"two\",fields,too many\n\
         Writer,\"Write about ${topic:cats}\",\"prose, fun\"\n",
    );
    let stderr = ctx.fails(&["import", arg(&csv)]);
    assert!(
        stderr.contains("team.csv:3: the row's prompt text is empty"),
        "{stderr}"
    );
    assert!(
        stderr.contains("team.csv:4: the row has 4 fields where the header has 3"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was imported"), "{stderr}");
    let listed = ctx.json(&["prompt", "list", "--json"]);
    assert!(
        listed
            .as_array()
            .is_some_and(|prompts| prompts.iter().all(|p| p["collection"] != "team")),
        "{listed:#}"
    );

    // With --keep-going, the rows that read import.
    let output = ctx.run(&["import", arg(&csv), "--keep-going"]);
    assert!(!output.status.success());
    let writer = prompt(&ctx, "writer");
    assert_eq!(writer["description"], "Tags: prose, fun");
    assert_eq!(
        argument(&writer, "topic"),
        (json!(false), json!("cats"), Value::Null)
    );
    assert_eq!(
        argument(&prompt(&ctx, "reviewer"), "file"),
        (json!(true), Value::Null, Value::Null)
    );
}

#[test]
fn a_csv_without_a_text_column_is_refused_with_the_names_to_use() {
    let ctx = TestContext::new();
    let csv = ctx.write("list.csv", "name,notes\na,b\n");
    let stderr = ctx.fails(&["import", arg(&csv)]);
    assert!(
        stderr.contains("list.csv:1: the header row names no prompt text column"),
        "{stderr}"
    );
    assert!(stderr.contains("prompt, content, body, text"), "{stderr}");
    let other = ctx.write("notes.txt", "text\n");
    let stderr = ctx.fails(&["import", arg(&other)]);
    assert!(stderr.contains("not a CSV list of prompts"), "{stderr}");
}

#[test]
fn a_csv_prompt_is_edited_in_its_list_and_only_the_list_imported_again() {
    let ctx = TestContext::new();
    let csv = prompts_csv(&ctx);
    imported(&ctx, &csv, &[]);
    let listed = ctx.json(&["collection", "list", "--json"]);
    let record = listed
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == "prompts"))
        .unwrap_or_else(|| panic!("no collection prompts: {listed:#}"));
    let csv = csv.canonicalize().expect("the list");
    assert_eq!(record["source"], arg(&csv), "{record:#}");
    let output = edit_with(
        &ctx,
        "devops-engineer",
        "sed -i 's/${Title:Senior}/${Title:Principal}/' \"$1\"",
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("updated prompt devops-engineer (prompts.csv)"),
        "{stdout}"
    );
    assert_eq!(
        argument(&prompt(&ctx, "devops-engineer"), "Title"),
        (json!(false), json!("Principal"), Value::Null)
    );
    // The list's folder holds its NOTICE too, which is no part of the collection.
    let notice = ctx.run(&["resource", "show", "shelf://prompts/NOTICE", "--json"]);
    assert!(!notice.status.success(), "the list's folder was imported");
}
