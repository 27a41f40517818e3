//! Tests of what a caller limited to some collections is answered and told, through the one
//! answer path (`answer::answer`) and the session's notifications, on a real library file
//! holding the seed's collection and two imported ones, `alpha` and `beta`.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::answer;
use super::session::Session;
use super::state::{Library, Shared};
use super::stdio::{self, Output};
use super::watch::Changes;
use crate::config::{Mirror, Mirrors, ServeConfig};
use crate::protocol::{Envelope, Incoming, Method, Revision, parse_line};
use crate::store::read::Change;
use crate::store::tokens::{self, Presented};
use crate::store::{self, Store};
use crate::visibility::Visibility;

/// What only `beta` holds: none of it may reach a caller limited to `alpha`, except the
/// one document an `alpha` prompt embeds.
const BETA_ONLY: [&str; 4] = [
    "beta-plan",
    "shelf://beta/other.md",
    "Beta's unlinked notes",
    "zebra-plans",
];

struct Fixture {
    _folder: tempfile::TempDir,
    shared: Shared,
    /// Where a session's acknowledgements and notifications go.
    output: Arc<Output>,
    path: std::path::PathBuf,
}

fn write(dir: &Path, relative: &str, text: &str) {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("create the folder");
    std::fs::write(path, text).expect("write the file");
}

/// The library: the seed, then `beta` (two documents and a prompt), then `alpha` (a
/// document and a prompt that embeds one of beta's documents and links to it), so every
/// list has items of three collections.
fn fixture() -> Fixture {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let path = folder.path().join("library.db");
    let beta = folder.path().join("beta");
    write(
        &beta,
        "secret.md",
        "# Beta's linked guide\n\nThe zebra crossing rules.\n",
    );
    write(
        &beta,
        "other.md",
        "# Beta's unlinked notes\n\nzebra-plans and more zebra.\n",
    );
    write(
        &beta,
        "plan.prompt.md",
        "---\nname: beta-plan\ndescription: Plan a zebra\n---\nPlan the zebra.\n",
    );
    let alpha = folder.path().join("alpha");
    write(&alpha, "guide.md", "# Alpha guide\n\nAbout the zebra.\n");
    write(
        &alpha,
        "any.prompt.md",
        "---\nname: alpha-any\narguments:\n  - name: uri\n    required: true\n---\n{{ embed(uri) }}\n",
    );
    write(
        &alpha,
        "review.prompt.md",
        "---\nname: alpha-review\ndescription: Review with the zebra rules\narguments:\n  - name: topic\n    type: enum\n    values: [one, two]\n---\nReview {{ topic }}.\n\n{{ embed(\"shelf://beta/secret.md\") }}\n\n{{ link(\"shelf://beta/secret.md\") }}\n",
    );
    {
        let store =
            Store::open(&path, store::Access::ReadWrite, crate::seed::load).expect("the library");
        for dir in [&beta, &alpha] {
            let report = crate::import::run(
                &store,
                dir,
                &crate::import::Options::default(),
                &crate::import::Silent,
            )
            .expect("import");
            assert!(report.failures.is_empty(), "{:?}", report.failures);
        }
        store.close();
    }
    let store = Store::open_served(&path).expect("served");
    let config = ServeConfig {
        page_size: 2,
        mirrors: Mirrors::of([Mirror::Prompts, Mirror::Resources, Mirror::Search]),
        ..ServeConfig::default()
    };
    let (library, position) =
        Library::of(store, config.max_index_bytes).expect("the library's state");
    Fixture {
        _folder: folder,
        shared: Shared::new(library, config, position),
        output: Arc::new(Output::new(1024, 1 << 24, None)),
        path,
    }
}

fn alpha() -> Visibility {
    Visibility::collections_only(vec!["alpha".into()])
}

/// A modern request's envelope.
fn request(method: &str, params: Value) -> Envelope {
    request_numbered(1, method, params)
}

/// A modern request's envelope, under the id `id`.
fn request_numbered(id: u32, method: &str, params: Value) -> Envelope {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    match parse_line(line.to_string().as_bytes()) {
        Incoming::Request(envelope) => envelope,
        _ => panic!("not a request: {line}"),
    }
}

