//! The plain settings the server runs on, filled from the command line.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

/// The longest `serve --request-state-ttl` accepted, in seconds: one day.
pub(crate) const MAX_REQUEST_STATE_TTL_SECS: u64 = 86_400;

/// The longest `serve --elicitation-timeout` accepted, in seconds: one hour (a worker
/// waits that long at most for a client that never answers).
pub(crate) const MAX_ELICITATION_TIMEOUT_SECS: u64 = 3_600;

/// Whether cached results may be shared across callers (`cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheScope {
    Public,
    Private,
}

/// A part of the library offered as tools too (`serve --tools`), for hosts that use tools
/// and show no prompts or resources. In the order their tools are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mirror {
    /// `list_prompts` and `get_prompt`.
    Prompts,
    /// `list_resources` and `read_resource`.
    Resources,
    /// `search_library`: the library search, as the `shelf://search/{query}` resource reads.
    Search,
}

/// The mirrors that are on; none by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mirrors(BTreeSet<Mirror>);

impl Mirrors {
    pub fn of(mirrors: impl IntoIterator<Item = Mirror>) -> Mirrors {
        Mirrors(mirrors.into_iter().collect())
    }

    /// Whether any mirror is on: only then are there tools at all (the `tools` capability,
    /// `tools/list` and `tools/call`).
    pub(crate) fn any(&self) -> bool {
        !self.0.is_empty()
    }

    pub(crate) fn has(&self, mirror: Mirror) -> bool {
        self.0.contains(&mirror)
    }

    /// Whether the tool list changes when the prompt list does: `get_prompt` names the
    /// prompts and their arguments in its input schema.
    pub(crate) fn follow_prompts(&self) -> bool {
        self.has(Mirror::Prompts)
    }
}

#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Items per page of `prompts/list`, `resources/list` and `resources/templates/list`.
    pub page_size: usize,
    /// The longest request line read whole; a longer one is skipped, never buffered.
    pub max_line: usize,
    /// Bounds of the `ttlMs` hint, 10% of the time since the last change: at least
    /// `ttl_min_ms`, at most `list_ttl_max_ms` for a list (or discovery) and
    /// `read_ttl_max_ms` for a resource's contents. The maxima are what a client that
    /// caches without listening for notifications may show stale.
    pub ttl_min_ms: u64,
    pub list_ttl_max_ms: u64,
    pub read_ttl_max_ms: u64,
    pub cache_scope: CacheScope,
    /// The longest argument value a `prompts/get` may give, in bytes (after decoding).
    pub max_argument_bytes: usize,
    /// How long a `requestState` we hand out stays valid.
    pub request_state_ttl: Duration,
    /// How often the database is checked for other processes' commits.
    pub poll_interval: Duration,
    /// `completion/complete` requests per second the process answers (0: no limit)...
    pub completion_rate: u32,
    /// ...and how many it answers at once after a quiet spell.
    pub completion_burst: u32,
    /// The most a rendered prompt may hold: bytes of text and embedded content...
    pub max_prompt_bytes: usize,
    /// ...and content blocks (one per message).
    pub max_prompt_blocks: usize,
    /// Open `subscriptions/listen` streams per process.
    pub max_streams: usize,
    /// Resource URIs one `subscriptions/listen` stream may name.
    pub max_stream_uris: usize,
    /// Resource URIs a legacy session may hold through `resources/subscribe`.
    pub max_subscriptions: usize,
    /// What is offered as tools too.
    pub mirrors: Mirrors,
    /// How long a legacy client's answer to our `elicitation/create` is waited for.
    pub elicitation_timeout: Duration,
    /// The most the completion tables' indexes take together, in bytes
    /// (`handlers::completion::CompletionIndexes`).
    pub max_index_bytes: usize,
    /// The release channel served (`--channel`): to stdio's client, and over HTTP to
    /// every caller whose token or scopes name none. None: the library as it is now.
    pub channel: Option<String>,
}

