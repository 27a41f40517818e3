//! Turns a stored prompt and its argument values into messages: each message template is
//! rendered by minijinja (sandboxed: no files, no environment, bounded work), then split at
//! the embeds and links it asked for, since an MCP message holds one content block.
//!
//! Argument values are data: they are passed in as template variables and never parsed as
//! template code, so `{{ 7*7 }}` in a value comes out as those characters.

use std::borrow::Borrow;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use minijinja::value::Kwargs;
use minijinja::{Environment, UndefinedBehavior, Value};

use crate::memo::{ANY_POSITION, Memo};
use crate::model::{ArgumentType, ContentHash, Prompt, Role, StoredPrompt};

/// How much work one render may do; far more than any real prompt needs, little enough
/// that a runaway loop ends quickly with an error.
const FUEL: u64 = 1_000_000;

/// One piece of a rendered message template.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    /// `{{ embed(uri) }}`: the resource's contents go into the conversation.
    Embed(String),
    /// `{{ embed(uri, as="resource") }}`: the same, always as an embedded `resource` block,
    /// also where an image or audio block would be chosen.
    EmbedResource(String),
    /// `{{ link(uri) }}`: a `resource_link` to it.
    Link(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RenderedTemplate {
    pub role: Role,
    pub pieces: Vec<Piece>,
}

/// A template the author wrote that does not render, with the message it sits in.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("prompt '{prompt}', message {message}: {reason}")]
pub struct RenderError {
    pub prompt: String,
    pub message: usize,
    /// The line of the message template minijinja points at, when it does.
    pub line: Option<usize>,
    pub reason: String,
}

/// How much one rendered prompt may hold: bytes of text (and, counted by the caller as it
/// resolves them, of embedded content) and pieces (content blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub bytes: usize,
    pub blocks: usize,
}

impl Limits {
    /// No limit beyond fuel: for checks of the library rather than answers.
    pub(crate) const NONE: Limits = Limits {
        bytes: usize::MAX,
        blocks: usize::MAX,
    };
}

/// Which limit a render went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    Bytes,
    Blocks,
}

/// Why a prompt did not render: its template, or its size.
#[derive(Debug, Clone, PartialEq)]
pub enum Unrendered {
    Template(RenderError),
    Over(Over),
}

/// Renders every message template of the stored prompt with `values` (already checked and
/// with defaults filled in).
pub fn render<Name: Borrow<str> + Ord, Text: AsRef<str>>(
    stored: &StoredPrompt,
    values: &BTreeMap<Name, Text>,
    templates: &Templates,
) -> Result<Vec<RenderedTemplate>, RenderError> {
    render_within(stored, values, Limits::NONE, templates).map_err(|failure| match failure {
        Unrendered::Template(err) => err,
        // Not reached without limits; said in words all the same.
        Unrendered::Over(over) => RenderError {
            prompt: stored.prompt.name.clone(),
            message: 0,
            line: None,
            reason: format!("the rendered prompt is too large ({over:?})"),
        },
    })
}

/// The longest marker: the separator twice, the nonce, ':' and an index.
const MAX_MARKER_LEN: usize = 3 + 16 + 20;