impl Fixture {
    /// The answer `seen` gets to `method` with `params`, as the pool answers it.
    fn ask(&self, seen: &Visibility, method: &str, params: Value) -> Value {
        let envelope = request(method, params);
        let line = answer::stored_line(&self.shared, seen, &envelope, Revision::MODERN);
        serde_json::from_slice(&line).expect("an answer is JSON")
    }

    /// Every entry of a list, page after page, with each page's `cacheScope`.
    fn list_all(&self, seen: &Visibility, method: &str, member: &str, key: &str) -> Vec<String> {
        let mut keys = Vec::new();
        let mut cursor = Value::Null;
        loop {
            let params = if cursor.is_null() {
                json!({})
            } else {
                json!({"cursor": cursor})
            };
            let answer = self.ask(seen, method, params);
            let result = &answer["result"];
            let scope = if seen.is_limited() {
                "private"
            } else {
                "public"
            };
            assert_eq!(result["cacheScope"], scope, "{answer}");
            for item in result[member].as_array().expect("a list") {
                keys.push(item[key].as_str().expect("a key").to_string());
            }
            cursor = result["nextCursor"].clone();
            if cursor.is_null() {
                return keys;
            }
        }
    }
}

fn assert_hides_beta(text: &str) {
    for hidden in BETA_ONLY.iter().chain(&["code-review"]) {
        assert!(!text.contains(hidden), "{hidden} in {text}");
    }
}

#[test]
fn lists_hold_only_the_collections_seen_page_after_page_and_are_not_shared() {
    let fixture = fixture();
    let everything = Visibility::EVERYTHING;
    // Kept answers of the whole library first: a limited caller must not be given them.
    let all_prompts = fixture.list_all(&everything, "prompts/list", "prompts", "name");
    assert!(all_prompts.contains(&"beta-plan".to_string()) && all_prompts.len() > 3);
    let all_resources = fixture.list_all(&everything, "resources/list", "resources", "uri");
    assert!(all_resources.contains(&"shelf://beta/other.md".to_string()));

    let seen = alpha();
    let prompts = fixture.list_all(&seen, "prompts/list", "prompts", "name");
    assert_eq!(prompts, ["alpha-any", "alpha-review"]);
    let resources = fixture.list_all(&seen, "resources/list", "resources", "uri");
    assert_eq!(resources, ["shelf://alpha/guide.md"]);
    let templates = fixture.list_all(
        &seen,
        "resources/templates/list",
        "resourceTemplates",
        "uriTemplate",
    );
    assert_eq!(
        templates,
        ["shelf://search/{query}", "shelf://alpha/{+path}"]
    );

    // And the whole library's lists are as they were, not the limited caller's.
    let again = fixture.list_all(&everything, "prompts/list", "prompts", "name");
    assert_eq!(again, all_prompts);

    // A cursor of the whole library's list, handed to a limited caller, goes on among its
    // own items only.
    let first = fixture.ask(&everything, "resources/list", json!({}));
    let cursor = first["result"]["nextCursor"].clone();
    assert!(cursor.is_string(), "{first}");
    let page = fixture.ask(&seen, "resources/list", json!({"cursor": cursor}));
    assert_hides_beta(&page.to_string());
    assert!(!page.to_string().contains("shelf://library/"), "{page}");

    let discovered = fixture.ask(&seen, "server/discover", json!({}));
    let instructions = discovered["result"]["instructions"]
        .as_str()
        .expect("instructions");
    assert!(
        !instructions.chars().any(|c| c.is_ascii_digit()),
        "{instructions}"
    );
    assert_eq!(discovered["result"]["cacheScope"], "private");
    let whole = fixture.ask(&everything, "server/discover", json!({}));
    assert!(
        whole["result"]["instructions"]
            .as_str()
            .is_some_and(|text| text.chars().any(|c| c.is_ascii_digit()))
    );
}

