//! What a command says when SQLite refuses: one line naming the file, the problem once and
//! what to do, for a locked database, a full disk, a file that is not a database and a
//! newer schema. The full disk is real: a tiny tmpfs mounted in a user and mount namespace
//! of the test's own.

use std::process::{Command, Stdio};

use crate::common::{BIN, TestContext};

/// Stderr of a command that must fail with status 1 and say exactly one line.
fn one_line_failure(output: std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    stderr
}

#[test]
fn a_database_locked_by_another_program_is_said_once_with_the_way_out() {
    let ctx = TestContext::new();
    ctx.ok(&["init"]);
    let holder = ctx.open_db();
    holder
        .execute_batch("BEGIN EXCLUSIVE")
        .expect("take the write lock");
    // The busy timeout shortened, as a build with debug assertions lets a test do.
    let started = std::time::Instant::now();
    let stderr = one_line_failure(
        ctx.command(&["prompt", "rm", "code-review", "--detach"])
            .env("PROMPTSHELF_BUSY_MS", "300")
            .output()
            .expect("run"),
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(300),
        "it waited for the lock"
    );
    assert_eq!(
        stderr.trim(),
        format!(
            "promptshelf: {}: the database is locked by another program writing to it (waited 0.3 s); try again when it is done, or close it",
            ctx.db.display()
        )
    );
    assert_eq!(stderr.matches("locked").count(), 1, "{stderr}");
    holder.execute_batch("ROLLBACK").expect("release");
    // Nothing was lost: the prompt is still there, and now it can go.
    ctx.ok(&["prompt", "rm", "code-review", "--detach"]);
}

#[test]
fn a_full_disk_is_a_full_disk_and_nothing_is_half_written() {
    let ctx = TestContext::new();
    let small = ctx.path("small");
    std::fs::create_dir(&small).expect("mount point");
    // 680 KB of words no two alike (a pseudo-random sequence), which neither packing nor the
    // search index makes small.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut text = String::with_capacity(690_000);
    while text.len() < 680_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push_str(&format!("{state:016x}\n"));
    }
    let big = ctx.write("big.txt", text);
    // In the namespace: a 400 KiB tmpfs over `small`, an empty library there, then a
    // 680 KB resource that cannot fit; then the library is listed to show it intact.
    let script = r#"mount -t tmpfs -o size=400k tmpfs "$0" || exit 97
"$1" --db "$0/lib.db" init --empty >/dev/null || exit 98
"$1" --db "$0/lib.db" resource add "$2" --uri shelf://local/big.txt
echo "status $?" >&2
"$1" --db "$0/lib.db" stats --json"#;
    let output = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script])
        .arg(&small)
        .arg(BIN)
        .arg(&big)
        .env_remove("PROMPTSHELF_DB")
        .stdin(Stdio::null())
        .output()
        .expect("run unshare");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{output:?}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "promptshelf: {}/lib.db: the disk holding the database is full, so nothing was written; free some space and try again",
                small.display()
            )
            .as_str(),
            "status 1"
        ],
        "{stderr}"
    );
    let stats: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("stats JSON after the failure");
    assert_eq!(stats["resources"], 0, "{stats}");
}

#[test]
fn a_file_that_is_not_a_database_and_a_newer_schema_say_what_they_are() {
    let ctx = TestContext::new();
    std::fs::write(
        &ctx.db,
        "not a database, just some text that is long enough\n".repeat(100),
    )
    .expect("write");
    let stderr = one_line_failure(ctx.command(&["stats"]).output().expect("run"));
    assert_eq!(
        stderr.trim(),
        format!(
            "promptshelf: {} is not a promptshelf database (it is not an SQLite file); point --db at another file",
            ctx.db.display()
        )
    );

    let newer = TestContext::new();
    newer.ok(&["init", "--empty"]);
    newer
        .open_db()
        .execute_batch("PRAGMA user_version = 99")
        .expect("set a newer version");
    let stderr = one_line_failure(newer.command(&["prompt", "list"]).output().expect("run"));
    assert!(
        stderr.contains("has schema version 99, newer than this promptshelf supports")
            && stderr.contains("upgrade promptshelf"),
        "{stderr}"
    );
}
