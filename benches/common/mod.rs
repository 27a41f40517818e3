//! What both stdio benches share: starting a process that speaks newline-delimited JSON-RPC
//! on stdin/stdout (optionally pinned to one CPU with `taskset`), building modern MCP
//! requests (and legacy ones, after an `initialize`), timing one request at a time, checking every answer, and summarising times.
// Each bench is its own crate and uses only part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

/// The server under test, built by cargo for this bench.
pub const PROMPTSHELF: &str = env!("CARGO_BIN_EXE_promptshelf");

/// Requests kept in flight by the pipelined measurement.
pub const IN_FLIGHT: u64 = 64;

/// A program to run: the path and its arguments.
#[derive(Debug, Clone)]
pub struct Program {
    pub path: PathBuf,
    pub args: Vec<String>,
    /// The body of a request each new process is sent and answers first (a legacy
    /// `initialize`), before anything is measured but its start.
    pub opening: Option<String>,
}

impl Program {
    /// The same program, each process of it first opened as a legacy (2025-06-18) session
    /// with `initialize`, for requests without `_meta`.
    pub fn legacy(&self) -> Program {
        Program {
            opening: Some(initialize_body()),
            ..self.clone()
        }
    }

    /// `promptshelf --db DB serve --completion-rate 0`: the benches send completions far
    /// faster than a person types, so the per-process rate limit is off.
    ///
    /// The server under test: this build's, or the executable `PROMPTSHELF_BENCH_SERVER`
    /// names (to compare another build in the same run of the same bench).
    pub fn promptshelf(db: &Path) -> Program {
        let path = std::env::var_os("PROMPTSHELF_BENCH_SERVER")
            .map_or_else(|| PathBuf::from(PROMPTSHELF), PathBuf::from);
        Program {
            path,
            args: vec![
                "--db".into(),
                db.display().to_string(),
                "serve".into(),
                "--completion-rate".into(),
                "0".into(),
            ],
            opening: None,
        }
    }
}

/// Creates the database at `db` from the embedded seed library by starting the server once
/// with an empty stdin (it creates a missing database, then exits at EOF).
pub fn create_seed_db(db: &Path) {
    let program = Program::promptshelf(db);
    let status = Command::new(&program.path)
        .args(&program.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("start promptshelf to create the database");
    assert!(
        status.success() && db.exists(),
        "promptshelf serve did not create {} (exit status {status})",
        db.display()
    );
}

/// The number of CPUs of the machine (not only those this process may use).
fn cpu_count() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/present")
        .ok()
        .and_then(|present| {
            let last = present
                .trim()
                .rsplit(['-', ','])
                .next()?
                .parse::<usize>()
                .ok()?;
            Some(last + 1)
        })
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
}

/// `_meta` of a modern (2026-07-28) request.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// The part of a request line after its id: `"method":...,"params":{...,"_meta":...}}` and
/// the newline. A whole line is `{"jsonrpc":"2.0","id":<id>,` followed by this.
pub fn request_body(method: &str, params: Value) -> String {
    let mut params = params;
    if let Some(object) = params.as_object_mut() {
        object.insert("_meta".into(), modern_meta());
    }
    legacy_request_body(method, params)
}

/// A legacy (2025-06-18) `initialize` request body, which opens a session.
pub fn initialize_body() -> String {
    legacy_request_body(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "promptshelf-bench", "version": "1"},
        }),
    )
}

/// `request_body` of a legacy request, answered in the revision its session's `initialize`
/// negotiated (`Program::legacy`): the params as they are, without `_meta`.
pub fn legacy_request_body(method: &str, params: Value) -> String {
    let body = json!({ "method": method, "params": params });
    let text = serde_json::to_string(&body).expect("serialize a request");
    // `{"method":...}` -> `"method":...}` so that it follows `"id":N,`.
    format!("{}\n", &text[1..])
}

/// The generated completion table of `add_services`.
pub const SERVICES: &str = "services";