/// `render`, stopping as soon as the prompt is over `limits`: the text the templates write
/// is counted as it is written (with room for one marker per block allowed, which the
/// caller counts as what it becomes), and the pieces as they are split off. Text that
/// holds far more markers than blocks are allowed can run out of that room first, and is
/// then refused for its bytes.
pub fn render_within<Name: Borrow<str> + Ord, Text: AsRef<str>>(
    stored: &StoredPrompt,
    values: &BTreeMap<Name, Text>,
    limits: Limits,
    templates: &Templates,
) -> Result<Vec<RenderedTemplate>, Unrendered> {
    let prompt = &stored.prompt;
    let compiled =
        compiled(prompt, stored.content_hash, templates).map_err(Unrendered::Template)?;
    // Markers carry a random nonce so that no argument value can forge an embed.
    let directives = Arc::new(Directives {
        nonce: nonce(),
        pieces: Mutex::new(Vec::new()),
    });
    let mut entries: Vec<(String, Value)> = prompt
        .arguments
        .iter()
        .filter_map(|arg| {
            values
                .get(arg.name.as_str())
                .map(|value| (arg.name.clone(), typed_value(&arg.kind, value.as_ref())))
        })
        .collect();
    entries.push((
        DIRECTIVES.to_string(),
        Value::from_dyn_object(Arc::clone(&directives)),
    ));
    // Made a template value once for all the messages.
    let context = Value::from_object(Variables { entries });
    let room = Cell::new(
        limits
            .bytes
            .saturating_add(limits.blocks.saturating_mul(MAX_MARKER_LEN)),
    );
    let mut blocks_left = limits.blocks;
    let mut rendered = Vec::with_capacity(prompt.messages.len());
    for (index, message) in prompt.messages.iter().enumerate() {
        let over = Cell::new(false);
        // Most of a body is usually text it writes out as it stands.
        let mut text = Vec::with_capacity(message.body.len().min(room.get()));
        let written = compiled
            .env
            .get_template(&template_name(index))
            .and_then(|template| {
                template.render_captured_to(
                    &context,
                    Bounded {
                        out: &mut text,
                        room: &room,
                        over: &over,
                    },
                )
            });
        if over.get() {
            return Err(Unrendered::Over(Over::Bytes));
        }
        if let Err(err) = written {
            return Err(Unrendered::Template(RenderError {
                prompt: prompt.name.clone(),
                message: index + 1,
                line: err.line(),
                reason: describe(&err),
            }));
        }
        // minijinja writes whole `str`s: the bytes are UTF-8.
        let text = String::from_utf8(text)
            .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned());
        let list = directives
            .pieces
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let pieces = split(&text, &directives.nonce, &list, blocks_left)
            .ok_or(Unrendered::Over(Over::Blocks))?;
        blocks_left -= pieces.len();
        rendered.push(RenderedTemplate {
            role: message.role,
            pieces,
        });
    }
    Ok(rendered)
}

/// Where a message's rendered text goes: refused once it would pass `room`, the bytes the
/// whole prompt has left.
struct Bounded<'a> {
    out: &'a mut Vec<u8>,
    room: &'a Cell<usize>,
    over: &'a Cell<bool>,
}

impl std::io::Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(left) = self.room.get().checked_sub(buf.len()) else {
            self.over.set(true);
            return Err(std::io::Error::other(
                "the rendered prompt is over its limit",
            ));
        };
        self.room.set(left);
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where a render's embeds and links collect; reached by the `embed` and `link` functions
/// through the render context, under a name no template or argument can spell.
const DIRECTIVES: &str = "promptshelf:directives";

/// The variables of one render: the arguments given, by name, and the directives. Found by
/// a short linear search (a prompt has a handful of arguments), which costs less than
/// building and hashing a map for every render.
#[derive(Debug)]
struct Variables {
    entries: Vec<(String, Value)>,
}

impl minijinja::value::Object for Variables {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        self.entries
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.clone())
    }
}

#[derive(Debug)]
struct Directives {
    nonce: String,
    pieces: Mutex<Vec<Piece>>,
}

impl minijinja::value::Object for Directives {}

/// Records an embed or link of the render going on, returning the marker that stands for it
/// in the text.
fn directive(state: &minijinja::State, piece: Piece) -> Result<String, minijinja::Error> {
    let directives = state
        .lookup(DIRECTIVES)
        .and_then(|value| value.downcast_object::<Directives>())
        .ok_or_else(|| {
            minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                "embed and link work only while a prompt renders",
            )
        })?;
    let mut list = directives
        .pieces
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    list.push(piece);
    Ok(marker(&directives.nonce, list.len() - 1))
}

/// Compiled templates, kept by the prompt's content hash (which covers its bodies):
/// compiling costs more than rendering, and a prompt's bodies change rarely. Owned by
/// whoever renders: the server for as long as it serves, a command or a validation for
/// its own run.
pub struct Templates(Memo<ContentHash, CompiledPrompt>);

impl Default for Templates {
    fn default() -> Templates {
        Templates(Memo::sized(MAX_COMPILED_BYTES, |_, compiled| {
            compiled.bytes
        }))
    }
}

/// What the kept compiled templates may take, as `compiled_bytes` counts them: about 150
/// prompts of two short messages. Counted in prompts (512) they took 12 MB of a server
/// filling random prompts of a large library (docs/benchmarks.md, "Compiled templates
/// counted in bytes").
const MAX_COMPILED_BYTES: usize = 4 * 1024 * 1024;
/// What minijinja sets aside for every template it compiles, however short: room for 256
/// instructions of 32 bytes, 128 line records and 128 span records.
const TEMPLATE_BYTES: usize = 12 * 1024;
/// An environment's own part: its settings, its `embed` and `link` functions, its map of
/// templates.
const ENVIRONMENT_BYTES: usize = 2 * 1024;

