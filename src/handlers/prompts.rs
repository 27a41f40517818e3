//! `prompts/list` and `prompts/get`: checking arguments, rendering, resolving embeds and
//! links, and asking a capable client for missing arguments instead of failing.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Resolve;
use super::paging;
use crate::arguments::{self, ArgumentProblem, ObjectSchema, some_of};
use crate::config::ServeConfig;
use crate::model::{ArgumentType, Prompt, PromptArgument, StoredPrompt};
use crate::protocol::{
    Block, Failure, GetPromptParams, InputRequest, MediaKind, Page, PromptOutcome, ReadResult,
    RenderedMessage, RenderedPrompt,
};
use crate::render::{self, Piece};
use crate::store::read::{self, Listed};
use crate::visibility::Visibility;

/// The key of our one input request: the form asking for missing arguments.
const ARGUMENTS_KEY: &str = "arguments";

pub fn list(
    conn: &Connection,
    config: &ServeConfig,
    cursor: Option<&str>,
    seen: &Visibility,
) -> Result<Page<StoredPrompt>, Failure> {
    page(conn, cursor, config.page_size, seen)
}

/// The page of the prompt list `cursor` points at, of at most `size` prompts (their
/// arguments without their messages), of those `seen` shows.
pub(crate) fn page(
    conn: &Connection,
    cursor: Option<&str>,
    size: usize,
    seen: &Visibility,
) -> Result<Page<StoredPrompt>, Failure> {
    let within = seen.collections();
    let mut page = paging::list(
        conn,
        Listed::Prompts,
        cursor,
        size,
        |tx, window| read::prompts_within(tx, window, false, within),
        |p| &p.prompt.name,
    )?;
    if seen.is_limited() {
        paging::dated_by_items(&mut page, |p| p.last_modified);
    }
    Ok(page)
}

/// What the request is allowed to do beyond a plain answer.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    /// The request declared form elicitation: missing arguments may be asked for.
    pub can_elicit: bool,
    /// Unix milliseconds now (state expiry).
    pub now: i64,
}

/// The failure for a prompt name the library does not hold (or `seen` does not show: the
/// same words, so a caller cannot tell one from the other), suggesting the names it shows
/// that are near it (`suggest::advice`).
pub(crate) fn unknown(conn: &Connection, name: &str, seen: &Visibility) -> Failure {
    match read::prompt_names_within(conn, seen.collections()) {
        Ok(names) => Failure::InvalidParams(format!(
            "unknown prompt '{name}'; {}",
            crate::suggest::advice(name, &names, "prompts")
        )),
        Err(err) => Failure::from(err),
    }
}

/// "prompt 'p' has no argument 'cod'; did you mean 'code'? (its arguments are: code, focus)":
/// the words of every request naming arguments the prompt does not declare.
pub(crate) fn no_argument(prompt: &Prompt, names: &[String]) -> String {
    let known: Vec<String> = prompt.arguments.iter().map(|a| a.name.clone()).collect();
    let listed = format!("its arguments are: {}", some_of(&known));
    let advice = match names {
        [name] => crate::suggest::did_you_mean(name, &known)
            .map(|suggestion| format!("{suggestion} ({listed})")),
        _ => None,
    };
    let quoted: Vec<String> = names.iter().map(|name| format!("'{name}'")).collect();
    format!(
        "prompt '{}' has no argument {}; {}",
        prompt.name,
        quoted.join(", "),
        advice.unwrap_or(listed)
    )
}

/// How many accepted `requestState`s a serving process keeps at most (each until it
/// expires): about 100 bytes each.
pub(crate) const USED_STATES_LIMIT: usize = 65_536;

/// The `requestState`s this process has accepted, each kept (by its signature, a digest
/// of the state) until it expires, so that a state answers once. Per process: after a
/// restart a state not yet expired could be used once more (serving never writes the
/// database). Bounded: when `limit` states are kept and none has expired, a new one is
/// refused rather than kept.
pub(crate) struct UsedStates {
    limit: usize,
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    /// Signature -> expiry.
    by_tag: HashMap<[u8; 32], i64>,
    /// (expiry, signature): the expired are dropped from the front.
    by_expiry: BTreeSet<(i64, [u8; 32])>,
}