/// A prompt whose `service` argument completes from the table `services`.
const SERVICES_PROMPT: &str = "\
---
name: deploy-service
title: Deploy a service
description: Plan the deployment of one service of the fleet.
arguments:
  - name: service
    description: The service to deploy.
    required: true
    completion: services
---
Plan the deployment of {{ service }}: order of steps, checks after each, and how to roll back.
";

/// Adds a table `services` of `count` generated identifiers and the prompt
/// `deploy-service` completing from it, with the CLI, through files in `folder`.
pub fn add_services(db: &Path, folder: &Path, count: usize) {
    let values = folder.join(format!("{SERVICES}.csv"));
    std::fs::write(&values, generated_values(count)).expect("write the values file");
    cli(db, &["values", "import", SERVICES], &values);
    let prompt = folder.join("deploy-service.prompt.md");
    std::fs::write(&prompt, SERVICES_PROMPT).expect("write the prompt file");
    cli(db, &["prompt", "add"], &prompt);
}

/// Words the generated identifiers are made of: 64 of them, so two words and a number give
/// over a million distinct values.
const WORDS: [&str; 64] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
    "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "amber", "basalt", "cedar", "dune",
    "ember", "fjord", "granite", "harbor", "iris", "jade", "kestrel", "lumen", "maple", "nova",
    "onyx", "pine", "quartz", "raven", "slate", "tundra", "umber", "vale", "willow", "xenon",
    "yarrow", "zephyr", "atlas", "birch", "comet", "drift", "falcon", "glacier", "heron", "ivory",
    "meadow", "orbit", "prism", "summit",
];

