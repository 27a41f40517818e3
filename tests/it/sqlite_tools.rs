//! The library's file opened by the operator's own SQLite: the `sqlite3` command of the
//! distribution (Debian 12's is 3.40, the oldest SQLite of a supported distribution; `.ci/run`
//! installs it), running the checks and the checkpoint SECURITY.md gives operators, and a
//! write whose triggers stamp the change log and re-index a prompt's body; a write to a
//! resource, whose text is packed and read through the store's own SQL function, is refused
//! whole.

use std::process::Command;

use serde_json::json;

use crate::common::{TestContext, describe};

/// `sqlite3 DB SQL`'s standard output; the test fails, saying what it ran, when it fails.
fn sqlite3(ctx: &TestContext, sql: &str) -> String {
    let db = ctx.db.to_string_lossy().into_owned();
    let output = Command::new("sqlite3")
        .args([db.as_str(), sql])
        .output()
        .expect("run sqlite3 (apt-get install sqlite3; .ci/run installs it)");
    let args = ["sqlite3", db.as_str(), sql];
    assert!(
        output.status.success(),
        "{}",
        describe(&args, &output, "sqlite3")
    );
    assert!(
        output.stderr.is_empty(),
        "{}",
        describe(&args, &output, "sqlite3 without errors")
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_distributions_sqlite3_checks_checkpoints_and_writes_the_library() {
    let version = Command::new("sqlite3")
        .arg("--version")
        .output()
        .expect("run sqlite3 (apt-get install sqlite3; .ci/run installs it)");
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let ctx = TestContext::new();
    ctx.write("notes/howto.md", "# How to\n\nSteps for the quokka.\n");
    ctx.ok(&["import", ctx.path("notes").to_str().expect("a UTF-8 path")]);
    assert_eq!(
        sqlite3(
            &ctx,
            "PRAGMA integrity_check; PRAGMA wal_checkpoint(TRUNCATE);"
        ),
        "ok\n0|0|0\n",
        "with SQLite {version}"
    );
    // A write of the operator's own: the triggers it fires run on that SQLite too.
    let before: i64 = ctx.query("SELECT max(seq) FROM change_log");
    sqlite3(
        &ctx,
        "UPDATE prompt_messages SET body = body || ' wombat' WHERE position = 0 AND prompt_id =
             (SELECT id FROM prompts WHERE name = 'code-review');
         UPDATE prompts SET content_hash = randomblob(32) WHERE name = 'code-review';",
    );
    let (key, at): (String, i64) = ctx
        .open_db()
        .query_row(
            "SELECT key, at FROM change_log WHERE seq > ?1",
            [before],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("the change log has the write");
    assert_eq!(key, "code-review");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_millis() as i64;
    assert!((now - at).abs() < 60_000, "stamped {at}, now {now}");
    let hits = ctx.json(&["search", "wombat", "--json"]);
    assert_eq!(hits[0]["key"], "code-review", "{hits}");
    assert_eq!(sqlite3(&ctx, "PRAGMA integrity_check;"), "ok\n");
    // A resource's search row is its unpacked text, which only the store can read: that
    // SQLite refuses the write, naming the function, and the library is as it was.
    let before = crate::common::snapshot(&ctx.db);
    let db = ctx.db.to_string_lossy().into_owned();
    let rename = "UPDATE resources SET title = 'Wombats' WHERE uri = 'shelf://notes/howto.md';";
    let args = ["sqlite3", db.as_str(), rename];
    let output = Command::new("sqlite3")
        .args(&args[1..])
        .output()
        .expect("run sqlite3");
    assert!(
        !output.status.success()
            && String::from_utf8_lossy(&output.stderr).contains("no such function: unpacked"),
        "{}",
        describe(&args, &output, "a refusal naming unpacked")
    );
    assert_eq!(crate::common::snapshot(&ctx.db), before);
    // And the file still serves.
    let mut server = ctx.server();
    let read = server.modern(
        "prompts/get",
        json!({"name": "code-review", "arguments": {"code": "x"}}),
    );
    assert!(read["result"]["messages"].is_array(), "{read}");
}