impl UsedStates {
    pub(crate) fn new(limit: usize) -> UsedStates {
        UsedStates {
            limit,
            kept: Mutex::default(),
        }
    }

    /// Marks the state signed `tag` (valid until `expires`) as used, unless it already is.
    fn claim(&self, tag: [u8; 32], expires: i64, now: i64) -> Result<(), Failure> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.by_tag.contains_key(&tag) {
            return Err(Failure::InvalidParams(
                "requestState was already used (each one answers once); call prompts/get again without requestState".to_string(),
            ));
        }
        while let Some(&(expiry, old)) = kept.by_expiry.first() {
            if expiry >= now {
                break;
            }
            kept.by_expiry.pop_first();
            kept.by_tag.remove(&old);
        }
        if kept.by_tag.len() >= self.limit {
            return Err(Failure::Internal(format!(
                "this server already holds {} accepted requestStates that have not expired, its limit; call prompts/get again without requestState, or retry once older states have expired (--request-state-ttl)",
                self.limit
            )));
        }
        kept.by_tag.insert(tag, expires);
        kept.by_expiry.insert((expires, tag));
        Ok(())
    }
}

/// What `get` keeps from one call to the next, owned by its caller (the server's shared
/// state for as long as it serves, a one-off for the CLI, which sends no requestState):
/// the `requestState`s accepted, and the templates and patterns compiled.
pub struct Retained {
    pub(crate) used: UsedStates,
    pub(crate) templates: render::Templates,
    pub(crate) patterns: arguments::Patterns,
}

impl Retained {
    /// Keeping at most `states` accepted `requestState`s.
    pub fn new(states: usize) -> Retained {
        Retained {
            used: UsedStates::new(states),
            templates: render::Templates::default(),
            patterns: arguments::Patterns::default(),
        }
    }
}

