//! `serve --http` under load: `prompts/get`, `resources/read` (a 2 KB document) and
//! `completion/complete` as 2026-07-28 requests over 64 kept-alive connections, each sending
//! its next request when the last is answered, from a load generator in this bench (tokio,
//! raw HTTP/1.1), by promptshelf asking for a bearer token (the way a team runs it; each
//! request sends one) and by a second promptshelf on the same library with `--auth none`.
//! Beside them, with the same generator in the same run: the official Rust SDK's Streamable
//! HTTP server (rmcp, `benches/rmcp-server`) and the official TypeScript SDK's
//! (`tests/interop/ts_server.mjs`), both serving the same prompt, document and completions,
//! and a minimal HTTP echo (hyper, a fixed JSON body, in a child process of this bench) as
//! the yardstick. Then the memory of promptshelf with 1,000 `subscriptions/listen` streams
//! open. Prints figures; asserts no times.
//!
//! `cargo bench --bench http` (about a minute once built; `-- --quick` for a shorter run;
//! `PROMPTSHELF_BENCH_SERVER=PATH` serves with another build, the library still made by
//! this one). It builds `benches/rmcp-server` with cargo into `<target>/rmcp-server` (a few
//! minutes the first time: it needs the crates.io registry), and installs the pinned npm
//! packages of `tests/interop/package.json` into `<target>/mcp-node` when they are missing,
//! as the tests do (it needs npm).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// This build of promptshelf, which makes the bench's library.
const PROMPTSHELF: &str = env!("CARGO_BIN_EXE_promptshelf");
/// Names another build to serve instead of this one (to compare two builds in the same
/// bench, one run after the other).
const SERVER_ENV: &str = "PROMPTSHELF_BENCH_SERVER";
/// Connections kept busy at once.
const CONNECTIONS: usize = 64;
/// Listen streams held open for the memory figure.
const STREAMS: usize = 1_000;
/// Set in the environment of the child that serves the echo.
const ECHO_ENV: &str = "PROMPTSHELF_BENCH_HTTP_ECHO";

const MODERN: &str = "2026-07-28";
const DOC_URI: &str = "shelf://bench/doc.md";
/// The argument of every `prompts/get`, and the prefix every `completion/complete` completes.
const PROMPT_CODE: &str = "fn main() {}";
const COMPLETE_PREFIX: &str = "c";

