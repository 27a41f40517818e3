//! Errors that name the fix: an unknown name suggests the near ones, a refused command line
//! says what to run instead. Each test checks the exact sentence a user reads.

use serde_json::json;

use crate::common::{Home, LEGACY, TestContext, describe};

/// Runs `promptshelf ARGS` on the context's library, expects it to fail with exit status
/// `code`, and returns its stderr.
pub(crate) fn refused(ctx: &TestContext, args: &[&str], code: i32) -> String {
    let output = ctx.run(args);
    assert_eq!(
        output.status.code(),
        Some(code),
        "{}",
        describe(args, &output, "expected this exit status")
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_misspelt_prompt_name_suggests_the_near_one() {
    let ctx = TestContext::new();
    let advice = "promptshelf: unknown prompt 'code-reveiw'; did you mean 'code-review'? \
                  (see `promptshelf prompt list`)\n";
    for command in ["show", "edit", "rm", "mv"] {
        let mut args = vec!["prompt", command, "code-reveiw"];
        if command == "mv" {
            args.push("renamed");
        }
        assert_eq!(refused(&ctx, &args, 1), advice, "{args:?}");
    }
    // `prompt render` answers as `prompts/get` does, in the same words.
    assert_eq!(
        refused(&ctx, &["prompt", "render", "code-reveiw"], 1),
        "promptshelf: unknown prompt 'code-reveiw'; did you mean 'code-review'?\n"
    );
    // A word of the name a few edits away is near too.
    assert_eq!(
        refused(&ctx, &["prompt", "show", "reveiw"], 1),
        "promptshelf: unknown prompt 'reveiw'; did you mean 'code-review' or \
         'api-design-review'? (see `promptshelf prompt list`)\n"
    );
    // Nothing near: a short list, not every name.
    assert_eq!(
        refused(&ctx, &["prompt", "show", "zzz"], 1),
        "promptshelf: unknown prompt 'zzz'; known prompts: api-design-review, \
         architecture-diagram, code-review, commit-message, debug-error and 3 more \
         (see `promptshelf prompt list`)\n"
    );
}

#[test]
fn a_misspelt_uri_collection_or_table_suggests_the_near_one() {
    let ctx = TestContext::new();
    assert_eq!(
        refused(
            &ctx,
            &[
                "resource",
                "show",
                "shelf://library/guides/code-reveiw-checklist.md"
            ],
            1
        ),
        "promptshelf: unknown resource 'shelf://library/guides/code-reveiw-checklist.md'; \
         did you mean 'shelf://library/guides/code-review-checklist.md'? \
         (see `promptshelf resource list`)\n"
    );
    assert_eq!(
        refused(&ctx, &["collection", "rm", "libary"], 1),
        "promptshelf: unknown collection 'libary'; did you mean 'library'? \
         (see `promptshelf collection list`)\n"
    );
    assert_eq!(
        refused(&ctx, &["values", "list", "languags"], 1),
        "promptshelf: unknown completion table 'languags'; did you mean 'languages'? \
         (see `promptshelf values list`)\n"
    );
}

#[test]
fn a_misspelt_host_suggests_the_near_one() {
    let home = Home::new();
    let output = home
        .config_on(&home.ctx.db, &["curosr"])
        .output()
        .expect("run promptshelf");
    assert_eq!(output.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(
            "error: unknown host 'curosr'; did you mean 'cursor'? \
             (see `promptshelf config --help`)\n"
        ),
        "{stderr}"
    );
}

#[test]
fn importing_a_plain_file_says_what_import_takes() {
    let ctx = TestContext::new();
    let file = ctx.write("main.rs", "fn main() {}\n");
    let file = file.display().to_string();
    assert_eq!(
        refused(&ctx, &["import", &file], 1),
        format!(
            "promptshelf: cannot import {file}: it is a file, and not a CSV list of prompts \
             (FILE.csv); pass its folder, or add the file with `promptshelf prompt add` or \
             `resource add`\n"
        )
    );
    // A path through the file names the file, not the system's "Not a directory".
    for through in [format!("{file}/"), format!("{file}/prompts")] {
        assert_eq!(
            refused(&ctx, &["import", &through], 1),
            format!(
                "promptshelf: cannot import {through}: {file} is a file, not a folder; import \
                 takes a folder or a CSV list of prompts (FILE.csv), and `promptshelf prompt \
                 add` or `resource add` one file\n"
            )
        );
    }
}

#[test]
fn a_render_without_a_required_argument_names_the_flag_that_gives_it() {
    let ctx = TestContext::new();
    assert_eq!(
        refused(&ctx, &["prompt", "render", "code-review"], 1),
        "promptshelf: prompt 'code-review' needs the required argument 'code'; give it with \
         --arg code=VALUE (NAME=@FILE takes the value from a file)\n"
    );
    ctx.write(
        "pair.prompt.md",
        "---\nname: pair\narguments:\n  - name: left\n    required: true\n  \
         - name: right\n    required: true\n  - name: note\n---\n{{ left }} {{ right }}\n",
    );
    ctx.ok(&[
        "prompt",
        "add",
        ctx.path("pair.prompt.md").to_str().expect("UTF-8"),
    ]);
    assert_eq!(
        refused(&ctx, &["prompt", "render", "pair", "--arg", "note=x"], 1),
        "promptshelf: prompt 'pair' needs the required arguments 'left', 'right'; give them \
         with --arg left=VALUE --arg right=VALUE (NAME=@FILE takes the value from a file)\n"
    );
    // What is given renders; the flag the error named is the one that works.
    let rendered = ctx.ok(&[
        "prompt", "render", "pair", "--arg", "left=a", "--arg", "right=b",
    ]);
    assert_eq!(rendered, "--- user\na b\n");
}

#[test]
fn a_search_in_an_unknown_collection_points_to_the_collections() {
    let ctx = TestContext::new();
    assert_eq!(
        refused(&ctx, &["search", "review", "--collection", "nope"], 1),
        "promptshelf: unknown collection 'nope'; known collections: library \
         (see `promptshelf collection list`)\n"
    );
    assert_eq!(
        refused(&ctx, &["search", "review", "--collection", "libary"], 1),
        "promptshelf: unknown collection 'libary'; did you mean 'library'? \
         (see `promptshelf collection list`)\n"
    );
    // The command the error names is there, and lists that collection.
    assert!(
        ctx.ok(&["collection", "list"])
            .lines()
            .any(|line| line.starts_with("library ")),
        "collection list names the seed's collection"
    );
}

#[test]
fn config_with_json_says_what_to_run_instead() {
    let home = Home::new();
    let output = home
        .config_on(&home.ctx.db, &["cursor", "--json"])
        .output()
        .expect("run promptshelf");
    let cursor_file = home.home().join(".cursor/mcp.json");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "promptshelf: config has no --json: it prints the entry as Cursor's file holds it \
             (JSON) on stdout, and where it goes on stderr; run `promptshelf config cursor`, or \
             add --write to merge it into {}\n",
            cursor_file.display()
        )
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty(), "nothing printed on stdout");
    // With --write too, nothing is written.
    let output = home
        .config_on(&home.ctx.db, &["codex", "--write", "--json"])
        .output()
        .expect("run promptshelf");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(
            "promptshelf: config has no --json: it prints the entry as Codex's file holds it (TOML)"
        ),
        "{stderr}"
    );
    assert!(
        !home.home().join(".codex").exists(),
        "a refused --write writes nothing"
    );
}