/// Fills `stored`, the prompt `params` names as the caller found it; `resolve` finds the
/// resources its messages embed or link. Needs no connection: what it reads comes through
/// `stored` and `resolve`, and the resolver's own error (the server's "not kept here")
/// comes back as it is. `retained.used` holds the `requestState`s this process has
/// accepted: a state answers once. It is marked used only when it leads to an answer (the
/// prompt filled, or asked for again), so a retry refused for a value it carries can be
/// corrected under the same state.
pub fn get<E: From<Failure>>(
    config: &ServeConfig,
    secret: &[u8],
    params: &GetPromptParams,
    stored: &StoredPrompt,
    resolve: Resolve<E>,
    caller: Caller,
    retained: &Retained,
) -> Result<PromptOutcome, E> {
    let prompt = &stored.prompt;
    let retried = params.request_state.is_some() || params.input_responses.is_some();
    // The state's signature and expiry, claimed in `retained.used` once an answer is made.
    let mut accepted = None;
    // A first request's arguments are used where they lie; a retry merges three sources.
    let given = if retried {
        let mut given = match &params.request_state {
            Some(state) => {
                let verified = verify_state(secret, state, &params.name, caller.now)?;
                accepted = Some((verified.tag, verified.expires));
                verified.arguments
            }
            None => BTreeMap::new(),
        };
        given.extend(params.arguments.iter().map(|(k, v)| (k.clone(), v.clone())));
        if let Some(responses) = &params.input_responses {
            merge_answers(prompt, responses, &mut given)?;
        }
        Cow::Owned(given)
    } else {
        Cow::Borrowed(&params.arguments)
    };
    if let Some((name, value)) = given
        .iter()
        .find(|(_, value)| value.len() > config.max_argument_bytes)
    {
        return Err(E::from(Failure::InvalidParams(format!(
            "argument '{name}' of prompt '{}' is {} bytes, over the limit of {} bytes for one argument value (serve --max-argument-bytes)",
            prompt.name,
            value.len(),
            config.max_argument_bytes
        ))));
    }
    let claim = |accepted: Option<([u8; 32], i64)>| match accepted {
        Some((tag, expires)) => retained.used.claim(tag, expires, caller.now),
        None => Ok(()),
    };
    let values = match arguments::resolve(prompt, &given, &retained.patterns) {
        Ok(values) => values,
        Err(ArgumentProblem::Unknown(names)) => {
            return Err(E::from(Failure::InvalidParams(no_argument(prompt, &names))));
        }
        Err(ArgumentProblem::Invalid(message)) => {
            return Err(Failure::InvalidParams(message).into());
        }
        Err(ArgumentProblem::Broken(message)) => return Err(Failure::Internal(message).into()),
        Err(ArgumentProblem::Missing(missing)) if caller.can_elicit => {
            claim(accepted)?;
            return Ok(ask_for(
                config,
                secret,
                &prompt.name,
                &missing,
                &given,
                caller.now,
            ));
        }
        Err(ArgumentProblem::Missing(missing)) => {
            let names: Vec<String> = missing.iter().map(|a| format!("'{}'", a.name)).collect();
            return Err(E::from(Failure::InvalidParams(format!(
                "prompt '{}' needs the required argument{} {}",
                prompt.name,
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            ))));
        }
    };
    let limits = render::Limits {
        bytes: config.max_prompt_bytes,
        blocks: config.max_prompt_blocks,
    };
    let too_large = |over| Failure::Internal(over_limit(&prompt.name, over, limits));
    let rendered = render::render_within(stored, &values, limits, &retained.templates).map_err(|failure| match failure {
        render::Unrendered::Template(err) => Failure::Internal(format!(
            "prompt '{}' could not be rendered, a fault of the library's template rather than of the request: {err}",
            prompt.name
        )),
        render::Unrendered::Over(over) => too_large(over),
    })?;
    // What the answer holds so far, counted as each block is made (an embedded resource as
    // it is resolved), so that it stops at the limit instead of being built whole first.
    let mut bytes = 0usize;
    // Each URI is resolved once however often it is named: its blocks share one read.
    let mut found: HashMap<String, Arc<ReadResult>> = HashMap::new();
    let mut find = |uri: &str| -> Result<Arc<ReadResult>, E> {
        if let Some(read) = found.get(uri) {
            return Ok(Arc::clone(read));
        }
        let read = resolve(uri)?.ok_or_else(|| missing_resource(&prompt.name, uri))?;
        found.insert(uri.to_string(), Arc::clone(&read));
        Ok(read)
    };
    let mut messages = Vec::new();
    for template in rendered {
        for piece in template.pieces {
            if messages.len() >= limits.blocks {
                return Err(too_large(render::Over::Blocks).into());
            }
            let block = match piece {
                Piece::Text(text) => Block::Text(text),
                Piece::Embed(uri) => embed(find(&uri)?),
                Piece::EmbedResource(uri) => Block::Embedded(find(&uri)?),
                Piece::Link(uri) => Block::Link(find(&uri)?),
            };
            bytes = bytes.saturating_add(block_size(&block));
            if bytes > limits.bytes {
                return Err(too_large(render::Over::Bytes).into());
            }
            messages.push(RenderedMessage {
                role: template.role,
                block,
            });
        }
    }
    claim(accepted)?;
    Ok(PromptOutcome::Rendered {
        prompt: RenderedPrompt {
            description: prompt.description.clone(),
            messages,
            provenance: stored.provenance(),
        },
        retried,
    })
}

/// The bytes a block counts for against `--max-prompt-bytes`: its text, or the content of
/// the resource it embeds, or the URI it links to.
fn block_size(block: &Block) -> usize {
    match block {
        Block::Text(text) => text.len(),
        Block::Embedded(read) | Block::Media { read, .. } => {
            usize::try_from(read.resource.size).unwrap_or(usize::MAX)
        }
        Block::Link(read) => read.resource.info.uri.len(),
    }
}

/// The sentence for a prompt that renders to more than one answer may hold.
fn over_limit(prompt: &str, over: render::Over, limits: render::Limits) -> String {
    let (what, flag) = match over {
        render::Over::Bytes => (format!("{} bytes", limits.bytes), "--max-prompt-bytes"),
        render::Over::Blocks => (
            format!("{} content blocks", limits.blocks),
            "--max-prompt-blocks",
        ),
    };
    format!(
        "prompt '{prompt}' renders to more than {what}, the limit for one rendered prompt; a fault of the library's template rather than of the request: make it write or embed less, or raise the limit (serve {flag})"
    )
}

