//! `token add|list|rm`: a token printed once and stored only as a keyed hash, the
//! collections it sees checked against the library's, expiry durations, and `--json`.

use crate::common::TestContext;

/// A library with the collections `alpha` and `beta` (imported folders) on top of the seed.
fn with_collections() -> TestContext {
    let ctx = TestContext::new();
    for name in ["alpha", "beta"] {
        let folder = ctx.path(name);
        ctx.write(
            &format!("{name}/notes.md"),
            format!("# {name} notes\n\nText.\n"),
        );
        ctx.ok(&["import", folder.to_str().expect("UTF-8 path")]);
    }
    ctx
}

/// The token in what `token add` printed: its one word starting with `psk_`.
fn token_in(said: &str) -> String {
    let tokens: Vec<&str> = said
        .split_whitespace()
        .filter(|word| word.starts_with("psk_"))
        .collect();
    assert_eq!(tokens.len(), 1, "one token, printed once: {said}");
    tokens[0].to_string()
}

#[test]
fn add_prints_the_token_once_and_nothing_else_shows_it() {
    let ctx = with_collections();
    let said = ctx.ok(&["token", "add", "laptop"]);
    let token = token_in(&said);
    assert_eq!(token.len(), "psk_".len() + 43, "{token}");
    assert!(
        said.contains("shown only now") && said.contains("Authorization: Bearer"),
        "{said}"
    );
    let listed = ctx.ok(&["token", "list"]);
    assert!(
        listed.contains("laptop") && listed.contains("all"),
        "{listed}"
    );
    assert!(
        !listed.contains(&token) && !listed.contains("psk_"),
        "{listed}"
    );
    let json = ctx.ok(&["token", "list", "--json"]);
    assert!(!json.contains(&token), "{json}");

    // The file holds a 32-byte hash that is neither the token nor its plain digest.
    let conn = ctx.open_db();
    let (hash, collections): (Vec<u8>, Option<String>) = conn
        .query_row("SELECT hash, collections FROM tokens", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .expect("one token row");
    assert_eq!(hash.len(), 32);
    assert_eq!(collections, None);
    let file = std::fs::read(&ctx.db).expect("read the database");
    assert!(
        !file
            .windows(token.len())
            .any(|window| window == token.as_bytes()),
        "the token's text is nowhere in the file"
    );
    let suffix = token.trim_start_matches("psk_");
    assert!(
        !file
            .windows(suffix.len())
            .any(|window| window == suffix.as_bytes())
    );
}

#[test]
fn a_token_sees_the_collections_it_names_and_unknown_ones_are_refused() {
    let ctx = with_collections();
    let added = ctx.json(&[
        "token",
        "add",
        "ci",
        "--collections",
        "beta,alpha,beta",
        "--json",
    ]);
    let token = added["token"].as_str().expect("the token").to_string();
    assert!(token.starts_with("psk_"), "{added}");
    assert_eq!(added["name"], "ci");
    assert_eq!(added["collections"], serde_json::json!(["alpha", "beta"]));
    assert_eq!(added["expiresAt"], serde_json::Value::Null);
    assert_eq!(added["expired"], false);
    assert!(
        added["createdAt"]
            .as_str()
            .is_some_and(|at| at.ends_with('Z'))
    );
    let stored: String = ctx.query("SELECT collections FROM tokens WHERE name = 'ci'");
    assert_eq!(stored, r#"["alpha","beta"]"#);

    let err = ctx.fails(&["token", "add", "other", "--collections", "alpha,gamma"]);
    assert!(err.contains("no collection 'gamma'"), "{err}");
    assert!(
        err.contains("alpha") && err.contains("beta") && err.contains("library"),
        "the error lists the library's collections: {err}"
    );
    let err = ctx.fails(&["token", "add", "other", "--collections", ","]);
    assert!(err.contains("--collections names no collection"), "{err}");
    // Nothing was written by the refusals.
    let count: i64 = ctx.query("SELECT count(*) FROM tokens");
    assert_eq!(count, 1);
    let listed = ctx.ok(&["token", "list"]);
    assert!(listed.contains("alpha,beta"), "{listed}");
}

#[test]
fn a_second_token_of_the_same_name_is_refused() {
    let ctx = TestContext::new();
    let first = token_in(&ctx.ok(&["token", "add", "ci"]));
    let err = ctx.fails(&["token", "add", "ci"]);
    assert!(
        err.contains("a token named 'ci' already exists") && err.contains("token rm ci"),
        "{err}"
    );
    let hash: Vec<u8> = ctx.query("SELECT hash FROM tokens");
    assert_eq!(hash.len(), 32);
    let count: i64 = ctx.query("SELECT count(*) FROM tokens");
    assert_eq!(count, 1, "the first token ({first}) is kept as it was");
}

#[test]
fn expiry_takes_friendly_durations_and_refuses_others_saying_what_works() {
    let ctx = TestContext::new();
    let added = ctx.json(&["token", "add", "short", "--expires", "90m", "--json"]);
    let created = added["createdAt"]
        .as_str()
        .and_then(|at| at.parse::<jiff::Timestamp>().ok())
        .expect("createdAt is a timestamp");
    let expires = added["expiresAt"]
        .as_str()
        .and_then(|at| at.parse::<jiff::Timestamp>().ok())
        .expect("expiresAt is a timestamp");
    assert_eq!(
        expires.as_millisecond() - created.as_millisecond(),
        90 * 60_000
    );
    let (created_ms, expires_ms): (i64, i64) = ctx
        .open_db()
        .query_row(
            "SELECT created_at, expires_at FROM tokens WHERE name = 'short'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("the row");
    assert_eq!(expires_ms - created_ms, 90 * 60_000);
    ctx.ok(&["token", "add", "month", "--expires", "30d"]);
    ctx.ok(&["token", "add", "day", "--expires", "12h"]);
    for bad in ["soon", "3mo", "-2d", "0m"] {
        let flag = format!("--expires={bad}");
        let err = ctx.fails(&["token", "add", "bad", &flag]);
        assert!(
            err.contains(&format!("--expires '{bad}'")) && err.contains("30d, 12h, 90m"),
            "{bad}: {err}"
        );
    }
    let count: i64 = ctx.query("SELECT count(*) FROM tokens");
    assert_eq!(count, 3);

    // A token past its expiry is listed as expired.
    ctx.open_db()
        .execute("UPDATE tokens SET expires_at = 1 WHERE name = 'short'", [])
        .expect("expire it");
    let listed = ctx.json(&["token", "list", "--json"]);
    let short = listed
        .as_array()
        .and_then(|grants| grants.iter().find(|grant| grant["name"] == "short"))
        .expect("listed");
    assert_eq!(short["expired"], true);
    assert!(ctx.ok(&["token", "list"]).contains("(expired)"));
}

#[test]
fn rm_removes_a_token_and_an_unknown_name_is_an_error_listing_the_others() {
    let ctx = TestContext::new();
    ctx.ok(&["token", "add", "one"]);
    ctx.ok(&["token", "add", "two"]);
    let removed = ctx.json(&["token", "rm", "one", "--json"]);
    assert_eq!(
        removed,
        serde_json::json!({"action": "removed", "name": "one"})
    );
    let err = ctx.fails(&["token", "rm", "one"]);
    assert!(
        err.contains("unknown token 'one'") && err.contains("two"),
        "{err}"
    );
    let said = ctx.ok(&["token", "rm", "two"]);
    assert!(said.starts_with("removed token two"), "{said}");
    let listed = ctx.json(&["token", "list", "--json"]);
    assert_eq!(listed, serde_json::json!([]));
}