/// About what keeping `prompt` compiled costs: the fixed part of each template, and four
/// times each body (the source it keeps, and instructions and spans beyond the room set
/// aside, which markup dense with expressions needs).
fn compiled_bytes(prompt: &Prompt) -> usize {
    let templates: usize = prompt
        .messages
        .iter()
        .map(|message| TEMPLATE_BYTES + 4 * message.body.len())
        .sum();
    ENVIRONMENT_BYTES + templates
}

/// A prompt's message templates compiled, with what keeping them costs (`compiled_bytes`).
struct CompiledPrompt {
    env: Environment<'static>,
    bytes: usize,
}

/// An environment holding `prompt`'s message templates as "0", "1", ...; `key` is its
/// content hash.
fn compiled(
    prompt: &Prompt,
    key: ContentHash,
    templates: &Templates,
) -> Result<Arc<CompiledPrompt>, RenderError> {
    if let Some(compiled) = templates.0.get(&key, ANY_POSITION) {
        return Ok(compiled);
    }
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    env.set_fuel(Some(FUEL));
    env.set_recursion_limit(64);
    env.add_function(
        "embed",
        |state: &minijinja::State,
         uri: String,
         options: Kwargs|
         -> Result<String, minijinja::Error> {
            let block: Option<String> = options.get("as")?;
            options.assert_all_used()?;
            let piece = match block.as_deref() {
                None => Piece::Embed(uri),
                Some("resource") => Piece::EmbedResource(uri),
                Some(other) => {
                    return Err(minijinja::Error::new(
                        minijinja::ErrorKind::InvalidOperation,
                        format!(
                            "embed(..., as=\"{other}\"): the one block embed can be asked for is \
                             as=\"resource\" (an embedded resource block whatever the type); \
                             leave `as` out to let the resource's type choose"
                        ),
                    ));
                }
            };
            directive(state, piece)
        },
    );
    env.add_function(
        "link",
        |state: &minijinja::State, uri: String| -> Result<String, minijinja::Error> {
            directive(state, Piece::Link(uri))
        },
    );
    for (index, message) in prompt.messages.iter().enumerate() {
        env.add_template_owned(template_name(index), message.body.clone())
            .map_err(|err| RenderError {
                prompt: prompt.name.clone(),
                message: index + 1,
                line: err.line(),
                reason: describe(&err),
            })?;
    }
    let compiled = Arc::new(CompiledPrompt {
        env,
        bytes: compiled_bytes(prompt),
    });
    templates.0.keep(key, ANY_POSITION, &compiled);
    Ok(compiled)
}

/// For each message template of `stored`, the names it looks up that neither it defines
/// (`set`, `for`) nor the environment (`embed`, `link`, minijinja's own functions): what
/// only an argument can give. Fails as a render would when a template does not parse.
pub(crate) fn looked_up(
    stored: &StoredPrompt,
    templates: &Templates,
) -> Result<Vec<BTreeSet<String>>, RenderError> {
    let env = &compiled(&stored.prompt, stored.content_hash, templates)?.env;
    let globals: BTreeSet<&str> = env.globals().map(|(name, _)| name).collect();
    (0..stored.prompt.messages.len())
        .map(|index| {
            let template = env
                .get_template(&template_name(index))
                .map_err(|err| RenderError {
                    prompt: stored.prompt.name.clone(),
                    message: index + 1,
                    line: err.line(),
                    reason: describe(&err),
                })?;
            Ok(template
                .undeclared_variables(false)
                .into_iter()
                .filter(|name| !globals.contains(name.as_str()))
                .collect())
        })
        .collect()
}

/// The name a message's template has in its environment: its index.
fn template_name(index: usize) -> std::borrow::Cow<'static, str> {
    const SMALL: [&str; 8] = ["0", "1", "2", "3", "4", "5", "6", "7"];
    match SMALL.get(index) {
        Some(name) => std::borrow::Cow::Borrowed(name),
        None => std::borrow::Cow::Owned(index.to_string()),
    }
}