#[test]
fn a_values_csv_without_a_header_row_is_read_as_the_readme_says() {
    let ctx = TestContext::new();
    // The README's tour: `values import languages langs.csv # value,weight,context rows`.
    let csv = ctx.write("langs.csv", "rust,90\ngo\npython,80,framework=django\n");
    let line = ctx.ok(&["values", "import", "picks", csv.to_str().expect("UTF-8")]);
    assert_eq!(
        line,
        format!(
            "imported 3 values from {} into picks (3 now)\n",
            csv.display()
        )
    );
    let values = ctx.json(&["values", "list", "picks", "--json"]);
    let read: Vec<(String, f64, serde_json::Value)> = values
        .as_array()
        .expect("an array")
        .iter()
        .map(|v| {
            (
                v["value"].as_str().expect("a value").to_string(),
                v["weight"].as_f64().expect("a weight"),
                v["context"].clone(),
            )
        })
        .collect();
    assert_eq!(
        read,
        [
            ("go".to_string(), 0.0, serde_json::Value::Null),
            (
                "python".to_string(),
                80.0,
                serde_json::json!({"argument": "framework", "value": "django"})
            ),
            ("rust".to_string(), 90.0, serde_json::Value::Null),
        ]
    );
    // A first row of other column names is not taken for a value without a word.
    let named = ctx.write("named.csv", "name,description\nrust,fast\n");
    assert_eq!(
        refused(
            &ctx,
            &["values", "import", "other", named.to_str().expect("UTF-8")],
            1
        ),
        format!(
            "promptshelf: {}:1: weight 'description' is not a number; a header row names the \
             columns value, weight, context\n",
            named.display()
        )
    );
}

