//! Many collections in one library: a prompt name another collection has already is
//! prefixed with the collection's name (or `--prefix`, or refused with `--no-prefix`), stays
//! so on every later import, and two files of one folder giving one name are both named, at
//! their lines, with advice that works for their dialect; a whole library of such collections
//! restores with the names it had. The collection is a public Claude Code plugin
//! (tests/fixtures/collections/wshobson-agents, see its NOTICE): a command and a skill.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::collections_real::{copy_of, edit_with, fixture};
use crate::common::{TestContext, modern_params};

/// The plugin: `commands/block-no-verify.md` and `skills/block-no-verify-hook/SKILL.md`.
fn plugin() -> PathBuf {
    fixture("wshobson-agents").join("plugins/block-no-verify")
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// An empty library holding the plugin as the collection `first`.
fn with_first() -> TestContext {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", arg(&plugin()), "--collection", "first"]);
    ctx
}

/// `import PLUGIN --collection NAME --json MORE`, which must succeed with no failure.
fn import_as(ctx: &TestContext, collection: &str, more: &[&str]) -> Value {
    import_with(ctx, &plugin(), collection, more)
}

/// `import DIR --collection NAME --json MORE`, which must succeed with no failure.
fn import_with(ctx: &TestContext, dir: &Path, collection: &str, more: &[&str]) -> Value {
    let mut args = vec!["import", arg(dir), "--collection", collection, "--json"];
    args.extend_from_slice(more);
    let report = ctx.json(&args);
    assert_eq!(report["failed"], 0, "{report:#}");
    report
}

/// The names `prompt list --json` gives, sorted.
fn prompt_names(ctx: &TestContext) -> Vec<String> {
    let listed = ctx.json(&["prompt", "list", "--json"]);
    let mut names: Vec<String> = listed
        .as_array()
        .expect("a list of prompts")
        .iter()
        .map(|prompt| prompt["name"].as_str().expect("a name").to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn a_second_collection_with_the_same_names_imports_prefixed_with_a_warning() {
    let ctx = with_first();
    let report = import_as(&ctx, "second", &[]);
    assert_eq!(report["added"], 3, "{report:#}");
    let warnings = report["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 2, "{report:#}");
    let command = &warnings[0];
    assert!(
        command["file"]
            .as_str()
            .is_some_and(|file| file.ends_with("commands/block-no-verify.md")),
        "{command}"
    );
    assert_eq!(command["line"], 1, "{command}");
    assert!(
        command["message"].as_str().is_some_and(|message| message
            .starts_with("prompt 'block-no-verify' belongs to the collection 'first' already, so this one is named 'second-block-no-verify'")),
        "{command}"
    );
    // A skill's name is its `name:`, on line 2.
    assert_eq!(warnings[1]["line"], 2, "{report:#}");

    // A host sees both collections' prompts, and each one's skill and template.
    let mut server = ctx.server();
    let listed = server.modern("prompts/list", json!({}));
    let mut names: Vec<&str> = listed["result"]["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|prompt| prompt["name"].as_str())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "block-no-verify",
            "block-no-verify-hook",
            "second-block-no-verify",
            "second-block-no-verify-hook"
        ],
        "{listed}"
    );
    let got = server.modern("prompts/get", json!({"name": "second-block-no-verify"}));
    assert!(
        got["result"]["messages"][0]["content"]["text"]
            .as_str()
            .is_some_and(|text| text.contains("# Block No-Verify Setup")),
        "{got}"
    );
    let skills = server.request(
        "skills/list",
        modern_params(
            json!({}),
            json!({"extensions": {"io.modelcontextprotocol/skills": {}}}),
        ),
    );
    let mut uris: Vec<&str> = skills["result"]["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .filter_map(|skill| skill["uri"].as_str())
        .collect();
    uris.sort();
    assert_eq!(
        uris,
        [
            "skill://block-no-verify-hook/SKILL.md",
            "skill://second/block-no-verify-hook/SKILL.md"
        ],
        "{skills}"
    );
    let templates = server.modern("resources/templates/list", json!({}));
    let mut templates: Vec<&str> = templates["result"]["resourceTemplates"]
        .as_array()
        .expect("templates")
        .iter()
        .filter_map(|template| template["uriTemplate"].as_str())
        .collect();
    templates.sort();
    assert_eq!(
        templates,
        [
            "shelf://first/{+path}",
            "shelf://search/{query}",
            "shelf://second/{+path}"
        ]
    );
}

#[test]
fn a_prefixed_collection_imports_again_unchanged_even_when_the_clash_is_gone() {
    let ctx = with_first();
    import_as(&ctx, "second", &[]);
    let unchanged = |ctx: &TestContext| {
        let report = import_as(ctx, "second", &[]);
        assert_eq!(report["changes"], json!([]), "{report:#}");
        assert_eq!(report["unchanged"], 3, "{report:#}");
        assert_eq!(report["warnings"], json!([]), "{report:#}");
    };
    unchanged(&ctx);
    // With the other collection gone the names stay as they are: no renaming back and forth.
    ctx.ok(&["collection", "rm", "first"]);
    unchanged(&ctx);
    assert_eq!(
        prompt_names(&ctx),
        ["second-block-no-verify", "second-block-no-verify-hook"]
    );
    // Asked for, the plain names come back (the prefixed ones pruned).
    let report = import_as(&ctx, "second", &["--no-prefix", "--prune"]);
    assert_eq!(
        (&report["added"], &report["removed"]),
        (&json!(3), &json!(3))
    );
    assert_eq!(
        prompt_names(&ctx),
        ["block-no-verify", "block-no-verify-hook"]
    );
}

#[test]
fn prefix_names_every_prompt_of_the_folder() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let report = import_as(&ctx, "plugin", &["--prefix", "wsh"]);
    assert_eq!(report["warnings"], json!([]), "{report:#}");
    assert_eq!(
        prompt_names(&ctx),
        ["wsh-block-no-verify", "wsh-block-no-verify-hook"]
    );
    // Recorded for the collection: an import without the flag (as `prompt edit` makes) keeps
    // it, until --no-prefix forgets it.
    let report = import_as(&ctx, "plugin", &[]);
    assert_eq!(report["changes"], json!([]), "{report:#}");
    import_as(&ctx, "plugin", &["--no-prefix", "--prune"]);
    let report = import_as(&ctx, "plugin", &[]);
    assert_eq!(report["changes"], json!([]), "{report:#}");
    assert_eq!(
        prompt_names(&ctx),
        ["block-no-verify", "block-no-verify-hook"]
    );
    // Removing the collection forgets its prefix too.
    import_as(&ctx, "plugin", &["--prefix", "wsh", "--prune"]);
    ctx.ok(&["collection", "rm", "plugin"]);
    import_as(&ctx, "plugin", &[]);
    assert_eq!(
        prompt_names(&ctx),
        ["block-no-verify", "block-no-verify-hook"]
    );

    let error = ctx.fails(&["import", arg(&plugin()), "--prefix", "two words"]);
    assert!(
        error.contains("--prefix 'two words' cannot begin prompt names"),
        "{error}"
    );
}

#[test]
fn undoing_the_import_that_made_a_prefixed_collection_forgets_its_prefix() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    import_as(&ctx, "plugin", &["--prefix", "wsh"]);
    ctx.ok(&["undo"]);
    assert_eq!(prompt_names(&ctx), Vec::<String>::new());
    // The folder imported again without the flag is named as if never prefixed.
    import_as(&ctx, "plugin", &[]);
    assert_eq!(
        prompt_names(&ctx),
        ["block-no-verify", "block-no-verify-hook"]
    );
}

#[test]
fn no_prefix_refuses_a_clash_at_the_line_of_the_name() {
    let ctx = with_first();
    let plugin = plugin();
    let error = ctx.fails(&[
        "import",
        arg(&plugin),
        "--collection",
        "second",
        "--no-prefix",
    ]);
    let command = format!(
        "{}:1: prompt 'block-no-verify' belongs to the collection 'first' \
         (commands/block-no-verify.md); import without --no-prefix to name it \
         second-block-no-verify; or rename the file (Claude Code names a command after its \
         file and ignores `name:`)",
        plugin.join("commands/block-no-verify.md").display()
    );
    assert!(error.contains(&command), "{error}");
    assert!(
        error.contains("SKILL.md:2: prompt 'block-no-verify-hook' belongs to the collection"),
        "{error}"
    );
    assert!(error.contains("nothing was imported"), "{error}");
    assert_eq!(
        prompt_names(&ctx),
        ["block-no-verify", "block-no-verify-hook"]
    );
}

#[test]
fn two_files_of_one_folder_with_one_name_are_both_named_at_their_lines() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let copy = copy_of(&ctx, "wshobson-agents").join("plugins/block-no-verify");
    // The skill renamed after the command: its folder and its `name:` together.
    let skills = copy.join("skills");
    std::fs::rename(
        skills.join("block-no-verify-hook"),
        skills.join("block-no-verify"),
    )
    .expect("rename the skill's folder");
    let skill = skills.join("block-no-verify/SKILL.md");
    let text = std::fs::read_to_string(&skill).expect("read SKILL.md");
    std::fs::write(
        &skill,
        text.replacen("name: block-no-verify-hook", "name: block-no-verify", 1),
    )
    .expect("write SKILL.md");

    let error = ctx.fails(&["import", arg(&copy)]);
    let expected = format!(
        "{}:2: prompt 'block-no-verify' is also given by commands/block-no-verify.md:1; for \
         skills/block-no-verify/SKILL.md, rename its folder and its `name:` together (a \
         skill's name is its folder's); or for commands/block-no-verify.md, rename the file \
         (Claude Code names a command after its file and ignores `name:`)",
        skill.display()
    );
    assert!(error.contains(&expected), "{error}");
}

#[test]
fn a_whole_library_of_two_clashing_collections_restores_with_the_same_names() {
    let ctx = with_first();
    import_as(&ctx, "second", &[]);
    let out = ctx.path("out");
    ctx.ok(&["export", arg(&out)]);

    let restored = TestContext::new();
    restored.ok(&["init", "--empty"]);
    // Refused, the clash between two parts is named, and nothing is imported.
    let error = restored.fails(&["import", arg(&out), "--no-prefix"]);
    assert!(
        error.contains(
            "second/skills/block-no-verify-hook/SKILL.md:2: prompt 'block-no-verify-hook': the \
             collection 'first', imported with it, has that name; import without --no-prefix"
        ),
        "{error}"
    );
    assert_eq!(prompt_names(&restored), Vec::<String>::new());
    let error = restored.fails(&["import", arg(&out), "--prefix", "p"]);
    assert!(
        error.contains("without --collection, --prefix or --watch"),
        "{error}"
    );
    restored.ok(&["import", arg(&out)]);
    assert_eq!(prompt_names(&restored), prompt_names(&ctx));
    assert_eq!(
        restored.ok(&["resource", "list"]),
        ctx.ok(&["resource", "list"])
    );
}

#[test]
fn a_prompt_list_imported_twice_is_prefixed_row_by_row_at_their_lines() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let list = fixture("awesome-chatgpt-prompts").join("prompts.csv");
    ctx.ok(&["import", arg(&list), "--collection", "one"]);
    let report = ctx.json(&["import", arg(&list), "--collection", "two", "--json"]);
    assert_eq!(report["failed"], 0, "{report:#}");
    // Beside the list's own warnings (a row renamed), one for each row prefixed.
    let first = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .find(|warning| {
            warning["message"]
                .as_str()
                .is_some_and(|message| message.contains("named 'two-ethereum-developer'"))
        })
        .unwrap_or_else(|| panic!("no warning for the first row: {report:#}"));
    assert_eq!(first["line"], 2, "{first}");
    let names = prompt_names(&ctx);
    assert_eq!(
        names.len(),
        2 * report["added"].as_u64().expect("a count") as usize
    );
    assert!(
        names.contains(&"two-linux-terminal".to_string()),
        "{names:?}"
    );
}

#[test]
fn a_prefixed_folder_of_skills_stays_one_under_another_folder_name() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let skills = copy_of(&ctx, "anthropics-skills").join("skills");
    ctx.ok(&["import", arg(&skills), "--collection", "first"]);
    import_with(&ctx, &skills, "second", &[]);
    // Moved (as a restore or a copy moves it), it is read as skill folders still.
    let moved = skills.with_file_name("moved");
    std::fs::rename(&skills, &moved).expect("move the folder");
    let report = import_with(&ctx, &moved, "second", &[]);
    assert_eq!(report["changes"], json!([]), "{report:#}");
    let uris = ctx.ok(&["resource", "list"]);
    assert!(
        uris.contains("skill://second/theme-factory/SKILL.md"),
        "{uris}"
    );
}

