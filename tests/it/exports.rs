//! `export DIR --format F`: a library with typed arguments, an embed, a link, template code and
//! a nested name, written as each host's files, those files parsed back (YAML with
//! serde-saphyr, TOML with toml_edit) and imported into a new library; and skill folders
//! imported, their files served as `skill://NAME/PATH`, bad skills refused at their line.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::{TestContext, ok_on};

const PNG_BYTES: &[u8] = include_bytes!("../../seed/images/layers.png");

const STYLE: &str = "# Style\n\nWrite short sentences.\n";

/// The library every test exports: `fix` (two typed arguments, an embed), `explain` (one
/// argument, a link) and `git/commit` (a nested name, template code).
fn library() -> TestContext {
    let ctx = TestContext::new();
    ctx.write("lib/guides/style.md", STYLE);
    ctx.write(
        "lib/fix.prompt.md",
        "---\ndescription: Fix a bug in a file.\narguments:\n  - name: file\n    description: The \
         file to fix\n    required: true\n  - name: level\n    type: enum\n    values: [low, \
         high]\n---\nFix {{ file }} at level {{ level }}. Costs $5.\n\n{{ \
         embed(\"shelf://lib/guides/style.md\") }}\n",
    );
    ctx.write(
        "lib/explain.prompt.md",
        "---\ndescription: Explain a topic.\narguments:\n  - name: topic\n---\nExplain {{ topic }} \
         simply. See {{ link(\"shelf://lib/guides/style.md\") }}.\n",
    );
    ctx.write(
        "lib/commit.prompt.md",
        "---\nname: git/commit\ndescription: Write a commit message.\n---\nWrite a commit \
         message.{% if true %} Keep it short.{% endif %}\n",
    );
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", ctx.path("lib").to_str().unwrap()]);
    ctx
}

