//! Provenance: every prompt and resource served says where it comes from under
//! `_meta["promptshelf/provenance"]` (collection, version, content hash, file, commit), in
//! each list entry and result, and `prompt show` / `resource show` say the same; the official
//! MCP Python SDK reads it too. The folders imported are real git repositories, made and
//! committed to by `git` itself.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{LEGACY, Server, TestContext, downgrades_to, run_bounded};

const KEY: &str = "promptshelf/provenance";

/// Runs `git ARGS` in `dir` as a committer of its own, whatever the machine's configuration
/// says; returns its stdout, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Provenance Test",
            "-c",
            "user.email=provenance@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git (it must be installed for these tests)");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Commits everything in `dir` and returns the new commit's id.
fn commit_all(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
    git(dir, &["rev-parse", "HEAD"])
}

/// A folder `team` holding a prompt and a document, made a git repository with one commit;
/// returns the folder and the commit.
fn team_repository(ctx: &TestContext) -> (std::path::PathBuf, String) {
    ctx.write(
        "team/prompts/greet.prompt.md",
        "---\ndescription: Greets the team\n---\nSay hello to the team.\n",
    );
    ctx.write("team/guide.md", "# Guide\n\nHow the team works.\n");
    let dir = ctx.path("team");
    git(&dir, &["init", "-q"]);
    let commit = commit_all(&dir, "the first prompt and guide");
    (dir, commit)
}

/// What the history and the item's row hold, read from the database itself: the item's
/// newest version and its content hash (hex).
fn stored(ctx: &TestContext, kind: &str, key: &str) -> (i64, String) {
    let (table, column) = match kind {
        "prompt" => ("prompts", "name"),
        "template" => ("resource_templates", "uri_template"),
        _ => ("resources", "uri"),
    };
    let conn = ctx.open_db();
    let version = conn
        .query_row(
            "SELECT max(id) FROM versions WHERE kind = ?1 AND key = ?2",
            [kind, key],
            |row| row.get(0),
        )
        .expect("the item's versions");
    let hash: String = conn
        .query_row(
            &format!("SELECT lower(hex(content_hash)) FROM {table} WHERE {column} = ?1"),
            [key],
            |row| row.get(0),
        )
        .expect("the item's hash");
    (version, hash)
}

/// The provenance an imported item should be served with.
fn imported(version: i64, hash: &str, file: &str, commit: &str) -> Value {
    json!({
        "collection": "team",
        "version": version,
        "contentHash": hash,
        "file": file,
        "commit": commit,
    })
}

fn entry<'a>(list: &'a Value, field: &str, key: &str, value: &str) -> &'a Value {
    list["result"][field]
        .as_array()
        .and_then(|items| items.iter().find(|item| item[key] == value))
        .unwrap_or_else(|| panic!("no {key} {value} in {list}"))
}

/// The provenance a `prompts/get` of `name` is served with.
fn served_prompt(server: &mut Server, name: &str) -> Value {
    let got = server.request("prompts/get", json!({"name": name}));
    got["result"]["_meta"][KEY].clone()
}

#[test]
fn an_imported_git_folder_is_served_with_its_provenance_in_every_list_and_result() {
    let ctx = TestContext::new();
    let (dir, commit) = team_repository(&ctx);
    ctx.ok(&["import", &dir.display().to_string()]);
    let (version, hash) = stored(&ctx, "prompt", "greet");
    let prompt = imported(version, &hash, "prompts/greet.prompt.md", &commit);
    let uri = "shelf://team/guide.md";
    let (version, hash) = stored(&ctx, "resource", uri);
    let document = imported(version, &hash, "guide.md", &commit);
    assert_ne!(prompt["version"], document["version"]);

    let mut server = ctx.server();
    server.initialize(LEGACY[0]);
    let listed = server.request("prompts/list", json!({}));
    assert_eq!(
        entry(&listed, "prompts", "name", "greet")["_meta"][KEY],
        prompt
    );
    assert_eq!(served_prompt(&mut server, "greet"), prompt);
    let listed = server.request("resources/list", json!({}));
    assert_eq!(
        entry(&listed, "resources", "uri", uri)["_meta"][KEY],
        document
    );
    let read = server.request("resources/read", json!({"uri": uri}));
    assert_eq!(read["result"]["contents"][0]["_meta"][KEY], document);
    // The collection's template has no file: its collection, version and hash.
    let template = "shelf://team/{+path}";
    let listed = server.request("resources/templates/list", json!({}));
    let (version, hash) = stored(&ctx, "template", template);
    assert_eq!(
        entry(&listed, "resourceTemplates", "uriTemplate", template)["_meta"][KEY],
        json!({"collection": "team", "version": version, "contentHash": hash})
    );
    // The stateless revision serves the same.
    let got = server.modern("prompts/get", json!({"name": "greet"}));
    assert_eq!(got["result"]["_meta"][KEY], prompt);
    assert_eq!(server.close(), Some(0));

    let shown = ctx.json(&["prompt", "show", "greet", "--json"]);
    assert_eq!(shown["provenance"], prompt);
    let shown = ctx.json(&["resource", "show", uri, "--json"]);
    assert_eq!(shown["provenance"], document);
    let text = ctx.ok(&["prompt", "show", "greet"]);
    assert!(text.contains(&format!("commit:      {commit}\n")), "{text}");
    assert!(
        text.contains(&format!("version:     {}\n", prompt["version"])),
        "{text}"
    );
}

