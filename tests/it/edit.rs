//! `prompt edit` and `resource edit` through the real binary, with editors that are shell
//! scripts written by each test: one appends a line, one breaks the file and then fixes it,
//! one empties it, one fails. No terminal is involved.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{TestContext, describe, snapshot};

/// Appends a line to the file.
const APPEND: &str = "printf 'Appended line.\\n' >> \"$1\"\n";

/// Writes `body` as an executable shell script and returns its path.
fn script(ctx: &TestContext, name: &str, body: &str) -> String {
    let path = ctx.write(&format!("editors/{name}"), format!("#!/bin/sh\n{body}"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("make the script executable");
    }
    path.display().to_string()
}

/// The folder the binary makes its temporary files in, for these tests.
fn temporary(ctx: &TestContext) -> PathBuf {
    let dir = ctx.path("tmp");
    std::fs::create_dir_all(&dir).expect("temporary folder");
    dir
}

/// What the temporary folder holds (drafts kept by an edit that was not stored).
fn left_in_temporary(ctx: &TestContext) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(temporary(ctx)).expect("read the temporary folder") {
        let dir = entry.expect("entry").path();
        for file in std::fs::read_dir(&dir).expect("read a draft folder") {
            found.push(file.expect("entry").path());
        }
    }
    found
}

/// `promptshelf --db DB ARGS` with EDITOR set to `editor` (VISUAL unset).
fn edit(ctx: &TestContext, args: &[&str], editor: &str) -> Output {
    ctx.command(args)
        .env_remove("VISUAL")
        .env("EDITOR", editor)
        .env("TMPDIR", temporary(ctx))
        .output()
        .expect("run promptshelf")
}

fn edit_ok(ctx: &TestContext, args: &[&str], editor: &str) -> (String, String) {
    let output = edit(ctx, args, editor);
    assert!(
        output.status.success(),
        "{}",
        describe(args, &output, "expected success")
    );
    (
        String::from_utf8(output.stdout).expect("UTF-8"),
        String::from_utf8(output.stderr).expect("UTF-8"),
    )
}

/// Expects exit status 1; returns stderr.
fn edit_fails(ctx: &TestContext, args: &[&str], editor: &str) -> String {
    let output = edit(ctx, args, editor);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        describe(args, &output, "expected exit status 1")
    );
    String::from_utf8(output.stderr).expect("UTF-8")
}

fn path_arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// The prompt `greet`, added by hand, with a title its body does not give.
fn with_greet(ctx: &TestContext) {
    let file = ctx.write(
        "greet.prompt.md",
        "---\ntitle: Greeting\narguments:\n  - name: who\n---\nHello {{ who }}\n",
    );
    ctx.ok(&["prompt", "add", path_arg(&file)]);
}

