//! The Skills extension (SEP-2640): imported skill folders listed by `skills/list` and
//! described by `skills/get` (their front matter as JSON, every file with its SHA-256 and
//! size), their `SKILL.md` read as a resource, to clients that declare the extension only,
//! in both eras, over stdio and HTTP, and to a token only for its own collections.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{Server, TestContext, modern_params, validate};
use crate::http::{HttpServer, token};

const EXTENSION: &str = "io.modelcontextprotocol/skills";
const LEGACY: &str = "2025-11-25";

const PDF_SKILL: &str = "---\nname: pdf-tools\ndescription: Extract, fill and assemble PDF \
                         documents.\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1.0\"\n\
                         allowed-tools: [Read, Bash]\n---\n# PDF tools\n\nUse the scripts.\n";
const LINT_SKILL: &str = "---\nname: lint\ndescription: Lint the code.\n---\nRun the linter.\n";

/// A folder with two skills (one with files in subfolders) and a prompt that is none,
/// imported as the collection `repo`.
fn library() -> TestContext {
    let ctx = TestContext::new();
    ctx.write("repo/.agents/skills/pdf-tools/SKILL.md", PDF_SKILL);
    ctx.write(
        "repo/.agents/skills/pdf-tools/references/forms.md",
        "# Forms\n\nFill them.\n",
    );
    ctx.write(
        "repo/.agents/skills/pdf-tools/scripts/extract.py",
        "print('pages')\n",
    );
    ctx.write("repo/.agents/skills/lint/SKILL.md", LINT_SKILL);
    ctx.write(
        "repo/ask.prompt.md",
        "---\ndescription: Ask.\n---\nAsk away.\n",
    );
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", ctx.path("repo").to_str().unwrap()]);
    ctx
}

/// Capabilities that declare the extension.
fn declaring() -> Value {
    json!({"extensions": {EXTENSION: {}}})
}

/// `sha256:HEX` of a file, by the system's `sha256sum`.
pub fn sha256sum(path: &Path) -> String {
    let output = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("run sha256sum");
    assert!(output.status.success(), "sha256sum {}", path.display());
    let text = String::from_utf8_lossy(&output.stdout);
    format!("sha256:{}", text.split_whitespace().next().unwrap_or(""))
}

/// The entry a skill's folder should have: its front matter and every file, in URI order.
fn expected_entry(ctx: &TestContext, name: &str, frontmatter: Value, files: &[&str]) -> Value {
    let folder = ctx.path(&format!("repo/.agents/skills/{name}"));
    let mut files: Vec<&str> = files.to_vec();
    files.sort();
    let resources: Vec<Value> = files
        .iter()
        .map(|file| {
            let path = folder.join(file);
            json!({
                "uri": format!("skill://{name}/{file}"),
                "digest": sha256sum(&path),
                "size": std::fs::metadata(&path).expect("the file").len(),
            })
        })
        .collect();
    json!({
        "uri": format!("skill://{name}/SKILL.md"),
        "frontmatter": frontmatter,
        "resources": resources,
    })
}

fn lint_entry(ctx: &TestContext) -> Value {
    expected_entry(
        ctx,
        "lint",
        json!({"name": "lint", "description": "Lint the code."}),
        &["SKILL.md"],
    )
}

fn pdf_entry(ctx: &TestContext) -> Value {
    expected_entry(
        ctx,
        "pdf-tools",
        json!({
            "name": "pdf-tools",
            "description": "Extract, fill and assemble PDF documents.",
            "license": "Apache-2.0",
            "metadata": {"version": "2.1.0"},
            "allowed-tools": ["Read", "Bash"],
        }),
        &["SKILL.md", "references/forms.md", "scripts/extract.py"],
    )
}