#[test]
fn an_item_added_by_hand_has_a_version_and_hash_but_no_collection_file_or_commit() {
    let ctx = TestContext::new();
    let file = ctx.write("mine.prompt.md", "Say something kind.\n");
    ctx.ok(&["prompt", "add", &file.display().to_string()]);
    let (version, hash) = stored(&ctx, "prompt", "mine");
    let expected = json!({"version": version, "contentHash": hash});
    let mut server = ctx.server();
    server.initialize(LEGACY[0]);
    let listed = server.request("prompts/list", json!({}));
    assert_eq!(
        entry(&listed, "prompts", "name", "mine")["_meta"][KEY],
        expected
    );
    assert_eq!(served_prompt(&mut server, "mine"), expected);
    assert_eq!(server.close(), Some(0));
    assert_eq!(
        ctx.json(&["prompt", "show", "mine", "--json"])["provenance"],
        expected
    );
    let text = ctx.ok(&["prompt", "show", "mine"]);
    assert!(!text.contains("commit:"), "{text}");
}

#[test]
fn a_folder_outside_git_is_served_with_its_files_and_no_commit() {
    let ctx = TestContext::new();
    ctx.write("notes/hello.prompt.md", "Say hello.\n");
    ctx.ok(&["import", &ctx.path("notes").display().to_string()]);
    let (version, hash) = stored(&ctx, "prompt", "hello");
    let mut server = ctx.server();
    server.initialize(LEGACY[0]);
    assert_eq!(
        served_prompt(&mut server, "hello"),
        json!({
            "collection": "notes",
            "version": version,
            "contentHash": hash,
            "file": "hello.prompt.md",
        })
    );
    assert_eq!(server.close(), Some(0));
}

#[test]
fn an_edit_committed_and_imported_moves_the_version_hash_and_commit_a_running_server_serves() {
    let ctx = TestContext::new();
    let (dir, first) = team_repository(&ctx);
    let folder = dir.display().to_string();
    ctx.ok(&["import", &folder]);
    let mut server = ctx.server();
    server.initialize(LEGACY[0]);
    let before = served_prompt(&mut server, "greet");
    assert_eq!(before["commit"], first.as_str());
    // Listed once, so that the list is kept and must be told of the change.
    server.request("prompts/list", json!({}));

    ctx.write(
        "team/prompts/greet.prompt.md",
        "---\ndescription: Greets the team\n---\nSay hello to the whole team.\n",
    );
    let second = commit_all(&dir, "a warmer greeting");
    ctx.ok(&["import", &folder]);
    let (version, hash) = stored(&ctx, "prompt", "greet");
    assert!(version > before["version"].as_i64().unwrap_or(i64::MAX));
    assert_ne!(Value::from(hash.as_str()), before["contentHash"]);
    let edited = imported(version, &hash, "prompts/greet.prompt.md", &second);
    server.eventually(edited.clone(), |server| served_prompt(server, "greet"));
    let listed = server.request("prompts/list", json!({}));
    assert_eq!(
        entry(&listed, "prompts", "name", "greet")["_meta"][KEY],
        edited
    );

    // The same prompt moved to another file: the same version and hash, from its new file
    // at the commit that moved it.
    std::fs::create_dir_all(dir.join("team-prompts")).expect("a folder");
    git(
        &dir,
        &[
            "mv",
            "prompts/greet.prompt.md",
            "team-prompts/greet.prompt.md",
        ],
    );
    let third = commit_all(&dir, "prompts move");
    ctx.ok(&["import", &folder]);
    let moved = imported(version, &hash, "team-prompts/greet.prompt.md", &third);
    server.eventually(moved.clone(), |server| served_prompt(server, "greet"));
    let listed = server.request("prompts/list", json!({}));
    assert_eq!(
        entry(&listed, "prompts", "name", "greet")["_meta"][KEY],
        moved
    );
    assert_eq!(server.close(), Some(0));
}