fn bodies(ctx: &TestContext, name: &str) -> String {
    let shown = ctx.json(&["prompt", "show", name, "--json"]);
    shown["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|message| message["body"].as_str().expect("a body").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_prompt_added_by_hand_is_edited_as_a_prompt_file_and_stored() {
    let ctx = TestContext::new();
    with_greet(&ctx);
    let seen = ctx.path("seen.md");
    let editor = script(
        &ctx,
        "append",
        &format!("cp \"$1\" '{}'\n{APPEND}", seen.display()),
    );
    let (stdout, _) = edit_ok(&ctx, &["prompt", "edit", "greet"], &editor);
    assert_eq!(stdout, "updated prompt greet\n");
    // The editor was given the prompt in the folder format, under a prompt file's name.
    assert_eq!(
        std::fs::read_to_string(&seen).expect("what the editor saw"),
        "---\ntitle: Greeting\narguments:\n  - name: who\n---\nHello {{ who }}\n"
    );
    assert_eq!(bodies(&ctx, "greet"), "Hello {{ who }}\nAppended line.");
    let shown = ctx.json(&["prompt", "show", "greet", "--json"]);
    assert_eq!(shown["title"], "Greeting");
    assert_eq!(shown["collection"], Value::Null);
    assert_eq!(left_in_temporary(&ctx), Vec::<PathBuf>::new());

    // An editor that changes nothing: nothing is written.
    let before = snapshot(&ctx.db);
    let (stdout, _) = edit_ok(&ctx, &["prompt", "edit", "greet"], "true");
    assert_eq!(stdout, "prompt greet: no change, nothing written\n");
    assert_eq!(snapshot(&ctx.db), before);
}

#[test]
fn a_file_that_no_longer_reads_is_reopened_with_the_error_on_top() {
    let ctx = TestContext::new();
    with_greet(&ctx);
    let reopened = ctx.path("reopened.md");
    // Breaks the front matter the first time; fixes it once the error comment is there.
    let editor = script(
        &ctx,
        "break-then-fix",
        &format!(
            "if grep -q '^# promptshelf:' \"$1\"; then\n\
             \x20 cp \"$1\" '{}'\n\
             \x20 sed -e 's/^title: \\[$/title: Fixed/' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n\
             else\n\
             \x20 sed -e 's/^title: Greeting$/title: [/' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n\
             fi\n",
            reopened.display()
        ),
    );
    let (stdout, stderr) = edit_ok(&ctx, &["prompt", "edit", "greet"], &editor);
    assert_eq!(stdout, "updated prompt greet\n");
    assert!(
        stderr.contains("promptshelf: greet.prompt.md:2: front matter")
            && stderr.contains("opening it again"),
        "{stderr}"
    );
    let reopened = std::fs::read_to_string(&reopened).expect("the reopened file");
    let lines: Vec<&str> = reopened.lines().collect();
    // The error's line is counted in the file as the editor shows it, comments included.
    assert!(
        lines[0].starts_with("# promptshelf: not stored: greet.prompt.md:5: front matter"),
        "{reopened}"
    );
    assert_eq!(lines[3..5], ["---", "title: ["], "{reopened}");
    let shown = ctx.json(&["prompt", "show", "greet", "--json"]);
    assert_eq!(shown["title"], "Fixed", "the comment lines were removed");
    assert_eq!(bodies(&ctx, "greet"), "Hello {{ who }}");
    assert_eq!(left_in_temporary(&ctx), Vec::<PathBuf>::new());
}

#[test]
fn an_edit_is_checked_as_prompt_add_checks_a_file() {
    let ctx = TestContext::new();
    with_greet(&ctx);
    // Uses a variable that is no argument the first time; removes it once the error is on
    // top.
    let editor = script(
        &ctx,
        "undeclared-then-fix",
        "if grep -q '^# promptshelf:' \"$1\"; then\n\
         \x20 grep -v 'nobody' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n\
         \x20 printf 'Fixed.\\n' >> \"$1\"\n\
         else\n\
         \x20 printf 'Hi {{ nobody }}\\n' >> \"$1\"\n\
         fi\n",
    );
    let (stdout, stderr) = edit_ok(&ctx, &["prompt", "edit", "greet"], &editor);
    assert_eq!(stdout, "updated prompt greet\n");
    assert!(
        stderr.contains("greet.prompt.md:")
            && stderr.contains("the template uses 'nobody', which is not a declared argument")
            && stderr.contains("opening it again"),
        "{stderr}"
    );
    assert_eq!(bodies(&ctx, "greet"), "Hello {{ who }}\nFixed.");
}

#[test]
fn a_file_returned_unchanged_after_an_error_is_kept_and_nothing_is_written() {
    let ctx = TestContext::new();
    with_greet(&ctx);
    let editor = script(
        &ctx,
        "break-once",
        "grep -q '^# promptshelf:' \"$1\" && exit 0\n\
         printf '{%% if who %%}\\nno end\\n' >> \"$1\"\n",
    );
    let before = snapshot(&ctx.db);
    let stderr = edit_fails(&ctx, &["prompt", "edit", "greet"], &editor);
    assert!(
        stderr.contains("the template does not parse")
            && stderr.contains("greet.prompt.md still has the error above, so nothing was written"),
        "{stderr}"
    );
    assert_eq!(snapshot(&ctx.db), before);
    // The author's edit is not lost: the draft stays, and the message says where.
    let kept = left_in_temporary(&ctx);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(stderr.contains(&kept[0].display().to_string()), "{stderr}");
    let text = std::fs::read_to_string(&kept[0]).expect("the kept draft");
    assert!(text.contains("no end"), "{text}");
}

#[test]
fn an_emptied_file_or_a_failing_editor_abandons_the_edit() {
    let ctx = TestContext::new();
    with_greet(&ctx);
    let before = snapshot(&ctx.db);

    let empty = script(&ctx, "empty", ": > \"$1\"\n");
    let stderr = edit_fails(&ctx, &["prompt", "edit", "greet"], &empty);
    assert!(
        stderr.contains("the file is empty, so the edit is abandoned; nothing was written"),
        "{stderr}"
    );
    assert_eq!(left_in_temporary(&ctx), Vec::<PathBuf>::new());

    let quits = script(&ctx, "quits", "exit 3\n");
    let stderr = edit_fails(&ctx, &["prompt", "edit", "greet"], &quits);
    assert!(
        stderr.contains("exited with status 3, so the edit is abandoned and nothing was written"),
        "{stderr}"
    );
    assert_eq!(left_in_temporary(&ctx), Vec::<PathBuf>::new());

    // An editor that fails after changing the file: the change is kept, and said where.
    let fails = script(&ctx, "fails", &format!("{APPEND}exit 1\n"));
    let stderr = edit_fails(&ctx, &["prompt", "edit", "greet"], &fails);
    let kept = left_in_temporary(&ctx);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        stderr.contains("exited with status 1")
            && stderr.contains(&format!("kept in {}", kept[0].display())),
        "{stderr}"
    );
    assert_eq!(snapshot(&ctx.db), before);
}

