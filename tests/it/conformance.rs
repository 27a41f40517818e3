//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/interop/package.json`) against `serve --http 127.0.0.1:PORT --auth none`, straight
//! over HTTP, in both eras: each scenario that can apply to this server runs at 2025-11-25
//! (the `initialize` handshake) and at 2026-07-28 (stateless), on a library holding the
//! prompts and resources the scenarios name (`test_simple_prompt`, `test://static-text`, ...).
//!
//! The scenarios left out need what this server does not have (tools, logging, requests to
//! the client); docs/conformance.md lists each with the reason. Inside the scenarios that
//! run, the few checks that probe through a diagnostic tool are listed in `NOT_APPLICABLE`
//! with theirs; any other check that fails fails the test, named.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::common::{TestContext, run_bounded};
use crate::http::HttpServer;
use crate::node::node_tools;

/// The scenarios run, by the revision they run at.
const SCENARIOS: &[(&str, &[&str])] = &[
    (
        "2025-11-25",
        &[
            "server-initialize",
            "server-session-lifecycle",
            "ping",
            "completion-complete",
            "server-sse-multiple-streams",
            "resources-list",
            "resources-read-text",
            "resources-read-binary",
            "resources-templates-read",
            "resources-subscribe",
            "resources-unsubscribe",
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "prompts-get-with-image",
            "dns-rebinding-protection",
        ],
    ),
    (
        "2026-07-28",
        &[
            "server-stateless",
            "completion-complete",
            "resources-list",
            "resources-read-text",
            "resources-read-binary",
            "resources-templates-read",
            "sep-2164-resource-not-found",
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "prompts-get-with-image",
            "dns-rebinding-protection",
            "caching",
            "input-required-result-non-tool-request",
            "input-required-result-unsupported-methods",
        ],
    ),
];

/// Checks of the scenarios above that cannot pass here, with the reason: (scenario, check).
const NOT_APPLICABLE: &[(&str, &str, &str)] = &[
    (
        "server-stateless",
        "sep-2575-server-rejects-undeclared-capability",
        "probes through the diagnostic tool test_missing_capability; this server has no tools",
    ),
    (
        "server-stateless",
        "sep-2575-missing-capability-http-400",
        "probes through the diagnostic tool test_missing_capability; this server has no tools",
    ),
    (
        "server-stateless",
        "sep-2575-http-server-no-independent-requests-on-stream",
        "probes through the diagnostic tool test_streaming_elicitation; this server has no tools",
    ),
    (
        "server-stateless",
        "sep-2575-server-no-log-without-loglevel",
        "probes through the diagnostic tool test_logging_tool; this server has no tools and sends no logs",
    ),
    (
        "caching",
        "sep-2549-tools-list-caching-hints",
        "reads tools/list; this server has no tools (the other lists' hints are checked)",
    ),
];

/// A bound on one scenario (each takes well under a second; this only catches a hang).
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(120);

/// A 1x1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0x50,
    0x0f, 0x00, 0x04, 0x85, 0x01, 0x80, 0x84, 0xa9, 0x8c, 0x21, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Fills the library with what the scenarios ask for, through the CLI.