#[test]
fn prompt_edit_of_a_prefixed_prompt_keeps_its_name() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let copy = copy_of(&ctx, "wshobson-agents").join("plugins/block-no-verify");
    import_with(&ctx, &copy, "first", &[]);
    import_with(&ctx, &copy, "second", &[]);
    let output = edit_with(
        &ctx,
        "second-block-no-verify",
        "echo 'One line more.' >> \"$1\"",
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        prompt_names(&ctx),
        [
            "block-no-verify",
            "block-no-verify-hook",
            "second-block-no-verify",
            "second-block-no-verify-hook"
        ]
    );
    let shown = ctx.ok(&["prompt", "show", "second-block-no-verify"]);
    assert!(shown.contains("One line more."), "{shown}");
}

#[test]
fn a_clash_of_prompt_files_is_fixed_by_their_name_keys() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    // A VS Code prompt file named by its `name:`, and one of ours named by its file.
    ctx.write(
        "team/.github/prompts/check.prompt.md",
        "---\ndescription: Check a change\nmode: agent\nname: audit\n---\nCheck ${input:what}.\n",
    );
    ctx.write("team/audit.prompt.md", "Audit the code.\n");
    let error = ctx.fails(&["import", arg(&ctx.path("team"))]);
    assert!(
        error.contains(
            "audit.prompt.md:1: prompt 'audit' is also given by \
             .github/prompts/check.prompt.md:4; in one of them, give it another `name:` in its \
             front matter"
        ),
        "{error}"
    );
}