/// The draft's skill entry (its "Result fields" table and "Integrity and verification"), as
/// a JSON Schema.
fn entry_schema() -> Value {
    json!({
        "type": "object",
        "required": ["uri", "frontmatter", "resources"],
        "properties": {
            "uri": {"type": "string", "pattern": "^skill://.+/SKILL\\.md$"},
            "frontmatter": {
                "type": "object",
                "required": ["name", "description"],
                "properties": {"name": {"type": "string"}, "description": {"type": "string"}}
            },
            "resources": {
                "oneOf": [
                    {"const": "dynamic"},
                    {"type": "array", "items": {
                        "type": "object",
                        "required": ["uri", "digest", "size"],
                        "properties": {
                            "uri": {"type": "string"},
                            "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
                            "size": {"type": "integer", "minimum": 0}
                        }
                    }}
                ]
            }
        }
    })
}

/// Checks `instance` against `schema`, naming what is wrong.
fn conforms(schema: &Value, instance: &Value) {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|err| format!("{err} at {}", err.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}\n{instance:#}", errors.join("\n"));
}

/// A `skills/list` result as the draft shapes it; `modern`: with 2026-07-28's list-caching
/// attributes.
fn check_list(result: &Value, modern: bool) {
    let mut schema = json!({
        "type": "object",
        "required": ["skills"],
        "properties": {
            "skills": {"type": "array", "items": entry_schema()},
            "nextCursor": {"type": "string"}
        }
    });
    if modern {
        schema["required"] = json!(["skills", "resultType", "ttlMs", "cacheScope"]);
        validate("2026-07-28", "PaginatedResult", result);
    }
    conforms(&schema, result);
}

/// A `skills/get` result as the draft shapes it.
fn check_get(result: &Value) {
    conforms(
        &json!({"type": "object", "required": ["skill"], "properties": {"skill": entry_schema()}}),
        result,
    );
}

/// Every skill `ask` lists, page after page, checking each page's shape.
fn all_pages(modern: bool, mut ask: impl FnMut(Value) -> Value) -> (Vec<Value>, usize) {
    let mut skills = Vec::new();
    let mut pages = 0;
    let mut params = json!({});
    loop {
        let response = ask(params);
        let result = &response["result"];
        check_list(result, modern);
        pages += 1;
        skills.extend(result["skills"].as_array().cloned().unwrap_or_default());
        match result.get("nextCursor") {
            Some(cursor) => params = json!({"cursor": cursor}),
            None => return (skills, pages),
        }
    }
}

#[test]
fn a_modern_client_that_declares_the_extension_lists_and_gets_skills() {
    let ctx = library();
    let mut server = Server::start(&ctx.db, &["--page-size", "1"]);
    let mut ask =
        |method: &str, params: Value| server.request(method, modern_params(params, declaring()));

    let discovered = ask("server/discover", json!({}));
    assert_eq!(
        discovered["result"]["capabilities"]["extensions"],
        json!({EXTENSION: {"directoryRead": true}}),
        "{discovered}"
    );
    validate("2026-07-28", "DiscoverResult", &discovered["result"]);

    // One skill a page: lint, then pdf-tools; the prompt that is no skill is not listed.
    let (skills, pages) = all_pages(true, |params| ask("skills/list", params));
    assert_eq!(pages, 2);
    assert_eq!(skills, [lint_entry(&ctx), pdf_entry(&ctx)]);

    let got = ask("skills/get", json!({"uri": "skill://pdf-tools/SKILL.md"}));
    check_get(&got["result"]);
    assert_eq!(got["result"]["skill"], pdf_entry(&ctx), "{got}");
    assert_eq!(got["result"]["resultType"], "complete");
    // The draft leaves them open; carried as `resources/read` carries them.
    assert!(got["result"]["ttlMs"].is_u64(), "{got}");
    assert_eq!(got["result"]["cacheScope"], "public");

    for unknown in [
        "skill://nothing/SKILL.md",
        "skill://pdf-tools/references/forms.md",
        "shelf://repo/ask.prompt.md",
    ] {
        let refused = ask("skills/get", json!({"uri": unknown}));
        assert_eq!(refused["error"]["code"], -32602, "{unknown}: {refused}");
    }

    // The skill's URI is readable, its SKILL.md as it was written.
    let read = ask(
        "resources/read",
        json!({"uri": "skill://pdf-tools/SKILL.md"}),
    );
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "text/markdown", "{read}");
    assert_eq!(contents["text"], PDF_SKILL);
    // Listed as a resource too, named and described by its front matter.
    let mut server = Server::start(&ctx.db, &[]);
    let all = server.modern("resources/list", json!({}));
    let document = all["result"]["resources"]
        .as_array()
        .and_then(|resources| {
            resources
                .iter()
                .find(|resource| resource["uri"] == "skill://lint/SKILL.md")
        })
        .cloned()
        .unwrap_or_else(|| panic!("SKILL.md is not listed: {all}"));
    assert_eq!(document["name"], "lint");
    assert_eq!(document["description"], "Lint the code.");
    assert_eq!(document["mimeType"], "text/markdown");
}