#[test]
fn a_library_from_before_provenance_serves_the_versions_its_history_holds() {
    let ctx = TestContext::new();
    let (dir, _) = team_repository(&ctx);
    ctx.ok(&["import", &dir.display().to_string()]);
    let (version, hash) = stored(&ctx, "prompt", "greet");
    let conn = ctx.open_db();
    for step in downgrades_to(10) {
        conn.execute_batch(step).expect("back to version 10");
    }
    drop(conn);
    ctx.ok(&["stats"]);
    let mut server = ctx.server();
    server.initialize(LEGACY[0]);
    // Its commit was not known before: the file, version and hash are.
    assert_eq!(
        served_prompt(&mut server, "greet"),
        json!({
            "collection": "team",
            "version": version,
            "contentHash": hash,
            "file": "prompts/greet.prompt.md",
        })
    );
    assert_eq!(server.close(), Some(0));
}

/// The official MCP Python SDK reads the provenance of a prompt and a document, in both eras,
/// through its own result types (`tests/interop/python_client.py --provenance`).
#[test]
fn the_official_python_sdk_reads_the_provenance_of_a_prompt_and_a_resource() {
    let python = crate::interop::interop_python();
    let ctx = TestContext::new();
    let (dir, commit) = team_repository(&ctx);
    ctx.ok(&["import", &dir.display().to_string()]);
    let uri = "shelf://team/guide.md";
    let (version, hash) = stored(&ctx, "prompt", "greet");
    let prompt = imported(version, &hash, "prompts/greet.prompt.md", &commit);
    let (version, hash) = stored(&ctx, "resource", uri);
    let document = imported(version, &hash, "guide.md", &commit);

    let mut command = crate::interop::python_client(&python, &ctx.db);
    command.args(["--provenance", "greet", uri]);
    let (status, stdout, stderr) = run_bounded(
        command,
        &ctx,
        "provenance-interop",
        crate::interop::SCRIPT_TIMEOUT,
    );
    let shown = format!("status: {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert!(status.success(), "{shown}");
    assert!(
        stdout
            .lines()
            .any(|line| line == "interop: 4 passed, 0 failed"),
        "{shown}"
    );
    for era in ["[legacy]", "[modern]"] {
        for (method, expected) in [("prompts/get", &prompt), ("resources/read", &document)] {
            let prefix = format!("provenance {era} {method} ");
            let read: Value = stdout
                .lines()
                .find_map(|line| line.strip_prefix(&prefix))
                .and_then(|text| serde_json::from_str(text).ok())
                .unwrap_or_else(|| panic!("no '{prefix}' line\n{shown}"));
            assert_eq!(&read, expected, "{era} {method}");
        }
    }
}

/// HEAD is followed wherever git keeps it: a branch packed into `packed-refs`, and a linked
/// worktree's own HEAD on a branch of the common repository.
#[test]
fn a_packed_branch_and_a_linked_worktree_give_the_commit_their_head_names() {
    let ctx = TestContext::new();
    let (dir, first) = team_repository(&ctx);
    git(&dir, &["pack-refs", "--all"]);
    let linked = ctx.path("linked");
    git(
        &dir,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "draft",
            &linked.display().to_string(),
        ],
    );
    std::fs::write(linked.join("guide.md"), "# Guide\n\nA draft.\n").expect("write");
    let second = commit_all(&linked, "a draft of the guide");
    assert_ne!(first, second);
    ctx.ok(&["import", &dir.display().to_string()]);
    ctx.ok(&["import", &linked.display().to_string()]);
    for (uri, commit) in [
        ("shelf://team/guide.md", &first),
        ("shelf://linked/guide.md", &second),
    ] {
        let shown = ctx.json(&["resource", "show", uri, "--json"]);
        assert_eq!(shown["provenance"]["commit"], commit.as_str(), "{uri}");
    }
}
