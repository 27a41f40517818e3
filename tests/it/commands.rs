//! Starting a library and feeding the commands: `init`, argument values from files and
//! standard input, prompts and resources added from standard input, and the mistakes people
//! make typing them.

use std::io::Write;
use std::process::Stdio;

use crate::common::{TestContext, command_on, describe};

/// Runs `promptshelf --db DB ARGS` with `input` on standard input; returns the output.
fn run_with_input(ctx: &TestContext, args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = ctx
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start promptshelf");
    let written = child.stdin.take().expect("stdin").write_all(input);
    // A command that fails before reading all of its input may have exited already.
    if let Err(err) = written
        && err.kind() != std::io::ErrorKind::BrokenPipe
    {
        panic!("write stdin: {err}");
    }
    child.wait_with_output().expect("wait for promptshelf")
}

fn ok_with_input(ctx: &TestContext, args: &[&str], input: &[u8]) -> String {
    let output = run_with_input(ctx, args, input);
    assert!(
        output.status.success(),
        "{}",
        describe(args, &output, "expected success")
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

fn fails_with_input(ctx: &TestContext, args: &[&str], input: &[u8]) -> String {
    let output = run_with_input(ctx, args, input);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        describe(args, &output, "expected exit status 1")
    );
    String::from_utf8(output.stderr).expect("UTF-8")
}

/// A prompt that shows its arguments back, to see which values arrived.
const ECHO_PROMPT: &str = "---
name: echo
arguments:
  - name: first
    required: true
  - name: second
---
first=[{{ first }}] second=[{{ second }}]
";

fn with_echo_prompt() -> TestContext {
    let ctx = TestContext::new();
    let file = ctx.write("echo.prompt.md", ECHO_PROMPT);
    ctx.ok(&["prompt", "add", file.to_str().expect("UTF-8 path")]);
    ctx
}

#[test]
fn init_creates_the_seed_library_or_an_empty_one_and_refuses_an_existing_file() {
    let ctx = TestContext::new();
    let db = ctx.db.to_str().expect("UTF-8 path");
    let said = ctx.ok(&["init"]);
    assert!(
        said.starts_with(&format!("created {db} with the seed library (")),
        "{said}"
    );
    let seeded: i64 = ctx.query("SELECT count(*) FROM prompts");
    assert!(seeded > 0, "the seed's prompts are there");
    assert!(said.contains(&format!("{seeded} prompts")), "{said}");

    // Again on the same file: refused, and the library is left as it was.
    let refused = ctx.fails(&["init"]);
    assert!(
        refused.contains(&format!("{db} already exists")) && refused.contains("--db PATH"),
        "{refused}"
    );
    assert_eq!(ctx.query::<i64>("SELECT count(*) FROM prompts"), seeded);

    let empty = ctx.path("empty.db");
    let said = command_on(&empty, &["init", "--empty"])
        .output()
        .expect("run promptshelf");
    assert!(said.status.success(), "{said:?}");
    assert_eq!(
        String::from_utf8_lossy(&said.stdout).trim(),
        format!("created {} with an empty library", empty.display())
    );
    let stats = crate::common::ok_on(&empty, &["stats", "--json"]);
    let stats: serde_json::Value = serde_json::from_str(&stats).expect("stats JSON");
    assert_eq!(
        (&stats["prompts"], &stats["resources"]),
        (&serde_json::json!(0), &serde_json::json!(0)),
        "an empty library stays empty when another command opens it: {stats}"
    );
}

#[test]
fn argument_values_come_from_files_standard_input_or_the_command_line() {
    let ctx = with_echo_prompt();
    let file = ctx.write("first.txt", "from a file");
    let from_file = format!("first=@{}", file.display());
    let shown = ctx.ok(&[
        "prompt",
        "render",
        "echo",
        "--arg",
        &from_file,
        "--arg",
        "second=@@literal",
    ]);
    assert!(
        shown.contains("first=[from a file] second=[@literal]"),
        "{shown}"
    );

    let shown = ok_with_input(
        &ctx,
        &["prompt", "render", "echo", "--arg", "first=@-"],
        b"from stdin",
    );
    assert!(shown.contains("first=[from stdin] second=[]"), "{shown}");
}

#[test]
fn mistaken_argument_flags_are_refused_with_what_to_write() {
    let ctx = with_echo_prompt();
    let twice = ctx.fails(&[
        "prompt", "render", "echo", "--arg", "first=a", "--arg", "first=b",
    ]);
    assert!(
        twice.contains("--arg first is given twice; give each argument once"),
        "{twice}"
    );

    let bare = ctx.fails(&["prompt", "render", "echo", "first=a"]);
    assert!(
        bare.contains("unexpected 'first=a' after the prompt name")
            && bare.contains("e.g. --arg first=a"),
        "{bare}"
    );

    let both = fails_with_input(
        &ctx,
        &[
            "prompt",
            "render",
            "echo",
            "--arg",
            "first=@-",
            "--arg",
            "second=@-",
        ],
        b"x",
    );
    assert!(
        both.contains("--arg first and --arg second both read standard input"),
        "{both}"
    );

    let missing = ctx.path("nowhere.txt");
    let missing_arg = format!("first=@{}", missing.display());
    let unreadable = ctx.fails(&["prompt", "render", "echo", "--arg", &missing_arg]);
    assert!(
        unreadable.contains(&format!("cannot read {}", missing.display())),
        "{unreadable}"
    );

    let binary = ctx.write("binary.bin", [0xff, 0xfe, 0x00]);
    let binary_arg = format!("first=@{}", binary.display());
    let not_text = ctx.fails(&["prompt", "render", "echo", "--arg", &binary_arg]);
    assert!(
        not_text.contains("is not UTF-8 text, which the value of --arg first must be"),
        "{not_text}"
    );
}

#[test]
fn prompts_and_resources_are_added_from_standard_input() {
    let ctx = TestContext::new();
    let said = ok_with_input(
        &ctx,
        &["prompt", "add", "-"],
        b"---\nname: piped\n---\nHello from a pipe.\n",
    );
    assert_eq!(said.trim(), "added prompt piped");
    let shown = ctx.ok(&["prompt", "render", "piped"]);
    assert!(shown.contains("Hello from a pipe."), "{shown}");

    let said = ok_with_input(
        &ctx,
        &[
            "resource",
            "add",
            "-",
            "--uri",
            "shelf://local/notes/today.md",
        ],
        b"# Today\n\nNotes piped in.\n",
    );
    assert_eq!(
        said.trim(),
        "added resource shelf://local/notes/today.md (text/markdown, 25 B)"
    );
    assert_eq!(
        ctx.ok(&["resource", "cat", "shelf://local/notes/today.md"]),
        "# Today\n\nNotes piped in.\n"
    );
    let name: String =
        ctx.query("SELECT name FROM resources WHERE uri = 'shelf://local/notes/today.md'");
    assert_eq!(name, "today.md", "the URI's last segment names it");

    let no_uri = fails_with_input(&ctx, &["resource", "add", "-"], b"text");
    assert!(
        no_uri.contains("a resource read from standard input needs a URI: pass --uri"),
        "{no_uri}"
    );

    let not_a_prompt = fails_with_input(&ctx, &["prompt", "add", "-"], b"---\n: [\n---\nx\n");
    assert!(not_a_prompt.contains("standard input"), "{not_a_prompt}");
}

#[test]
fn values_already_there_are_reported_unchanged_and_change_nothing() {
    let ctx = TestContext::new();
    assert_eq!(
        ctx.ok(&["values", "add", "fruits", "apple", "pear"]).trim(),
        "created table fruits with 2 values"
    );
    let changes_before: i64 = ctx.query("SELECT count(*) FROM change_log");
    assert_eq!(
        ctx.ok(&["values", "add", "fruits", "apple"]).trim(),
        "apple is already in fruits with that weight; unchanged (2 now)"
    );
    assert_eq!(
        ctx.ok(&["values", "add", "fruits", "apple", "pear"]).trim(),
        "all 2 values are already in fruits with those weights; unchanged (2 now)"
    );
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM change_log"),
        changes_before,
        "nothing was written"
    );
    assert_eq!(
        ctx.ok(&["values", "add", "fruits", "apple", "plum"]).trim(),
        "added or reweighted 1 value in fruits (3 now); 1 already there"
    );
    assert_eq!(
        ctx.ok(&["values", "add", "fruits", "apple", "--weight", "5"])
            .trim(),
        "added 1 value to fruits (3 now)"
    );

    let csv = ctx.write(
        "fruits.csv",
        "value,weight,context\napple,5,\npear,0,\nplum,0,\n",
    );
    let csv = csv.to_str().expect("UTF-8 path");
    let changes_before: i64 = ctx.query("SELECT count(*) FROM change_log");
    assert_eq!(
        ctx.ok(&["values", "import", "fruits", csv]).trim(),
        format!("fruits already holds the 3 values of {csv} with those weights; unchanged (3 now)")
    );
    assert_eq!(
        ctx.ok(&["values", "import", "fruits", csv, "--replace"])
            .trim(),
        format!("the values of fruits are already the 3 values of {csv}; unchanged")
    );
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM change_log"),
        changes_before,
        "nothing was written"
    );
    let fewer = ctx.write("fewer.csv", "value,weight,context\napple,5,\n");
    let fewer = fewer.to_str().expect("UTF-8 path");
    assert_eq!(
        ctx.ok(&["values", "import", "fruits", fewer, "--replace"])
            .trim(),
        format!("replaced the values of fruits with 1 value from {fewer}")
    );
    assert_eq!(
        ctx.query::<i64>(
            "SELECT count(*) FROM completion_values
             WHERE table_id = (SELECT id FROM completion_tables WHERE name = 'fruits')"
        ),
        1
    );
}