#[test]
fn a_legacy_client_that_declares_the_extension_in_initialize_is_served_the_same() {
    let ctx = library();
    let mut server = Server::start(&ctx.db, &["--page-size", "1"]);
    let opened = server.initialize_with(LEGACY, declaring());
    assert_eq!(
        opened["result"]["capabilities"]["extensions"],
        json!({EXTENSION: {"directoryRead": true}}),
        "{opened}"
    );
    validate(LEGACY, "InitializeResult", &opened["result"]);
    let (skills, pages) = all_pages(false, |params| server.request("skills/list", params));
    assert_eq!(pages, 2);
    assert_eq!(skills, [lint_entry(&ctx), pdf_entry(&ctx)]);
    let got = server.request("skills/get", json!({"uri": "skill://lint/SKILL.md"}));
    check_get(&got["result"]);
    assert_eq!(got["result"]["skill"], lint_entry(&ctx));
    let unknown = server.request("skills/get", json!({"uri": "skill://gone/SKILL.md"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let read = server.request("resources/read", json!({"uri": "skill://lint/SKILL.md"}));
    assert_eq!(read["result"]["contents"][0]["text"], LINT_SKILL, "{read}");
}

#[test]
fn a_client_that_does_not_declare_the_extension_is_neither_told_of_it_nor_served_it() {
    let ctx = library();
    let mut modern = ctx.server();
    let discovered = modern.modern("server/discover", json!({}));
    assert!(
        discovered["result"]["capabilities"]
            .get("extensions")
            .is_none(),
        "{discovered}"
    );
    for (method, params) in [
        ("skills/list", json!({})),
        ("skills/get", json!({"uri": "skill://lint/SKILL.md"})),
    ] {
        let refused = modern.modern(method, params);
        assert_eq!(refused["error"]["code"], -32601, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains(EXTENSION), "{message}");
    }
    // Another extension is not this one.
    let other = modern.request(
        "skills/list",
        modern_params(
            json!({}),
            json!({"extensions": {"io.modelcontextprotocol/ui": {}}}),
        ),
    );
    assert_eq!(other["error"]["code"], -32601, "{other}");
    // SKILL.md is a resource like any other, whatever the client declared.
    let read = modern.modern("resources/read", json!({"uri": "skill://lint/SKILL.md"}));
    assert_eq!(read["result"]["contents"][0]["text"], LINT_SKILL, "{read}");

    let mut legacy = ctx.server();
    let opened = legacy.initialize(LEGACY);
    assert!(
        opened["result"]["capabilities"].get("extensions").is_none(),
        "{opened}"
    );
    let refused = legacy.request("skills/list", json!({}));
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
}

#[test]
fn a_digest_follows_the_file_when_it_changes() {
    let ctx = library();
    let mut server = ctx.server();
    let get = |server: &mut Server| {
        server.request(
            "skills/get",
            modern_params(json!({"uri": "skill://lint/SKILL.md"}), declaring()),
        )["result"]["skill"]
            .clone()
    };
    assert_eq!(get(&mut server), lint_entry(&ctx));
    ctx.write(
        "repo/.agents/skills/lint/SKILL.md",
        "---\nname: lint\ndescription: Lint the code, strictly.\n---\nRun clippy.\n",
    );
    ctx.write("repo/.agents/skills/lint/rules.txt", "no warnings\n");
    ctx.ok(&["import", ctx.path("repo").to_str().unwrap()]);
    let expected = expected_entry(
        &ctx,
        "lint",
        json!({"name": "lint", "description": "Lint the code, strictly."}),
        &["SKILL.md", "rules.txt"],
    );
    server.eventually(expected, get);
}

#[test]
fn an_export_in_our_format_writes_skill_md_back_as_it_was() {
    let ctx = library();
    let out = ctx.path("out");
    ctx.ok(&["export", out.to_str().unwrap(), "--collection", "repo"]);
    assert_eq!(
        std::fs::read_to_string(out.join(".agents/skills/pdf-tools/SKILL.md")).unwrap(),
        PDF_SKILL
    );
    assert!(
        !out.join(".agents/skills/pdf-tools/SKILL.md.meta.yaml")
            .exists()
    );
}

#[test]
fn over_http_a_token_sees_only_its_collections_skills() {
    let ctx = library();
    ctx.write("other/notes.md", "# Notes\n\nText.\n");
    ctx.ok(&["import", ctx.path("other").to_str().unwrap()]);
    let repo = token(&ctx, "repo-reader", Some("repo"));
    let other = token(&ctx, "other-reader", Some("other"));
    let http = HttpServer::start(&ctx.db, &["--auth", "token"]);
    let ask = |token: &str, method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method,
                          "params": modern_params(params, declaring())});
        let bearer = format!("Bearer {token}");
        let reply = http.post(
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", method),
                ("authorization", &bearer),
            ],
            &body.to_string(),
        );
        reply.json()
    };
    let seen = ask(&repo, "skills/list", json!({}));
    check_list(&seen["result"], true);
    assert_eq!(
        seen["result"]["skills"],
        json!([lint_entry(&ctx), pdf_entry(&ctx)])
    );
    assert_eq!(seen["result"]["cacheScope"], "private");

    let hidden = ask(&other, "skills/list", json!({}));
    check_list(&hidden["result"], true);
    assert_eq!(hidden["result"]["skills"], json!([]), "{hidden}");
    let refused = ask(
        &other,
        "skills/get",
        json!({"uri": "skill://lint/SKILL.md"}),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let folder = ask(
        &other,
        "resources/directory/read",
        json!({"uri": "skill://lint"}),
    );
    assert_eq!(folder["error"]["code"], -32602, "{folder}");
    let own = ask(
        &repo,
        "resources/directory/read",
        json!({"uri": "skill://lint"}),
    );
    assert_eq!(
        own["result"]["resources"][0]["uri"], "skill://lint/SKILL.md",
        "{own}"
    );
    let unknown = ask(
        &other,
        "skills/get",
        json!({"uri": "skill://gone/SKILL.md"}),
    );
    assert_eq!(
        refused["error"]["message"]
            .as_str()
            .map(|m| m.replace("lint", "gone")),
        unknown["error"]["message"].as_str().map(str::to_string),
        "a hidden skill is answered as one there is not"
    );

    // A legacy session over HTTP keeps the declaration in its id.
    let bearer = format!("Bearer {repo}");
    let opened = http.post(
        &[("authorization", &bearer)],
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": declaring(),
            "clientInfo": {"name": "promptshelf-tests", "version": "0"}}})
        .to_string(),
    );
    assert_eq!(
        opened.json()["result"]["capabilities"]["extensions"],
        json!({EXTENSION: {"directoryRead": true}}),
        "{}",
        opened.body
    );
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let listed = http.post(
        &[
            ("authorization", &bearer),
            ("mcp-protocol-version", LEGACY),
            ("mcp-session-id", &session),
        ],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {}}).to_string(),
    );
    check_list(&listed.json()["result"], false);
    assert_eq!(
        listed.json()["result"]["skills"],
        json!([lint_entry(&ctx), pdf_entry(&ctx)])
    );
}

