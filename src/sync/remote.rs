//! `sync --from URL`: a team server's library, as the bearer token given may see it, read
//! over MCP Streamable HTTP into a new library in a temporary folder, which `sync` then writes
//! into the hosts' folders as it writes a local one. Each request is a 2026-07-28 request,
//! whole in itself (no session): `prompts/list`, each prompt's file (the built-in resource
//! `handlers::prompt_source`), the resources the prompts embed or link, and, through the
//! Skills extension, every skill with all its files.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use base64::Engine as _;
use serde_json::{Value, json};

use crate::export::body::{self, Piece};
use crate::handlers::prompt_source;
use crate::library::{self, Collection, Item};
use crate::model::{Annotations, Content, Prompt, Resource, ResourceInfo};
use crate::protocol::{Revision, SKILLS_EXTENSION};
use crate::store::{self, Access, Store};

/// The revision every request is made in.
const REVISION: Revision = Revision::MODERN;
/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(60);
/// At most this many bytes of one answer are read.
const MAX_ANSWER: u64 = 64 * 1024 * 1024;

/// A team server's MCP endpoint and the token to present.
pub(crate) struct Remote {
    url: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Remote {
    pub(crate) fn new(url: &str, token: Option<String>) -> Result<Remote> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            bail!(
                "--from takes the server's MCP endpoint, an http:// or https:// URL (such as https://shelf.example.com/mcp); got {url}"
            );
        }
        Ok(Remote {
            url: url.to_string(),
            token,
            agent: crate::http_client::agent(Some(TIMEOUT)),
        })
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// A POST of `method` to the endpoint through `agent`, with the headers a 2026-07-28
    /// request carries and the token.
    fn post(
        &self,
        agent: &ureq::Agent,
        method: &str,
        params: &Value,
    ) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        let mut request = agent
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", REVISION.as_str())
            .header("mcp-method", method);
        let named = params.get("name").or_else(|| params.get("uri"));
        if let Some(name) = named.and_then(Value::as_str) {
            request = request.header("mcp-name", name);
        }
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        request
    }

    /// The result of `method`, or the error the server answered with.
    fn call(&self, method: &str, params: Value) -> Result<Value> {
        let params = with_meta(params);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = self
            .post(&self.agent, method, &params)
            .send(body.to_string())
            .map_err(|err| anyhow!("cannot reach {}: {err}", self.url))?;
        let message = self.answer(response, method)?;
        if let Some(error) = message.get("error") {
            return Err(Answered {
                code: error["code"].as_i64().unwrap_or(0),
                message: error["message"].as_str().unwrap_or("").to_string(),
            }
            .into());
        }
        message.get("result").cloned().ok_or_else(|| {
            anyhow!(
                "{} answered {method} with neither a result nor an error",
                self.url
            )
        })
    }

    /// The JSON-RPC message of an HTTP response: its body, or the first message of its event
    /// stream; an HTTP error said in words, with what to do about it.
    fn answer(&self, response: ureq::http::Response<ureq::Body>, method: &str) -> Result<Value> {
        let status = response.status().as_u16();
        let event_stream = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        let mut body = response.into_body();
        let mut reader = body.with_config().limit(MAX_ANSWER).reader();
        if status == 401 {
            bail!(
                "{} refused {method} without a valid token (401): give one with --token, \
                 --token-file or PROMPTSHELF_TOKEN (`promptshelf token add` on the server \
                 makes one)",
                self.url
            );
        }
        if status == 403 {
            bail!(
                "{} refused {method} (403): the token may not ask it",
                self.url
            );
        }
        if event_stream {
            for line in std::io::BufReader::new(&mut reader).lines() {
                let line =
                    line.with_context(|| format!("reading {}'s answer to {method}", self.url))?;
                if let Some(data) = line.strip_prefix("data:") {
                    return serde_json::from_str(data.trim()).with_context(|| {
                        format!(
                            "{} answered {method} with an event that is not JSON",
                            self.url
                        )
                    });
                }
            }
            bail!(
                "{}'s event stream for {method} ended without an answer",
                self.url
            );
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut reader, &mut text)
            .with_context(|| format!("reading {}'s answer to {method}", self.url))?;
        serde_json::from_str(&text).map_err(|_| {
            anyhow!(
                "{} answered {method} with HTTP {status} and no JSON-RPC message; is it an MCP \
                 endpoint (usually ending in /mcp)? It said: {}",
                self.url,
                text.chars().take(200).collect::<String>()
            )
        })
    }

    /// Each page of the paginated list `method`, in order, until `page` says to stop (false)
    /// or there is no next page.
    fn pages(&self, method: &str, mut page: impl FnMut(&Value) -> bool) -> Result<()> {
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let result = self.call(method, params)?;
            if !page(&result) {
                return Ok(());
            }
            match result["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => return Ok(()),
            }
        }
    }

    /// Every item of a paginated list (`key` of each page's result).
    fn all(&self, method: &str, key: &str) -> Result<Vec<Value>> {
        let mut items = Vec::new();
        self.pages(method, |result| {
            items.extend(result[key].as_array().cloned().unwrap_or_default());
            true
        })?;
        Ok(items)
    }

    /// The `resources/list` entries of the URIs of `wanted` that are listed, paging only as
    /// far as the last of them.
    fn described(&self, wanted: &BTreeSet<String>) -> Result<BTreeMap<String, Value>> {
        let mut found = BTreeMap::new();
        if wanted.is_empty() {
            return Ok(found);
        }
        self.pages("resources/list", |result| {
            for entry in result["resources"].as_array().into_iter().flatten() {
                if let Some(uri) = entry["uri"].as_str().filter(|uri| wanted.contains(*uri)) {
                    found.insert(uri.to_string(), entry.clone());
                }
            }
            found.len() < wanted.len()
        })?;
        Ok(found)
    }

    /// The resource `uri`, or None when the server has none the token may read.
    fn read(&self, uri: &str) -> Result<Option<Resource>> {
        let result = match self.call("resources/read", json!({"uri": uri})) {
            Ok(result) => result,
            Err(err)
                if err
                    .downcast_ref::<Answered>()
                    .is_some_and(Answered::is_not_found) =>
            {
                return Ok(None);
            }
            Err(err) => return Err(err.context(format!("reading {uri}"))),
        };
        let Some(contents) = result["contents"].as_array().and_then(|c| c.first()) else {
            return Ok(None);
        };
        let content = match (contents["text"].as_str(), contents["blob"].as_str()) {
            (Some(text), _) => Content::Text(text.to_string()),
            (None, Some(blob)) => Content::Binary(
                base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .with_context(|| format!("{uri}'s blob is not base64"))?,
            ),
            (None, None) => return Ok(None),
        };
        let name = uri.rsplit('/').next().unwrap_or(uri).to_string();
        Ok(Some(Resource {
            info: ResourceInfo {
                uri: uri.to_string(),
                name,
                title: None,
                description: None,
                mime_type: contents["mimeType"]
                    .as_str()
                    .unwrap_or("application/octet-stream")
                    .to_string(),
                annotations: Annotations::default(),
                icons: Vec::new(),
                origin: Default::default(),
                meta: Default::default(),
            },
            content,
        }))
    }
}