fn main() {
    if std::env::var_os(ECHO_ENV).is_some() {
        echo_server();
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let (warm, measured) = if quick {
        (Duration::from_millis(300), Duration::from_secs(1))
    } else {
        (Duration::from_secs(1), Duration::from_secs(4))
    };
    let dir = tempfile::tempdir().expect("temporary folder");
    let content = library(dir.path());
    let bearer = bench_token(&dir.path().join("bench.db"));
    let content_file = dir.path().join("content.json");
    std::fs::write(&content_file, content.to_string()).expect("write content.json");

    let db = dir.path().join("bench.db");
    let server =
        std::env::var_os(SERVER_ENV).map_or_else(|| PathBuf::from(PROMPTSHELF), PathBuf::from);
    let ours = spawn_listening(
        Command::new(&server)
            .arg("--db")
            .arg(&db)
            .args(["serve", "--http", "127.0.0.1:0", "--auth", "none"])
            .args(["--completion-rate", "0"])
            // The 1,000 streams below come from one caller (`--auth none`): let it hold them.
            .args(["--max-streams-per-token", "1000"]),
        "promptshelf: listening on ",
    );
    let with_token = spawn_listening(
        Command::new(&server)
            .arg("--db")
            .arg(&db)
            .args(["serve", "--http", "127.0.0.1:0", "--auth", "token"])
            .args(["--completion-rate", "0"]),
        "promptshelf: listening on ",
    );
    let rmcp = spawn_listening(
        Command::new(rmcp_server()).arg(&content_file),
        "listening on ",
    );
    let echo = spawn_listening(
        Command::new(std::env::current_exe().expect("this bench's path")).env(ECHO_ENV, "1"),
        "listening on ",
    );
    let node = node_tools();
    let ts = spawn_listening(
        Command::new(node.join("node_modules/.bin/node"))
            .arg(copy_script(&node, "ts_server.mjs"))
            .arg(&content_file),
        "listening on ",
    );

    println!("http bench: {}", machine_line());
    println!("promptshelf: {}", server.display());
    println!(
        "{CONNECTIONS} connections, each one request at a time; {:.1}s measured per row after {:.1}s warm-up",
        measured.as_secs_f64(),
        warm.as_secs_f64()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    println!(
        "{:<22} {:<15} {:>9} {:>9} {:>9} {:>10} {:>8}",
        "workload", "server", "req/s", "p50 µs", "p99 µs", "CPU µs/req", "RSS MiB"
    );
    let workloads = [
        ("prompts/get", "prompts/get", Some("bench-review")),
        ("resources/read 2 KB", "resources/read", Some(DOC_URI)),
        ("completion/complete", "completion/complete", None),
    ];
    let mut ratios = Vec::new();
    for (label, method, name) in workloads {
        let request = modern_request(method, name, None);
        let authorized = modern_request(method, name, Some(&bearer));
        let answer = Expected::of(method, &content);
        let mut rates = Vec::new();
        for (server, child, request, expected) in [
            ("promptshelf", &with_token, &authorized, Some(&answer)),
            ("ps --auth none", &ours, &request, Some(&answer)),
            ("rmcp", &rmcp, &request, Some(&answer)),
            ("ts-sdk", &ts, &request, Some(&answer)),
            // The echo's fixed body is checked for a `result` only.
            ("echo", &echo, &request, None),
        ] {
            let figures = runtime.block_on(load(
                child.address,
                request,
                expected,
                (warm, measured),
                child.pid(),
            ));
            println!(
                "{label:<22} {server:<15} {:>9.0} {:>9.0} {:>9.0} {:>10.1} {:>8.1}",
                figures.rate, figures.p50, figures.p99, figures.cpu_per_request, figures.rss_mib
            );
            rates.push(figures.rate);
        }
        ratios.push((label, rates));
    }
    for (label, rates) in ratios {
        let [token, none, rmcp, ts, echo] = rates[..] else {
            unreachable!("five servers a row")
        };
        println!(
            "{label}: promptshelf with a token at {:.2}x the echo and {:.2}x rmcp ({:.2}x and {:.2}x with --auth none); rmcp at {:.2}x the echo; promptshelf {:.1}x the TypeScript SDK",
            token / echo,
            token / rmcp,
            none / echo,
            none / rmcp,
            rmcp / echo,
            token / ts
        );
    }
    let rss = runtime.block_on(streams_rss(ours.address, ours.pid()));
    println!("promptshelf RSS with {STREAMS} subscriptions/listen streams open: {rss:.1} MiB");
}

/// The library the promptshelf servers serve: a prompt whose argument completes from a
/// table, and a 2 KB document. Returns the same content for rmcp's and the TypeScript SDK's
/// servers.
fn library(dir: &Path) -> Value {
    let db = dir.join("bench.db");
    let run = |args: &[&str]| {
        let output = Command::new(PROMPTSHELF)
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .expect("run promptshelf");
        assert!(
            output.status.success(),
            "promptshelf {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    run(&["init", "--empty"]);
    let document: String = "Prefer small functions with one purpose, names that say what they hold, and tests that fail. "
        .repeat(30)
        .chars()
        .take(2_048)
        .collect();
    let doc = dir.join("doc.md");
    std::fs::write(&doc, &document).expect("write the document");
    run(&["resource", "add", doc.to_str().unwrap(), "--uri", DOC_URI]);
    let languages: Vec<String> = [
        "ada",
        "bash",
        "c",
        "clojure",
        "cobol",
        "cpp",
        "crystal",
        "csharp",
        "css",
        "d",
        "dart",
        "elixir",
        "elm",
        "erlang",
        "fortran",
        "fsharp",
        "go",
        "groovy",
        "haskell",
        "html",
        "java",
        "javascript",
        "julia",
        "kotlin",
        "lisp",
        "lua",
        "nim",
        "ocaml",
        "pascal",
        "perl",
        "php",
        "prolog",
        "python",
        "r",
        "racket",
        "ruby",
        "rust",
        "scala",
        "scheme",
        "sql",
        "swift",
        "typescript",
        "zig",
    ]
    .map(String::from)
    .to_vec();
    let table = dir.join("languages.txt");
    std::fs::write(&table, languages.join("\n")).expect("write the table");
    run(&["values", "import", "languages", table.to_str().unwrap()]);
    let text = "Review this code for correctness and clarity:\n\n{{ code }}";
    let prompt = dir.join("bench-review.prompt.md");
    std::fs::write(
        &prompt,
        format!(
            "---\nname: bench-review\ndescription: The bench prompt\narguments:\n  - name: code\n    required: true\n    completion: languages\n---\n{text}\n"
        ),
    )
    .expect("write the prompt");
    run(&["prompt", "add", prompt.to_str().unwrap()]);
    json!({"prompt": "bench-review", "argument": "code", "text": text, "completion": languages,
           "uri": DOC_URI, "mimeType": "text/markdown", "document": document})
}

/// A bearer token of the bench's library, for the server that asks for one.
fn bench_token(db: &Path) -> String {
    let output = Command::new(PROMPTSHELF)
        .arg("--db")
        .arg(db)
        .args(["token", "add", "bench", "--json"])
        .output()
        .expect("run promptshelf token add");
    let added: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "token add --json ({err}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    added["token"].as_str().expect("a token").to_string()
}

/// One 2026-07-28 request with its headers (and `bearer` as its token), as bytes to send
/// again and again.
fn modern_request(method: &str, name: Option<&str>, bearer: Option<&str>) -> Vec<u8> {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let params = match method {
        "prompts/get" => {
            json!({"name": name, "arguments": {"code": PROMPT_CODE}, "_meta": meta})
        }
        "resources/read" => json!({"uri": name, "_meta": meta}),
        _ => json!({"ref": {"type": "ref/prompt", "name": "bench-review"},
                    "argument": {"name": "code", "value": COMPLETE_PREFIX}, "_meta": meta}),
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: {MODERN}\r\nmcp-method: {method}\r\ncontent-length: {}\r\n",
        body.len()
    );
    if let Some(name) = name {
        head.push_str(&format!("mcp-name: {name}\r\n"));
    }
    if let Some(bearer) = bearer {
        head.push_str(&format!("authorization: Bearer {bearer}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(&body);
    head.into_bytes()
}

/// What every answer of a workload holds at `pointer`: the prompt's text with its argument
/// filled in, the whole document, or every value of the table starting with the prefix (in
/// any order, among any others: promptshelf also offers the values containing it).
#[derive(Clone)]
struct Expected {
    pointer: &'static str,
    value: Value,
}

impl Expected {
    /// For the requests `modern_request` makes, from the content every server serves.
    fn of(method: &str, content: &Value) -> Self {
        let text = |key: &str| {
            content[key]
                .as_str()
                .expect("content holds text")
                .to_string()
        };
        match method {
            "prompts/get" => Expected {
                pointer: "/result/messages/0/content/text",
                value: json!(
                    text("text").replace(&format!("{{{{ {} }}}}", text("argument")), PROMPT_CODE)
                ),
            },
            "resources/read" => Expected {
                pointer: "/result/contents/0/text",
                value: json!(text("document")),
            },
            _ => Expected {
                pointer: "/result/completion/values",
                value: content["completion"]
                    .as_array()
                    .expect("completion values")
                    .iter()
                    .filter(|value| {
                        value
                            .as_str()
                            .is_some_and(|value| value.starts_with(COMPLETE_PREFIX))
                    })
                    .cloned()
                    .collect(),
            },
        }
    }

    fn holds(&self, answer: &Value) -> bool {
        match (answer.pointer(self.pointer), &self.value) {
            (Some(Value::Array(found)), Value::Array(wanted)) => {
                wanted.iter().all(|value| found.contains(value))
            }
            (found, wanted) => found == Some(wanted),
        }
    }
}

struct Figures {
    rate: f64,
    p50: f64,
    p99: f64,
    cpu_per_request: f64,
    rss_mib: f64,
}

/// `CONNECTIONS` connections each sending `request` as soon as the last is answered, for
/// `warm` (not counted) then `measured`; every answer checked against `expected`.
async fn load(
    address: SocketAddr,
    request: &[u8],
    expected: Option<&Expected>,
    (warm, measured): (Duration, Duration),
    pid: u32,
) -> Figures {
    let request: Arc<[u8]> = request.into();
    let expected = Arc::new(expected.cloned());
    let counting = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..CONNECTIONS {
        let (request, expected) = (request.clone(), expected.clone());
        let (counting, stop) = (counting.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(address).await.expect("connect");
            stream.set_nodelay(true).expect("TCP_NODELAY");
            let mut buffer = Vec::with_capacity(8192);
            let mut times = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                stream.write_all(&request).await.expect("send a request");
                read_response(&mut stream, &mut buffer, expected.as_ref().as_ref()).await;
                if counting.load(Ordering::Relaxed) {
                    times.push(started.elapsed());
                }
            }
            times
        }));
    }
    tokio::time::sleep(warm).await;
    let cpu_before = cpu_ticks(pid);
    counting.store(true, Ordering::Relaxed);
    let started = Instant::now();
    tokio::time::sleep(measured).await;
    counting.store(false, Ordering::Relaxed);
    let elapsed = started.elapsed();
    let cpu = cpu_ticks(pid) - cpu_before;
    let rss_mib = rss_kib(pid) as f64 / 1024.0;
    stop.store(true, Ordering::Relaxed);
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await.expect("a connection's task"));
    }
    times.sort();
    let count = times.len().max(1) as f64;
    let quantile = |p: f64| {
        let rank = ((p * times.len() as f64).ceil() as usize).clamp(1, times.len().max(1));
        times
            .get(rank - 1)
            .map_or(0.0, |time| time.as_secs_f64() * 1e6)
    };
    Figures {
        rate: times.len() as f64 / elapsed.as_secs_f64(),
        p50: quantile(0.5),
        p99: quantile(0.99),
        cpu_per_request: cpu as f64 / ticks_per_second() * 1e6 / count,
        rss_mib,
    }
}

/// Reads one HTTP/1.1 response with a Content-Length and checks that it is a 200 carrying a
/// JSON-RPC result, with what `expected` says it holds: figures over errors would mean
/// nothing.
async fn read_response(stream: &mut TcpStream, buffer: &mut Vec<u8>, expected: Option<&Expected>) {
    buffer.clear();
    let mut chunk = [0u8; 16384];
    let (head_end, length) = loop {
        let read = stream.read(&mut chunk).await.expect("read a response");
        assert!(read > 0, "the server closed the connection");
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            assert!(head.starts_with("http/1.1 200"), "not a 200: {head}");
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .unwrap_or_else(|| panic!("no content-length: {head}"));
            break (end + 4, length);
        }
    };
    while buffer.len() < head_end + length {
        let read = stream.read(&mut chunk).await.expect("read a body");
        assert!(read > 0, "the server closed the connection mid-body");
        buffer.extend_from_slice(&chunk[..read]);
    }
    let body = &buffer[head_end..head_end + length];
    let answer: Value = serde_json::from_slice(body).expect("a JSON body");
    assert!(
        answer.get("result").is_some(),
        "not a result: {}",
        String::from_utf8_lossy(body)
    );
    if let Some(expected) = expected {
        assert!(
            expected.holds(&answer),
            "not {} at {}: {answer}",
            expected.value,
            expected.pointer
        );
    }
}

/// Opens `STREAMS` listen streams, waits for each acknowledgement, and returns the server's
/// resident memory then, in MiB.
async fn streams_rss(address: SocketAddr, pid: u32) -> f64 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
        "notifications": {"promptsListChanged": true, "resourcesListChanged": true},
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: {MODERN}\r\nmcp-method: subscriptions/listen\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut streams = Vec::with_capacity(STREAMS);
    for _ in 0..STREAMS {
        let mut stream = TcpStream::connect(address).await.expect("connect");
        stream
            .write_all(request.as_bytes())
            .await
            .expect("send listen");
        let mut seen = Vec::new();
        let mut chunk = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains("subscriptions/acknowledged") {
            let read = stream.read(&mut chunk).await.expect("read the stream");
            assert!(
                read > 0,
                "a listen stream closed before its acknowledgement: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&chunk[..read]);
        }
        streams.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss = rss_kib(pid) as f64 / 1024.0;
    drop(streams);
    rss
}

/// A server started by this bench, with the address it said it listens on.
struct Listening {
    child: Child,
    address: SocketAddr,
}

impl Listening {
    fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Stopped when dropped, also when a wrong answer stops the bench, so no server outlives it.
impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command` and reads the `http://ADDR/mcp` after `prefix` from its stdout or stderr.
fn spawn_listening(command: &mut Command, prefix: &str) -> Listening {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("start {command:?}: {err}"));
    let (sender, receiver) = std::sync::mpsc::channel();
    for pipe in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let (sender, prefix) = (sender.clone(), prefix.to_string());
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix(&prefix) {
                    let _ = sender.send(rest.to_string());
                }
            }
        });
    }
    let url = receiver
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{command:?} said no '{prefix}' line within 60 s"));
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap_or_else(|err| panic!("'{url}' is no address: {err}"));
    Listening { child, address }
}

