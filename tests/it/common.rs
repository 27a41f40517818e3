//! What every integration test needs: a `TestContext` (a temporary folder with a database
//! path and a way to run the binary that shows the command, stdout and stderr when it fails),
//! a `Server` (the real `promptshelf serve` over real pipes), and validation against the
//! official MCP JSON Schemas.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_promptshelf");
pub const MODERN: &str = "2026-07-28";
pub const LEGACY: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The seed library's prompts, by name.
pub const SEED_PROMPTS: [&str; 8] = [
    "api-design-review",
    "architecture-diagram",
    "code-review",
    "commit-message",
    "debug-error",
    "explain-code",
    "summarize",
    "write-tests",
];

/// A temporary folder with a database path; removed when dropped.
pub struct TestContext {
    pub dir: tempfile::TempDir,
    pub db: PathBuf,
}

/// `promptshelf --db DB ARGS`, with nothing from the environment that would change it.
pub fn command_on(db: &Path, args: &[&str]) -> Command {
    library_args(Command::new(BIN), db, args)
}

/// `command` (the binary, or a wrapper whose last argument so far is the binary) given
/// `--db DB ARGS`, with nothing from the environment that would change it.
pub fn library_args(mut command: Command, db: &Path, args: &[&str]) -> Command {
    command
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("PROMPTSHELF_DB")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    command
}

/// A temporary home folder with a project folder in it, for `config` and the hosts' own
/// command lines: nothing of this machine's home is read or written.
pub struct Home {
    pub ctx: TestContext,
}

impl Home {
    pub fn new() -> Home {
        let ctx = TestContext::new();
        std::fs::create_dir_all(ctx.path("home/project")).expect("create the project folder");
        Home { ctx }
    }

    pub fn home(&self) -> PathBuf {
        self.ctx.path("home")
    }

    /// `promptshelf --db DB config ARGS` in the project folder, with this home and none of
    /// the machine's own host folders.
    pub fn config_on(&self, db: &Path, args: &[&str]) -> Command {
        let mut command = command_on(db, &[&["config"], args].concat());
        command
            .current_dir(self.home().join("project"))
            .env("HOME", self.home())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .env_remove("APPDATA");
        command
    }
}

/// Runs `promptshelf --db DB ARGS` and expects success; returns stdout.
pub fn ok_on(db: &Path, args: &[&str]) -> String {
    let output = command_on(db, args).output().expect("run promptshelf");
    if !output.status.success() {
        panic!("{}", describe(args, &output, "expected success"));
    }
    String::from_utf8(output.stdout).expect("stdout is UTF-8")
}

impl TestContext {
    pub fn new() -> TestContext {
        let dir = tempfile::tempdir().expect("temporary folder");
        let db = dir.path().join("library.db");
        TestContext { dir, db }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Writes a file under the temporary folder (creating folders) and returns its path.
    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create folder");
        }
        std::fs::write(&path, contents).expect("write file");
        path
    }

    /// `promptshelf --db <db> ARGS...`, not yet run.
    pub fn command(&self, args: &[&str]) -> Command {
        command_on(&self.db, args)
    }

    pub fn run(&self, args: &[&str]) -> Output {
        let mut command = self.command(args);
        command.output().expect("run promptshelf")
    }

    /// Runs and expects success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        ok_on(&self.db, args)
    }

    /// Runs with `--json` output expected; returns it parsed.
    pub fn json(&self, args: &[&str]) -> Value {
        let stdout = self.ok(args);
        serde_json::from_str(&stdout)
            .unwrap_or_else(|err| panic!("promptshelf {args:?} printed no JSON ({err}):\n{stdout}"))
    }

    /// Runs and expects failure; returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let output = self.run(args);
        if output.status.success() {
            panic!("{}", describe(args, &output, "expected failure"));
        }
        String::from_utf8_lossy(&output.stderr).into_owned()
    }

    /// The test database, opened directly (to look at rows the CLI wrote).
    pub fn open_db(&self) -> rusqlite::Connection {
        open_library(&self.db)
    }

    /// The one value `sql` selects from the test database.
    pub fn query<T: rusqlite::types::FromSql>(&self, sql: &str) -> T {
        self.open_db()
            .query_row(sql, [], |row| row.get(0))
            .unwrap_or_else(|err| panic!("{sql}: {err}"))
    }

    /// `promptshelf resource add FILE --uri URI --detach`, which must succeed: the file
    /// replaces the resource by hand, also one a collection (the seed's) holds.
    pub fn add_resource(&self, file: &Path, uri: &str) {
        self.ok(&[
            "resource",
            "add",
            &file.display().to_string(),
            "--uri",
            uri,
            "--detach",
        ]);
    }

    /// A folder `notes` of 500 markdown pages and one prompt (`hello`), for imports that
    /// change many items at once; returns its path.
    pub fn many_notes(&self) -> String {
        for n in 0..500 {
            self.write(
                &format!("notes/page-{n}.md"),
                format!("# Page {n}\n\nText {n}.\n"),
            );
        }
        self.write("notes/hello.prompt.md", "Say hello.\n");
        self.path("notes").display().to_string()
    }

    pub fn server(&self) -> Server {
        Server::start(&self.db, &[])
    }
}