#[test]
fn prompt_mv_of_a_collections_prompt_says_what_to_change_in_its_file_for_its_dialect_and_prefix() {
    let ctx = with_first();
    import_as(&ctx, "second", &[]);
    import_as(&ctx, "third", &["--prefix", "team"]);
    let plugin = plugin();
    let command = plugin.join("commands/block-no-verify.md");
    let skill = plugin.join("skills/block-no-verify-hook/SKILL.md");
    let then = |collection: &str| {
        format!(
            ", then run `promptshelf import {} --collection {collection} --prune` (--prune \
             removes the old one)\n",
            plugin.display()
        )
    };
    // A Claude Code command is named by its file, whatever its `name:` says.
    assert_eq!(
        ctx.fails(&["prompt", "mv", "block-no-verify", "keep-verify"]),
        format!(
            "promptshelf: prompt 'block-no-verify' belongs to the collection 'first', which names it \
             after its file: to name it 'keep-verify', for {}: rename the file (Claude Code \
             names a command after its file and ignores `name:`){}",
            command.display(),
            then("first")
        )
    );
    // A clash prefixed a skill with its collection's name: the file gives the rest.
    assert_eq!(
        ctx.fails(&["prompt", "mv", "second-block-no-verify-hook", "second-hook"]),
        format!(
            "promptshelf: prompt 'second-block-no-verify-hook' belongs to the collection 'second', \
             which names it after its file: to name it 'second-hook', for {}: rename its folder \
             and its `name:` together (a skill's name is its folder's), to give it the name \
             'hook' (the collection puts 'second-' before the name its file gives){}",
            skill.display(),
            then("second")
        )
    );
    // `--prefix team` is the collection's: a name without it needs `--no-prefix`.
    assert_eq!(
        ctx.fails(&["prompt", "mv", "team-block-no-verify", "verify"]),
        format!(
            "promptshelf: prompt 'team-block-no-verify' belongs to the collection 'third', which \
             names it after its file: to name it 'verify', for {}: rename the file (Claude Code \
             names a command after its file and ignores `name:`), and add `--no-prefix` to the \
             import below (the collection puts 'team-' before the name its file gives; \
             `--no-prefix` leaves it off every prompt of the collection){}",
            command.display(),
            then("third")
        )
    );
}

#[test]
fn a_whole_library_restores_a_prefixed_collection_with_its_prefix_and_its_skills_uris() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    import_as(&ctx, "plugin", &["--prefix", "wsh"]);
    assert_eq!(
        prompt_names(&ctx),
        ["wsh-block-no-verify", "wsh-block-no-verify-hook"]
    );
    let out = ctx.path("out");
    let output = ctx.run(&["export", arg(&out)]);
    assert!(output.status.success(), "{output:?}");
    // The skill's files are written where a restore puts them back under the prefix.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("which imports as"), "{stderr}");

    let restored = TestContext::new();
    restored.ok(&["init", "--empty"]);
    restored.ok(&["import", arg(&out)]);
    assert_eq!(prompt_names(&restored), prompt_names(&ctx));
    assert_eq!(
        restored.ok(&["resource", "list"]),
        ctx.ok(&["resource", "list"])
    );
    // And the prefix is recorded again, for the collection's later imports.
    let recorded: Vec<u8> = restored.query("SELECT value FROM meta WHERE key = 'prefix/plugin'");
    assert_eq!(recorded, b"wsh");
}