/// The yardstick: hyper answering every request with one fixed JSON-RPC result, on one
/// worker thread as promptshelf's runtime has.
fn echo_server() {
    use http_body_util::Full;
    use hyper::body::Bytes;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        println!("listening on http://{}/mcp", listener.local_addr().unwrap());
        let body = Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","echo":true}}"#,
        );
        loop {
            let (stream, _) = listener.accept().await.expect("accept");
            let body = body.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let body = body.clone();
                        async move {
                            // The request is read whole, as a server must before answering.
                            use http_body_util::BodyExt;
                            let _ = request.into_body().collect().await;
                            Ok::<_, std::convert::Infallible>(
                                hyper::Response::builder()
                                    .header("content-type", "application/json")
                                    .body(Full::new(body))
                                    .expect("a response"),
                            )
                        }
                    },
                );
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
}

/// The target folder this bench was built in, where it keeps the other servers it builds or
/// installs.
fn target_dir() -> &'static Path {
    Path::new(PROMPTSHELF)
        .parent()
        .and_then(Path::parent)
        .expect("the binary lives in <target>/<profile>/")
}

/// rmcp's server, `benches/rmcp-server` built by cargo into `<target>/rmcp-server` (at once
/// when it is up to date). Its own project, so that the main crate never builds rmcp.
fn rmcp_server() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/rmcp-server/Cargo.toml");
    let target = target_dir().join("rmcp-server");
    println!(
        "rmcp: cargo build --release --manifest-path {} --target-dir {}",
        manifest.display(),
        target.display()
    );
    let started = Instant::now();
    // The cargo running this bench, when it is run by one.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .status()
        .expect("run cargo (the bench builds rmcp's server with it)");
    assert!(status.success(), "building {} failed", manifest.display());
    println!(
        "rmcp: built (or up to date) in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    target.join("release/rmcp-bench-server")
}