#[test]
fn values_list_has_no_empty_description_column_and_templates_get_a_name() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["values", "add", "fruits", "apple"]);
    let listed = ctx.ok(&["values", "list"]);
    assert_eq!(
        listed
            .lines()
            .next()
            .map(str::split_whitespace)
            .map(Iterator::collect::<Vec<_>>),
        Some(vec!["TABLE", "VALUES"]),
        "{listed}"
    );

    assert_eq!(
        ctx.ok(&["template", "add", "shelf://team/notes/{+path}"])
            .trim(),
        "added template shelf://team/notes/{+path}"
    );
    assert_eq!(
        ctx.ok(&["template", "add", "docs://{component}/{page}"])
            .trim(),
        "added template docs://{component}/{page}"
    );
    let names: Vec<String> = ctx
        .json(&["template", "list", "--json"])
        .as_array()
        .expect("array")
        .iter()
        .map(|template| template["name"].as_str().expect("name").to_string())
        .collect();
    assert_eq!(names, ["docs", "team-notes"]);
}

#[test]
fn commands_leave_no_wal_or_shm_files_behind() {
    let ctx = TestContext::new();
    ctx.ok(&["init"]);
    let wal = ctx.path("library.db-wal");
    let shm = ctx.path("library.db-shm");
    let prompt = ctx.write("p.prompt.md", "---\nname: p\n---\nx\n");
    let prompt = prompt.to_str().expect("UTF-8 path");
    let out = ctx.path("out");
    let out = out.to_str().expect("UTF-8 path");
    let commands: [&[&str]; 9] = [
        &["stats"],
        &["prompt", "list"],
        &["prompt", "show", "code-review"],
        &["resource", "list"],
        &["template", "list"],
        &["values", "list"],
        &["check"],
        &["export", out],
        &["prompt", "add", prompt],
    ];
    // A file left behind depended on which thread closed the last connection: run each
    // command a few times.
    for _ in 0..4 {
        for args in commands {
            let output = ctx.command(args).output().expect("run");
            assert!(
                output.status.success(),
                "{}",
                describe(args, &output, "expected success")
            );
            assert!(
                !wal.exists() && !shm.exists(),
                "promptshelf {args:?} left {} or {}",
                wal.display(),
                shm.display()
            );
        }
    }
}