#[test]
fn the_history_export_tokens_and_arguments_suggest_the_near_name_too() {
    let ctx = TestContext::new();
    for command in [
        vec!["history", "code-reveiw"],
        vec!["diff", "code-reveiw"],
        vec!["rollback", "code-reveiw", "--to", "1"],
    ] {
        assert_eq!(
            refused(&ctx, &command, 1),
            "promptshelf: the history keeps nothing named code-reveiw; did you mean \
             'code-review'?\n",
            "{command:?}"
        );
    }
    assert_eq!(
        refused(&ctx, &["history", "languags", "--kind", "values"], 1),
        "promptshelf: the history keeps no values languags; did you mean 'languages'?\n"
    );
    let out = ctx.path("out").display().to_string();
    assert_eq!(
        refused(&ctx, &["export", &out, "--collection", "libary"], 1),
        "promptshelf: no collection 'libary'; did you mean 'library'? (`promptshelf export \
         DIR` without --collection writes them all)\n"
    );
    assert_eq!(
        refused(&ctx, &["token", "add", "ci", "--collections", "libary"], 1),
        "promptshelf: no collection 'libary' in the library; did you mean 'library'?\n"
    );
    // `prompt render` answers as `prompts/get` does, and `completion/complete` in the same words.
    assert_eq!(
        refused(
            &ctx,
            &["prompt", "render", "code-review", "--arg", "cod=x"],
            1
        ),
        "promptshelf: prompt 'code-review' has no argument 'cod'; did you mean 'code'? \
         (its arguments are: code, language, focus)\n"
    );
    let mut server = ctx.server();
    server.initialize(LEGACY[0]);
    let response = server.request(
        "completion/complete",
        json!({
            "ref": {"type": "ref/prompt", "name": "code-review"},
            "argument": {"name": "languag", "value": ""}
        }),
    );
    assert_eq!(
        response["error"]["message"],
        "prompt 'code-review' has no argument 'languag'; did you mean 'language'? \
         (its arguments are: code, language, focus)",
        "{response}"
    );
}

#[test]
fn a_completion_table_not_there_yet_is_noted_with_the_near_one() {
    let ctx = TestContext::new();
    let output = ctx.run(&[
        "template",
        "add",
        "docs://{lang}/{page}",
        "--complete",
        "lang=langauges",
        "--complete",
        "page=pages",
    ]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "note: completion table 'langauges' does not exist yet (did you mean 'languages'?); \
         fill it with `promptshelf values add langauges VALUE...` or `promptshelf values \
         import langauges FILE`\n\
         note: completion table 'pages' does not exist yet; fill it with `promptshelf values \
         add pages VALUE...` or `promptshelf values import pages FILE`\n"
    );
    let file = ctx.write(
        "pick.prompt.md",
        "---\nname: pick\narguments:\n  - name: first\n    completion: framworks\n  \
         - name: second\n    completion: framworks\n---\n{{ first }} {{ second }}\n",
    );
    let output = ctx.run(&["prompt", "add", file.to_str().expect("UTF-8")]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "note: completion table 'framworks' does not exist yet (did you mean 'frameworks'?); \
         fill it with `promptshelf values add framworks VALUE...` or `promptshelf values \
         import framworks FILE`\n"
    );
}
