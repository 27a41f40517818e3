//! The served file replaced or deleted under a running server: a database renamed over the
//! path is served from then on, with one log line and the list changes a change would
//! announce; a deleted one keeps being served from the open file, with one log line.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{BIN, LEGACY, Server, TestContext, describe, looked_at, ok_on};

const GUIDE: &str = "shelf://library/guides/api-design.md";

fn serve(db: &Path) -> Server {
    Server::watched(db, &["--poll-ms", "20"])
}

fn prompt_names(server: &mut Server) -> Vec<String> {
    let listed = server.request("prompts/list", json!({}));
    listed["result"]["prompts"]
        .as_array()
        .unwrap_or_else(|| panic!("prompts/list answered {listed}"))
        .iter()
        .filter_map(|prompt| prompt["name"].as_str().map(str::to_string))
        .collect()
}

fn read_text(server: &mut Server, uri: &str) -> Value {
    server.request("resources/read", json!({"uri": uri}))
}

/// Warnings and errors of the log naming `db`.
fn about(logs: &[String], db: &Path) -> Vec<String> {
    let shown = db.display().to_string();
    logs.iter()
        .filter(|line| line.contains(&shown) && (line.contains("WARN") || line.contains("ERROR")))
        .cloned()
        .collect()
}

/// The log up to the first warning about `db` and `looks` more looks of the watcher after
/// it: as many chances to say it again.
fn said_and_looked(server: &mut Server, db: &Path, looks: usize) -> Vec<String> {
    let mut logs = server.logs_until("warning about the served file", |line| {
        !about(&[line.to_string()], db).is_empty()
    });
    for _ in 0..looks {
        logs.extend(server.logs_until("look of the watcher", |line| looked_at(line).is_some()));
    }
    logs
}

#[test]
fn a_database_renamed_over_the_served_one_is_served_from_then_on() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let mut server = serve(&ctx.db);
    server.initialize(LEGACY[0]);
    assert!(prompt_names(&mut server).contains(&"code-review".to_string()));
    assert!(read_text(&mut server, GUIDE)["result"]["contents"].is_array());
    // A second library, built beside it and closed.
    let new = ctx.path("new.db");
    let prompt = ctx.write("only-new.prompt.md", "Only in the new library.\n");
    ok_on(
        &new,
        &["prompt", "add", prompt.to_str().expect("UTF-8 path")],
    );
    ok_on(&new, &["prompt", "rm", "code-review", "--detach"]);
    ok_on(&new, &["resource", "rm", GUIDE, "--detach"]);
    assert!(
        !ctx.path("new.db-wal").exists(),
        "the new library is closed"
    );
    std::fs::rename(&new, &ctx.db).expect("rename over the served file");
    server.eventually(true, |server| {
        let names = prompt_names(server);
        names.contains(&"only-new".to_string()) && !names.contains(&"code-review".to_string())
    });
    let gone = read_text(&mut server, GUIDE);
    assert!(
        gone["error"].is_object(),
        "the new library has no {GUIDE}: {gone}"
    );
    let got = server.request("prompts/get", json!({"name": "only-new"}));
    assert!(got["result"]["messages"].is_array(), "{got}");
    let logs = said_and_looked(&mut server, &ctx.db, 10);
    // The watcher told the change before it looked again.
    let methods: Vec<String> = server
        .before_ping()
        .iter()
        .filter_map(|message| message["method"].as_str().map(str::to_string))
        .collect();
    for method in [
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    ] {
        assert!(
            methods.iter().any(|m| m == method),
            "{method} in {methods:?}"
        );
    }
    let lines = about(&logs, &ctx.db);
    assert_eq!(lines.len(), 1, "one line about the replacement: {logs:#?}");
    assert!(lines[0].contains("replaced"), "{lines:?}");
    assert_eq!(server.close(), Some(0));
}

#[test]
fn a_deleted_database_keeps_being_served_and_says_so_once() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let mut server = serve(&ctx.db);
    server.initialize(LEGACY[0]);
    assert!(prompt_names(&mut server).contains(&"code-review".to_string()));
    std::fs::remove_file(&ctx.db).expect("delete the served file");
    let logs = said_and_looked(&mut server, &ctx.db, 50);
    assert!(prompt_names(&mut server).contains(&"code-review".to_string()));
    let read = read_text(&mut server, GUIDE);
    assert!(read["result"]["contents"].is_array(), "{read}");
    let got = server.request(
        "prompts/get",
        json!({"name": "explain-code", "arguments": {"code": "x"}}),
    );
    assert!(got["result"]["messages"].is_array(), "{got}");
    let lines = about(&logs, &ctx.db);
    assert_eq!(lines.len(), 1, "one line about the deletion: {logs:#?}");
    assert!(
        lines[0].contains("deleted") && lines[0].contains("keeps serving"),
        "{lines:?}"
    );
    assert_eq!(server.close(), Some(0));
}

#[test]
fn a_file_renamed_over_one_written_while_served_is_not_taken_and_the_old_one_is_served() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let mut server = serve(&ctx.db);
    server.initialize(LEGACY[0]);
    assert!(prompt_names(&mut server).contains(&"code-review".to_string()));
    // A commit while the server holds the file stays in the -wal beside it.
    let prompt = ctx.write("while-served.prompt.md", "Added while served.\n");
    ctx.ok(&["prompt", "add", prompt.to_str().expect("UTF-8 path")]);
    server.eventually(true, |server| {
        prompt_names(server).contains(&"while-served".to_string())
    });
    let new = ctx.path("new.db");
    let output = Command::new(BIN)
        .arg("--db")
        .arg(&new)
        .args(["prompt", "rm", "code-review", "--detach"])
        .env_remove("PROMPTSHELF_DB")
        .output()
        .expect("run promptshelf");
    assert!(
        output.status.success(),
        "{}",
        describe(&[], &output, "prompt rm")
    );
    std::fs::rename(&new, &ctx.db).expect("rename over the served file");
    let logs = said_and_looked(&mut server, &ctx.db, 25);
    let names = prompt_names(&mut server);
    assert!(
        names.contains(&"while-served".to_string()) && names.contains(&"code-review".to_string()),
        "the old file is served: {names:?}"
    );
    let lines = about(&logs, &ctx.db);
    assert_eq!(lines.len(), 1, "one line about the replacement: {logs:#?}");
    assert!(
        lines[0].contains("not served") && lines[0].contains("keeps serving"),
        "{lines:?}"
    );
    assert_eq!(server.close(), Some(0));
}