fn conformance_library(ctx: &TestContext) {
    ctx.ok(&["init", "--empty"]);
    let resources: &[(&str, &str, &[u8], &str)] = &[
        (
            "static-text.txt",
            "test://static-text",
            b"This is the content of the static text resource.",
            "text/plain",
        ),
        (
            "static-binary.png",
            "test://static-binary",
            PNG,
            "image/png",
        ),
        ("image.png", "test://test-image.png", PNG, "image/png"),
        (
            "example.txt",
            "test://example-resource",
            b"Embedded resource content for testing.",
            "text/plain",
        ),
        (
            "data.json",
            "test://template/123/data",
            br#"{"id":"123","templateTest":true,"data":"Data for ID: 123"}"#,
            "application/json",
        ),
        (
            "watched.txt",
            "test://watched-resource",
            b"Watched.",
            "text/plain",
        ),
    ];
    for (file, uri, content, mime) in resources {
        let path = ctx.write(file, content);
        ctx.ok(&[
            "resource",
            "add",
            path.to_str().unwrap(),
            "--uri",
            uri,
            "--mime-type",
            mime,
        ]);
    }
    ctx.ok(&[
        "template",
        "add",
        "test://template/{id}/data",
        "--name",
        "template-data",
    ]);
    let prompts: &[(&str, &str)] = &[
        (
            "test_simple_prompt",
            "description: A prompt without arguments\n---\nThis is a simple prompt for testing.\n",
        ),
        (
            "test_prompt_with_arguments",
            "description: A prompt with two arguments\narguments:\n  - name: arg1\n    description: First test argument\n    required: true\n  - name: arg2\n    description: Second test argument\n    required: true\n---\nPrompt with arguments: arg1='{{ arg1 }}', arg2='{{ arg2 }}'\n",
        ),
        (
            "test_prompt_with_embedded_resource",
            "description: A prompt embedding the resource it is given\narguments:\n  - name: resourceUri\n    description: URI of the resource to embed\n    required: true\n---\n{{ embed(resourceUri) }}\nPlease process the embedded resource above.\n",
        ),
        (
            "test_prompt_with_image",
            "description: A prompt with an image\n---\n{{ embed(\"test://test-image.png\") }}\nPlease analyze the image above.\n",
        ),
        (
            "test_input_required_result_prompt",
            "description: A prompt that asks for its context when not given it\narguments:\n  - name: context\n    description: What context should the prompt use?\n    required: true\n---\nUse this context: {{ context }}\n",
        ),
    ];
    for (name, rest) in prompts {
        let path = ctx.write(
            &format!("{name}.prompt.md"),
            format!("---\nname: {name}\n{rest}"),
        );
        ctx.ok(&["prompt", "add", path.to_str().unwrap()]);
    }
}

/// One check's outcome as the suite wrote it in `checks.json`.
struct Check {
    id: String,
    status: String,
    message: String,
}

/// The checks of the one scenario run whose results are under `dir`.
fn checks_in(dir: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("checks.json")) else {
            continue;
        };
        let parsed: Vec<Value> = serde_json::from_str(&text)
            .unwrap_or_else(|err| panic!("{}: not a checks array: {err}", entry.path().display()));
        checks.extend(parsed.iter().map(|check| Check {
            id: check["id"].as_str().unwrap_or("?").to_string(),
            status: check["status"].as_str().unwrap_or("?").to_string(),
            message: check["errorMessage"].as_str().unwrap_or("").to_string(),
        }));
    }
    checks
}

#[test]
fn the_official_conformance_suite_passes_over_http() {
    let tools = node_tools();
    let ctx = TestContext::new();
    conformance_library(&ctx);
    let server = HttpServer::start(&ctx.db, &[]);
    let url = server.url();

    let mut failures = Vec::new();
    let mut summary = Vec::new();
    for (revision, scenarios) in SCENARIOS {
        for scenario in *scenarios {
            let out = ctx.path(&format!("results/{revision}/{scenario}"));
            let command = tools.conformance(&[
                "server",
                "--url",
                &url,
                "--scenario",
                scenario,
                "--spec-version",
                revision,
                "--output-dir",
                out.to_str().unwrap(),
            ]);
            let name = format!("conformance-{revision}-{scenario}");
            let (status, stdout, stderr) = run_bounded(command, &ctx, &name, SCENARIO_TIMEOUT);
            let checks = checks_in(&out);
            if checks.is_empty() {
                failures.push(format!(
                    "[{revision}] {scenario}: ran no check (status {status})\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
                ));
                continue;
            }
            let (mut passed, mut excused) = (0, 0);
            for check in &checks {
                let not_applicable = NOT_APPLICABLE
                    .iter()
                    .any(|(s, id, _)| s == scenario && *id == check.id);
                match check.status.as_str() {
                    "SUCCESS" => passed += 1,
                    "FAILURE" if not_applicable => excused += 1,
                    "FAILURE" => failures.push(format!(
                        "[{revision}] {scenario}: {} failed: {}",
                        check.id, check.message
                    )),
                    // INFO, WARNING (a SHOULD the probe could not exercise), SKIPPED.
                    other => summary.push(format!(
                        "[{revision}] {scenario}: {} {other} {}",
                        check.id, check.message
                    )),
                }
            }
            summary.push(format!(
                "[{revision}] {scenario}: {passed} passed, {excused} not applicable"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} conformance checks failed against {url}:\n{}\n--- summary\n{}\n--- server's stderr\n{}",
        failures.len(),
        failures.join("\n"),
        summary.join("\n"),
        server.stderr()
    );
    println!("{}", summary.join("\n"));
}