#[test]
fn an_edit_keeps_the_name_and_says_how_to_rename() {
    let ctx = TestContext::new();
    with_greet(&ctx);
    let editor = script(
        &ctx,
        "rename-then-append",
        "if grep -q '^# promptshelf:' \"$1\"; then\n\
         \x20 grep -v '^name: ' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n\
         \x20 printf 'Kept.\\n' >> \"$1\"\n\
         else\n\
         \x20 sed -e 's/^title: Greeting$/name: salute\\\n\
         title: Greeting/' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n\
         fi\n",
    );
    let (stdout, stderr) = edit_ok(&ctx, &["prompt", "edit", "greet"], &editor);
    assert_eq!(stdout, "updated prompt greet\n", "{stderr}");
    assert!(
        stderr.contains("the name is now 'salute', and an edit keeps the name")
            && stderr.contains("`promptshelf prompt mv greet salute`"),
        "{stderr}"
    );
    assert_eq!(bodies(&ctx, "greet"), "Hello {{ who }}\nKept.");
    ctx.fails(&["prompt", "show", "salute"]);
}

#[test]
fn visual_comes_before_editor_and_an_editor_may_have_arguments() {
    let ctx = TestContext::new();
    with_greet(&ctx);
    let append = script(&ctx, "append", APPEND);
    let output = ctx
        .command(&["prompt", "edit", "greet"])
        .env("VISUAL", format!("sh {append}"))
        .env("EDITOR", "false")
        .env("TMPDIR", temporary(&ctx))
        .output()
        .expect("run promptshelf");
    assert!(
        output.status.success(),
        "{}",
        describe(&["prompt", "edit"], &output, "expected success")
    );
    assert_eq!(bodies(&ctx, "greet"), "Hello {{ who }}\nAppended line.");
}

#[test]
fn no_editor_is_a_clear_error() {
    let ctx = TestContext::new();
    with_greet(&ctx);
    let before = snapshot(&ctx.db);
    let output = ctx
        .command(&["prompt", "edit", "greet"])
        .env_remove("VISUAL")
        .env_remove("EDITOR")
        .output()
        .expect("run promptshelf");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no editor to open the file in: set VISUAL or EDITOR")
            && stderr.contains("EDITOR=\"code --wait\""),
        "{stderr}"
    );
    assert_eq!(snapshot(&ctx.db), before);

    let unknown = edit_fails(&ctx, &["prompt", "edit", "greeet"], "true");
    assert!(unknown.contains("unknown prompt 'greeet'"), "{unknown}");
    let usage = edit(&ctx, &["prompt", "edit"], "true");
    assert_eq!(
        usage.status.code(),
        Some(2),
        "a missing NAME is a usage error"
    );
}

