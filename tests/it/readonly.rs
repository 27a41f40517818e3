//! A library on a read-only mount or in a read-only file: `serve` and every command that only
//! reads answer as usual, and a command that would write fails with one sentence naming the
//! read-only folder or file. The mounts are real: `unshare` gives the binary a user and mount
//! namespace of its own, where the library's folder is bind-mounted read-only over itself; a
//! read-only file is read by an unprivileged user (`setpriv` when the tests run as root, who
//! may write any file).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use crate::common::{BIN, Server, TestContext, describe, library_args, ok_on};

const GUIDE: &str = "shelf://library/guides/api-design.md";

/// The folder the library lives in (bind-mounted read-only by the tests that want it), with
/// the library created from the seed and closed (no `-wal` or `-shm` beside it).
fn library(ctx: &TestContext) -> (PathBuf, PathBuf) {
    let dir = ctx.path("lib");
    std::fs::create_dir_all(&dir).expect("create the library folder");
    let db = dir.join("library.db");
    ok_on(&db, &["stats"]);
    // The last connection to close folds the -wal into the file and removes both.
    let conn = crate::common::open_library(&db);
    let _: i64 = conn
        .query_row("SELECT count(*) FROM prompts", [], |row| row.get(0))
        .expect("read");
    drop(conn);
    assert!(!wal(&db).exists(), "a closed library leaves no -wal");
    (dir, db)
}

fn wal(db: &Path) -> PathBuf {
    PathBuf::from(format!("{}-wal", db.display()))
}

fn shm(db: &Path) -> PathBuf {
    PathBuf::from(format!("{}-shm", db.display()))
}

/// `promptshelf --db DB ARGS` with `dir` bind-mounted read-only over itself, in a user and
/// mount namespace of its own (so no root is needed, and nothing outside sees the mount).
fn on_read_only_mount(dir: &Path, db: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("unshare");
    command
        .args([
            "--user",
            "--map-root-user",
            "--mount",
            "sh",
            "-c",
            r#"mount --bind -o ro "$0" "$0" || exit 97; exec "$@""#,
        ])
        .arg(dir)
        .arg(BIN);
    library_args(command, db, args)
}

/// `promptshelf --db DB ARGS` as a user without privileges: root may write a file whatever
/// its mode, so a test of a read-only file run as root runs the binary as `nobody`.
fn unprivileged(db: &Path, args: &[&str]) -> Command {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let command = if unsafe { libc::geteuid() } == 0 {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        command
    } else {
        Command::new(BIN)
    };
    library_args(command, db, args)
}

fn output_of(mut command: Command) -> Output {
    let output = command.output().unwrap_or_else(|err| {
        panic!(
            "cannot run {command:?} ({err}); these tests need unshare and setpriv (util-linux) \
             and user namespaces"
        )
    });
    if output.status.code() == Some(97) {
        panic!(
            "{}",
            describe(
                &[],
                &output,
                "the read-only bind mount failed (user namespaces off?)"
            )
        );
    }
    output
}

fn succeeds(command: Command, args: &[&str]) -> String {
    let output = output_of(command);
    assert!(
        output.status.success(),
        "{}",
        describe(args, &output, "expected success")
    );
    String::from_utf8(output.stdout).expect("stdout is UTF-8")
}

