//! What the binary does for a person at a terminal: shell completion scripts (checked by
//! the shell itself) with names from the library, binary content kept off the screen, and
//! `serve` saying what it waits for. A real pseudo-terminal comes from Python's `pty`.

use std::process::{Command, Stdio};

use crate::common::{BIN, TestContext, describe};

/// Runs the binary with stdin, stdout and stderr on one new pseudo-terminal 80 columns
/// wide; after the first line of output, sends Ctrl-D (end of input) when
/// `end_input_after_a_line`. Returns what the terminal showed and the exit status.
fn in_terminal(ctx: &TestContext, args: &[&str], end_input_after_a_line: bool) -> (String, i32) {
    const RUN: &str = r#"
import fcntl, os, pty, struct, sys, termios
end_input = sys.argv[1] == "1"
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    os.execv(sys.argv[2], sys.argv[2:])
shown = b""
sent = False
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    shown += chunk
    if end_input and not sent and b"\n" in shown:
        os.write(fd, b"\x04")
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(shown)
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let db = ctx.db.to_str().expect("UTF-8 path");
    let mut full = vec!["--db", db];
    full.extend_from_slice(args);
    let output = Command::new("python3")
        .arg("-c")
        .arg(RUN)
        .arg(if end_input_after_a_line { "1" } else { "0" })
        .arg(BIN)
        .args(&full)
        .env_remove("PROMPTSHELF_DB")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run python3 (needed for a pseudo-terminal)");
    let shown = String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n");
    let status = output
        .status
        .code()
        .unwrap_or_else(|| panic!("{}", describe(args, &output, "killed by a signal")));
    (shown, status)
}

#[test]
fn completion_scripts_parse_in_bash_and_offer_the_library_s_names() {
    let ctx = TestContext::new();
    ctx.ok(&["init"]);
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let script = ctx.ok(&["completions", shell]);
        assert!(
            script.contains("PROMPTSHELF_COMPLETE") && script.contains(BIN),
            "{shell}: the script calls this binary back:\n{script}"
        );
    }
    let script = ctx.write("promptshelf.bash", ctx.ok(&["completions", "bash"]));
    let checked = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("run bash");
    assert!(checked.status.success(), "bash -n: {checked:?}");

    // What the script does on Tab, in bash: source it, fill COMP_WORDS, call the function.
    let complete = |words: &str| -> Vec<String> {
        let line = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             COMP_TYPE=9; _clap_complete_promptshelf promptshelf \"${{COMP_WORDS[COMP_CWORD]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let output = Command::new("bash")
            .arg("-c")
            .arg(&line)
            .env("PROMPTSHELF_DB", &ctx.db)
            .output()
            .expect("run bash");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| line.trim().to_string())
            .filter(|line| !line.is_empty())
            .collect()
    };
    assert_eq!(
        complete("promptshelf prompt show code-"),
        vec!["code-review".to_string()]
    );
    let uris = complete("promptshelf resource cat shelf://library/guides/");
    assert!(
        !uris.is_empty()
            && uris
                .iter()
                .all(|uri| uri.starts_with("shelf://library/guides/")),
        "{uris:?}"
    );
    let stored: i64 =
        ctx.query("SELECT count(*) FROM resources WHERE uri LIKE 'shelf://library/guides/%'");
    assert_eq!(uris.len() as i64, stored, "{uris:?}");
    let commands = complete("promptshelf pro");
    assert_eq!(commands, vec!["prompt".to_string()]);
    // The curation commands offer the same names.
    for command in ["edit", "mv"] {
        assert_eq!(
            complete(&format!("promptshelf prompt {command} code-")),
            vec!["code-review".to_string()],
            "prompt {command}"
        );
        assert_eq!(
            complete(&format!(
                "promptshelf resource {command} shelf://library/guides/"
            )),
            uris,
            "resource {command}"
        );
    }
    assert_eq!(
        complete("promptshelf collection rm lib"),
        vec!["library".to_string()]
    );
    ctx.ok(&["label", "set", "production", "code-review"]);
    ctx.ok(&["label", "set", "preview", "summarize"]);
    assert_eq!(
        complete("promptshelf label list pr"),
        vec!["preview".to_string(), "production".to_string()]
    );
    assert_eq!(
        complete("promptshelf label promote preview pro"),
        vec!["production".to_string()]
    );
}

#[test]
fn binary_content_is_kept_off_a_terminal_unless_forced() {
    let ctx = TestContext::new();
    let image = ctx.write(
        "pixel.png",
        [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0],
    );
    ctx.add_resource(&image, "shelf://local/pixel.png");
    let (shown, status) = in_terminal(&ctx, &["resource", "cat", "shelf://local/pixel.png"], false);
    assert_eq!(status, 1, "{shown}");
    assert!(
        shown.contains("shelf://local/pixel.png is binary (image/png, 9 B)")
            && shown.contains("--force"),
        "{shown}"
    );
    let (shown, status) = in_terminal(
        &ctx,
        &["resource", "cat", "shelf://local/pixel.png", "--force"],
        false,
    );
    assert_eq!(status, 0, "{shown}");
    assert!(shown.contains("PNG"), "{shown}");
    // Not a terminal: written as it is.
    let piped = ctx
        .command(&["resource", "cat", "shelf://local/pixel.png"])
        .output()
        .expect("run");
    assert!(piped.status.success());
    assert_eq!(
        piped.stdout,
        [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0]
    );
}

#[test]
fn serve_on_a_terminal_says_what_it_waits_for_and_stops_at_end_of_input() {
    let ctx = TestContext::new();
    ctx.ok(&["init"]);
    let (shown, status) = in_terminal(&ctx, &["serve"], true);
    assert_eq!(status, 0, "{shown}");
    let first = shown.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("promptshelf: serving ")
            && first.contains("waiting for JSON-RPC messages on stdin")
            && first.contains("promptshelf config HOST"),
        "{shown}"
    );
    // Started by a host (stdin a pipe), it prints nothing of the kind.
    let mut command = Command::new(BIN);
    command
        .arg("--db")
        .arg(&ctx.db)
        .arg("serve")
        .env_remove("PROMPTSHELF_DB");
    let mut server = crate::common::Server::spawn(command, true);
    server.initialize(crate::common::LEGACY[0]);
    let (lines, code) = server.logs_at_exit();
    assert_eq!(code, Some(0));
    assert!(
        lines
            .iter()
            .all(|line| !line.contains("waiting for JSON-RPC")),
        "{lines:?}"
    );
}

#[test]
fn tables_on_a_terminal_fit_its_width_and_piped_ones_keep_everything() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let long_title = "A title far longer than any terminal line, ".repeat(4);
    let prompt = ctx.write(
        "long.prompt.md",
        format!("---\nname: long\ntitle: {long_title}\n---\nHello.\n"),
    );
    ctx.ok(&["prompt", "add", prompt.to_str().expect("UTF-8 path")]);
    let (shown, status) = in_terminal(&ctx, &["prompt", "list"], false);
    assert_eq!(status, 0, "{shown}");
    let row = shown.lines().nth(1).expect("a row");
    assert_eq!(row.chars().count(), 80, "{shown}");
    assert!(row.ends_with('…') && row.starts_with("long"), "{shown}");
    let piped = ctx.ok(&["prompt", "list"]);
    assert!(piped.contains(long_title.trim_end()), "{piped}");
}