#[test]
fn a_skill_folder_is_read_as_a_directory_page_by_page() {
    let ctx = library();
    let mut server = Server::start(&ctx.db, &["--page-size", "1"]);
    let mut ask =
        |method: &str, params: Value| server.request(method, modern_params(params, declaring()));
    // Every child of a folder, following nextCursor, each page the draft's shape.
    let mut children = |uri: &str| {
        let mut found = Vec::new();
        let mut params = json!({"uri": uri});
        loop {
            let response = ask("resources/directory/read", params.clone());
            let result = &response["result"];
            validate("2026-07-28", "ListResourcesResult", result);
            for child in result["resources"].as_array().expect("resources") {
                found.push((
                    child["uri"].as_str().unwrap_or("").to_string(),
                    child["mimeType"].as_str().unwrap_or("").to_string(),
                ));
            }
            match result.get("nextCursor") {
                Some(cursor) => params["cursor"] = cursor.clone(),
                None => return found,
            }
        }
    };
    let pair = |uri: &str, mime: &str| (uri.to_string(), mime.to_string());
    assert_eq!(
        children("skill://pdf-tools"),
        [
            pair("skill://pdf-tools/SKILL.md", "text/markdown"),
            pair("skill://pdf-tools/references", "inode/directory"),
            pair("skill://pdf-tools/scripts", "inode/directory"),
        ]
    );
    assert_eq!(
        children("skill://pdf-tools/references"),
        [pair(
            "skill://pdf-tools/references/forms.md",
            "text/markdown"
        )]
    );
    for not_a_directory in [
        "skill://pdf-tools/SKILL.md",
        "skill://pdf-tools/",
        "skill://nothing",
        "shelf://repo",
    ] {
        let refused = ask("resources/directory/read", json!({"uri": not_a_directory}));
        assert_eq!(
            refused["error"]["code"], -32602,
            "{not_a_directory}: {refused}"
        );
    }
    let undeclared = server.modern("resources/directory/read", json!({"uri": "skill://lint"}));
    assert_eq!(undeclared["error"]["code"], -32601, "{undeclared}");
}