#[test]
fn text_resources_added_by_hand_are_edited_and_binary_ones_refused() {
    let ctx = TestContext::new();
    let notes = ctx.write("notes.md", "---\ntitle: My notes\n---\n# Notes\n\nSome.\n");
    ctx.ok(&["resource", "add", path_arg(&notes)]);
    let data = ctx.write("data.json", "{\"a\": 1}\n");
    ctx.ok(&[
        "resource",
        "add",
        path_arg(&data),
        "--uri",
        "shelf://local/config",
        "--name",
        "settings",
        "--mime-type",
        "application/json",
    ]);
    let append = script(&ctx, "append", APPEND);

    let (stdout, _) = edit_ok(
        &ctx,
        &["resource", "edit", "shelf://local/notes.md"],
        &append,
    );
    assert!(
        stdout.starts_with("updated resource shelf://local/notes.md (text/markdown, "),
        "{stdout}"
    );
    let content = ctx.ok(&["resource", "cat", "shelf://local/notes.md"]);
    assert_eq!(content, "# Notes\n\nSome.\nAppended line.\n");
    let shown = ctx.json(&["resource", "show", "shelf://local/notes.md", "--json"]);
    assert_eq!(shown["title"], "My notes");

    // A file without front matter is its content alone; the metadata stays as stored. The
    // file takes the MIME type's extension, for the editor.
    let named = ctx.path("named");
    let replace = script(
        &ctx,
        "replace",
        &format!(
            "basename \"$1\" > '{}'\nprintf '{{\"a\": 2}}\\n' > \"$1\"\n",
            named.display()
        ),
    );
    edit_ok(
        &ctx,
        &["resource", "edit", "shelf://local/config"],
        &replace,
    );
    assert_eq!(
        ctx.ok(&["resource", "cat", "shelf://local/config"]),
        "{\"a\": 2}\n"
    );
    assert_eq!(
        std::fs::read_to_string(&named).expect("the file's name"),
        "config.json\n"
    );
    let shown = ctx.json(&["resource", "show", "shelf://local/config", "--json"]);
    assert_eq!(
        (&shown["name"], &shown["mimeType"], &shown["text"]),
        (
            &Value::from("settings"),
            &Value::from("application/json"),
            &Value::from(true)
        )
    );

    let png = ctx.write("dot.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    ctx.ok(&["resource", "add", path_arg(&png)]);
    let before = snapshot(&ctx.db);
    let refused = edit_fails(
        &ctx,
        &["resource", "edit", "shelf://local/dot.png"],
        &append,
    );
    assert!(
        refused.contains("resource shelf://local/dot.png is binary (image/png")
            && refused.contains("no text editor can open"),
        "{refused}"
    );
    assert_eq!(snapshot(&ctx.db), before);
}

/// A folder `team` with a prompt and a document, imported.
fn with_team(ctx: &TestContext) -> PathBuf {
    ctx.write(
        "team/ask.prompt.md",
        "---\narguments:\n  - name: question\n---\nAnswer {{ question }}\n",
    );
    ctx.write("team/guide.md", "# Guide\n\nHow we work.\n");
    let team = ctx.path("team").canonicalize().expect("team");
    ctx.ok(&["import", path_arg(&team)]);
    team
}

#[test]
fn a_collection_prompt_is_edited_in_its_file_and_the_collection_imported_again() {
    let ctx = TestContext::new();
    let team = with_team(&ctx);
    let append = script(&ctx, "append", APPEND);
    let (stdout, _) = edit_ok(&ctx, &["prompt", "edit", "ask"], &append);
    assert_eq!(
        stdout,
        "updated prompt ask (ask.prompt.md)\n\
         collection team: added 0, updated 1, unchanged 1, removed 0, failed 0\n"
    );
    assert_eq!(
        std::fs::read_to_string(team.join("ask.prompt.md")).expect("the source file"),
        "---\narguments:\n  - name: question\n---\nAnswer {{ question }}\nAppended line.\n"
    );
    assert_eq!(bodies(&ctx, "ask"), "Answer {{ question }}\nAppended line.");
    let shown = ctx.json(&["prompt", "show", "ask", "--json"]);
    assert_eq!(
        (&shown["collection"], &shown["origin"]),
        (&Value::from("team"), &Value::from("ask.prompt.md"))
    );

    // A document of the collection, the same way.
    let (stdout, _) = edit_ok(
        &ctx,
        &["resource", "edit", "shelf://team/guide.md"],
        &append,
    );
    assert!(
        stdout.starts_with("updated resource shelf://team/guide.md (guide.md)\n"),
        "{stdout}"
    );
    assert_eq!(
        ctx.ok(&["resource", "cat", "shelf://team/guide.md"]),
        "# Guide\n\nHow we work.\nAppended line.\n"
    );
    assert_eq!(left_in_temporary(&ctx), Vec::<PathBuf>::new());
}

#[test]
fn a_collection_file_the_import_refuses_is_reopened_as_the_author_left_it() {
    let ctx = TestContext::new();
    let team = with_team(&ctx);
    let count = ctx.path("count");
    let seen = ctx.path("seen.md");
    // Breaks the front matter the first time, fixes it and adds a line the second.
    let editor = script(
        &ctx,
        "break-then-fix",
        &format!(
            "n=$(cat '{count}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{count}'\n\
             if [ $n = 1 ]; then\n\
             \x20 sed -e 's/^arguments:$/arguments: [/' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n\
             else\n\
             \x20 cp \"$1\" '{seen}'\n\
             \x20 sed -e 's/^arguments: \\[$/arguments:/' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n\
             \x20 printf 'Fixed.\\n' >> \"$1\"\n\
             fi\n",
            count = count.display(),
            seen = seen.display()
        ),
    );
    let (stdout, stderr) = edit_ok(&ctx, &["prompt", "edit", "ask"], &editor);
    let file = team.join("ask.prompt.md");
    assert!(
        stderr.contains(&format!("{}:3: front matter", file.display()))
            && stderr.contains(&format!(
                "promptshelf: {} did not import; opening it again",
                file.display()
            )),
        "{stderr}"
    );
    assert!(
        stdout.contains("updated prompt ask (ask.prompt.md)"),
        "{stdout}"
    );
    // No comment was written into the author's file.
    let reopened = std::fs::read_to_string(&seen).expect("the reopened file");
    assert!(reopened.starts_with("---\narguments: [\n"), "{reopened}");
    assert!(!reopened.contains("promptshelf"), "{reopened}");
    assert_eq!(bodies(&ctx, "ask"), "Answer {{ question }}\nFixed.");
}

#[test]
fn a_collection_file_left_broken_keeps_the_previous_version_in_the_library() {
    let ctx = TestContext::new();
    let team = with_team(&ctx);
    let count = ctx.path("count");
    let editor = script(
        &ctx,
        "break-once",
        &format!(
            "n=$(cat '{count}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{count}'\n\
             [ $n = 1 ] || exit 0\n\
             sed -e 's/^arguments:$/arguments: [/' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n",
            count = count.display()
        ),
    );
    let before = snapshot(&ctx.db);
    let stderr = edit_fails(&ctx, &["prompt", "edit", "ask"], &editor);
    let file = team.join("ask.prompt.md");
    assert!(
        stderr.contains(&format!(
            "{} still has the error above, so nothing was imported: the library keeps the \
             previous version of prompt ask",
            file.display()
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&count).expect("count").trim(), "2");
    assert_eq!(snapshot(&ctx.db), before);
    // The author's file stays as the editor left it.
    let text = std::fs::read_to_string(&file).expect("the source file");
    assert!(text.contains("arguments: ["), "{text}");
}

#[test]
fn a_collection_item_needs_its_folder_and_file() {
    let ctx = TestContext::new();
    let team = with_team(&ctx);
    let append = script(&ctx, "append", APPEND);
    let before = snapshot(&ctx.db);
    std::fs::remove_file(team.join("ask.prompt.md")).expect("remove the file");
    let gone = edit_fails(&ctx, &["prompt", "edit", "ask"], &append);
    assert!(
        gone.contains(&format!(
            "prompt ask comes from ask.prompt.md of the collection 'team', but {} is not \
             there any more",
            team.join("ask.prompt.md").display()
        )),
        "{gone}"
    );
    assert_eq!(snapshot(&ctx.db), before);
}

#[test]
fn a_seed_prompt_is_edited_by_hand_and_stored_detached_from_the_seed() {
    let ctx = TestContext::new();
    let shown = ctx.json(&["prompt", "show", "code-review", "--json"]);
    assert_eq!(shown["collection"], "library");
    let append = script(&ctx, "append", APPEND);
    let (stdout, _) = edit_ok(&ctx, &["prompt", "edit", "code-review"], &append);
    assert_eq!(
        stdout,
        "updated prompt code-review, detached from the built-in seed (`promptshelf history` \
         and `undo` go back)\n"
    );
    assert!(
        bodies(&ctx, "code-review").ends_with("Appended line."),
        "{}",
        bodies(&ctx, "code-review")
    );
    // It is the user's own now: added by hand, and detached from the seed's collection.
    let shown = ctx.json(&["prompt", "show", "code-review", "--json"]);
    assert_eq!(shown["collection"], Value::Null);
    let (stdout, _) = edit_ok(&ctx, &["prompt", "edit", "code-review"], &append);
    assert_eq!(stdout, "updated prompt code-review\n");
    // A seed document, likewise.
    let uri = ctx
        .json(&["resource", "list", "--json"])
        .as_array()
        .expect("a list")
        .iter()
        .find(|resource| {
            resource["collection"] == "library" && resource["mimeType"] == "text/markdown"
        })
        .map(|resource| resource["uri"].as_str().expect("a uri").to_string())
        .expect("a seed document");
    let (stdout, _) = edit_ok(&ctx, &["resource", "edit", &uri], &append);
    assert!(
        stdout.starts_with(&format!("updated resource {uri} (text/markdown, "))
            && stdout.ends_with(
                ", detached from the built-in seed (`promptshelf history` and `undo` go back)\n"
            ),
        "{stdout}"
    );
    let text = ctx.ok(&["resource", "cat", &uri]);
    assert!(text.ends_with("Appended line.\n"), "{text}");
    // `undo` puts the seed's prompt back as it was.
    ctx.ok(&["undo"]);
    ctx.ok(&["undo"]);
    ctx.ok(&["undo"]);
    assert!(!bodies(&ctx, "code-review").contains("Appended line."));
}

#[test]
fn an_edit_is_not_stored_over_a_change_made_while_the_editor_was_open() {
    let ctx = TestContext::new();
    with_greet(&ctx);
    let other = ctx.write("other/greet.prompt.md", "Hi from elsewhere.\n");
    // While the file is open, another command replaces the prompt.
    let editor = script(
        &ctx,
        "meanwhile",
        &format!(
            "{APPEND}'{bin}' --db '{db}' prompt add '{other}' > /dev/null\n",
            bin = crate::common::BIN,
            db = ctx.db.display(),
            other = other.display()
        ),
    );
    let stderr = edit_fails(&ctx, &["prompt", "edit", "greet"], &editor);
    assert_eq!(bodies(&ctx, "greet"), "Hi from elsewhere.", "{stderr}");
    let kept = left_in_temporary(&ctx);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        stderr.contains("prompt greet changed while it was being edited")
            && stderr.contains(&format!("`promptshelf prompt add {}`", kept[0].display())),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&kept[0]).expect("the kept draft");
    assert!(
        text.ends_with("Hello {{ who }}\nAppended line.\n"),
        "{text}"
    );
}

#[test]
fn front_matter_kept_from_a_file_stays_with_an_edited_prompt() {
    let ctx = TestContext::new();
    // A whole-library export's items added by hand, one of them a VS Code prompt file.
    ctx.write(
        "restore/promptshelf-library.json",
        r#"{"format": "promptshelf-library", "version": 1, "collections": [],
            "local": {"folder": "local", "resources": [], "templates": []}}"#,
    );
    ctx.write(
        "restore/local/ask.prompt.md",
        "---\nmode: agent\ntools: [a]\n---\nAsk about ${input:topic}.\n",
    );
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", path_arg(&ctx.path("restore"))]);
    // Appends once: a draft reopened with an error comes back unchanged, which ends the edit.
    let once = script(
        &ctx,
        "append-once",
        "[ -e \"$0.done\" ] || { printf 'Appended line.\\n' >> \"$1\"; touch \"$0.done\"; }\n",
    );
    let (stdout, _) = edit_ok(&ctx, &["prompt", "edit", "ask"], &once);
    assert!(stdout.contains("updated prompt ask"), "{stdout}");
    let shown = ctx.json(&["prompt", "show", "ask", "--json"]);
    assert_eq!(
        shown["frontMatter"],
        serde_json::json!({"mode": "agent", "tools": ["a"]}),
        "{shown:#}"
    );
    assert!(bodies(&ctx, "ask").contains("Appended line."));
}