/// The `_meta` of a request made in `REVISION`, declaring the Skills extension.
fn with_meta(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": REVISION.as_str(),
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {SKILLS_EXTENSION: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "promptshelf-sync", "version": env!("CARGO_PKG_VERSION")},
    });
    params
}

/// A JSON-RPC error the server answered with.
#[derive(Debug, thiserror::Error)]
#[error("the server answered {code}: {message}")]
struct Answered {
    code: i64,
    message: String,
}

impl Answered {
    /// A resource the server has not, or not for this token (`-32002`, or `-32602` as older
    /// revisions answer).
    fn is_not_found(&self) -> bool {
        matches!(self.code, -32002 | -32602)
    }
}

/// Copies what the server shows the token into a new library at `path`: every prompt (from
/// its file), the resources they embed or link, and every skill's files. Returns the library
/// and how many prompts it holds.
pub(crate) fn fetch(remote: &Remote, path: &Path) -> Result<(Store, usize)> {
    let names: Vec<String> = remote
        .all("prompts/list", "prompts")?
        .iter()
        .filter_map(|prompt| prompt["name"].as_str().map(str::to_string))
        .collect();
    let collection = Collection {
        name: "remote".to_string(),
        scheme: library::DEFAULT_SCHEME.to_string(),
    };
    let mut prompts: Vec<Prompt> = Vec::new();
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    for name in &names {
        let uri = prompt_source::uri_of(name);
        let Some(file) = remote.read(&uri)? else {
            bail!(
                "{} lists the prompt {name} but gives no {uri}: sync --from needs a \
                 promptshelf server of this version or later",
                remote.url()
            );
        };
        let Item::Prompt(mut prompt) = library::parse_file_kept(
            &collection,
            prompt_source::FILE,
            library::Folder::Plain,
            file.content.as_bytes(),
        )
        .map_err(|err| anyhow!("{uri}: {err}"))?
        .ok_or_else(|| anyhow!("{uri} is not a prompt file"))?
        else {
            bail!("{uri} is not a prompt file");
        };
        // Every item of the copy has one origin, so that a prompt and its skill's SKILL.md
        // are known as one skill (`export::hosts::is_skill`).
        prompt.origin = Default::default();
        for piece in body::prompt_pieces(&prompt).0 {
            if let Piece::Embed(uri) | Piece::Link(uri) = piece {
                wanted.insert(uri);
            }
        }
        prompts.push(prompt);
    }
    match remote.all("skills/list", "skills") {
        Ok(skills) => {
            for skill in skills {
                for file in skill["resources"].as_array().into_iter().flatten() {
                    if let Some(uri) = file["uri"].as_str() {
                        wanted.insert(uri.to_string());
                    }
                }
            }
        }
        // A server without the Skills extension has no skills to copy.
        Err(err)
            if err
                .downcast_ref::<Answered>()
                .is_some_and(|a| a.code == -32601) => {}
        Err(err) => return Err(err),
    }
    let described = remote.described(&wanted)?;
    let mut resources = Vec::new();
    for uri in &wanted {
        if let Some(mut resource) = remote.read(uri)? {
            // Link labels and skills' references are written with the names and titles.
            if let Some(entry) = described.get(uri) {
                let text = |key: &str| entry[key].as_str().map(str::to_string);
                resource.info.name = text("name").unwrap_or(resource.info.name);
                resource.info.title = text("title");
                resource.info.description = text("description");
            }
            resources.push(resource);
        }
    }
    let now = store::now_ms();
    let count = prompts.len();
    let store = Store::open(path, Access::ReadWrite, |tx| {
        for prompt in &prompts {
            store::write::put_prompt(tx, prompt, now)?;
        }
        for resource in &resources {
            store::write::put_resource(tx, resource, now)?;
        }
        Ok(())
    })?;
    Ok((store, count))
}