/// Booleans and numbers become real ones, so `{% if strict %}` is false for "false".
fn typed_value(kind: &ArgumentType, value: &str) -> Value {
    match kind {
        ArgumentType::Boolean => Value::from(matches!(
            value.to_ascii_lowercase().as_str(),
            "true" | "yes" | "1"
        )),
        ArgumentType::Integer => value
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(value)),
        ArgumentType::Number => value
            .parse::<f64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(value)),
        _ => Value::from(value),
    }
}

fn describe(err: &minijinja::Error) -> String {
    let mut reason = if err.kind() == minijinja::ErrorKind::OutOfFuel {
        format!("the template does more work than one render may ({FUEL} steps; a loop too long?)")
    } else {
        err.to_string()
    };
    if let Some(line) = err.line() {
        reason = format!("line {line}: {reason}");
    }
    reason
}

/// A fresh marker nonce: a keyed hash of a counter, under a key drawn once per process.
/// Unpredictable as a random number per render, without a system call per render.
fn nonce() -> String {
    static KEY: std::sync::LazyLock<[u8; 32]> = std::sync::LazyLock::new(|| {
        let mut key = [0u8; 32];
        // A clock-derived key still defeats values written before the process started.
        if getrandom::fill(&mut key).is_err() {
            key[..16]
                .copy_from_slice(&u128::from(crate::store::now_ms().unsigned_abs()).to_le_bytes());
        }
        key
    });
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let hash = blake3::keyed_hash(&KEY, &count.to_le_bytes());
    // Eight bytes in hex, written out rather than formatted (this runs for every render).
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut nonce = String::with_capacity(16);
    for byte in &hash.as_bytes()[..8] {
        nonce.push(char::from(HEX[usize::from(byte >> 4)]));
        nonce.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    nonce
}

/// The text that stands for directive `index` in rendered text until `split` replaces it.
fn marker(nonce: &str, index: usize) -> String {
    let mut marker = String::with_capacity(nonce.len() + 24);
    marker.push(char::from(MARKER_BYTE));
    marker.push_str(nonce);
    marker.push(':');
    marker.push_str(itoa::Buffer::new().format(index));
    marker.push(char::from(MARKER_BYTE));
    marker
}

/// The byte that opens and closes a marker (U+001E, one byte in UTF-8).
const MARKER_BYTE: u8 = 0x1e;

/// Splits rendered text at the markers; text between them is trimmed of blank lines and
/// dropped when empty. None once there would be more than `max` pieces: it stops there.
fn split(text: &str, nonce: &str, directives: &[Piece], max: usize) -> Option<Vec<Piece>> {
    let mut pieces = Vec::new();
    let flush = |segment: &str, pieces: &mut Vec<Piece>| {
        let trimmed = segment.trim_matches(['\n', '\r']);
        if !trimmed.trim().is_empty() {
            pieces.push(Piece::Text(trimmed.to_string()));
        }
    };
    // The text since the last marker is always one slice of `text`: a separator that is not
    // one of our markers stays in it.
    let mut segment_start = 0;
    let mut at = 0;
    while let Some(found) = memchr::memchr(MARKER_BYTE, &text.as_bytes()[at..]) {
        let start = at + found;
        let after = &text[start + 1..];
        let directive = memchr::memchr(MARKER_BYTE, after.as_bytes()).and_then(|end| {
            let index = after[..end]
                .strip_prefix(nonce)?
                .strip_prefix(':')?
                .parse::<usize>()
                .ok()?;
            Some((directives.get(index)?, end))
        });
        match directive {
            Some((directive, end)) => {
                flush(&text[segment_start..start], &mut pieces);
                if pieces.len() >= max {
                    return None;
                }
                pieces.push(directive.clone());
                at = start + 1 + end + 1;
                segment_start = at;
            }
            // Not one of ours (a value holding the separator): it stays text.
            None => at = start + 1,
        }
    }
    flush(&text[segment_start..], &mut pieces);
    (pieces.len() <= max).then_some(pieces)
}

/// A prompt as the store would hand it over, for tests that render prompts never stored.
#[cfg(test)]
pub(crate) fn as_stored(prompt: Prompt) -> StoredPrompt {
    StoredPrompt {
        content_hash: crate::store::hash_prompt(&prompt),
        prompt,
        last_modified: 0,
        version: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::roles::split_roles;
    use crate::model::{Origin, PromptArgument};

    fn prompt(body: &str) -> StoredPrompt {
        as_stored(Prompt {
            meta: Default::default(),
            name: "p".into(),
            title: None,
            description: None,
            icons: Vec::new(),
            arguments: vec![PromptArgument {
                name: "x".into(),
                ..PromptArgument::default()
            }],
            messages: split_roles(body),
            origin: Origin::default(),
        })
    }

    fn values(x: &str) -> BTreeMap<String, String> {
        BTreeMap::from([("x".to_string(), x.to_string())])
    }

    #[test]
    fn values_are_never_template_code() {
        let rendered = render(
            &prompt("say {{ x }}"),
            &values("{{ 7*7 }} {% if 1 %}y{% endif %}"),
            &Templates::default(),
        )
        .unwrap();
        assert_eq!(
            rendered[0].pieces,
            [Piece::Text("say {{ 7*7 }} {% if 1 %}y{% endif %}".into())]
        );
    }

    #[test]
    fn embeds_and_links_split_the_text() {
        let rendered = render(
            &prompt("a\n{{ embed('s://one') }}\nb {{ link('s://' ~ x) }}"),
            &values("two"),
            &Templates::default(),
        )
        .unwrap();
        assert_eq!(
            rendered[0].pieces,
            [
                Piece::Text("a".into()),
                Piece::Embed("s://one".into()),
                Piece::Text("b ".into()),
                Piece::Link("s://two".into())
            ]
        );
    }

    #[test]
    fn a_render_stops_at_its_limits() {
        let limits = Limits {
            bytes: 50,
            blocks: 3,
        };
        let over = |body: &str| {
            render_within(&prompt(body), &values(""), limits, &Templates::default())
                .err()
                .map(|failure| match failure {
                    Unrendered::Over(over) => Some(over),
                    Unrendered::Template(_) => None,
                })
        };
        // Within the limits (three markers fit whatever their length).
        assert_eq!(over("{{ 'x' * 40 }} {{ link('s://e') }} {{ 'y' }}"), None);
        assert_eq!(
            over("{{ 'x' * 40 }}{% for i in range(10000) %}{{ 'x' }}{% endfor %}"),
            Some(Some(Over::Bytes))
        );
        assert_eq!(over("{{ embed('s://e') * 5 }}"), Some(Some(Over::Blocks)));
        assert_eq!(
            over("a {{ embed('s://e') }} b {{ link('s://l') }}"),
            Some(Some(Over::Blocks))
        );
    }

    #[test]
    fn forged_markers_stay_text() {
        let rendered = render(
            &prompt("{{ x }}"),
            &values("\u{1e}0000:0\u{1e}"),
            &Templates::default(),
        )
        .unwrap();
        assert_eq!(
            rendered[0].pieces,
            [Piece::Text("\u{1e}0000:0\u{1e}".into())]
        );
    }

    #[test]
    fn a_prompt_compiled_is_charged_for_each_template_and_its_body() {
        let short = prompt("hello {{ x }}").prompt;
        let long = prompt(&format!("{}{{{{ x }}}}", "a".repeat(10_000))).prompt;
        let two = prompt("a {{ x }}\n<!-- assistant -->\nb").prompt;
        assert_eq!(two.messages.len(), 2, "{:?}", two.messages);
        assert!(compiled_bytes(&short) > TEMPLATE_BYTES);
        assert!(compiled_bytes(&long) > compiled_bytes(&short) + 4 * 9_000);
        assert!(compiled_bytes(&two) >= ENVIRONMENT_BYTES + 2 * TEMPLATE_BYTES);
    }

    proptest::proptest! {
        /// Whatever an argument's value holds (marker bytes, template syntax, line breaks),
        /// the render succeeds and its directives are exactly the template's.
        #[test]
        fn no_value_adds_or_removes_a_directive(
            value in proptest::prop_oneof![
                "(?s).{0,40}",
                "[\u{1e}0-9a-f:{}%# \n]{0,40}",
            ]
        ) {
            let rendered = render(
                &prompt("a {{ x }}\n{{ embed('s://e') }}\nb {{ x }} {{ link('s://l') }}"),
                &values(&value),
                &Templates::default(),
            );
            let rendered = rendered.map_err(|err| proptest::test_runner::TestCaseError::fail(err.to_string()))?;
            let directives: Vec<Piece> = rendered[0]
                .pieces
                .iter()
                .filter(|piece| !matches!(piece, Piece::Text(_)))
                .cloned()
                .collect();
            proptest::prop_assert_eq!(
                directives,
                vec![Piece::Embed("s://e".into()), Piece::Link("s://l".into())]
            );
        }
    }
}
