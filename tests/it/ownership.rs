//! Who owns an item: a collection's prompts and resources are changed through their files,
//! and `--detach` makes one an item added by hand that imports of the collection leave alone.

use std::path::PathBuf;

use crate::common::TestContext;

/// A collection `team` with a prompt `greet` and a document `guide.md`.
fn team(ctx: &TestContext) -> PathBuf {
    ctx.write("team/greet.prompt.md", "Say hello to the team.");
    ctx.write("team/guide.md", "# Guide\n\nThe team's guide.\n");
    ctx.ok(&["init", "--empty"]);
    let dir = ctx.path("team");
    ctx.ok(&["import", dir.to_str().expect("UTF-8")]);
    dir.canonicalize().expect("team")
}

fn body(ctx: &TestContext, name: &str) -> String {
    ctx.json(&["prompt", "show", name, "--json"])["messages"][0]["body"]
        .as_str()
        .expect("a body")
        .to_string()
}

fn text(ctx: &TestContext, uri: &str) -> String {
    ctx.ok(&["resource", "cat", uri])
}

fn collection_of(ctx: &TestContext, sql: &str) -> Option<String> {
    ctx.query::<Option<String>>(sql)
}

#[test]
fn prompt_add_over_a_collections_prompt_is_refused_naming_the_owner_and_the_ways_out() {
    let ctx = TestContext::new();
    let dir = team(&ctx);
    let mine = ctx.write("mine/greet.prompt.md", "Say hello to me.");
    let error = ctx.fails(&["prompt", "add", mine.to_str().expect("UTF-8")]);
    assert!(
        error.contains("prompt 'greet' belongs to the collection 'team'"),
        "{error}"
    );
    assert!(
        error.contains(&dir.join("greet.prompt.md").display().to_string()),
        "{error}"
    );
    assert!(error.contains("prompt edit greet"), "{error}");
    assert!(error.contains("--detach"), "{error}");
    assert_eq!(body(&ctx, "greet"), "Say hello to the team.");
}

#[test]
fn a_detached_prompt_stays_through_imports_of_its_collection() {
    let ctx = TestContext::new();
    let dir = team(&ctx);
    let mine = ctx.write("mine/greet.prompt.md", "Say hello to me.");
    let added = ctx.ok(&["prompt", "add", mine.to_str().expect("UTF-8"), "--detach"]);
    assert_eq!(
        added,
        "updated prompt greet, detached from the collection team\n"
    );
    assert_eq!(body(&ctx, "greet"), "Say hello to me.");
    assert_eq!(
        collection_of(&ctx, "SELECT collection FROM prompts WHERE name = 'greet'"),
        None
    );
    // The file is still in the folder: the import skips it and says why; --prune leaves the
    // detached prompt alone too.
    let dir_arg = dir.to_str().expect("UTF-8");
    let output = ctx.run(&["import", dir_arg, "--prune"]);
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains(
            "collection team: added 0, updated 0, unchanged 1, removed 0, failed 0, skipped 1"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("greet.prompt.md: prompt greet was detached from the collection"),
        "{stderr}"
    );
    assert_eq!(body(&ctx, "greet"), "Say hello to me.");
    // Removing the hand-added prompt gives the name back to the collection.
    assert_eq!(
        ctx.ok(&["prompt", "rm", "greet"]),
        "removed prompt greet; the next import of the collection team takes it from its file \
         again\n"
    );
    ctx.ok(&["import", dir_arg]);
    assert_eq!(body(&ctx, "greet"), "Say hello to the team.");
    assert_eq!(
        collection_of(&ctx, "SELECT collection FROM prompts WHERE name = 'greet'").as_deref(),
        Some("team")
    );
}

#[test]
fn prompt_rm_of_a_collections_prompt_needs_detach_and_the_import_does_not_bring_it_back() {
    let ctx = TestContext::new();
    let dir = team(&ctx);
    let error = ctx.fails(&["prompt", "rm", "greet"]);
    assert!(
        error.contains("prompt 'greet' belongs to the collection 'team'"),
        "{error}"
    );
    assert!(error.contains("--prune"), "{error}");
    assert!(error.contains("--detach"), "{error}");
    assert_eq!(body(&ctx, "greet"), "Say hello to the team.");
    assert_eq!(
        ctx.ok(&["prompt", "rm", "greet", "--detach"]),
        "removed prompt greet\n"
    );
    let dir_arg = dir.to_str().expect("UTF-8");
    let stdout = ctx.ok(&["import", dir_arg]);
    assert!(stdout.contains("added 0"), "{stdout}");
    ctx.fails(&["prompt", "show", "greet"]);
    // `prompt rm` of the name lifts the detachment: the file counts again.
    assert_eq!(
        ctx.ok(&["prompt", "rm", "greet"]),
        "prompt greet is no longer detached; the next import of the collection team takes it \
         from its file again\n"
    );
    ctx.ok(&["import", dir_arg]);
    assert_eq!(body(&ctx, "greet"), "Say hello to the team.");
}

#[test]
fn resource_add_and_rm_of_a_collections_uri_are_refused_without_detach() {
    let ctx = TestContext::new();
    let dir = team(&ctx);
    let dir_arg = dir.to_str().expect("UTF-8");
    let mine = ctx.write("mine/guide.md", "# Mine\n");
    let mine_arg = mine.to_str().expect("UTF-8");
    let uri = "shelf://team/guide.md";
    let error = ctx.fails(&["resource", "add", mine_arg, "--uri", uri]);
    assert!(
        error.contains("resource shelf://team/guide.md belongs to the collection 'team'"),
        "{error}"
    );
    assert!(error.contains("--detach"), "{error}");
    let error = ctx.fails(&["resource", "rm", uri]);
    assert!(
        error.contains("belongs to the collection 'team'"),
        "{error}"
    );
    assert_eq!(text(&ctx, uri), "# Guide\n\nThe team's guide.\n");

    ctx.ok(&["resource", "add", mine_arg, "--uri", uri, "--detach"]);
    ctx.ok(&["import", dir_arg, "--prune"]);
    assert_eq!(text(&ctx, uri), "# Mine\n");
    assert_eq!(
        collection_of(
            &ctx,
            "SELECT collection FROM resources WHERE uri = 'shelf://team/guide.md'"
        ),
        None
    );

    // Removed with --detach: gone, and the next import does not bring it back.
    ctx.ok(&["resource", "rm", uri]);
    ctx.ok(&["import", dir_arg]);
    assert_eq!(text(&ctx, uri), "# Guide\n\nThe team's guide.\n");
    ctx.ok(&["resource", "rm", uri, "--detach"]);
    ctx.ok(&["import", dir_arg]);
    ctx.fails(&["resource", "show", uri]);
}