/// Waits until the server says its prompts or resources changed, on a `subscriptions/listen`
/// stream; Ok when they did, Err when the stream could not be opened or ended.
pub(crate) fn wait_for_change(remote: &Remote) -> Result<()> {
    let method = "subscriptions/listen";
    let params = with_meta(json!({"notifications": {
        "promptsListChanged": true,
        "resourcesListChanged": true,
    }}));
    let body = json!({"jsonrpc": "2.0", "id": "sync", "method": method, "params": params});
    // No time limit: the stream stays open until something changes.
    let response = remote
        .post(&crate::http_client::agent(None), method, &params)
        .send(body.to_string())
        .map_err(|err| anyhow!("cannot reach {}: {err}", remote.url))?;
    if response.status() != 200 {
        bail!(
            "{} refused to stream changes (HTTP {})",
            remote.url,
            response.status()
        );
    }
    let reader = std::io::BufReader::new(response.into_body().into_reader());
    for line in reader.lines() {
        let line = line.map_err(|err| anyhow!("the stream from {} ended: {err}", remote.url))?;
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let Ok(message) = serde_json::from_str::<Value>(data.trim()) else {
            continue;
        };
        if message["method"]
            .as_str()
            .is_some_and(|method| method.ends_with("/list_changed"))
        {
            return Ok(());
        }
    }
    bail!("the stream from {} ended", remote.url)
}