fn missing_resource(prompt: &str, uri: &str) -> Failure {
    Failure::InvalidParams(format!(
        "prompt '{prompt}' refers to {uri}, which is not in the library; check the arguments that build the URI, or add the resource"
    ))
}

fn embed(read: Arc<ReadResult>) -> Block {
    let resource = &read.resource;
    let media = match resource.info.mime_type.split('/').next() {
        Some("image") if !resource.is_text => Some(MediaKind::Image),
        Some("audio") if !resource.is_text => Some(MediaKind::Audio),
        _ => None,
    };
    match media {
        Some(kind) => Block::Media { kind, read },
        None => Block::Embedded(read),
    }
}

/// The signed part of a `requestState`.
#[derive(Debug, Serialize, Deserialize)]
struct State {
    /// The method and prompt the state belongs to: it cannot be replayed elsewhere.
    method: String,
    prompt: String,
    /// Arguments given so far (already checked).
    arguments: BTreeMap<String, String>,
    /// Unix milliseconds after which the state is refused.
    expires: i64,
}

fn mac(secret: &[u8], payload: &[u8]) -> [u8; 32] {
    let key = *blake3::hash(secret).as_bytes();
    *blake3::keyed_hash(&key, payload).as_bytes()
}

fn sign(secret: &[u8], state: &State) -> String {
    let payload = serde_json::to_vec(state).unwrap_or_default();
    format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(&payload),
        URL_SAFE_NO_PAD.encode(mac(secret, &payload))
    )
}

/// What a valid state carries.
struct Verified {
    arguments: BTreeMap<String, String>,
    /// The state's signature: a digest of it.
    tag: [u8; 32],
    expires: i64,
}

fn verify_state(secret: &[u8], token: &str, prompt: &str, now: i64) -> Result<Verified, Failure> {
    let refuse = |why: &str| {
        Failure::InvalidParams(format!(
            "requestState {why}; call prompts/get again without requestState"
        ))
    };
    let (payload, tag) = token
        .split_once('.')
        .ok_or_else(|| refuse("is malformed"))?;
    let payload = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| refuse("is malformed"))?;
    let tag = URL_SAFE_NO_PAD
        .decode(tag)
        .map_err(|_| refuse("is malformed"))?;
    let expected = mac(secret, &payload);
    // Constant-time comparison: blake3::Hash's equality is.
    if tag.len() != 32
        || blake3::Hash::from_bytes(expected)
            != blake3::Hash::from_slice(&tag).map_err(|_| refuse("is malformed"))?
    {
        return Err(refuse(
            "failed verification (it was altered or not issued by this library)",
        ));
    }
    let state: State = serde_json::from_slice(&payload).map_err(|_| refuse("is malformed"))?;
    if state.method != "prompts/get" || state.prompt != prompt {
        return Err(refuse(&format!(
            "was issued for prompt '{}', not '{prompt}'",
            state.prompt
        )));
    }
    if now > state.expires {
        return Err(refuse("has expired"));
    }
    Ok(Verified {
        arguments: state.arguments,
        tag: expected,
        expires: state.expires,
    })
}