/// `max_index_bytes` when not given: the indexes of three tables of a million values
/// (about 40 MiB each, docs/benchmarks.md, `completion`), or of hundreds of ordinary ones.
pub(crate) const MAX_INDEX_BYTES: usize = 128 * 1024 * 1024;

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            page_size: 50,
            max_line: 16 * 1024 * 1024,
            ttl_min_ms: 1_000,
            list_ttl_max_ms: 5_000,
            read_ttl_max_ms: 60_000,
            cache_scope: CacheScope::Public,
            max_argument_bytes: 1024 * 1024,
            request_state_ttl: Duration::from_secs(600),
            poll_interval: Duration::from_millis(200),
            completion_rate: 200,
            completion_burst: 400,
            max_prompt_bytes: 8 * 1024 * 1024,
            max_prompt_blocks: 1_000,
            max_streams: 64,
            max_stream_uris: 1_024,
            max_subscriptions: 4_096,
            mirrors: Mirrors::default(),
            elicitation_timeout: Duration::from_secs(300),
            max_index_bytes: MAX_INDEX_BYTES,
            channel: None,
        }
    }
}

/// The settings of `serve --http` beyond those every transport shares.
#[derive(Debug, Clone)]
pub(crate) struct HttpConfig {
    /// Where to listen (port 0: a free one).
    pub addr: SocketAddr,
    /// Origins allowed besides the server's own on loopback.
    pub allow_origins: Vec<String>,
    /// How long a connection has to send a request's headers (and may idle between
    /// requests).
    pub header_timeout: Duration,
    /// `Host` names served besides IP literals and localhost (lower case, no port; `*`:
    /// any), against DNS rebinding.
    pub allow_hosts: Vec<String>,
    /// How long a request's body has to arrive whole once its headers have.
    pub body_timeout: Duration,
    /// Requests one caller may have being sent or answered at once.
    pub max_in_flight_per_caller: usize,
    /// How callers are authenticated.
    pub auth: Auth,
    /// Requests per second each caller (a token; the process under `--auth none`) is
    /// answered, 0 for no limit...
    pub request_rate: u32,
    /// ...and how many at once after a quiet spell.
    pub request_burst: u32,
    /// Event streams one caller may hold open at once.
    pub max_streams_per_caller: usize,
    /// HTTPS with this certificate and key; None: plain HTTP.
    pub tls: Option<TlsFiles>,
}

/// The PEM files `serve --http` serves HTTPS with.
#[derive(Debug, Clone)]
pub(crate) struct TlsFiles {
    /// The certificate chain, the server's own first.
    pub cert: std::path::PathBuf,
    /// Its private key.
    pub key: std::path::PathBuf,
}

/// How `serve --http` knows who is asking.
#[derive(Debug, Clone, PartialEq, Eq)]
// `OAuth` is the scheme's own name, not the enum's repeated.
#[allow(clippy::enum_variant_names)]
pub(crate) enum Auth {
    /// A bearer token made with `promptshelf token add`, on every request; what it sees is
    /// what its row grants.
    Token,
    /// An OAuth 2.1 access token (a JWT) from an authorization server, on every request;
    /// what it sees is what its `scope` claim grants (`oauth`).
    OAuth(OAuthConfig),
    /// Nobody is asked: everyone who can connect sees everything (loopback only).
    None,
}

/// `serve --auth oauth`: the server is an OAuth resource server for one authorization
/// server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OAuthConfig {
    /// The authorization server's issuer identifier: what a token's `iss` must be, and what
    /// the protected resource metadata names.
    pub issuer: String,
    /// Where the authorization server's signing keys (a JWK Set) are read from.
    pub jwks: JwksSource,
    /// This server's canonical resource URI: what a token's `aud` must hold (RFC 8707).
    pub resource: String,
    /// What the scopes that grant collections begin with (`PREFIX:all`,
    /// `PREFIX:collection:NAME`).
    pub scope_prefix: String,
}

/// Where a JWK Set is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JwksSource {
    File(std::path::PathBuf),
    /// An `http://` or `https://` URL.
    Url(String),
}
