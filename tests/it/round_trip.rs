//! An export of an import, imported again into a new library and exported again, is the same
//! bytes, for each host's own files: real collections of Claude Code commands, VS Code prompt
//! files, Cursor commands and Gemini CLI commands (tests/fixtures/collections/, each with a
//! README naming its source), and the prompts whose exports once drifted or panicked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::TestContext;

/// A collection of tests/fixtures/collections/.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/collections")
        .join(name)
}

/// Every file under `dir`, by its path relative to `dir`, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
        for entry in entries {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).expect("under the root");
                let bytes = std::fs::read(&path).expect("read the file");
                out.insert(relative.to_string_lossy().into_owned(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Exports `ctx`'s library as `format` into `ctx`'s folder `into`: the files and the warnings.
fn export(ctx: &TestContext, into: &str, format: &str) -> (BTreeMap<String, Vec<u8>>, String) {
    let dir = ctx.path(into);
    let output = ctx.run(&["export", dir.to_str().unwrap(), "--format", format]);
    assert!(
        output.status.success(),
        "{}",
        crate::common::describe(&["export"], &output, "export --format")
    );
    (
        files(&dir),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// What an export of an import of `folder` went through: the first export's files and
/// warnings, and the library the first export was imported into.
struct Trip {
    first: BTreeMap<String, Vec<u8>>,
    warnings: String,
    again: TestContext,
}

/// Imports `folder`, exports it as `format`, imports that export into a new library and
/// exports it again; fails unless the two exports are the same files, byte for byte.
fn round_trip(folder: &Path, format: &str) -> Trip {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", folder.to_str().unwrap(), "--collection", "source"]);
    let (first, warnings) = export(&ctx, "first", format);
    assert!(!first.is_empty(), "{format}: nothing exported\n{warnings}");
    let again = TestContext::new();
    again.ok(&["init", "--empty"]);
    let exported = ctx.path("first");
    again.ok(&[
        "import",
        exported.to_str().unwrap(),
        "--collection",
        "source",
    ]);
    let (second, _) = export(&again, "second", format);
    for (path, bytes) in &first {
        assert_eq!(
            String::from_utf8_lossy(second.get(path).map(Vec::as_slice).unwrap_or_default()),
            String::from_utf8_lossy(bytes),
            "{format}: {path} changed between the first export and the export of its import"
        );
    }
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        second.keys().collect::<Vec<_>>()
    );
    Trip {
        first,
        warnings,
        again,
    }
}

/// The text of the exported file `path`.
fn text<'a>(trip: &'a Trip, path: &str) -> &'a str {
    let bytes = trip
        .first
        .get(path)
        .unwrap_or_else(|| panic!("{path} not exported: {:?}", trip.first.keys()));
    std::str::from_utf8(bytes).expect("UTF-8")
}

/// `round_trip` of a folder holding the one file `path`.
fn round_trip_file(path: &str, contents: &str, format: &str) -> Trip {
    let ctx = TestContext::new();
    ctx.write(&format!("src/{path}"), contents);
    round_trip(&ctx.path("src"), format)
}

/// A library of the prompt files `files` (path under the folder, contents) of our own format.
fn library_of(files: &[(&str, &str)]) -> TestContext {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    for (path, contents) in files {
        ctx.write(&format!("lib/{path}"), contents);
    }
    ctx.ok(&["import", ctx.path("lib").to_str().unwrap()]);
    ctx
}

#[test]
fn claude_code_commands_come_back_the_same() {
    let trip = round_trip(&fixture("claude-custom-commands"), "claude-commands");
    assert_eq!(trip.first.len(), 5, "{:?}", trip.first.keys());
    let debug = text(&trip, ".claude/commands/debug.md");
    assert!(
        debug.starts_with(
            "---\ndescription: Analyze code for debugging and provide troubleshooting guidance\n"
        ),
        "{debug}"
    );
    // `$ARGUMENTS` is the whole text after the command, as it was.
    assert!(
        debug.ends_with("debugging steps.\n\n$ARGUMENTS\n"),
        "{debug}"
    );
    assert_eq!(trip.warnings, "", "{}", trip.warnings);
}

#[test]
fn vscode_prompt_files_come_back_the_same_with_their_editor_variables() {
    let trip = round_trip(&fixture("awesome-copilot-prompts"), "vscode-prompts");
    assert_eq!(trip.first.len(), 7, "{:?}", trip.first.keys());
    let pull = text(
        &trip,
        ".github/prompts/create-github-pull-request-from-specification.prompt.md",
    );
    assert!(
        pull.contains("at `${workspaceFolder}/.github/pull_request_template.md`")
            && pull.contains("from '${workspaceFolder}/.github/pull_request_template.md'")
            && pull.contains("on to `${input:targetBranch}`."),
        "{pull}"
    );
    let best = text(&trip, ".github/prompts/dotnet-best-practices.prompt.md");
    assert!(best.contains("code in ${selection} meets"), "{best}");
    let builder = text(&trip, ".github/prompts/prompt-builder.prompt.md");
    assert!(!builder.contains("${input:file"), "{builder}");
    // Every heading comes back as the title it was: nothing to warn about.
    assert!(!trip.warnings.contains("its title"), "{}", trip.warnings);
    assert_eq!(trip.warnings, "", "{}", trip.warnings);
}

#[test]
fn cursor_commands_come_back_the_same() {
    let trip = round_trip(&fixture("cursor-commands"), "cursor-commands");
    assert_eq!(trip.first.len(), 6, "{:?}", trip.first.keys());
    let source = std::fs::read_to_string(fixture("cursor-commands/.cursor/commands/deslop.md"))
        .expect("the fixture");
    assert_eq!(text(&trip, ".cursor/commands/deslop.md"), source);
}

#[test]
fn gemini_cli_commands_come_back_the_same() {
    let trip = round_trip(&fixture("gemini-cli-commands"), "gemini-commands");
    assert_eq!(trip.first.len(), 5, "{:?}", trip.first.keys());
    let review: toml_edit::DocumentMut = text(&trip, ".gemini/commands/review-frontend.toml")
        .parse()
        .expect("TOML");
    let prompt = review["prompt"].as_str().expect("prompt");
    assert!(
        prompt.contains("issue: {{args}}.") && prompt.contains("!{git log --pretty"),
        "{prompt}"
    );
    assert!(
        text(&trip, ".gemini/commands/github/cleanup-back-to-main.toml").contains("back to main")
    );
    // Gemini CLI runs the command's own `!{...}` as it did; the argument's description is kept.
    assert_eq!(trip.warnings, "", "{}", trip.warnings);
}

#[test]
fn prompts_of_ours_come_back_the_same_from_their_first_export_on() {
    let ctx = TestContext::new();
    ctx.write("lib/guides/style.md", "# Style\n\nWrite short sentences.\n");
    ctx.write(
        "lib/fix.prompt.md",
        "---\ndescription: Fix a bug.\narguments:\n  - name: file\n    description: The file \
         {to fix}\n    required: true\n  - name: level\n---\nFix {{ file }} at {{ level }}. Costs \
         $5, $100 or \\$1.\n\n{{ embed(\"shelf://source/guides/style.md\") }}\n",
    );
    ctx.write(
        "lib/explain.prompt.md",
        "---\narguments:\n  - name: topic\n---\n# Explain things\n\nExplain {{ topic }} in \
         ${file} or {{ \"{{args}}\" }} with !{ls}, as $site. See \
         {{ link(\"shelf://source/guides/style.md\") }}.\n",
    );
    ctx.write(
        "lib/commit.prompt.md",
        "---\nname: git/commit\n---\nWrite a commit message.{% if true %} Short.{% endif %} \
         {# né #}{% raw %}{{ kept }}{% endraw %}\n",
    );
    for format in [
        "claude-commands",
        "vscode-prompts",
        "cursor-commands",
        "gemini-commands",
    ] {
        round_trip(&ctx.path("lib"), format);
    }
}

#[test]
fn a_comment_with_characters_of_several_bytes_exports() {
    let ctx = library_of(&[(
        "greet.prompt.md",
        "---\ndescription: Greet.\n---\nHello {# café, naïve #}world{# ü #}.\n",
    )]);
    for (format, path) in [
        ("claude-commands", ".claude/commands/greet.md"),
        ("vscode-prompts", ".github/prompts/greet.prompt.md"),
        ("cursor-commands", ".cursor/commands/greet.md"),
        ("gemini-commands", ".gemini/commands/greet.toml"),
        ("skills", ".agents/skills/greet/SKILL.md"),
    ] {
        let (files, _) = export(&ctx, format, format);
        let text = String::from_utf8_lossy(&files[path]).into_owned();
        assert!(text.contains("Hello world."), "{format}: {text}");
    }
}

#[test]
fn claude_escapes_do_not_grow() {
    let trip = round_trip_file(
        ".claude/commands/price.md",
        "---\ndescription: Price a plan.\n---\nIt costs $100, or $10 with \\$0 off; \\$1 is an \
         escape and $ARGUMENTS the plan.\n",
        "claude-commands",
    );
    assert_eq!(
        text(&trip, ".claude/commands/price.md"),
        "---\ndescription: Price a plan.\n---\nIt costs $100, or $10 with \\$0 off; \\$1 is an \
         escape and $ARGUMENTS the plan.\n"
    );
    let rendered = trip.again.json(&[
        "prompt",
        "render",
        "price",
        "--json",
        "--arg",
        "arguments=pro",
    ]);
    assert_eq!(
        rendered["messages"][0]["content"]["text"],
        "It costs $100, or $10 with $0 off; $1 is an escape and pro the plan."
    );

    // A `\` right before an argument cannot be written: Claude Code would read an escape.
    let ctx = library_of(&[(
        "path.prompt.md",
        "---\ndescription: A path.\narguments:\n  - name: dir\n---\nOpen C:\\{{ dir }}.\n",
    )]);
    let (_, warnings) = export(&ctx, "out", "claude-commands");
    assert!(
        warnings.contains("prompt path: claude-commands cannot say an argument right after a `\\`"),
        "{warnings}"
    );
}

#[test]
fn claude_arguments_stays_the_whole_text_after_the_command() {
    for (command, exported) in [
        (
            "---\nargument-hint: <message>\n---\nCommit with $ARGUMENTS.\n",
            "---\nargument-hint: \"<message>\"\n---\nCommit with $ARGUMENTS.\n",
        ),
        (
            "---\nargument-hint: [file] [focus]\n---\nReview $1 for $2: $ARGUMENTS\n",
            "---\nargument-hint: \"[file] [focus]\"\narguments: [file, focus]\n---\nReview $file \
             for $focus: $ARGUMENTS\n",
        ),
    ] {
        let trip = round_trip_file(".claude/commands/go.md", command, "claude-commands");
        assert_eq!(text(&trip, ".claude/commands/go.md"), exported);
        assert_eq!(trip.warnings, "", "{}", trip.warnings);
    }
}

#[test]
fn vscode_editor_variables_stay_variables_and_inputs_stay_inputs() {
    let trip = round_trip_file(
        ".github/prompts/explain.prompt.md",
        "---\nagent: agent\ndescription: Explain the code.\n---\nExplain ${selection} of \
         ${file} in ${workspaceFolder} for ${input:audience:Who reads it} (${selectedText}).\n",
        "vscode-prompts",
    );
    assert_eq!(
        text(&trip, ".github/prompts/explain.prompt.md"),
        "---\ndescription: Explain the code.\nagent: agent\n---\nExplain ${selection} of ${file} \
         in ${workspaceFolder} for ${input:audience:Who reads it} (${selection}).\n"
    );
    let shown = trip.again.json(&["prompt", "show", "explain", "--json"]);
    assert_eq!(
        shown["arguments"][1]["description"],
        "The path of the current file (VS Code's ${file})"
    );
    assert_eq!(trip.warnings, "", "{}", trip.warnings);

    // A description VS Code's placeholder cannot hold whole is said to be lost.
    let ctx = library_of(&[(
        "pick.prompt.md",
        "---\ndescription: Pick.\narguments:\n  - name: key\n    description: \"A key, as {name}\"\n    \
         required: true\n---\nPick {{ key }}.\n",
    )]);
    let (files, warnings) = export(&ctx, "out", "vscode-prompts");
    assert!(
        String::from_utf8_lossy(&files[".github/prompts/pick.prompt.md"])
            .contains("Pick ${input:key:A key, as {name}.\n"),
        "{files:?}"
    );
    assert!(
        warnings.contains("prompt pick: vscode-prompts cannot say argument key's description"),
        "{warnings}"
    );
}

#[test]
fn a_title_is_said_lost_only_when_it_does_not_come_back() {
    let ctx = library_of(&[
        (
            "kept.prompt.md",
            "---\ndescription: Kept.\n---\n# Review the change\n\nLook at it.\n",
        ),
        (
            "lost.prompt.md",
            "---\ntitle: Lost title\ndescription: Lost.\n---\nLook at it.\n",
        ),
    ]);
    for format in ["claude-commands", "vscode-prompts", "gemini-commands"] {
        let (_, warnings) = export(&ctx, format, format);
        assert!(!warnings.contains("prompt kept:"), "{format}: {warnings}");
        assert!(
            warnings.contains(&format!("prompt lost: {format} cannot say its title")),
            "{format}: {warnings}"
        );
    }
    let (_, warnings) = export(&ctx, "cursor", "cursor-commands");
    assert!(
        warnings.contains("prompt kept: cursor-commands cannot say its description")
            && !warnings.contains("prompt kept: cursor-commands cannot say its title"),
        "{warnings}"
    );
}

#[test]
fn a_description_taken_from_the_body_is_plain_prose() {
    let trip = round_trip_file(
        ".claude/commands/audit.md",
        "---\nargument-hint: [site]\n---\nAudit $1 for broken links.\n",
        "claude-commands",
    );
    assert_eq!(
        text(&trip, ".claude/commands/audit.md"),
        "---\nargument-hint: \"[site]\"\narguments: [site]\n---\nAudit $site for broken links.\n"
    );
    let shown = trip.again.json(&["prompt", "show", "audit", "--json"]);
    assert_eq!(shown["description"], serde_json::Value::Null, "{shown}");
}