pub fn describe(args: &[&str], output: &Output, what: &str) -> String {
    format!(
        "{what}: promptshelf {}\nstatus: {}\n--- stdout\n{}\n--- stderr\n{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A running `promptshelf serve`, spoken to over its real stdin and stdout.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// stderr, line by line, when it is captured.
    logs: Option<Receiver<String>>,
    /// Disconnected once every stderr line not captured has gone to the test's output.
    forwarded: Receiver<()>,
    next_id: i64,
    /// Messages read while waiting for another id (notifications, out-of-order answers).
    pending: Vec<Value>,
}

/// How long a test waits for the server before calling it stuck. Generous, because it only
/// decides when a hang is reported: the unoptimised binary reading and encoding a 40 MiB
/// blob took over 10 s on two busy cores, and a wait that ends sooner fails a working server.
pub const WAIT: Duration = Duration::from_secs(60);

/// `RUST_LOG` for a server whose watcher logs each look it takes at the library, with the
/// change-log position it has seen (`Server::watched`): warnings as usual, and that.
pub const WATCHER_LOG: &str = "warn,promptshelf::server::watch=trace";

/// The position in the watcher's log line of a look at the library
/// (`... looked at the library position=N`), or None for any other line.
pub fn looked_at(line: &str) -> Option<i64> {
    let (_, after) = line.split_once("looked at the library position=")?;
    let digits = after.split(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

impl Server {
    pub fn start(db: &Path, extra: &[&str]) -> Server {
        Server::start_with_env(db, extra, &[])
    }

    /// Starts the server with extra environment variables (e.g. a pinned clock).
    pub fn start_with_env(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        Server::spawn(serve_command(db, extra, env), false)
    }

    /// Starts the server with its stderr captured and its watcher's looks in it
    /// (`WATCHER_LOG`), for `told_until_now` and `looked_since_now`.
    pub fn watched(db: &Path, extra: &[&str]) -> Server {
        Server::spawn(serve_command(db, extra, &[("RUST_LOG", WATCHER_LOG)]), true)
    }

    /// Runs `command` (a `promptshelf serve` however it is wrapped: in a namespace, as
    /// another user) as the server. With `capture`, its stderr is kept for `logs_until` and
    /// `logs_at_exit`; without, it goes to the test's own output, shown when the test fails.
    pub fn spawn(mut command: Command, capture: bool) -> Server {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {command:?}: {err}"));
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        // A child writing to the test process's own stderr would bypass the test's output
        // capture, and a passing run would show the server's log. A thread spawned here
        // writes into this test's captured output instead, as `eprintln!` in the test would.
        let stderr = child.stderr.take().expect("stderr");
        let (sender, logs) = channel();
        let (done, forwarded) = channel::<()>();
        std::thread::spawn(move || {
            let _done = done;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !capture {
                    eprintln!("{line}");
                } else if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            lines,
            logs: capture.then_some(logs),
            forwarded,
            next_id: 1,
            pending: Vec::new(),
        }
    }

    /// Closes stdin and waits for the process, then returns every stderr line not read yet
    /// (a server spawned with `capture`) with its exit code: once it has exited, its log is
    /// whole.
    pub fn logs_at_exit(mut self) -> (Vec<String>, Option<i32>) {
        let logs = self.logs.take().expect("a server spawned with capture");
        let code = self.close();
        let mut lines = Vec::new();
        loop {
            match logs.recv_timeout(WAIT) {
                Ok(line) => lines.push(line),
                Err(RecvTimeoutError::Disconnected) => return (lines, code),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("stderr still open {WAIT:?} after the server exited")
                }
            }
        }
    }

    /// The stderr lines from the last one read up to the first that `last` accepts (a
    /// server spawned with capture); panics after `WAIT`, naming `what` was awaited.
    pub fn logs_until(&mut self, what: &str, mut last: impl FnMut(&str) -> bool) -> Vec<String> {
        let logs = self.logs.as_ref().expect("a server spawned with capture");
        let deadline = Instant::now() + WAIT;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = logs.recv_timeout(left) else {
                panic!(
                    "no {what} within {WAIT:?}; the log said:\n{}",
                    lines.join("\n")
                );
            };
            let done = last(&line);
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    /// Waits until the watcher has taken a whole look at the library begun after this call
    /// (a server started `watched`), which saw every commit made before it: of the looks
    /// logged after the lines already there, the first may have begun earlier, the second
    /// cannot. Returns the log lines read.
    pub fn looked_since_now(&mut self) -> Vec<String> {
        let logs = self.logs.as_ref().expect("a server spawned with capture");
        let mut lines: Vec<String> = logs.try_iter().collect();
        for _ in 0..2 {
            lines.extend(self.logs_until("look of the watcher", |line| looked_at(line).is_some()));
        }
        lines
    }

    /// Every message the server sent for what was committed until now (a server started
    /// `watched`): once the watcher has looked since, every notification of those commits
    /// is on its way, ahead of the answer to a ping.
    pub fn told_until_now(&mut self) -> Vec<Value> {
        self.looked_since_now();
        self.before_ping()
    }

    /// The messages the server writes before its answer to a ping sent now, after those
    /// already read: what it had sent by the time it read the ping.
    pub fn before_ping(&mut self) -> Vec<Value> {
        let id = json!(format!("ping-{}", self.next_id));
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let mut messages = std::mem::take(&mut self.pending);
        loop {
            let message = self
                .read_line(WAIT)
                .unwrap_or_else(|| panic!("no answer to the ping within {WAIT:?}"));
            if message.get("id") == Some(&id) && message.get("method").is_none() {
                return messages;
            }
            messages.push(message);
        }
    }

    /// Writes raw bytes (a line must end with '\n').
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).expect("write to server");
        stdin.flush().expect("flush to server");
    }

    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("serialize");
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next line the server writes, parsed; panics after `WAIT`.
    pub fn next_message(&mut self) -> Value {
        if !self.pending.is_empty() {
            return self.pending.remove(0);
        }
        self.read_line(WAIT)
            .unwrap_or_else(|| panic!("no message from the server within {WAIT:?}"))
    }

    /// The next line the server writes, as it wrote it (for what parsing into a `Value`
    /// loses: the order of members); panics after `WAIT`.
    pub fn next_line(&mut self) -> String {
        assert!(
            self.pending.is_empty(),
            "messages are waiting: {:?}",
            self.pending
        );
        self.lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("no message from the server within {WAIT:?}"))
    }

    /// The next line within `timeout`, or None.
    pub fn read_line(&mut self, timeout: Duration) -> Option<Value> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap_or_else(|err| {
                panic!("the server wrote a line that is not JSON ({err}): {line}")
            })),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Waits for the response with this id, keeping other messages for later.
    pub fn response_to(&mut self, id: &Value) -> Value {
        if let Some(at) = self
            .pending
            .iter()
            .position(|m| m.get("id") == Some(id) && m.get("method").is_none())
        {
            return self.pending.remove(at);
        }
        loop {
            let message = self
                .read_line(WAIT)
                .unwrap_or_else(|| panic!("no response to id {id} within {WAIT:?}"));
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return message;
            }
            self.pending.push(message);
        }
    }

    /// Asks `ask` again, every 20 ms, until it answers `expected`, for up to `WAIT`: the
    /// server sees another process's commit at its next poll of the database, not at once.
    pub fn eventually<T: PartialEq + std::fmt::Debug>(
        &mut self,
        expected: T,
        mut ask: impl FnMut(&mut Server) -> T,
    ) {
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let answer = ask(self);
            if answer == expected {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "still {answer:?} after {WAIT:?}, expected {expected:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends a request with a fresh numeric id and returns its response as the line the
    /// server wrote (for what parsing into a `Value` loses: the order of members). Nothing
    /// else may be on its way: the next line is taken to be the response.
    pub fn request_line(&mut self, method: &str, params: Value) -> String {
        assert!(
            self.pending.is_empty(),
            "messages are waiting: {:?}",
            self.pending
        );
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let line = self
            .lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("no response to id {id} within {WAIT:?}"));
        let response: Value = serde_json::from_str(&line).expect("the response is JSON");
        assert_eq!(response["id"], id, "another message came first: {line}");
        line
    }

    /// Sends a request with a fresh numeric id and returns the whole response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response_to(&id)
    }

    /// A modern (2026-07-28) request: `_meta` carries the version and capabilities.
    pub fn modern(&mut self, method: &str, params: Value) -> Value {
        self.request(method, modern_params(params, json!({})))
    }

    /// Opens a legacy session with `initialize` + `notifications/initialized`.
    pub fn initialize(&mut self, version: &str) -> Value {
        self.initialize_with(version, json!({}))
    }

    /// `initialize`, declaring these client capabilities.
    pub fn initialize_with(&mut self, version: &str, capabilities: Value) -> Value {
        let response = self.request(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "promptshelf-tests", "version": "0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        response
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The most memory the server has held so far (`VmHWM`, its peak resident set), in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the server's /proc status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc status")
    }

    /// Closes stdin, reads what the server still writes until it closes stdout, and
    /// returns those messages with the exit code.
    pub fn close_and_collect(mut self) -> (Vec<Value>, Option<i32>) {
        self.stdin.take();
        let mut messages = std::mem::take(&mut self.pending);
        loop {
            match self.lines.recv_timeout(WAIT) {
                Ok(line) => messages.push(serde_json::from_str(&line).unwrap_or_else(|err| {
                    panic!("the server wrote a line that is not JSON ({err}): {line}")
                })),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("stdout still open {WAIT:?} after stdin closed")
                }
            }
        }
        (messages, self.close())
    }

    /// Closes stdin and waits for the process; returns its exit code.
    pub fn close(mut self) -> Option<i32> {
        self.stdin.take();
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not exit within {WAIT:?} of stdin closing");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Its last lines reach the test's output before the test is reported; bounded, since
        // a process the server started could hold the pipe open.
        let _ = self.forwarded.recv_timeout(Duration::from_secs(1));
    }
}