#[test]
fn a_prompt_or_resource_outside_is_answered_as_one_that_does_not_exist() {
    let fixture = fixture();
    let seen = alpha();
    let everything = Visibility::EVERYTHING;
    // Filled and kept for the whole library first.
    let kept = fixture.ask(&everything, "prompts/get", json!({"name": "beta-plan"}));
    assert!(kept["result"]["messages"].is_array(), "{kept}");

    let outside = fixture.ask(&seen, "prompts/get", json!({"name": "beta-plan"}));
    let missing = fixture.ask(&seen, "prompts/get", json!({"name": "no-such"}));
    let message = |answer: &Value, name: &str| {
        answer["error"]["message"]
            .as_str()
            .expect("an error")
            .replace(name, "NAME")
    };
    assert_eq!(outside["error"]["code"], missing["error"]["code"]);
    assert_eq!(message(&outside, "beta-plan"), message(&missing, "no-such"));
    assert_hides_beta(&outside.to_string().replace("'beta-plan'", "'NAME'"));
    assert!(outside.to_string().contains("alpha-review"), "{outside}");

    // A prompt seen renders its embed and link of a document outside.
    let review = fixture.ask(
        &seen,
        "prompts/get",
        json!({"name": "alpha-review", "arguments": {"topic": "one"}}),
    );
    let text = review.to_string();
    assert!(text.contains("zebra crossing rules"), "{review}");

    // A prompt whose embed is computed from its arguments embeds only what can be read.
    let any = |uri: &str| {
        fixture.ask(
            &seen,
            "prompts/get",
            json!({"name": "alpha-any", "arguments": {"uri": uri}}),
        )
    };
    let embedded = any("shelf://alpha/guide.md");
    assert!(
        embedded.to_string().contains("About the zebra"),
        "{embedded}"
    );
    let refused = any("shelf://beta/other.md");
    assert!(refused["error"].is_object(), "{refused}");
    assert!(!refused.to_string().contains("zebra-plans"), "{refused}");
    let nowhere = any("shelf://beta/none.md");
    assert_eq!(
        refused.to_string().replace("shelf://beta/other.md", "URI"),
        nowhere.to_string().replace("shelf://beta/none.md", "URI")
    );
    let whole = fixture.ask(
        &everything,
        "prompts/get",
        json!({"name": "alpha-any", "arguments": {"uri": "shelf://beta/other.md"}}),
    );
    assert!(whole.to_string().contains("zebra-plans"), "{whole}");

    // That document can be read; another of its collection cannot, and is answered as a
    // URI the library does not hold.
    let linked = fixture.ask(
        &seen,
        "resources/read",
        json!({"uri": "shelf://beta/secret.md"}),
    );
    assert!(
        linked.to_string().contains("zebra crossing rules"),
        "{linked}"
    );
    assert_eq!(linked["result"]["cacheScope"], "private");
    let whole = fixture.ask(
        &everything,
        "resources/read",
        json!({"uri": "shelf://beta/other.md"}),
    );
    assert!(whole.to_string().contains("zebra-plans"), "{whole}");
    let hidden = fixture.ask(
        &seen,
        "resources/read",
        json!({"uri": "shelf://beta/other.md"}),
    );
    let unknown = fixture.ask(
        &seen,
        "resources/read",
        json!({"uri": "shelf://beta/none.md"}),
    );
    assert_eq!(hidden["error"]["code"], unknown["error"]["code"]);
    let said = |answer: &Value, uri: &str| answer["error"].to_string().replace(uri, "URI");
    assert_eq!(
        said(&hidden, "shelf://beta/other.md"),
        said(&unknown, "shelf://beta/none.md")
    );
    // A spelling the collection's template maps to the hidden one is hidden too.
    let spelled = fixture.ask(
        &seen,
        "resources/read",
        json!({"uri": "shelf://beta/%6Fther.md"}),
    );
    assert!(spelled["error"].is_object(), "{spelled}");
    let seed = fixture.ask(
        &seen,
        "resources/read",
        json!({"uri": "shelf://library/guides/testing.md"}),
    );
    assert!(seed["error"].is_object(), "{seed}");
}