/// `count` distinct identifiers like `alpha-bravo-1234`, with weights, as CSV.
pub fn generated_values(count: usize) -> String {
    let mut random = 0x5eed_u64;
    let mut next = move || {
        // splitmix64
        random = random.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = random;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut csv = String::with_capacity(count * 24);
    csv.push_str("value,weight,context\n");
    for i in 0..count {
        let first = WORDS[i % 64];
        let second = WORDS[(i / 64) % 64];
        // Block i / 4096 owns the numbers [1000 + 36 * block, 1000 + 36 * block + 36), so
        // every (first, second, number) is distinct.
        let number = 1000 + 36 * (i / 4096) as u64 + next() % 36;
        let weight = (next() % 1000) as f64 / 10.0;
        csv.push_str(&format!("{first}-{second}-{number},{weight}\n"));
    }
    csv
}

/// Runs `promptshelf --db DB <command...> FILE`, the way a person builds a library.
///
/// The same executable as the server under test, so that a database built for another
/// build's server has the schema that build reads.
pub fn cli(db: &Path, command: &[&str], file: &Path) {
    let file = file.display().to_string();
    let mut args = command.to_vec();
    args.push(&file);
    run_cli(db, &args);
}

/// Runs `promptshelf --db DB ARGS`, which must succeed, with the server's executable (`cli`).
pub fn run_cli(db: &Path, args: &[&str]) {
    let output = Command::new(Program::promptshelf(db).path)
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the promptshelf CLI");
    assert!(
        output.status.success(),
        "`promptshelf {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr).trim()
    );
}

/// Writes the request line with `id` and `body` (from `request_body`).
pub fn write_request(out: &mut impl Write, id: u64, body: &str) -> std::io::Result<()> {
    write!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{id},")?;
    out.write_all(body.as_bytes())
}

#[derive(Deserialize)]
struct Answer {
    id: Option<u64>,
    #[serde(default)]
    error: Option<Value>,
    result: Option<IgnoredAny>,
}

/// One answer in this many is parsed whole; every other one has its envelope checked. A
/// whole parse of a 6 KB answer costs the bench about as much as the server spends making
/// it, on the same two cores, and the echo's answers are small: parsing every answer
/// measured the bench's reader as much as the peer.
pub const PARSE_EVERY: u64 = 16;

/// Checks one answer line and returns its id. Every line must start
/// `{"jsonrpc":"2.0","id":<number>,"result":` (as both peers write their answers) and end
/// with `}`; with `whole`, it must also parse as JSON-RPC with a `result` and no `error`.
pub fn check_answer(line: &str, whole: bool) -> Result<u64, String> {
    if whole {
        return parse_answer(line);
    }
    let envelope = line
        .strip_prefix(r#"{"jsonrpc":"2.0","id":"#)
        .and_then(|rest| {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let id = rest[..digits].parse::<u64>().ok()?;
            let closed = line.trim_end().ends_with('}');
            (rest[digits..].starts_with(r#","result":"#) && closed).then_some(id)
        });
    // Anything else gets the whole parse, for its error message.
    envelope.map_or_else(|| parse_answer(line), Ok)
}

/// Checks one answer line whole: valid JSON-RPC with a numeric id and a `result`, no
/// `error`. Returns the id.
fn parse_answer(line: &str) -> Result<u64, String> {
    let answer: Answer = serde_json::from_str(line)
        .map_err(|err| format!("answer is not valid JSON-RPC ({err}): {}", clip(line)))?;
    if let Some(error) = answer.error {
        return Err(format!("error answer: {error}"));
    }
    let id = answer
        .id
        .ok_or_else(|| format!("answer without a numeric id: {}", clip(line)))?;
    if answer.result.is_none() {
        return Err(format!("answer without result: {}", clip(line)));
    }
    Ok(id)
}

fn clip(line: &str) -> &str {
    let mut end = line.len().min(300);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// Wrong answers seen during one measurement.
#[derive(Debug, Default)]
pub struct Errors {
    pub count: u64,
    pub first: Option<String>,
}

impl Errors {
    pub fn record(&mut self, message: String) {
        self.count += 1;
        self.first.get_or_insert(message);
    }

    /// Aborts the bench if any answer was wrong: figures over wrong answers mean nothing.
    pub fn ensure_none(&self, what: &str) {
        if self.count > 0 {
            panic!(
                "{what}: {} wrong answer(s); the first: {}",
                self.count,
                self.first.as_deref().unwrap_or("?")
            );
        }
    }
}

/// A running peer with its pipes.
pub struct Peer {
    child: Child,
    pub stdin: Option<BufWriter<ChildStdin>>,
    pub stdout: Option<BufReader<ChildStdout>>,
    line: String,
}

impl Peer {
    /// Starts `program`, on CPU `pin` (through taskset) when given.
    pub fn spawn(program: &Program, pin: Option<usize>) -> Peer {
        let mut command = match pin {
            Some(cpu) => {
                let mut command = Command::new("taskset");
                command.arg("-c").arg(cpu.to_string()).arg(&program.path);
                command
            }
            None => Command::new(&program.path),
        };
        let mut child = command
            .args(&program.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|err| panic!("start {}: {err}", program.path.display()));
        let stdin = child.stdin.take().expect("child stdin is piped");
        let stdout = child.stdout.take().expect("child stdout is piped");
        let mut peer = Peer {
            child,
            stdin: Some(BufWriter::with_capacity(64 * 1024, stdin)),
            stdout: Some(BufReader::with_capacity(256 * 1024, stdout)),
            line: String::new(),
        };
        if let Some(opening) = &program.opening {
            // Parsed whole: id 0 is a multiple of `PARSE_EVERY`.
            if let Err(message) = peer.call(0, opening) {
                panic!("{}: the opening request: {message}", program.path.display());
            }
        }
        peer
    }

    /// The process id (taskset execs the program, so it is the program's).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one request and waits for its answer; checks the answer (`check_answer`, whole
    /// for one id in `PARSE_EVERY`) and that it carries `id`. Returns the answer line.
    pub fn call(&mut self, id: u64, body: &str) -> Result<&str, String> {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        write_request(stdin, id, body).expect("write a request to the peer");
        stdin.flush().expect("flush a request to the peer");
        self.line.clear();
        let read = self
            .stdout
            .as_mut()
            .expect("stdout still open")
            .read_line(&mut self.line)
            .expect("read an answer from the peer");
        if read == 0 {
            panic!("the peer closed stdout instead of answering request {id}");
        }
        match check_answer(&self.line, id.is_multiple_of(PARSE_EVERY))? {
            got if got == id => Ok(&self.line),
            got => Err(format!("answer for id {got} while waiting for {id}")),
        }
    }

    /// Closes stdin and waits for a clean exit.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait for the peer to exit");
        assert!(status.success(), "the peer exited with {status}");
    }
}

/// Closed loop: one request at a time, `warmup` untimed then `count` timed, cycling through
/// `bodies`. Returns the sorted times.
pub fn closed_loop(
    peer: &mut Peer,
    bodies: &[String],
    warmup: usize,
    count: usize,
    what: &str,
) -> Vec<Duration> {
    let mut errors = Errors::default();
    let mut times = Vec::with_capacity(count);
    for i in 0..warmup + count {
        let body = &bodies[i % bodies.len()];
        let start = Instant::now();
        let outcome = peer.call(i as u64, body);
        let elapsed = start.elapsed();
        if let Err(message) = outcome {
            errors.record(message);
        }
        if i >= warmup {
            times.push(elapsed);
        }
    }
    errors.ensure_none(what);
    times.sort_unstable();
    times
}

/// The `p` quantile (0.0 < p <= 1.0) of sorted times, nearest rank.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    assert!(!sorted.is_empty(), "no times to summarise");
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// VmHWM of a running process, in KiB.
pub fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|err| panic!("read /proc/{pid}/status: {err}"));
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in /proc/{pid}/status"))
}

/// Microseconds, for tables.
pub fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// The line that starts every report: machine, date, and the load average (other work on
/// the machine makes every figure worse).
pub fn machine_line() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|name| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    format!(
        "{} cores ({model}), {}, load average {load} at start",
        cpu_count(),
        jiff::Zoned::now().strftime("%Y-%m-%d %H:%M %Z")
    )
}

/// The echo peer: one answer per request line, a fixed result (about 2 KB for
/// `resources/read`), flushed when no more input is buffered; exits at EOF.
pub fn echo() {
    let small: Value = json!({"resultType": "complete", "echo": true});
    let text: String = "All work and no play makes Jack a dull boy. "
        .repeat(46)
        .chars()
        .take(2_000)
        .collect();
    let large: Value = json!({
        "resultType": "complete",
        "contents": [{"uri": "shelf://library/guides/testing.md", "mimeType": "text/markdown", "text": text}],
    });
    let small = serde_json::to_string(&small).expect("serialize the small result");
    let large = serde_json::to_string(&large).expect("serialize the large result");
    // Our own buffer (StdinLock does not say what it holds), so we know when it is empty.
    let mut input = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => panic!("echo: read stdin: {err}"),
        }
        let request: Value = match serde_json::from_str(&line) {
            Ok(request) => request,
            Err(err) => panic!("echo: a request is not JSON ({err}): {line}"),
        };
        let id = serde_json::to_string(&request["id"]).expect("serialize an id");
        let result = if request["method"] == "resources/read" {
            &large
        } else {
            &small
        };
        writeln!(
            output,
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}"
        )
        .expect("echo: write stdout");
        if input.buffer().is_empty() {
            output.flush().expect("echo: flush stdout");
        }
    }
    output.flush().expect("echo: flush stdout");
}