/// `promptshelf --db DB serve EXTRA` with `env`, not yet run.
fn serve_command(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(BIN);
    command
        .arg("--db")
        .arg(db)
        .arg("serve")
        .args(extra)
        .envs(env.iter().copied())
        .env_remove("PROMPTSHELF_DB");
    command
}

/// `params` with the modern `_meta` added (capabilities as given).
pub fn modern_params(mut params: Value, capabilities: Value) -> Value {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "promptshelf-tests", "version": "0"}
    });
    match params.as_object_mut() {
        Some(object) => {
            object.insert("_meta".into(), meta);
        }
        None => params = json!({"_meta": meta}),
    }
    params
}

/// The official JSON Schema of one revision, compiled once per (revision, definition).
pub fn validate(revision: &str, definition: &str, instance: &Value) {
    static CACHE: OnceLock<Mutex<HashMap<(String, String), jsonschema::Validator>>> =
        OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let key = (revision.to_string(), definition.to_string());
    if !cache.contains_key(&key) {
        let path = spec_dir().join(revision).join("schema.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
        let mut schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        let defs = if schema.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        assert!(
            schema[defs].get(definition).is_some(),
            "{revision} defines no {definition}"
        );
        schema["$ref"] = json!(format!("#/{defs}/{definition}"));
        let validator = jsonschema::validator_for(&schema)
            .unwrap_or_else(|err| panic!("{revision} schema does not compile: {err}"));
        cache.insert(key.clone(), validator);
    }
    let validator = &cache[&key];
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|err| format!("{} at {}", err, err.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid {definition} of {revision}:\n{}\n{}",
        errors.join("\n"),
        serde_json::to_string_pretty(instance).unwrap_or_default()
    );
}

/// `tests/spec`: the official schemas, one folder per revision (see its README.md).
pub fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spec")
}