#[test]
fn completions_and_searches_suggest_and_find_only_what_is_seen() {
    let fixture = fixture();
    let seen = alpha();
    let everything = Visibility::EVERYTHING;
    let complete = |seen: &Visibility, reference: Value, name: &str, value: &str| {
        fixture.ask(
            seen,
            "completion/complete",
            json!({"ref": reference, "argument": {"name": name, "value": value}}),
        )
    };
    let values = |answer: &Value| answer["result"]["completion"]["values"].to_string();

    let own = complete(
        &seen,
        json!({"type": "ref/prompt", "name": "alpha-review"}),
        "topic",
        "",
    );
    assert_eq!(values(&own), r#"["one","two"]"#, "{own}");
    let outside = complete(
        &seen,
        json!({"type": "ref/prompt", "name": "beta-plan"}),
        "topic",
        "",
    );
    assert!(outside["error"].is_object(), "{outside}");
    assert_hides_beta(&outside.to_string().replace("'beta-plan'", "'NAME'"));

    // The whole library completes a path from every stored URI; the limited caller from
    // its collections' only, and another collection's template is not there for it.
    let paths = complete(
        &everything,
        json!({"type": "ref/resource", "uri": "shelf://beta/{+path}"}),
        "path",
        "",
    );
    assert!(values(&paths).contains("other.md"), "{paths}");
    let hidden = complete(
        &seen,
        json!({"type": "ref/resource", "uri": "shelf://beta/{+path}"}),
        "path",
        "",
    );
    assert!(hidden["error"].is_object(), "{hidden}");
    assert_hides_beta(&hidden.to_string());
    let mine = complete(
        &seen,
        json!({"type": "ref/resource", "uri": "shelf://alpha/{+path}"}),
        "path",
        "",
    );
    assert_eq!(values(&mine), r#"["guide.md"]"#, "{mine}");
    let terms = complete(
        &seen,
        json!({"type": "ref/resource", "uri": "shelf://search/{query}"}),
        "query",
        "zebra",
    );
    assert_eq!(values(&terms), "[]", "{terms}");
    let all_terms = complete(
        &everything,
        json!({"type": "ref/resource", "uri": "shelf://search/{query}"}),
        "query",
        "zebra",
    );
    assert!(values(&all_terms).contains("zebra"), "{all_terms}");

    // Searches: kept for the whole library first, then asked by the limited caller.
    let uri = "shelf://search/zebra";
    let whole = fixture.ask(&everything, "resources/read", json!({"uri": uri}));
    assert!(
        whole.to_string().contains("shelf://beta/other.md"),
        "{whole}"
    );
    let found = fixture.ask(&seen, "resources/read", json!({"uri": uri}));
    let text = found.to_string();
    assert!(text.contains("shelf://alpha/guide.md") && text.contains("alpha-review"));
    assert_hides_beta(&text);
    assert!(!text.contains("shelf://library/"), "{text}");
    assert_eq!(found["result"]["cacheScope"], "private");
    let tool = fixture.ask(
        &seen,
        "tools/call",
        json!({"name": "search_library", "arguments": {"query": "zebra"}}),
    );
    assert!(tool.to_string().contains("alpha-review"), "{tool}");
    assert_hides_beta(&tool.to_string());
}

#[test]
fn tool_mirrors_keep_to_what_is_seen() {
    let fixture = fixture();
    let seen = alpha();
    let tools = fixture.ask(&seen, "tools/list", json!({}));
    assert!(tools.to_string().contains("alpha-review"), "{tools}");
    assert_hides_beta(&tools.to_string());
    let whole = fixture.ask(&Visibility::EVERYTHING, "tools/list", json!({}));
    assert!(whole.to_string().contains("beta-plan"), "{whole}");

    let call = |name: &str, arguments: Value| {
        let answer = fixture.ask(
            &seen,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        answer.to_string()
    };
    let listed = call("list_prompts", json!({}));
    assert!(listed.contains("alpha-review"), "{listed}");
    assert_hides_beta(&listed);
    let listed = call("list_resources", json!({}));
    assert!(listed.contains("shelf://alpha/guide.md"), "{listed}");
    assert_hides_beta(&listed);
    let got = call("get_prompt", json!({"name": "beta-plan"}));
    assert!(got.contains("unknown prompt"), "{got}");
    assert_hides_beta(&got.replace("'beta-plan'", "'NAME'"));
    let read = call("read_resource", json!({"uri": "shelf://beta/other.md"}));
    assert!(read.contains("no resource"), "{read}");
    assert!(!read.contains("zebra-plans"), "{read}");
    let linked = call("read_resource", json!({"uri": "shelf://beta/secret.md"}));
    assert!(linked.contains("zebra crossing rules"), "{linked}");
}

#[test]
fn a_token_limited_to_a_collection_is_found_and_sees_it() {
    let fixture = fixture();
    let mut conn = rusqlite::Connection::open(&fixture.path).expect("open");
    let tx = conn.transaction().expect("a transaction");
    let names = ["alpha".to_string()];
    let token = tokens::add(&tx, "alpha-only", Some(&names), None, 0, None).expect("added");
    tx.commit().expect("commit");
    let Presented::Valid(grant) = tokens::find(&conn, &token, 1).expect("found") else {
        panic!("the token is valid");
    };
    let seen = Visibility::of(&grant, None);
    assert_eq!(seen, alpha());
    let prompts = fixture.list_all(&seen, "prompts/list", "prompts", "name");
    assert_eq!(prompts, ["alpha-any", "alpha-review"]);
}

/// Every line sent so far, once the writer has written them all (it stops there, and
/// nothing is written after).
fn sent(output: &Output) -> Vec<Value> {
    output.send(stdio::END.to_vec());
    let mut written = Vec::new();
    stdio::write_lines(output, &mut written);
    written
        .split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).expect("JSON"))
        .collect()
}

#[test]
fn subscribers_are_told_only_of_changes_to_what_they_see() {
    let fixture = fixture();
    let shared = &fixture.shared;
    let session = Session::new(Arc::clone(&fixture.output));
    let listen = |id: u32, seen: Visibility| {
        let envelope = request_numbered(
            id,
            "subscriptions/listen",
            json!({"notifications": {
                "promptsListChanged": true,
                "resourcesListChanged": true,
                "resourceSubscriptions": ["shelf://beta/other.md", "shelf://alpha/guide.md"],
            }}),
        );
        let Method::Listen(params) = &envelope.method else {
            panic!("a listen request");
        };
        session.listen(shared, &envelope.id, params, seen);
    };
    listen(1, alpha());
    listen(2, Visibility::EVERYTHING);

    let conn = rusqlite::Connection::open(&fixture.path).expect("open");
    let batch = |rows: &[(&str, &str, &str)]| {
        let rows: Vec<Change> = rows
            .iter()
            .enumerate()
            .map(|(seq, (kind, op, key))| Change {
                seq: seq as i64 + 1,
                at: 0,
                kind: kind.to_string(),
                op: op.to_string(),
                key: key.to_string(),
                channel: None,
            })
            .collect();
        Changes::from_rows(&rows, &mut |row| store::read::collection_of(&conn, row))
    };
    // Beta's prompt and document changed: the limited stream hears nothing.
    session.notify(
        shared,
        &batch(&[
            ("prompt", "update", "beta-plan"),
            ("resource", "update", "shelf://beta/other.md"),
        ]),
    );
    // Alpha's document changed: both hear of it.
    session.notify(
        shared,
        &batch(&[("resource", "update", "shelf://alpha/guide.md")]),
    );
    // A prompt gone, whose collection the log no longer says: every list may have
    // changed, and the stream lists again to see its own.
    session.notify(shared, &batch(&[("prompt", "delete", "was-somewhere")]));
    // An item of no collection concerns only the stream that sees everything.
    let by_hand = Changes {
        prompts: true,
        ..Changes::default()
    };
    session.notify(shared, &by_hand);

    let told: Vec<String> = sent(&fixture.output)
        .into_iter()
        .map(|line| {
            let stream = &line["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"];
            let uri = line["params"]["uri"].as_str().unwrap_or("");
            format!("{stream} {} {uri}", line["method"].as_str().unwrap_or(""))
                .trim_end()
                .to_string()
        })
        .collect();
    assert_eq!(
        told,
        [
            "1 notifications/subscriptions/acknowledged",
            "2 notifications/subscriptions/acknowledged",
            // beta's prompt and document
            "2 notifications/prompts/list_changed",
            "2 notifications/resources/list_changed",
            "2 notifications/resources/updated shelf://beta/other.md",
            // alpha's document
            "1 notifications/resources/list_changed",
            "1 notifications/resources/updated shelf://alpha/guide.md",
            "2 notifications/resources/list_changed",
            "2 notifications/resources/updated shelf://alpha/guide.md",
            // a prompt gone
            "1 notifications/prompts/list_changed",
            "2 notifications/prompts/list_changed",
            // an item of no collection
            "2 notifications/prompts/list_changed",
        ]
    );
}