/// Exports `ctx`'s library as `format` into a new project folder; returns its path and stderr.
fn export(ctx: &TestContext, format: &str) -> (std::path::PathBuf, String) {
    let project = ctx.path(&format!("project-{format}"));
    let output = ctx.run(&["export", project.to_str().unwrap(), "--format", format]);
    assert!(
        output.status.success(),
        "{}",
        crate::common::describe(&["export"], &output, "export --format")
    );
    (
        project,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// YAML front matter and body of a file.
fn front_and_body(text: &str) -> (BTreeMap<String, Value>, String) {
    let rest = text.strip_prefix("---\n").expect("front matter");
    let (yaml, body) = rest.split_once("\n---\n").expect("closed front matter");
    (
        serde_saphyr::from_str(yaml).expect("front matter is YAML"),
        body.to_string(),
    )
}

/// A new library with `project` imported into it.
fn reimported(project: &Path) -> TestContext {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", project.to_str().unwrap(), "--collection", "proj"]);
    ctx
}

/// The prompt's argument names in a library.
pub(crate) fn argument_names(ctx: &TestContext, name: &str) -> Vec<String> {
    let shown = ctx.json(&["prompt", "show", name, "--json"]);
    shown["arguments"]
        .as_array()
        .map(|arguments| {
            arguments
                .iter()
                .map(|a| a["name"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Every text of the rendered prompt, embedded resources' text included, joined.
fn rendered(ctx: &TestContext, name: &str, args: &[&str]) -> String {
    let mut command = vec!["prompt", "render", name, "--json"];
    for arg in args {
        command.extend(["--arg", arg]);
    }
    let result = ctx.json(&command);
    result["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|message| {
            let content = &message["content"];
            content["text"]
                .as_str()
                .or(content["resource"]["text"].as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn claude_commands_use_named_arguments_and_import_back() {
    let ctx = library();
    let (project, stderr) = export(&ctx, "claude-commands");
    let text = read(&project.join(".claude/commands/fix.md"));
    let (front, body) = front_and_body(&text);
    assert_eq!(front["description"], "Fix a bug in a file.");
    assert_eq!(front["argument-hint"], "[file] [level]");
    assert_eq!(front["arguments"], json!(["file", "level"]));
    // Named placeholders; a `$` the host would substitute is escaped; the embed is inlined.
    assert!(
        body.starts_with(
            "Fix $file at level $level. Costs \\$5.\n\n# Style\n\nWrite short sentences."
        ),
        "{body}"
    );
    assert!(project.join(".claude/commands/git-commit.md").is_file());
    assert!(
        stderr.contains("prompt fix: claude-commands cannot say"),
        "{stderr}"
    );
    assert!(
        stderr.contains("argument level's type enum, values"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "template code the host cannot run, written as it is: {% if true %} {% endif %}"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("prompt git/commit") && stderr.contains("it imports as 'git-commit'"),
        "{stderr}"
    );

    let back = reimported(&project);
    assert_eq!(argument_names(&back, "fix"), ["file", "level"]);
    let text = rendered(&back, "fix", &["file=a.rs", "level=low"]);
    assert!(
        text.starts_with("Fix a.rs at level low. Costs $5."),
        "{text}"
    );
    assert!(text.contains("Write short sentences."), "{text}");
    assert_eq!(
        rendered(&back, "explain", &["topic=rust"]),
        rendered(&ctx, "explain", &["topic=rust"]).replace(
            "Explain rust simply. See .",
            "Explain rust simply. See [Style](shelf://lib/guides/style.md)."
        )
    );
}

#[test]
fn vscode_prompts_ask_for_inputs_and_import_back() {
    let ctx = library();
    let (project, stderr) = export(&ctx, "vscode-prompts");
    let (front, body) = front_and_body(&read(&project.join(".github/prompts/fix.prompt.md")));
    assert_eq!(front["description"], "Fix a bug in a file.");
    assert_eq!(front["agent"], "agent");
    assert!(
        body.starts_with("Fix ${input:file:The file to fix} at level ${input:level}. Costs $5."),
        "{body}"
    );
    let (front, _) = front_and_body(&read(&project.join(".github/prompts/git-commit.prompt.md")));
    assert_eq!(front["name"], "git/commit");
    assert!(stderr.contains("optional arguments"), "{stderr}");

    let back = reimported(&project);
    assert_eq!(argument_names(&back, "fix"), ["file", "level"]);
    // A file without an input takes the text typed after it, as VS Code passes it on.
    assert_eq!(argument_names(&back, "git/commit"), ["arguments"]);
    let text = rendered(&back, "fix", &["file=a.rs", "level=low"]);
    assert!(
        text.starts_with("Fix a.rs at level low. Costs $5."),
        "{text}"
    );
}

#[test]
fn gemini_commands_nest_and_take_one_args() {
    let ctx = library();
    let (project, stderr) = export(&ctx, "gemini-commands");
    let toml = |path: &str| -> toml_edit::DocumentMut {
        read(&project.join(path)).parse().expect("the file is TOML")
    };
    let explain = toml(".gemini/commands/explain.toml");
    assert_eq!(explain["description"].as_str(), Some("Explain a topic."));
    let prompt = explain["prompt"].as_str().expect("prompt");
    assert!(
        prompt.starts_with("Explain {{args}} simply. See [Style](shelf://lib/guides/style.md)."),
        "{prompt}"
    );
    let fix = toml(".gemini/commands/fix.toml");
    let prompt = fix["prompt"].as_str().expect("prompt");
    assert!(
        prompt.starts_with("Fix <file> at level <level>. Costs $5."),
        "{prompt}"
    );
    assert!(
        prompt.contains("- <file>: The file to fix\n- <level> (optional)"),
        "{prompt}"
    );
    let commit = toml(".gemini/commands/git/commit.toml");
    assert!(
        commit["prompt"]
            .as_str()
            .is_some_and(|p| p.contains("{% if true %}"))
    );
    assert!(
        stderr.contains("prompt fix: gemini-commands cannot say its arguments as fields"),
        "{stderr}"
    );

    let back = reimported(&project);
    assert_eq!(argument_names(&back, "explain"), ["args"]);
    // The text after the command, which Gemini CLI appends, is the one argument left.
    assert_eq!(argument_names(&back, "fix"), ["args"]);
    let text = rendered(&back, "explain", &["args=rust"]);
    assert!(text.starts_with("Explain rust simply."), "{text}");
    let text = rendered(&back, "git/commit", &[]);
    assert!(
        text.contains("message.{% if true %} Keep it short.{% endif %}"),
        "{text}"
    );
}

#[test]
fn cursor_commands_are_plain_markdown_naming_their_arguments() {
    let ctx = library();
    let (project, stderr) = export(&ctx, "cursor-commands");
    let text = read(&project.join(".cursor/commands/fix.md"));
    assert!(
        text.starts_with("Fix <file> at level <level>. Costs $5.\n\n# Style"),
        "{text}"
    );
    assert!(text.ends_with("Arguments, in the text after the command:\n\n- <file>: The file to fix\n- <level> (optional)\n"), "{text}");
    // Its description is not the text's first paragraph, so it does not come back.
    assert!(
        stderr.contains("prompt fix: cursor-commands cannot say its arguments as fields")
            && stderr.contains("values; its description\n"),
        "{stderr}"
    );

    let back = reimported(&project);
    // The text after the command, which Cursor adds, is the one argument left.
    assert_eq!(argument_names(&back, "fix"), ["arguments"]);
    let text = rendered(&back, "fix", &[]);
    assert!(
        text.starts_with("Fix <file> at level <level>. Costs $5."),
        "{text}"
    );
}

#[test]
fn skills_carry_their_resources_in_references() {
    let ctx = library();
    let (project, stderr) = export(&ctx, "skills");
    let (front, body) = front_and_body(&read(&project.join(".agents/skills/fix/SKILL.md")));
    assert_eq!(front["name"], "fix");
    assert_eq!(front["description"], "Fix a bug in a file.");
    assert!(
        body.starts_with("Fix <file> at level <level>. Costs $5.\n\n[Style](references/style.md)"),
        "{body}"
    );
    assert_eq!(
        read(&project.join(".agents/skills/fix/references/style.md")),
        STYLE
    );
    assert_eq!(
        read(&project.join(".agents/skills/explain/references/style.md")),
        STYLE
    );
    assert!(project.join(".agents/skills/git-commit/SKILL.md").is_file());
    assert!(
        stderr.contains("prompt git/commit: skills cannot say")
            && stderr.contains("its name (it imports as 'git-commit')"),
        "{stderr}"
    );

    let back = reimported(&project);
    let text = rendered(&back, "fix", &[]);
    assert!(
        text.contains("[Style](skill://fix/references/style.md)"),
        "{text}"
    );
    assert_eq!(
        back.ok(&["resource", "cat", "skill://fix/references/style.md"]),
        STYLE
    );
}

#[test]
fn a_host_folder_given_as_the_project_is_refused() {
    let ctx = library();
    let dir = ctx.path("app/.claude/commands");
    let stderr = ctx.fails(&[
        "export",
        dir.to_str().unwrap(),
        "--format",
        "claude-commands",
    ]);
    assert!(stderr.contains("is a host's folder"), "{stderr}");
    assert!(stderr.contains("--format claude-commands`"), "{stderr}");
    assert!(!ctx.path("app").exists());
}

#[test]
fn skill_folders_import_as_prompts_with_their_files_served() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/.claude/skills/pdf-tools/SKILL.md",
        "---\nname: pdf-tools\ndescription: Work with PDF files.\nallowed-tools: Read\n---\n# PDF \
         tools\n\nUse {{ these }} with $ARGUMENTS. See [forms](references/forms.md).\n",
    );
    ctx.write(
        "repo/.claude/skills/pdf-tools/references/forms.md",
        "# Forms\n\nFill them.\n",
    );
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", ctx.path("repo").to_str().unwrap()]);
    // `$ARGUMENTS` is the text typed after the skill, as in a Claude Code command.
    let text = rendered(&ctx, "pdf-tools", &["arguments=a.pdf"]);
    assert_eq!(
        text,
        "# PDF tools\n\nUse {{ these }} with a.pdf. See [forms](skill://pdf-tools/references/forms.md)."
    );
    let shown = ctx.json(&["prompt", "show", "pdf-tools", "--json"]);
    assert_eq!(shown["description"], "Work with PDF files.");

    let mut server = ctx.server();
    let response = server.modern(
        "resources/read",
        json!({"uri": "skill://pdf-tools/references/forms.md"}),
    );
    let contents = &response["result"]["contents"][0];
    assert_eq!(contents["text"], "# Forms\n\nFill them.\n", "{response}");
    assert_eq!(contents["mimeType"], "text/markdown", "{response}");
}

#[test]
fn a_folder_of_skill_folders_imports_directly() {
    let ctx = TestContext::new();
    ctx.write(
        "skills/lint/SKILL.md",
        "---\ndescription: Lint the code.\n---\nRun the linter.\n",
    );
    ctx.write("skills/lint/scripts/run.sh", "cargo clippy\n");
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", ctx.path("skills").to_str().unwrap()]);
    assert_eq!(rendered(&ctx, "lint", &[]), "Run the linter.");
    assert_eq!(
        ctx.ok(&["resource", "cat", "skill://lint/scripts/run.sh"]),
        "cargo clippy\n"
    );
}

#[test]
fn bad_skills_are_refused_at_their_line() {
    for (path, text, expected) in [
        (
            ".agents/skills/Bad_Name/SKILL.md",
            "---\nname: Bad_Name\ndescription: x\n---\nBody\n",
            ".agents/skills/Bad_Name/SKILL.md:2: skill name 'Bad_Name' must be",
        ),
        (
            ".agents/skills/one/SKILL.md",
            "---\ndescription: x\nname: two\n---\nBody\n",
            ".agents/skills/one/SKILL.md:3: skill name 'two' is not its folder's name 'one'",
        ),
        (
            ".github/skills/a--b/SKILL.md",
            "---\ndescription: x\n---\nBody\n",
            ".github/skills/a--b/SKILL.md:1: skill name 'a--b' must be",
        ),
        (
            ".gemini/skills/quiet/SKILL.md",
            "---\nname: quiet\n---\nBody\n",
            ".gemini/skills/quiet/SKILL.md:1: a skill needs a description",
        ),
    ] {
        let ctx = TestContext::new();
        ctx.write(&format!("repo/{path}"), text);
        ctx.ok(&["init", "--empty"]);
        let stderr = ctx.fails(&["import", ctx.path("repo").to_str().unwrap()]);
        assert!(stderr.contains(expected), "{path}: {stderr}");
    }
}

#[test]
fn host_files_survive_an_export_in_our_format() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/.agents/skills/lint/SKILL.md",
        "---\nname: lint\ndescription: Lint the code.\n---\n# Lint\n\nRun {{ it }}, see [r](references/r.md).\n",
    );
    ctx.write(
        "repo/.agents/skills/lint/references/r.md",
        "---\ntitle: kept\n---\n# R\n",
    );
    ctx.write(
        "repo/.gemini/commands/git/commit.toml",
        "description = \"Commit\"\nprompt = \"Commit {{args}} now.\"\n",
    );
    ctx.write("repo/.cursor/commands/tidy.md", "Tidy $1 {{ up }}.\n");
    ctx.write(
        "repo/.claude/commands/fix.md",
        "---\narguments: [file]\n---\nFix $file, \\$5.\n",
    );
    ctx.ok(&["init", "--empty"]);
    let first = ctx.ok(&["import", ctx.path("repo").to_str().unwrap()]);
    // The skill's SKILL.md is a prompt and a resource.
    assert!(first.contains("added 6,"), "{first}");
    let out = ctx.path("out");
    ctx.ok(&["export", out.to_str().unwrap(), "--collection", "repo"]);
    let again = ctx.ok(&["import", out.to_str().unwrap(), "--collection", "repo"]);
    assert!(
        again.contains("added 0, updated 0, unchanged 6,"),
        "{again}\n{:?}",
        std::fs::read_dir(&out).map(|entries| entries.count())
    );
    assert_eq!(
        ctx.ok(&["resource", "cat", "skill://lint/references/r.md"]),
        "---\ntitle: kept\n---\n# R\n"
    );
    assert_eq!(rendered(&ctx, "fix", &["file=a.rs"]), "Fix a.rs, $5.");
    assert_eq!(
        rendered(&ctx, "git/commit", &["args=all"]),
        "Commit all now."
    );
    assert_eq!(rendered(&ctx, "tidy", &[]), "Tidy $1 {{ up }}.");
}

#[test]
fn a_prompt_a_format_cannot_hold_is_left_out_with_the_reason() {
    let ctx = TestContext::new();
    ctx.write(
        "lib/bare.prompt.md",
        "---\narguments:\n  - name: it\n---\nDo {{ it }}.\n",
    );
    ctx.write(
        "lib/fine.prompt.md",
        "---\ndescription: Fine.\n---\nFine.\n",
    );
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", ctx.path("lib").to_str().unwrap()]);
    let (project, stderr) = export(&ctx, "skills");
    assert!(
        stderr.contains(
            "prompt bare: left out: no description, which a skill must have; give the prompt one"
        ),
        "{stderr}"
    );
    assert!(!project.join(".agents/skills/bare").exists());
    assert!(project.join(".agents/skills/fine/SKILL.md").is_file());
}

/// Every prompt, resource, template and completion table of the library at `db`: a prompt's
/// name, a resource's URI or a template's URI template, its collection, its content hash
/// (over content and metadata) and, for a resource, its content's hash and type; a table's
/// every value with its weight and context.
fn fingerprint(db: &Path) -> Vec<String> {
    let conn = crate::common::open_library(db);
    let mut rows = Vec::new();
    for sql in [
        "SELECT 'prompt ' || name || ' ' || ifnull(collection, '-') || ' ' || hex(content_hash)
         FROM prompts ORDER BY name",
        "SELECT 'resource ' || uri || ' ' || ifnull(collection, '-') || ' ' || hex(content_hash)
         || ' ' || hex(blob_hash) || ' ' || mime_type FROM resources ORDER BY uri",
        "SELECT 'template ' || uri_template || ' ' || ifnull(collection, '-') || ' '
         || hex(content_hash) FROM resource_templates ORDER BY uri_template",
        "SELECT 'values ' || t.name || ' ' || ifnull(t.description, '-') || ' '
         || ifnull(group_concat(quote(v.value) || ':' || v.weight || ':' || v.context_name
         || '=' || v.context_value, ' ' ORDER BY v.value, v.context_name, v.context_value), '')
         FROM completion_tables t LEFT JOIN completion_values v ON v.table_id = t.id
         GROUP BY t.id ORDER BY t.name",
    ] {
        let mut stmt = conn.prepare(sql).expect(sql);
        rows.extend(
            stmt.query_map([], |row| row.get::<_, String>(0))
                .expect(sql)
                .map(|row| row.expect("a row")),
        );
    }
    rows
}

#[test]
fn a_whole_library_exported_comes_back_in_one_import() {
    let ctx = TestContext::new();
    ctx.ok(&["init"]);
    ctx.write("team/ask.prompt.md", "---\narguments:\n  - name: q\n---\nAsk {{ q }}, see {{ embed(\"shelf://library/guides/testing.md\") }}\n");
    ctx.write(
        "team/notes/guide.md",
        "# Guide\n\nSee [the other](other.md).\n",
    );
    ctx.write("team/notes/other.md", "# Other\n");
    ctx.write("docs/intro.md", "# Intro\n");
    ctx.write("docs/diagram.png", PNG_BYTES);
    ctx.write(
        "docs/diagram.png.meta.yaml",
        "title: The layers\naudience: [user]\npriority: 0.5\n",
    );
    ctx.ok(&["import", ctx.path("team").to_str().expect("UTF-8")]);
    ctx.ok(&[
        "import",
        ctx.path("docs").to_str().expect("UTF-8"),
        "--scheme",
        "docs",
    ]);
    let hand = ctx.write("hand/mine.prompt.md", "Say mine.\n");
    ctx.ok(&["prompt", "add", hand.to_str().expect("UTF-8")]);
    let note = ctx.write("hand/note.txt", "a note\n");
    ctx.add_resource(&note, "https://example.com/notes/note.txt");
    let blob = ctx.write("hand/pixel.png", PNG_BYTES);
    ctx.ok(&[
        "resource",
        "add",
        blob.to_str().expect("UTF-8"),
        "--uri",
        "shelf://local/pixel.png",
        "--title",
        "One pixel",
        "--description",
        "A binary with metadata",
        "--audience",
        "assistant",
        "--priority",
        "0.25",
    ]);
    // A template added by hand, completing from a table no collection has.
    ctx.ok(&["values", "add", "shades", "red", "green", "--weight", "2.5"]);
    let shades = ctx.write(
        "hand/shades.csv",
        "value,weight,context\nnavy,1,tone=dark\n\"a, b\",0.125,\n",
    );
    ctx.ok(&[
        "values",
        "import",
        "shades",
        shades.to_str().expect("UTF-8"),
    ]);
    ctx.ok(&[
        "template",
        "add",
        "paint://{shade}/swatch{?size}",
        "--name",
        "swatch",
        "--title",
        "A swatch",
        "--description",
        "One shade",
        "--mime-type",
        "image/png",
        "--complete",
        "shade=shades",
    ]);
    // And the collection's own template given a completion by hand.
    ctx.ok(&["values", "add", "pages", "intro.md"]);
    ctx.ok(&[
        "template",
        "add",
        "docs://docs/{+path}",
        "--name",
        "docs",
        "--complete",
        "path=pages",
    ]);
    let before = fingerprint(&ctx.db);
    assert!(
        before
            .iter()
            .any(|row| row.starts_with("template paint://{shade}/swatch{?size} - ")),
        "{before:?}"
    );
    assert!(
        before
            .iter()
            .any(|row| row.starts_with("resource docs://docs/diagram.png docs "))
    );

    let out = ctx.path("out");
    let out_arg = out.to_str().expect("UTF-8");
    ctx.ok(&["export", out_arg]);
    assert!(out.join("promptshelf-library.json").is_file());

    let fresh = ctx.path("fresh.db");
    ok_on(&fresh, &["init", "--empty"]);
    ok_on(&fresh, &["import", out_arg]);
    assert_eq!(fingerprint(&fresh), before);
    // A template added by hand keeps its time too (a collection's is made by its import).
    let modified = |db: &Path| -> i64 {
        crate::common::open_library(db)
            .query_row(
                "SELECT last_modified FROM resource_templates WHERE name = 'swatch'",
                [],
                |row| row.get(0),
            )
            .expect("the template's time")
    };
    assert_eq!(modified(&fresh), modified(&ctx.db));
    let writes = |db: &Path| -> i64 {
        crate::common::open_library(db)
            .query_row("SELECT count(*) FROM writes", [], |row| row.get(0))
            .expect("count writes")
    };
    let written = writes(&fresh);
    let again = crate::common::command_on(&fresh, &["import", out_arg, "--json"])
        .output()
        .expect("run");
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let again: Value = serde_json::from_slice(&again.stdout).expect("JSON");
    for part in again.as_array().expect("one entry per part") {
        assert_eq!(part["added"], 0, "{part}");
        assert_eq!(part["updated"], 0, "{part}");
    }
    assert_eq!(writes(&fresh), written, "a second import wrote");
    assert_eq!(fingerprint(&fresh), before);
}

#[test]
fn templates_added_by_hand_come_back_from_the_manifest_alone() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["template", "add", "paint://{shade}", "--name", "paint"]);
    let out = ctx.path("out");
    let out_arg = out.to_str().expect("UTF-8");
    ctx.ok(&["export", out_arg]);
    let manifest: Value =
        serde_json::from_str(&read(&out.join("promptshelf-library.json"))).expect("JSON");
    assert_eq!(
        manifest["local"]["templates"][0]["uriTemplate"], "paint://{shade}",
        "{manifest}"
    );
    // Git keeps no empty folder: the part is its templates alone.
    let _ = std::fs::remove_dir(out.join("local"));
    let fresh = ctx.path("fresh.db");
    ok_on(&fresh, &["init", "--empty"]);
    ok_on(&fresh, &["import", out_arg]);
    assert_eq!(fingerprint(&fresh), fingerprint(&ctx.db));

    // An entry that is no template is an error naming the manifest, and imports nothing.
    let mut broken = manifest.clone();
    broken["local"]["templates"][0]["uriTemplate"] = json!("paint://{shade");
    std::fs::write(
        out.join("promptshelf-library.json"),
        serde_json::to_string(&broken).expect("JSON"),
    )
    .expect("write the manifest");
    let other = ctx.path("other.db");
    ok_on(&other, &["init", "--empty"]);
    let error = crate::common::command_on(&other, &["import", out_arg])
        .output()
        .expect("run");
    assert!(!error.status.success());
    let error = String::from_utf8_lossy(&error.stderr);
    assert!(error.contains("promptshelf-library.json"), "{error}");
    assert!(
        error.contains("not a valid RFC 6570 URI template"),
        "{error}"
    );
    assert!(
        !fingerprint(&other)
            .iter()
            .any(|row| row.starts_with("template ")),
        "{error}"
    );
}

#[test]
fn a_whole_library_export_is_not_imported_as_one_collection() {
    let ctx = TestContext::new();
    ctx.ok(&["init"]);
    let out = ctx.path("out");
    let out_arg = out.to_str().expect("UTF-8");
    ctx.ok(&["export", out_arg]);
    let error = ctx.fails(&["import", out_arg, "--collection", "all"]);
    assert!(
        error.contains("is the export of a whole library"),
        "{error}"
    );
    assert!(error.contains("without --collection"), "{error}");
}

/// A collection `team` imported from its folder, with relative links between its files.
fn linked_team(ctx: &TestContext) -> std::path::PathBuf {
    ctx.ok(&["init", "--empty"]);
    ctx.write(
        "team/ask.prompt.md",
        "Ask, following [the guide](notes/guide.md#rules).\n",
    );
    ctx.write(
        "team/notes/guide.md",
        "# Guide\n\nSee [the other](other.md) and [the web](https://example.com).\n",
    );
    ctx.write("team/notes/other.md", "# Other\n");
    let dir = ctx.path("team");
    ctx.ok(&["import", dir.to_str().expect("UTF-8")]);
    dir
}

#[test]
fn export_into_a_collections_own_folder_needs_force() {
    let ctx = TestContext::new();
    let dir = linked_team(&ctx);
    let dir_arg = dir.to_str().expect("UTF-8");
    ctx.write("team/notes/other.md", "# Other, edited but not imported\n");
    let error = ctx.fails(&["export", dir_arg, "--collection", "team"]);
    assert!(
        error.contains("is the folder the collection 'team' is imported from"),
        "{error}"
    );
    assert!(error.contains("--force"), "{error}");
    // The whole library into the folder above it writes team/ there: refused too.
    let parent = ctx.path("");
    let error = ctx.fails(&["export", parent.to_str().expect("UTF-8")]);
    assert!(error.contains("collection 'team'"), "{error}");
    assert_eq!(
        std::fs::read_to_string(ctx.path("team/notes/other.md")).expect("read"),
        "# Other, edited but not imported\n"
    );
    ctx.ok(&["export", dir_arg, "--collection", "team", "--force"]);
    assert_eq!(
        std::fs::read_to_string(ctx.path("team/notes/other.md")).expect("read"),
        "# Other\n"
    );
}

#[test]
fn export_dry_run_lists_what_it_would_write_and_writes_nothing() {
    let ctx = TestContext::new();
    linked_team(&ctx);
    let out = ctx.path("out");
    let out_arg = out.to_str().expect("UTF-8");
    let listed = ctx.ok(&["export", out_arg, "--collection", "team", "--dry-run"]);
    assert!(!out.exists(), "a dry run made {}", out.display());
    let guide = out.join("notes/guide.md");
    assert!(
        listed.contains(&format!("write {}\n", guide.display())),
        "{listed}"
    );
    assert!(
        listed.ends_with("dry run (nothing written): 3 files would be written, 0 unchanged\n"),
        "{listed}"
    );
    ctx.ok(&["export", out_arg, "--collection", "team"]);
    std::fs::write(&guide, "changed\n").expect("change the export");
    let planned = ctx.json(&[
        "export",
        out_arg,
        "--collection",
        "team",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(planned["dryRun"], true);
    assert_eq!(
        planned["planned"],
        json!([{"action": "overwrite", "file": guide.display().to_string()}])
    );
    assert_eq!(std::fs::read_to_string(&guide).expect("read"), "changed\n");
}

#[test]
fn export_into_the_layout_a_collection_came_from_keeps_relative_links() {
    let ctx = TestContext::new();
    linked_team(&ctx);
    // Stored, the links are URIs a client can read.
    assert!(
        ctx.ok(&["resource", "cat", "shelf://team/notes/guide.md"])
            .contains("[the other](shelf://team/notes/other.md)")
    );
    let out = ctx.path("out");
    let out_arg = out.to_str().expect("UTF-8");
    let exported = ctx.run(&["export", out_arg, "--collection", "team"]);
    assert!(exported.status.success());
    assert_eq!(String::from_utf8_lossy(&exported.stderr), "", "no warnings");
    assert_eq!(
        std::fs::read_to_string(out.join("notes/guide.md")).expect("read"),
        "# Guide\n\nSee [the other](other.md) and [the web](https://example.com).\n"
    );
    let prompt = std::fs::read_to_string(out.join("ask.prompt.md")).expect("read");
    assert!(
        prompt.contains("[the guide](notes/guide.md#rules)"),
        "{prompt}"
    );
    // Imported back, nothing changes.
    let again = ctx.json(&["import", out_arg, "--collection", "team", "--json"]);
    assert_eq!(again["added"], 0, "{again}");
    assert_eq!(again["updated"], 0, "{again}");
    assert_eq!(again["unchanged"], 3, "{again}");
}

#[test]
fn a_resource_whose_uri_its_collections_import_would_not_give_is_warned_about_by_the_uri_it_gets() {
    // One folder imported with --scheme docs, another into the same collection without it:
    // the collection holds `docs://` and `shelf://` URIs, and its manifest entry can give
    // only one scheme.
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.write("docs/intro.md", "# Intro\n");
    let docs = ctx.path("docs");
    ctx.ok(&["import", docs.to_str().unwrap(), "--scheme", "docs"]);
    let more = ctx.write("more/later.md", "# Later\n");
    let more = more.parent().unwrap().to_str().unwrap();
    ctx.ok(&["import", more, "--collection", "docs"]);
    assert!(
        ctx.ok(&["resource", "cat", "shelf://docs/later.md"])
            .contains("Later")
    );
    let out = ctx.path("out");
    let output = ctx.run(&["export", out.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "resource shelf://docs/later.md: written to later.md, which imports as \
             docs://docs/later.md"
        ),
        "{stderr}"
    );
    // And so it does.
    let restored = TestContext::new();
    restored.ok(&["init", "--empty"]);
    restored.ok(&["import", out.to_str().unwrap()]);
    assert!(
        restored
            .ok(&["resource", "cat", "docs://docs/later.md"])
            .contains("Later")
    );
}