/// Runs a writing command and returns its one line of error.
fn refused(command: Command, args: &[&str]) -> String {
    let output = output_of(command);
    assert!(
        !output.status.success(),
        "{}",
        describe(args, &output, "expected failure")
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line of error for {args:?}:\n{stderr}");
    lines[0].to_string()
}

/// Every command that only reads, with what its output must hold.
fn read_only_commands(ctx: &TestContext) -> Vec<(Vec<String>, &'static str)> {
    let source = ctx.write("notes/hello.md", "# Hello\n\nA note.\n");
    let source = source.parent().expect("folder").display().to_string();
    let out = ctx.path("out").display().to_string();
    let commands: Vec<(Vec<&str>, &str)> = vec![
        (vec!["prompt", "list"], "code-review"),
        (vec!["prompt", "list", "--json"], "code-review"),
        (vec!["prompt", "show", "code-review"], "code"),
        (
            vec![
                "prompt",
                "render",
                "code-review",
                "--arg",
                "code=fn main() {}",
            ],
            "fn main() {}",
        ),
        (vec!["resource", "list"], GUIDE),
        (vec!["resource", "show", GUIDE], "text/markdown"),
        (vec!["resource", "cat", GUIDE], "API"),
        (vec!["template", "list"], "shelf://library/{+path}"),
        (vec!["values", "list"], "languages"),
        (vec!["values", "list", "languages"], "rust"),
        (vec!["stats"], "prompts"),
        (vec!["collection", "list"], "library"),
        (vec!["search", "review"], "prompt code-review"),
        (vec!["check"], ""),
        (vec!["export", &out], ""),
        (vec!["import", &source, "--dry-run"], "added 1"),
        (vec!["label", "list", "--json"], "[]"),
        (vec!["label", "history", "--json"], "[]"),
    ];
    commands
        .into_iter()
        .map(|(args, expect)| (args.into_iter().map(str::to_string).collect(), expect))
        .collect()
}

/// Commands that write, each of which must be refused.
fn writing_commands(ctx: &TestContext) -> Vec<Vec<String>> {
    let prompt = ctx.write("new.prompt.md", "Say hello to {{ name }}.\n");
    let source = ctx.write("more/hello.md", "# Hello\n");
    let source = source.parent().expect("folder").display().to_string();
    [
        vec!["prompt", "rm", "code-review"],
        vec!["prompt", "add", &prompt.display().to_string()],
        vec!["prompt", "mv", "code-review", "review"],
        vec!["collection", "rm", "library"],
        vec!["values", "add", "languages", "zig"],
        vec!["import", &source],
        vec!["label", "set", "production", "code-review"],
        vec!["label", "undo"],
    ]
    .into_iter()
    .map(|args| args.into_iter().map(str::to_string).collect())
    .collect()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn read_only_mount_is_read_by_every_read_only_command() {
    let ctx = TestContext::new();
    let (dir, db) = library(&ctx);
    // The mount really is read-only in there.
    let probe = output_of({
        let mut command = on_read_only_mount(&dir, &db, &[]);
        command.args(["--version"]);
        command
    });
    assert!(
        probe.status.success(),
        "{}",
        describe(&["--version"], &probe, "the wrapper")
    );
    for (args, expect) in read_only_commands(&ctx) {
        let args = strs(&args);
        let stdout = succeeds(on_read_only_mount(&dir, &db, &args), &args);
        assert!(stdout.contains(expect), "{args:?} printed:\n{stdout}");
    }
    assert!(
        !wal(&db).exists() && !shm(&db).exists(),
        "nothing written beside the file"
    );
}

#[test]
fn writes_on_a_read_only_mount_fail_naming_the_folder() {
    let ctx = TestContext::new();
    let (dir, db) = library(&ctx);
    let before = crate::common::snapshot(&db);
    for args in writing_commands(&ctx) {
        let args = strs(&args);
        let line = refused(on_read_only_mount(&dir, &db, &args), &args);
        assert!(
            line.contains(&dir.display().to_string()) && line.contains("read-only"),
            "{args:?}: {line}"
        );
        assert!(line.contains("--db"), "says what to do: {line}");
    }
    assert_eq!(crate::common::snapshot(&db), before);
}

#[test]
fn serve_answers_from_a_read_only_mount_and_says_once_that_changes_are_not_watched() {
    let ctx = TestContext::new();
    let (dir, db) = library(&ctx);
    let command = on_read_only_mount(&dir, &db, &["serve", "--poll-ms", "20"]);
    let mut server = Server::spawn(command, true);
    let listed = server.modern("prompts/list", json!({}));
    let names: Vec<&str> = listed["result"]["prompts"]
        .as_array()
        .unwrap_or_else(|| panic!("prompts/list answered {listed}"))
        .iter()
        .filter_map(|prompt| prompt["name"].as_str())
        .collect();
    assert!(names.contains(&"code-review"), "{names:?}");
    let read = server.modern("resources/read", json!({"uri": GUIDE}));
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("API")),
        "{read}"
    );
    let got = server.modern(
        "prompts/get",
        json!({"name": "code-review", "arguments": {"code": "fn main() {}"}}),
    );
    assert!(got["result"]["messages"].is_array(), "{got}");
    let (logs, code) = server.logs_at_exit();
    assert_eq!(logs.len(), 1, "one line, not one per poll: {logs:#?}");
    assert!(
        logs[0].contains(&db.display().to_string()) && logs[0].contains("not watched"),
        "{logs:#?}"
    );
    assert_eq!(code, Some(0));
}

