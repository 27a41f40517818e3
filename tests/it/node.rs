//! The outside MCP implementations written in TypeScript (the conformance suite and the
//! official SDK), at the versions pinned in `tests/interop/package.json`, installed from the
//! npm registry into `<target>/mcp-node` on first use and reused after that, as `hosts.rs`
//! keeps the hosts' command lines. NEEDS `npm` and the npm registry.
//!
//! The conformance suite needs Node 22 or newer (it uses `fs.globSync`), so Node itself is
//! one of the pinned packages (`node`, whose install step fetches the platform's binary
//! package from the same registry) and every script runs on that one, whatever node the
//! machine has.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::common::{TestContext, run_bounded, target_dir};

/// A bound on installing the packages.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(900);

/// The installed packages: the folder holding their `node_modules`, and the pinned `node`.
pub struct NodeTools {
    pub prefix: PathBuf,
    pub node: PathBuf,
}

impl NodeTools {
    /// A command running the script `tests/interop/NAME` on the pinned node, at the lowest
    /// CPU priority where `nice` exists (node starting up takes a core for a moment, and
    /// other tests wait for servers with a deadline). The script is run from a copy beside
    /// `node_modules`, where its `import`s find the packages (ES modules ignore NODE_PATH).
    pub fn script(&self, name: &str) -> Command {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/interop")
            .join(name);
        let copy = self.prefix.join(name);
        std::fs::copy(&source, &copy)
            .unwrap_or_else(|err| panic!("copy {} to {}: {err}", source.display(), copy.display()));
        let mut command = self.node_command();
        command.arg(copy);
        command
    }

    /// The conformance suite's command line, with `args`.
    pub fn conformance(&self, args: &[&str]) -> Command {
        let mut command = self.node_command();
        command
            .arg(
                self.prefix
                    .join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
            )
            .args(args);
        command
    }

    fn node_command(&self) -> Command {
        let mut command = if cfg!(unix) {
            let mut nice = Command::new("nice");
            nice.args(["-n", "19"]).arg(&self.node);
            nice
        } else {
            Command::new(&self.node)
        };
        // The machine's node options (a preload, a loader) must not steer the scripts.
        command.env_remove("NODE_OPTIONS").env_remove("NODE_PATH");
        command
    }
}

/// `tests/interop/package.json`, which pins every package.
fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/package.json")
}

/// The pinned packages, installed once per test run when any is missing or of another
/// version. Fails (never skips) naming what to install when npm is missing.
pub fn node_tools() -> &'static NodeTools {
    static TOOLS: OnceLock<NodeTools> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let prefix = target_dir().join("mcp-node");
        let modules = prefix.join("node_modules");
        let text = std::fs::read_to_string(manifest()).expect("read tests/interop/package.json");
        let pinned: Value = serde_json::from_str(&text).expect("package.json is JSON");
        let pinned = pinned["dependencies"]
            .as_object()
            .expect("package.json has dependencies")
            .clone();
        let installed = |(package, version): (&String, &Value)| {
            std::fs::read_to_string(modules.join(package).join("package.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                .is_some_and(|manifest| manifest["version"] == *version)
        };
        let node = modules.join(".bin").join("node");
        if !pinned.iter().all(installed) || !node.exists() {
            std::fs::create_dir_all(&prefix).expect("create the mcp-node folder");
            std::fs::copy(manifest(), prefix.join("package.json"))
                .expect("copy package.json into the mcp-node folder");
            let ctx = TestContext::new();
            let mut npm = Command::new("npm");
            npm.arg("install").arg("--prefix").arg(&prefix).args([
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ]);
            let (status, stdout, stderr) = run_bounded(npm, &ctx, "npm", INSTALL_TIMEOUT);
            assert!(
                status.success(),
                "could not install the packages of tests/interop/package.json into {} (this \
                 test needs npm, e.g. apt-get install npm, and the npm registry)\nstatus: \
                 {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                prefix.display()
            );
        }
        assert!(
            node.exists(),
            "npm installed the node package, yet {} is missing",
            node.display()
        );
        NodeTools { prefix, node }
    })
}