/// Every row of every table plus the schema version: equal snapshots mean nothing changed.
pub fn snapshot(db: &Path) -> Vec<String> {
    let conn = open_library(db);
    let mut lines = vec![format!(
        "user_version {}",
        conn.query_row("PRAGMA user_version", [], |row| row.get::<_, i64>(0))
            .expect("user_version")
    )];
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .expect("list tables")
        .query_map([], |row| row.get(0))
        .expect("list tables")
        .collect::<Result<_, _>>()
        .expect("table names");
    for table in tables {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{table}\""))
            .expect("select");
        let columns = stmt.column_count();
        let mut rows = stmt.query([]).expect("query");
        while let Some(row) = rows.next().expect("row") {
            let cells: Vec<String> = (0..columns)
                .map(|at| format!("{:?}", row.get_ref(at).expect("cell")))
                .collect();
            lines.push(format!("{table}: {}", cells.join(" | ")));
        }
    }
    lines
}

/// The target directory: `BIN` is `<target>/<profile>/promptshelf`, so this follows
/// `CARGO_TARGET_DIR` (or a configured `target-dir`) and defaults to `target/`.
pub fn target_dir() -> PathBuf {
    Path::new(BIN)
        .parent()
        .and_then(Path::parent)
        .expect("the binary lives in <target>/<profile>/")
        .to_path_buf()
}