/// Pipelined throughput: this thread writes, keeping `IN_FLIGHT` requests outstanding; a
/// reader thread checks answers and hands back one credit per answer. Stops sending after
/// `pipelined_requests` or `pipelined_time`, whichever comes first. Returns requests per
/// second and the peer's peak RSS (KiB), read before its stdin is closed.
pub fn pipelined(
    program: &Program,
    bodies: &[String],
    limit: u64,
    time: Duration,
    what: &str,
) -> (f64, u64) {
    let mut peer = Peer::spawn(program, None);
    let stdout = peer.stdout.take().expect("stdout of a new peer");
    let (credits, answered) = mpsc::channel::<()>();
    let reader = std::thread::spawn(move || {
        let mut stdout = stdout;
        let mut seen = vec![false; limit as usize];
        let mut errors = Errors::default();
        let mut line = String::new();
        let mut answers: u64 = 0;
        loop {
            line.clear();
            match stdout.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(err) => panic!("read a pipelined answer: {err}"),
            }
            answers += 1;
            match check_answer(&line, answers % PARSE_EVERY == 1) {
                Ok(id) if id < limit && !std::mem::replace(&mut seen[id as usize], true) => {}
                Ok(id) => errors.record(format!("unexpected or repeated id {id}")),
                Err(message) => errors.record(message),
            }
            // The writer may be gone already; keep reading to EOF so the peer can exit.
            let _ = credits.send(());
        }
        errors
    });

    let stdin = peer.stdin.as_mut().expect("stdin of a new peer");
    let start = Instant::now();
    let mut sent = send_batch(stdin, bodies, 0, IN_FLIGHT.min(limit));
    let mut outstanding = sent;
    while outstanding > 0 {
        if answered.recv().is_err() {
            panic!("{what}: the peer stopped answering with {outstanding} requests outstanding");
        }
        let mut returned = 1;
        while answered.try_recv().is_ok() {
            returned += 1;
        }
        outstanding -= returned;
        if start.elapsed() < time {
            let more = send_batch(stdin, bodies, sent, returned.min(limit - sent));
            sent += more;
            outstanding += more;
        }
    }
    let elapsed = start.elapsed();
    let rss_kib = peak_rss_kib(peer.pid());
    peer.finish();
    let errors = reader.join().expect("the pipelined reader thread panicked");
    errors.ensure_none(&format!("pipelined, {what}"));
    (sent as f64 / elapsed.as_secs_f64(), rss_kib)
}