/// On a release channel, skills are the skill folders' files its label is on, at the versions
/// it names: a skill changed since is served as it was, one not labelled is not listed.
#[test]
fn a_channel_lists_and_reads_the_skills_its_label_is_on() {
    let ctx = library();
    ctx.ok(&["label", "set", "production", "--collection", "repo"]);
    let pdf_files = [
        "skill://pdf-tools/SKILL.md",
        "skill://pdf-tools/references/forms.md",
        "skill://pdf-tools/scripts/extract.py",
    ];
    let mut only_pdf = vec!["label", "set", "pdf-only"];
    only_pdf.extend(pdf_files);
    ctx.ok(&only_pdf);
    let changed = "---\nname: lint\ndescription: Lint the code.\n---\nRun the linter twice.\n";
    ctx.write("repo/.agents/skills/lint/SKILL.md", changed);
    ctx.ok(&["import", ctx.path("repo").to_str().unwrap()]);

    let lint_text = |extra: &[&str]| {
        let mut server = Server::start(&ctx.db, extra);
        server.initialize_with(LEGACY, declaring());
        let got = server.request("skills/get", json!({"uri": "skill://lint/SKILL.md"}));
        check_get(&got["result"]);
        let read = server.request("resources/read", json!({"uri": "skill://lint/SKILL.md"}));
        read["result"]["contents"][0]["text"].clone()
    };
    assert_eq!(lint_text(&[]), changed);
    assert_eq!(lint_text(&["--channel", "production"]), LINT_SKILL);

    let mut pdf_only = Server::start(&ctx.db, &["--channel", "pdf-only"]);
    pdf_only.initialize_with(LEGACY, declaring());
    let (skills, _) = all_pages(false, |params| pdf_only.request("skills/list", params));
    assert_eq!(skills, [pdf_entry(&ctx)]);
    let lint = pdf_only.request("skills/get", json!({"uri": "skill://lint/SKILL.md"}));
    assert_eq!(lint["error"]["code"], -32602, "{lint}");
}