/// Runs with stdout and stderr in files (so nothing blocks on a full pipe) and kills the
/// process after `timeout`; returns the status and both outputs.
pub fn run_bounded(
    mut command: Command,
    ctx: &TestContext,
    name: &str,
    timeout: Duration,
) -> (ExitStatus, String, String) {
    let stdout_path = ctx.path(&format!("{name}.stdout"));
    let stderr_path = ctx.path(&format!("{name}.stderr"));
    let mut child = command
        .env_remove("PROMPTSHELF_DB")
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).expect("create stdout file"))
        .stderr(File::create(&stderr_path).expect("create stderr file"))
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {name} ({command:?}): {err}"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{name} did not finish within {timeout:?}\n--- stdout\n{}\n--- stderr\n{}",
                read_lossy(&stdout_path),
                read_lossy(&stderr_path)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status, read_lossy(&stdout_path), read_lossy(&stderr_path))
}

/// The files under `dir` (none when it is missing), relative to it with `/`, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(dir).expect("under dir");
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found.sort();
    found
}

pub fn read_lossy(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
}

/// Opens a library as a plain SQLite connection, with the one SQL function its schema
/// uses that SQLite lacks, as the store adds it (`store::blobs`): `unpacked(data, packing,
/// size)`, the content of a row of `blobs`, which the search index's view reads (so no
/// statement that reads it, a write to a resource among them, can be prepared without
/// it).
pub fn open_library(db: &Path) -> rusqlite::Connection {
    use rusqlite::functions::FunctionFlags;
    let conn = rusqlite::Connection::open(db).expect("open the test database");
    conn.create_scalar_function(
        "unpacked",
        3,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let data: Vec<u8> = ctx.get(0)?;
            let (packing, size): (i64, i64) = (ctx.get(1)?, ctx.get(2)?);
            match packing {
                0 => Ok(data),
                _ => lz4_flex::block::decompress(&data, size as usize)
                    .map_err(|err| rusqlite::Error::UserFunctionError(err.into())),
            }
        },
    )
    .expect("add unpacked");
    conn
}

/// The downgrades, newest first: `to-N.sql` takes a database of version N + 1 back to N,
/// the way version N left it (tests/downgrade/README.md).
pub const DOWNGRADES: [&str; 13] = [
    include_str!("../downgrade/to-13.sql"),
    include_str!("../downgrade/to-12.sql"),
    include_str!("../downgrade/to-11.sql"),
    include_str!("../downgrade/to-10.sql"),
    include_str!("../downgrade/to-9.sql"),
    include_str!("../downgrade/to-8.sql"),
    include_str!("../downgrade/to-7.sql"),
    include_str!("../downgrade/to-6.sql"),
    include_str!("../downgrade/to-5.sql"),
    include_str!("../downgrade/to-4.sql"),
    include_str!("../downgrade/to-3.sql"),
    include_str!("../downgrade/to-2.sql"),
    include_str!("../downgrade/to-1.sql"),
];

/// The downgrades that take a database of this build's schema back to `version`.
pub fn downgrades_to(version: i64) -> &'static [&'static str] {
    &DOWNGRADES[..DOWNGRADES.len() + 1 - version as usize]
}