/// Takes the accepted form content into `given`; a declined or cancelled form ends the
/// request with a clear error.
fn merge_answers(
    prompt: &crate::model::Prompt,
    responses: &Map<String, Value>,
    given: &mut BTreeMap<String, String>,
) -> Result<(), Failure> {
    let Some(response) = responses.get(ARGUMENTS_KEY) else {
        return Ok(());
    };
    let action = response.get("action").and_then(Value::as_str).unwrap_or("");
    match action {
        "accept" => {}
        "decline" | "cancel" => {
            return Err(Failure::InvalidParams(format!(
                "the arguments for prompt '{}' were not provided (the user chose {action}); the prompt cannot be filled without them",
                prompt.name
            )));
        }
        other => {
            return Err(Failure::InvalidParams(format!(
                "inputResponses.{ARGUMENTS_KEY}.action '{other}' is not accept, decline or cancel"
            )));
        }
    }
    let Some(content) = response.get("content").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, value) in content {
        let Some(arg) = prompt.arguments.iter().find(|arg| &arg.name == name) else {
            return Err(Failure::InvalidParams(format!(
                "the form answer holds '{name}', which prompt '{}' did not ask for",
                prompt.name
            )));
        };
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Number(number)
                if matches!(arg.kind, ArgumentType::Integer | ArgumentType::Number) =>
            {
                number.to_string()
            }
            Value::Bool(flag) if arg.kind == ArgumentType::Boolean => flag.to_string(),
            other => {
                return Err(Failure::InvalidParams(format!(
                    "the form answer for '{name}' is {other}, which does not fit the {} field that was asked for",
                    arg.kind.as_str()
                )));
            }
        };
        given.insert(name.clone(), text);
    }
    Ok(())
}

fn ask_for(
    config: &ServeConfig,
    secret: &[u8],
    prompt: &str,
    missing: &[PromptArgument],
    given: &BTreeMap<String, String>,
    now: i64,
) -> PromptOutcome {
    let required: Vec<String> = missing.iter().map(|arg| arg.name.clone()).collect();
    let names: Vec<String> = missing
        .iter()
        .map(|arg| arg.title.clone().unwrap_or_else(|| arg.name.clone()))
        .collect();
    let state = State {
        method: "prompts/get".to_string(),
        prompt: prompt.to_string(),
        arguments: given.clone(),
        expires: expiry(now, config.request_state_ttl),
    };
    PromptOutcome::InputRequired {
        requests: vec![InputRequest {
            key: ARGUMENTS_KEY.to_string(),
            message: format!("The prompt '{prompt}' needs: {}", names.join(", ")),
            schema: ObjectSchema::of(missing, form_field, required, false),
        }],
        state: sign(secret, &state),
    }
}

/// When a state handed out at `now` expires: never before `now`, however long `ttl` is.
fn expiry(now: i64, ttl: std::time::Duration) -> i64 {
    now.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
}

/// One field of the elicitation form: the argument's field within the primitive subset
/// elicitation allows (no `pattern`; the value is checked on the retry anyway).
fn form_field(arg: &PromptArgument) -> Map<String, Value> {
    let mut field = arguments::field_schema(arg);
    field.remove("pattern");
    field
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_state_expires_never_before_it_is_handed_out() {
        assert_eq!(expiry(1_000, Duration::from_secs(1)), 2_000);
        assert_eq!(expiry(i64::MAX - 5, Duration::from_secs(60)), i64::MAX);
        assert_eq!(expiry(1_000, Duration::MAX), i64::MAX);
        // A state handed out with a huge TTL is valid, not expired at once.
        let config = ServeConfig {
            request_state_ttl: Duration::MAX,
            ..ServeConfig::default()
        };
        let now = 1_800_000_000_000;
        let PromptOutcome::InputRequired { state, .. } =
            ask_for(&config, b"secret", "p", &[], &BTreeMap::new(), now)
        else {
            panic!("ask_for asks");
        };
        let verified = verify_state(b"secret", &state, "p", now + 1).expect("valid");
        assert_eq!(verified.expires, i64::MAX);
    }

    #[test]
    fn a_state_answers_once_and_the_set_is_bounded() {
        let used = UsedStates::new(2);
        used.claim([1; 32], 100, 0).expect("first use");
        let replay = used.claim([1; 32], 100, 50).expect_err("a replay");
        assert!(replay.message().contains("already used"), "{replay:?}");
        used.claim([2; 32], 200, 0).expect("another state");
        let full = used.claim([3; 32], 300, 50).expect_err("full");
        assert!(full.message().contains("limit"), "{full:?}");
        // Once the first has expired, it makes room (and is forgotten: it is refused as
        // expired by its signature's check anyway).
        used.claim([3; 32], 300, 150).expect("room after expiry");
        used.claim([2; 32], 200, 150).expect_err("still kept");
    }
}
