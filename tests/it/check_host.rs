//! `promptshelf check --host HOST`: each limit of the host table (`hosts::profile`) reported
//! for the prompts it touches, with what to do, and nothing for the prompts it does not.

use serde_json::Value;

use crate::common::TestContext;

/// A library of four prompts, each touching other limits: one optional argument, two
/// arguments (one required), two messages, an argument with fixed values.
fn library() -> TestContext {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.write(
        "lib/one.prompt.md",
        "---\narguments:\n  - name: topic\n---\nWrite about {{ topic }}.\n",
    );
    ctx.write(
        "lib/two.prompt.md",
        "---\narguments:\n  - name: code\n    required: true\n  - name: focus\n---\nReview {{ code }} for {{ focus }}.\n",
    );
    ctx.write(
        "lib/chat.prompt.md",
        "Hello.\n<!-- assistant -->\nHi, what shall we do?\n<!-- user -->\nPlan the day.\n",
    );
    ctx.write(
        "lib/pick.prompt.md",
        "---\narguments:\n  - name: tone\n    type: enum\n    values: [calm, brisk]\n---\nSay it {{ tone }}.\n",
    );
    ctx.ok(&["import", &ctx.path("lib").display().to_string()]);
    ctx
}

/// The findings of `check --host HOST --json`, as (prompt, problem, text), and whether the
/// check passed.
fn findings(ctx: &TestContext, host: &str) -> (Vec<(String, bool, String)>, bool) {
    let output = ctx.run(&["check", "--host", host, "--json"]);
    let lines: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "check --host {host} --json printed no JSON ({err}):\n{}",
            crate::common::describe(&["check", "--host", host], &output, "JSON")
        )
    });
    let found = lines
        .as_array()
        .expect("an array")
        .iter()
        .map(|line| {
            assert_eq!(line["host"], host, "{line}");
            (
                line["prompt"].as_str().unwrap().to_string(),
                line["problem"].as_bool().unwrap(),
                line["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (found, output.status.success())
}

fn prompts_of(found: &[(String, bool, String)], problem: bool) -> Vec<&str> {
    let mut names: Vec<&str> = found
        .iter()
        .filter(|(_, is_problem, _)| *is_problem == problem)
        .map(|(name, _, _)| name.as_str())
        .collect();
    names.dedup();
    names
}

#[test]
fn hosts_that_show_no_prompts_say_so_for_every_prompt_with_the_way_to_reach_them() {
    let ctx = library();
    for (host, advice) in [
        (
            "codex",
            "`promptshelf sync codex` writes it where Codex reads prompts or skills",
        ),
        (
            "copilot-cli",
            "`promptshelf sync copilot-cli` writes it where GitHub Copilot CLI reads",
        ),
        (
            "windsurf",
            "tool mirrors (`promptshelf config windsurf` serves them)",
        ),
    ] {
        let (found, passed) = findings(&ctx, host);
        assert!(!passed, "{host}");
        assert_eq!(
            prompts_of(&found, true),
            ["chat", "one", "pick", "two"],
            "{host}"
        );
        for (_, _, text) in &found {
            assert!(text.starts_with("not shown: "), "{host}: {text}");
            assert!(text.contains(advice), "{host}: {text}");
        }
    }
}

#[test]
fn zed_drops_prompts_of_more_than_one_argument() {
    let ctx = library();
    let (found, passed) = findings(&ctx, "zed");
    assert!(!passed);
    assert_eq!(
        found,
        [(
            "two".to_string(),
            true,
            "not shown: Zed drops prompts of more than 1 argument (it has 2); make one argument of them".to_string()
        )]
    );
}

#[test]
fn gemini_sends_the_first_message_alone_and_completes_nothing() {
    let ctx = library();
    let (found, _) = findings(&ctx, "gemini");
    assert_eq!(prompts_of(&found, true), ["chat"]);
    assert!(
        found[0]
            .2
            .contains("uses a prompt's first message alone (it has 3)"),
        "{found:?}"
    );
    // A note is no problem: fixed values are still checked when typed.
    assert_eq!(prompts_of(&found, false), ["pick"]);
    let stderr = ctx.fails(&["check", "--host", "gemini"]);
    assert!(
        stderr.contains(
            "3 of 4 prompts reach Gemini CLI as written; source: google-gemini/gemini-cli#15850"
        ),
        "{stderr}"
    );
}

#[test]
fn claude_code_splits_the_arguments_on_spaces() {
    let ctx = library();
    let (found, _) = findings(&ctx, "claude-code");
    assert_eq!(prompts_of(&found, true), ["two"]);
    assert!(
        found.iter().any(|(_, _, text)| text
            == "arguments split on spaces: Claude Code splits what is typed after the prompt on every space, quotes or not, so only the last argument (focus) can take a value with a space; make one argument of them, or `promptshelf sync claude-code` (a command there takes the whole text)"),
        "{found:?}"
    );
}

#[test]
fn continue_cannot_fill_in_a_required_argument() {
    let ctx = library();
    let (found, _) = findings(&ctx, "continue");
    assert_eq!(
        found,
        [(
            "two".to_string(),
            true,
            "cannot be filled in: Continue asks for no argument values, so its required argument code cannot be given; make it optional".to_string()
        )]
    );
}

#[test]
fn a_host_that_shows_every_prompt_as_written_passes() {
    let ctx = library();
    let (found, passed) = findings(&ctx, "vscode");
    assert_eq!(found, []);
    assert!(passed);
    let output = ctx.run(&["check", "--host", "vscode"]);
    assert!(output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("4 of 4 prompts reach VS Code as written"),
        "{output:?}"
    );
}