#[test]
fn check_exits_1_for_problems_and_2_when_it_cannot_run() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let clean = ctx.run(&["check"]);
    assert_eq!(clean.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&clean.stderr).trim(),
        "checked 0 prompts, 0 resources and 0 templates: no problems"
    );
    ctx.ok(&[
        "template",
        "add",
        "shelf://x/{id}",
        "--complete",
        "id=missing-table",
    ]);
    let found = ctx.run(&["check"]);
    assert_eq!(
        found.status.code(),
        Some(1),
        "{}",
        describe(&["check"], &found, "problems found")
    );
    assert!(
        String::from_utf8_lossy(&found.stderr)
            .contains("1 problem in 0 prompts, 0 resources and 1 template; fix them"),
        "{found:?}"
    );

    let broken = TestContext::new();
    std::fs::write(&broken.db, "not a database at all\n".repeat(200)).expect("write");
    let cannot = broken.run(&["check"]);
    assert_eq!(
        cannot.status.code(),
        Some(2),
        "{}",
        describe(&["check"], &cannot, "could not run")
    );
    // Every other command's failure is 1, and a usage error is clap's 2.
    assert_eq!(broken.run(&["stats"]).status.code(), Some(1));
    assert_eq!(ctx.run(&["check", "--no-such-flag"]).status.code(), Some(2));
}