/// Adds the prompt `in-wal` to `db` while a connection, returned, is held open: it keeps
/// the -wal and -shm the commit leaves (the last connection to close would fold them into
/// the file).
fn commit_kept_in_the_wal(ctx: &TestContext, db: &Path) -> rusqlite::Connection {
    let holder = crate::common::open_library(db);
    let _: i64 = holder
        .query_row("SELECT count(*) FROM prompts", [], |row| row.get(0))
        .expect("read");
    let prompt = ctx.write("in-wal.prompt.md", "Only in the WAL.\n");
    ok_on(db, &["prompt", "add", prompt.to_str().expect("UTF-8 path")]);
    holder
}

#[test]
fn a_read_only_mount_serves_what_the_wal_holds() {
    let ctx = TestContext::new();
    let (dir, db) = library(&ctx);
    let holder = commit_kept_in_the_wal(&ctx, &db);
    assert!(
        wal(&db).exists() && shm(&db).exists(),
        "the -wal and -shm are there"
    );
    let listed = succeeds(
        on_read_only_mount(&dir, &db, &["prompt", "list"]),
        &["prompt", "list"],
    );
    assert!(listed.contains("in-wal"), "{listed}");
    drop(holder);
}

#[test]
fn a_wal_without_its_shm_on_a_read_only_mount_is_refused_naming_both() {
    let ctx = TestContext::new();
    let (_, db) = library(&ctx);
    let holder = commit_kept_in_the_wal(&ctx, &db);
    // A copy of the file and its -wal alone, as a backup taken without SQLite might be.
    let copy_dir = ctx.path("copy");
    std::fs::create_dir_all(&copy_dir).expect("folder");
    let copy = copy_dir.join("library.db");
    std::fs::copy(&db, &copy).expect("copy");
    std::fs::copy(wal(&db), wal(&copy)).expect("copy the -wal");
    assert!(std::fs::metadata(wal(&copy)).expect("-wal").len() > 0);
    drop(holder);
    for args in [vec!["prompt", "list"], vec!["serve"]] {
        let line = refused(on_read_only_mount(&copy_dir, &copy, &args), &args);
        assert!(
            line.contains(&wal(&copy).display().to_string()) && line.contains("read-only"),
            "{args:?}: {line}"
        );
    }
}

/// The temporary folder opened to the unprivileged user, the library's folder writable by it
/// or not, the file read-only.
fn read_only_file(ctx: &TestContext, folder_mode: u32) -> (PathBuf, PathBuf) {
    let (dir, db) = library(ctx);
    let set = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .unwrap_or_else(|err| panic!("chmod {}: {err}", path.display()))
    };
    set(ctx.dir.path(), 0o755);
    set(&db, 0o444);
    set(&dir, folder_mode);
    (dir, db)
}

#[test]
fn a_read_only_file_is_read_and_writes_to_it_fail_naming_it() {
    let ctx = TestContext::new();
    let (dir, db) = read_only_file(&ctx, 0o777);
    let before = crate::common::snapshot(&db);
    for args in [vec!["prompt", "list"], vec!["stats"], vec!["check"]] {
        succeeds(unprivileged(&db, &args), &args);
    }
    let mut server = Server::spawn(unprivileged(&db, &["serve"]), false);
    let listed = server.modern("prompts/list", json!({}));
    assert!(listed["result"]["prompts"].is_array(), "{listed}");
    assert_eq!(server.close(), Some(0));
    for args in writing_commands(&ctx) {
        let args = strs(&args);
        let line = refused(unprivileged(&db, &args), &args);
        assert!(
            line.contains(&db.display().to_string()) && line.contains("read-only"),
            "{args:?}: {line}"
        );
        assert!(line.contains("--db"), "says what to do: {line}");
    }
    assert_eq!(crate::common::snapshot(&db), before);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn a_folder_without_write_permission_is_read_immutable_and_refuses_writes() {
    let ctx = TestContext::new();
    let (dir, db) = read_only_file(&ctx, 0o555);
    let stdout = succeeds(unprivileged(&db, &["prompt", "list"]), &["prompt", "list"]);
    assert!(stdout.contains("code-review"), "{stdout}");
    let mut server = Server::spawn(unprivileged(&db, &["serve"]), true);
    let read = server.modern("resources/read", json!({"uri": GUIDE}));
    assert!(read["result"]["contents"].is_array(), "{read}");
    let (logs, code) = server.logs_at_exit();
    assert!(
        logs.len() == 1 && logs[0].contains("not watched"),
        "{logs:#?}"
    );
    assert_eq!(code, Some(0));
    let args = ["values", "add", "languages", "zig"];
    let line = refused(unprivileged(&db, &args), &args);
    assert!(line.contains(&dir.display().to_string()), "{line}");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