/// `<target>/mcp-node`, with the packages of `tests/interop/package.json` installed.
fn node_tools() -> PathBuf {
    let prefix = target_dir().join("mcp-node");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/package.json");
    let pinned: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("read package.json"))
            .expect("package.json is JSON");
    let installed = pinned["dependencies"]
        .as_object()
        .expect("dependencies")
        .iter()
        .all(|(package, version)| {
            std::fs::read_to_string(
                prefix
                    .join("node_modules")
                    .join(package)
                    .join("package.json"),
            )
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|found| found["version"] == *version)
        });
    if !installed {
        std::fs::create_dir_all(&prefix).expect("create mcp-node");
        std::fs::copy(&manifest, prefix.join("package.json")).expect("copy package.json");
        let status = Command::new("npm")
            .arg("install")
            .arg("--prefix")
            .arg(&prefix)
            .args(["--no-audit", "--no-fund", "--loglevel=error"])
            .status()
            .expect("run npm (the bench needs npm and the npm registry)");
        assert!(
            status.success(),
            "npm install into {} failed",
            prefix.display()
        );
    }
    prefix
}

/// Copies `tests/interop/NAME` beside `node_modules`, where its imports resolve.
fn copy_script(prefix: &Path, name: &str) -> PathBuf {
    let copy = prefix.join(name);
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/interop")
            .join(name),
        &copy,
    )
    .expect("copy the script");
    copy
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc/PID/stat");
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 of what follows ')'.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

/// VmRSS of a running process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Machine, date and load average at start (other work makes every figure worse).
fn machine_line() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!(
        "{} CPUs, load average {} at start",
        std::thread::available_parallelism().map_or(0, usize::from),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    )
}