#[test]
fn commands_that_report_something_report_it_as_json_too() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let prompt = ctx.write("hi.prompt.md", "---\nname: hi\n---\nHello.\n");
    let prompt = prompt.to_str().expect("UTF-8 path");
    assert_eq!(
        ctx.json(&["prompt", "add", prompt, "--json"]),
        serde_json::json!({"action": "added", "kind": "prompt", "key": "hi"})
    );
    assert_eq!(
        ctx.json(&["prompt", "add", prompt, "--json"])["action"],
        "unchanged"
    );
    let doc = ctx.write("doc.md", "# Doc\n\nText.\n");
    let doc = doc.to_str().expect("UTF-8 path");
    assert_eq!(
        ctx.json(&[
            "resource",
            "add",
            doc,
            "--uri",
            "shelf://t/doc.md",
            "--json"
        ]),
        serde_json::json!({"action": "added", "kind": "resource", "key": "shelf://t/doc.md", "mimeType": "text/markdown", "size": 13})
    );
    assert_eq!(
        ctx.json(&["template", "add", "shelf://t/{+path}", "--json"]),
        serde_json::json!({"action": "added", "kind": "template", "key": "shelf://t/{+path}"})
    );
    assert_eq!(
        ctx.json(&["values", "add", "fruits", "apple", "pear", "--json"]),
        serde_json::json!({"table": "fruits", "action": "created", "changed": 2, "total": 2})
    );
    let csv = ctx.write("more.csv", "value,weight,context\nplum,1,\napple,0,\n");
    assert_eq!(
        ctx.json(&[
            "values",
            "import",
            "fruits",
            csv.to_str().expect("UTF-8"),
            "--json"
        ]),
        serde_json::json!({"table": "fruits", "action": "added", "changed": 1, "total": 3})
    );
    assert_eq!(
        ctx.json(&["values", "rm", "fruits", "plum", "--json"]),
        serde_json::json!({"table": "fruits", "action": "removed", "changed": 1, "total": 2})
    );
    for (args, kind, key) in [
        (vec!["prompt", "rm", "hi"], "prompt", "hi"),
        (
            vec!["resource", "rm", "shelf://t/doc.md"],
            "resource",
            "shelf://t/doc.md",
        ),
        (
            vec!["template", "rm", "shelf://t/{+path}"],
            "template",
            "shelf://t/{+path}",
        ),
    ] {
        let mut args = args;
        args.push("--json");
        assert_eq!(
            ctx.json(&args),
            serde_json::json!({"action": "removed", "kind": kind, "key": key})
        );
    }

    // An import with a failure: the JSON on stdout has it with its file and line, and the
    // exit status says it failed.
    ctx.write("notes/good.md", "# Good\n\nFine.\n");
    ctx.write(
        "notes/bad.prompt.md",
        "---\nname: bad\n---\n{% if x %}never closed\n",
    );
    let notes = ctx.path("notes");
    let notes = notes.to_str().expect("UTF-8 path");
    let output = ctx
        .command(&["import", notes, "--keep-going", "--json"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("import JSON");
    assert_eq!(report["collection"], "notes", "{report}");
    assert_eq!(
        (&report["added"], &report["failed"]),
        (&serde_json::json!(1), &serde_json::json!(1)),
        "{report}"
    );
    let failure = &report["failures"][0];
    assert!(
        failure["file"]
            .as_str()
            .is_some_and(|file| file.ends_with("bad.prompt.md")),
        "{report}"
    );
    assert!(
        failure["line"].as_u64().is_some() && failure["message"].is_string(),
        "{report}"
    );
    assert!(
        report["changes"].as_array().is_some_and(|changes| changes
            .iter()
            .any(|change| change["key"] == "shelf://notes/good.md" && change["action"] == "add")),
        "{report}"
    );

    let out = ctx.path("out");
    let exported = ctx.json(&["export", out.to_str().expect("UTF-8"), "--json"]);
    assert_eq!(exported["resources"], 1, "{exported}");
    assert!(
        exported["written"].as_u64().is_some_and(|n| n > 0),
        "{exported}"
    );
    assert!(exported["warnings"].is_array(), "{exported}");
}