/// Writes `count` requests with ids from `first`, cycling through `bodies`, and flushes.
/// Returns `count`.
fn send_batch(stdin: &mut impl Write, bodies: &[String], first: u64, count: u64) -> u64 {
    if count == 0 {
        return 0;
    }
    for id in first..first + count {
        let body = &bodies[id as usize % bodies.len()];
        write_request(stdin, id, body).expect("write a pipelined request");
    }
    stdin.flush().expect("flush pipelined requests");
    count
}

/// Cold start: spawn the peer, send one request, time until its answer; the median over
/// `spawns` fresh processes.
pub fn cold_start(program: &Program, body: &str, spawns: usize, what: &str) -> Duration {
    let mut errors = Errors::default();
    let mut times: Vec<Duration> = (0..spawns)
        .map(|_| {
            let start = Instant::now();
            let mut peer = Peer::spawn(program, None);
            let outcome = peer.call(1, body);
            let elapsed = start.elapsed();
            if let Err(message) = outcome {
                errors.record(message);
            }
            peer.finish();
            elapsed
        })
        .collect();
    errors.ensure_none(&format!("cold start, {what}"));
    times.sort_unstable();
    percentile(&times, 0.5)
}

/// Sends one request and says how many values it matches: the answer's `completion.total`,
/// or, where the server leaves that out (a long query matching more than one answer
/// holds), that more than 100 match.
pub fn total_matches(peer: &mut Peer, body: &str) -> String {
    let line = peer
        .call(0, body)
        .unwrap_or_else(|message| panic!("completion: {message}"));
    let answer: Value = serde_json::from_str(line).expect("parse an answer");
    let completion = &answer["result"]["completion"];
    match (
        completion["total"].as_u64(),
        completion["hasMore"].as_bool(),
    ) {
        (Some(total), _) => total.to_string(),
        (None, Some(true)) => "over 100 (not counted)".to_string(),
        _ => panic!("completion answer without total or hasMore: {line}"),
    }
}
