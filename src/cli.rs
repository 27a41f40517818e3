//! The command line: every subcommand and flag, declared with clap's derive API. Parsing only;
//! `cmd` carries them out.
//!
//! Every subcommand enum is `defer = true`: clap builds a command's flags only when that
//! command is the one run (or its help or completions are asked for), so a start does not
//! build the flags of every other command (docs/benchmarks.md, "A shorter start").

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::ArgValueCompleter;

use crate::{hosts, shell};

#[derive(Debug, Parser)]
#[command(
    name = "promptshelf",
    version,
    about = "A library of prompts and reference documents, served to AI hosts over MCP stdio",
    long_about = "A library of prompts and reference documents in one SQLite file, served to AI \
                  hosts over MCP stdio. A new database is created and filled with the built-in \
                  seed library on first use."
)]
pub struct Cli {
    /// The library database (created with the seed library if missing)
    #[arg(long, global = true, env = "PROMPTSHELF_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// How many versions of each prompt, resource, template and completion table the history
    /// keeps; a write drops the item's older ones
    #[arg(long, global = true, env = "PROMPTSHELF_KEEP", value_name = "VERSIONS",
          default_value_t = crate::store::history::DEFAULT_KEEP,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub keep: u32,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum Command {
    /// Serve the library over MCP on stdin/stdout (what a host runs), or over HTTP with --http
    // Boxed: its flags make it many times the size of every other command.
    Serve(Box<ServeArgs>),
    /// Create the library database, with the seed library or empty, and say where it is
    Init {
        /// Create it without the seed library's prompts and resources
        #[arg(long)]
        empty: bool,
    },
    /// List, show, add, edit, rename or remove prompts
    #[command(subcommand)]
    Prompt(PromptCommand),
    /// List, show, print, add, edit, rename or remove resources
    #[command(subcommand)]
    Resource(ResourceCommand),
    /// List the imported collections, or remove one
    #[command(subcommand)]
    Collection(CollectionCommand),
    /// List, add or remove resource templates
    #[command(subcommand)]
    Template(TemplateCommand),
    /// List, add, import or remove completion values
    #[command(subcommand)]
    Values(ValuesCommand),
    /// Import a folder of prompt and resource files (docs/format.md), or a CSV list of
    /// prompts, as one collection
    Import(ImportArgs),
    /// Write the library out as folders of prompt and resource files (docs/format.md)
    Export(ExportArgs),
    /// Write the library's prompts and skills into hosts' own folders (commands, prompt
    /// files, skills), and keep them in step: only what changed is written, files of items
    /// that left the library are removed, hand edits and files sync did not write are kept
    Sync(SyncArgs),
    /// Check the library: every prompt renders, every embedded or linked URI resolves,
    /// every completion source exists, every template parses; or, with --host, how a host
    /// will show each prompt; or, with DIR --verify, a signed export's folder
    Check(CheckArgs),
    /// Search prompts and resources (names, titles, descriptions, bodies), best match first
    Search(SearchArgs),
    /// Count what the library holds
    Stats(JsonFlag),
    /// Copy the library into a new file, whole and consistent even while a server serves
    /// it or a command writes it (SQLite's VACUUM INTO)
    Backup {
        /// The file to write; it must not exist yet
        file: PathBuf,
    },
    /// List the versions the history keeps of a prompt, resource, template or completion
    /// table, newest first, with when and by what command each was written
    History(HistoryArgs),
    /// Show what changed between two versions of an item, as a unified diff of its text
    /// (by default between its newest version and the one before)
    Diff(DiffArgs),
    /// Write an earlier version of an item back, as its newest version
    Rollback(RollbackArgs),
    /// Revert the last write (one command, or a whole import) as one new write; run it again
    /// to revert the write before
    Undo(JsonFlag),
    /// Put release channels' labels on versions of items, promote, list and undo them
    #[command(subcommand)]
    Label(LabelCommand),
    /// Make, list or remove the bearer tokens hosts present when served over HTTP
    #[command(subcommand)]
    Token(TokenCommand),
    /// Print the configuration that registers this server with a host, or write it into the
    /// host's own file
    Config(ConfigArgs),
    /// Print the script that makes a shell complete commands, flags, prompt names and URIs
    Completions {
        /// The shell to complete in
        #[arg(value_enum)]
        shell: shell::Shell,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    /// The host to register the server with
    #[arg(value_parser = HostParser)]
    pub host: hosts::Host,
    /// Merge the entry into the host's file (a backup of the old file is kept beside it)
    /// instead of printing it
    #[arg(long)]
    pub write: bool,
    /// The user's file (in the home folder) or the project's (under the current folder)
    #[arg(long, value_enum, default_value_t)]
    pub scope: hosts::Scope,
    /// Start the server through a package runner, which fetches the published package,
    /// instead of by this binary's path: `uvx promptshelf` (PyPI) or `npx -y promptshelf`
    /// (npm)
    #[arg(long, value_enum, value_name = "RUNNER")]
    pub via: Option<hosts::Via>,
    /// Not a flag of `config`, which prints the host's own format already: taken only to be
    /// refused with what to run, where clap's tip would be to pass it as a value.
    #[arg(long, hide = true)]
    pub json: bool,
}

/// `config HOST`'s host, parsed as clap parses the enum, but an unknown one suggests the near
/// names as every unknown name does (`suggest`), rather than in clap's words.
#[derive(Clone)]
struct HostParser;

impl clap::builder::TypedValueParser for HostParser {
    type Value = hosts::Host;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<hosts::Host, clap::Error> {
        clap::builder::EnumValueParser::<hosts::Host>::new()
            .parse_ref(cmd, arg, value)
            .map_err(|err| {
                if err.kind() != clap::error::ErrorKind::InvalidValue {
                    return err;
                }
                let asked = value.to_string_lossy();
                let known: Vec<String> = self
                    .possible_values()
                    .into_iter()
                    .flatten()
                    .map(|host| host.get_name().to_string())
                    .collect();
                cmd.clone().error(
                    clap::error::ErrorKind::InvalidValue,
                    format!(
                        "unknown host '{asked}'; {} (see `promptshelf config --help`)",
                        crate::suggest::advice(&asked, &known, "hosts")
                    ),
                )
            })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            hosts::Host::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

/// The kind of item a history command is about, when a key names more than one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum KindArg {
    Prompt,
    Resource,
    Template,
    Values,
}

impl KindArg {
    pub(crate) fn kind(self) -> crate::model::Kind {
        use crate::model::Kind;
        match self {
            KindArg::Prompt => Kind::Prompt,
            KindArg::Resource => Kind::Resource,
            KindArg::Template => Kind::Template,
            KindArg::Values => Kind::Values,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    /// The prompt name, resource URI, URI template or completion table
    pub key: String,
    /// Which kind of item, when the key names more than one
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The prompt name, resource URI, URI template or completion table
    pub key: String,
    /// The older version (default: the one before NEW)
    pub old: Option<i64>,
    /// The newer version (default: the newest)
    pub new: Option<i64>,
    /// Which kind of item, when the key names more than one
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
}

#[derive(Debug, Args)]
pub(crate) struct RollbackArgs {
    /// The prompt name, resource URI, URI template or completion table
    pub key: String,
    /// The version to write back (`promptshelf history KEY` lists them)
    #[arg(long, value_name = "VERSION")]
    pub to: i64,
    /// Which kind of item, when the key names more than one
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// Print JSON instead of a line
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct JsonFlag {
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Prompts, resources or templates per page of a list
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub page_size: u32,
    /// The longest request line accepted, in bytes; longer lines are skipped and answered with an error
    #[arg(long, default_value_t = 16 * 1024 * 1024, value_name = "BYTES")]
    pub max_line: usize,
    /// The longest argument value a prompts/get may give, in bytes; a longer one is refused
    /// with an error naming the argument
    #[arg(long, default_value_t = 1024 * 1024, value_name = "BYTES")]
    pub max_argument_bytes: usize,
    /// The shortest `ttlMs` caching hint (the hint is 10% of the time since the last change)
    #[arg(long, default_value_t = 1_000, value_name = "MS")]
    pub ttl_min_ms: u64,
    /// The longest `ttlMs` hint of a list (and of server/discover): how long a client that
    /// caches without listening may show a list that has changed
    #[arg(long, default_value_t = 5_000, value_name = "MS")]
    pub list_ttl_max_ms: u64,
    /// The longest `ttlMs` hint of a resources/read: how long a client that caches without
    /// listening may show a resource that has changed
    #[arg(long, default_value_t = 60_000, value_name = "MS")]
    pub read_ttl_max_ms: u64,
    /// How long a `requestState` handed out while asking for missing arguments stays valid
    /// (at most 86400: one day)
    #[arg(long, default_value_t = 600, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(..=crate::config::MAX_REQUEST_STATE_TTL_SECS))]
    pub request_state_ttl: u64,
    /// How long a legacy client that declared elicitation is given to answer the form that
    /// asks for a prompt's missing arguments; then the prompts/get fails as without a form
    #[arg(long, default_value_t = 300, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=crate::config::MAX_ELICITATION_TIMEOUT_SECS))]
    pub elicitation_timeout: u64,
    /// How often to check the database for changes made by other processes: they are served,
    /// and notified, from the next check on
    #[arg(long, default_value_t = 200, value_name = "MS", value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub poll_ms: u64,
    /// Serve a Litestream replica: the file `litestream restore -f -o FILE REPLICA_URL` keeps
    /// current (docs/deploy.md). It must exist; serve sets it to rollback-journal mode once,
    /// so that Litestream can apply changes while it is read, and watches it for them
    #[arg(long)]
    pub replica: bool,
    /// The `cacheScope` of cacheable results (over HTTP with authentication, always
    /// private: answers depend on who asks)
    #[arg(long, value_enum, default_value_t = CacheScopeArg::Public)]
    pub cache_scope: CacheScopeArg,
    /// Completion requests answered per second; more are refused with an error (0: no limit)
    #[arg(long, default_value_t = 200, value_name = "PER_SECOND")]
    pub completion_rate: u32,
    /// Completion requests answered at once after a quiet spell, before the rate applies
    #[arg(long, default_value_t = 400, value_name = "REQUESTS",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub completion_burst: u32,
    /// The most text and embedded content one rendered prompt may hold, in bytes; a prompt
    /// that renders to more is refused with an error naming it
    #[arg(long, default_value_t = 8 * 1024 * 1024, value_name = "BYTES")]
    pub max_prompt_bytes: usize,
    /// The most memory the completion tables' indexes take together, in bytes: the ones
    /// used longest ago are forgotten (and read again when next completed) to make room, and a
    /// table whose index alone would take more is refused with an error naming it
    #[arg(long, default_value_t = crate::config::MAX_INDEX_BYTES, value_name = "BYTES")]
    pub max_index_bytes: usize,
    /// Serve a release channel: each item at the version the label of this name is on,
    /// and only those (`promptshelf label`); over HTTP, to every caller whose token or
    /// scopes name no channel of its own. Without it, the library as it is now
    #[arg(long, value_name = "LABEL")]
    pub channel: Option<String>,
    /// The most content blocks (messages) one rendered prompt may hold
    #[arg(long, default_value_t = 1_000, value_name = "BLOCKS")]
    pub max_prompt_blocks: usize,
    /// The most streams open at once (`subscriptions/listen`, and over HTTP a legacy
    /// session's GET stream too); another is refused with an error (over HTTP, 503). Default:
    /// 64 on stdio, 1000 over HTTP
    #[arg(long, value_name = "STREAMS")]
    pub max_streams: Option<usize>,
    /// The most resource URIs one `subscriptions/listen` stream may name
    #[arg(long, default_value_t = 1_024, value_name = "URIS")]
    pub max_stream_uris: usize,
    /// The most resource URIs a legacy session may subscribe to with `resources/subscribe`
    #[arg(long, default_value_t = 4_096, value_name = "URIS")]
    pub max_subscriptions: usize,
    /// Offer parts of the library as tools too, for hosts that only use tools: a
    /// comma-separated list of `prompts` (tools list_prompts and get_prompt), `resources`
    /// (list_resources and read_resource) and `search` (search_library). Off by default
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    pub tools: Vec<MirrorArg>,
    /// Serve over Streamable HTTP at http://ADDR/mcp instead of stdio (ADDR: 127.0.0.1:8080
    /// when left out; port 0 takes a free port, which the log line at start names)
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080")]
    pub http: Option<std::net::SocketAddr>,
    /// Over HTTP, an Origin allowed besides the server's own on loopback
    /// (http://127.0.0.1:PORT and http://localhost:PORT); repeatable
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,
    /// Over HTTP, a name clients reach the server by (its `Host` header), besides IP
    /// addresses and localhost, e.g. shelf.example.com, or the upstream name a proxy sends;
    /// `*` for any name (behind a proxy that checks names itself); repeatable
    #[arg(long, value_name = "NAME", requires = "http")]
    pub allow_host: Vec<String>,
    /// Over HTTP, how clients are authenticated: `token` (the default: a bearer token made
    /// with `promptshelf token add`), `oauth` (access tokens from an authorization server:
    /// --oauth-issuer, --oauth-jwks, --oauth-resource) or `none` (only on a loopback address)
    #[arg(long, value_enum, value_name = "MODE", requires = "http")]
    pub auth: Option<AuthArg>,
    /// With --auth oauth, the authorization server's issuer identifier: what an access
    /// token's `iss` must be, and what the protected resource metadata names
    #[arg(long, value_name = "URL", requires = "http")]
    pub oauth_issuer: Option<String>,
    /// With --auth oauth, the authorization server's signing keys: a JWK Set file, or an
    /// http:// or https:// URL fetched at start and again when a token names a key it lacks
    /// (at most once a minute)
    #[arg(long, value_name = "FILE_OR_URL", requires = "http")]
    pub oauth_jwks: Option<String>,
    /// With --auth oauth, this server's canonical URI as clients reach it, e.g.
    /// https://shelf.example.com/mcp: what an access token's `aud` must hold
    #[arg(long, value_name = "URL", requires = "http")]
    pub oauth_resource: Option<String>,
    /// With --auth oauth, what the scopes that grant access begin with: PREFIX:all sees the
    /// whole library, PREFIX:collection:NAME the collection NAME
    #[arg(long, value_name = "PREFIX", requires = "http")]
    pub oauth_scope_prefix: Option<String>,
    /// Over HTTP, the seconds a connection has to send a request's headers; a kept-alive
    /// connection waiting this long for its next request is closed too
    #[arg(long, default_value_t = 10, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Over HTTP, the seconds a request's body has to arrive whole once its headers have
    /// (answered 408 after that)
    #[arg(long, default_value_t = 10, value_name = "SECONDS", requires = "http",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout: u64,
    /// Over HTTP, the most requests one caller (a token; an OAuth subject) has being sent or
    /// answered at once; one more is refused 429 (under `--auth none` all 256 are the
    /// process's)
    #[arg(long, default_value_t = 64, value_name = "REQUESTS", requires = "http",
          value_parser = clap::value_parser!(u64).range(1..=256))]
    pub max_in_flight_per_token: u64,
    /// Over HTTP, requests per second answered to each caller (a token; under `--auth none`
    /// the whole process); more are refused 429 with Retry-After (0: no limit, the default)
    #[arg(
        long,
        default_value_t = 0,
        value_name = "PER_SECOND",
        requires = "http"
    )]
    pub rate_per_token: u32,
    /// Over HTTP, requests answered to a caller at once after a quiet spell, before
    /// --rate-per-token applies (default: twice the rate)
    #[arg(long, value_name = "REQUESTS", requires = "rate_per_token",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_burst: Option<u32>,
    /// Over HTTP, the most event streams one caller (a token; under `--auth none` the whole
    /// process) keeps open at once; one more is refused 429
    #[arg(long, default_value_t = 100, value_name = "STREAMS", requires = "http",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_streams_per_token: u64,
    /// Over HTTP, serve HTTPS with this certificate chain (PEM, the server's certificate
    /// first); needs --tls-key
    #[arg(long, value_name = "FILE", requires_all = ["http", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert's certificate; needs --tls-cert
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

/// How `serve --http` authenticates clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AuthArg {
    /// A bearer token from `promptshelf token add`, on every request.
    Token,
    /// An OAuth access token (a JWT) from an authorization server, on every request.
    #[value(name = "oauth")]
    OAuth,
    /// No authentication: anyone who can connect is served.
    None,
}

/// What `serve --tools` can mirror.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MirrorArg {
    Prompts,
    Resources,
    Search,
}

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The folder to import, or a CSV list of prompts (FILE.csv); its name (without .csv) is
    /// the collection's unless --collection says otherwise
    pub dir: PathBuf,
    /// The collection's name: the host part of its resources' URIs (<scheme>://<collection>/<path>)
    #[arg(long, value_name = "NAME")]
    pub collection: Option<String>,
    /// The URI scheme of the collection's resources
    #[arg(long, default_value = crate::library::DEFAULT_SCHEME, value_name = "SCHEME")]
    pub scheme: String,
    /// Remove the collection's prompts and resources whose files are gone
    #[arg(long)]
    pub prune: bool,
    /// Print what would be added, updated and removed, and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// After importing, import again whenever a file changes, until interrupted
    #[arg(long, conflicts_with = "dry_run")]
    pub watch: bool,
    /// Print the outcome (changes, failures, skips, counts) as one JSON object
    #[arg(long, conflicts_with = "watch")]
    pub json: bool,
    /// Import the files that are fine even when others fail (by default nothing is imported)
    #[arg(long)]
    pub keep_going: bool,
    /// Refuse a front matter key our own format does not know (by default it is kept with
    /// its item, with a warning), as `check` does
    #[arg(long)]
    pub strict: bool,
    /// Refuse files larger than this
    #[arg(long, default_value_t = crate::import::DEFAULT_MAX_FILE_SIZE, value_name = "BYTES")]
    pub max_file_size: u64,
    /// Import only a folder signed by this key (an OpenSSH public key file, or an
    /// allowed_signers file) with `export --sign`, and only as it was signed: a file
    /// changed, added or missing refuses the whole import (so not with --keep-going)
    #[arg(long, value_name = "PUBLIC_KEY", conflicts_with_all = ["watch", "keep_going"])]
    pub verify: Option<PathBuf>,
    /// Name every prompt of the folder PREFIX-NAME (by default only a prompt whose name
    /// another collection has already is renamed, to COLLECTION-NAME)
    #[arg(long, value_name = "PREFIX", conflicts_with = "no_prefix")]
    pub prefix: Option<String>,
    /// Refuse a prompt whose name another collection has already, instead of naming it
    /// COLLECTION-NAME
    #[arg(long)]
    pub no_prefix: bool,
}

impl ImportArgs {
    /// What a prompt name another collection already has becomes; a prefix that cannot
    /// begin a prompt name is refused.
    pub(crate) fn naming(&self) -> anyhow::Result<crate::import::Naming> {
        use crate::import::Naming;
        Ok(match &self.prefix {
            Some(prefix) => {
                crate::library::validate_name(prefix).map_err(|why| {
                    anyhow::anyhow!("--prefix '{prefix}' cannot begin prompt names: {why}")
                })?;
                Naming::PrefixAll(prefix.clone())
            }
            None if self.no_prefix => Naming::Refuse,
            None => Naming::PrefixClashes,
        })
    }
}

#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// The words to look for: every word must be there; `word*` matches words it starts,
    /// "two words" a phrase; other punctuation separates words
    #[arg(required = true, num_args = 1.., value_name = "TEXT")]
    pub text: Vec<String>,
    /// Only prompts, or only resources
    #[arg(long, value_enum)]
    pub kind: Option<SearchKind>,
    /// Only what this collection holds
    #[arg(long, value_name = "NAME")]
    pub collection: Option<String>,
    /// The most hits to print
    #[arg(long, default_value_t = 20, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub limit: u32,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SearchKind {
    Prompt,
    Resource,
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The folder to write into (created if missing); files there are overwritten, none removed
    pub dir: PathBuf,
    /// Export this collection straight into DIR; without it, each collection goes into DIR/<collection>
    #[arg(long, value_name = "NAME")]
    pub collection: Option<String>,
    /// The files to write: promptshelf (this folder format) or a host's own prompt files,
    /// written under DIR as the project's root (claude-commands: DIR/.claude/commands/)
    #[arg(long, value_enum, default_value_t)]
    pub format: crate::export::Format,
    /// List the files that would be written or overwritten, and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Write into the folder a collection was imported from too (its files are overwritten
    /// with the stored versions)
    #[arg(long)]
    pub force: bool,
    /// Sign the export with this OpenSSH private key (ed25519, ecdsa or rsa, without a
    /// passphrase): DIR gets promptshelf-library.sha256 (every file's SHA-256) and its SSH
    /// signature, promptshelf-library.sha256.sig, which `import --verify` and
    /// `ssh-keygen -Y verify` check; without --sign, an earlier export's are removed
    #[arg(long, value_name = "KEY")]
    pub sign: Option<PathBuf>,
    /// Print the outcome (counts and warnings) as one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// With --verify: the signed folder to check, instead of the library
    #[arg(value_name = "DIR", requires = "verify")]
    pub dir: Option<PathBuf>,
    /// Check that DIR is signed by this key (an OpenSSH public key file, or an
    /// allowed_signers file) with `export --sign` and is as it was signed, as
    /// `import --verify` would, importing nothing
    #[arg(long, value_name = "PUBLIC_KEY", requires = "dir", conflicts_with_all = ["host", "json"])]
    pub verify: Option<PathBuf>,
    /// Instead, report how this host will show each prompt (not at all, dropped, first
    /// message only, arguments split on spaces, ...) and what to do about it
    #[arg(long, value_enum, value_name = "HOST")]
    pub host: Option<hosts::Host>,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SyncArgs {
    /// The hosts whose folders to write: claude-code, vscode, copilot-cli, cursor, gemini,
    /// codex
    #[arg(value_enum, required = true)]
    pub hosts: Vec<hosts::Host>,
    /// The user's folders (in the home folder), or the project's (under --project)
    #[arg(long, value_enum, default_value_t)]
    pub scope: hosts::Scope,
    /// The project's root, for --scope project
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub project: PathBuf,
    /// Only the prompts of this collection (repeat it for several)
    #[arg(long = "collection", value_name = "NAME")]
    pub collections: Vec<String>,
    /// Say what would be written, overwritten and removed, and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Replace (or remove) files changed by hand since sync wrote them
    #[arg(long)]
    pub force: bool,
    /// After syncing, keep the folders in step with the library as it changes (Ctrl-C stops)
    #[arg(long, conflicts_with = "dry_run")]
    pub watch: bool,
    /// Sync from a team server's MCP endpoint (https://HOST/mcp) instead of a library: what
    /// the token may see there, read over MCP
    #[arg(long, value_name = "URL", conflicts_with = "collections")]
    pub from: Option<String>,
    /// The bearer token for --from (better: PROMPTSHELF_TOKEN or --token-file, which no
    /// process listing shows)
    #[arg(long, env = "PROMPTSHELF_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A file holding the bearer token for --from
    #[arg(long, value_name = "FILE", requires = "from", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CacheScopeArg {
    Public,
    Private,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum PromptCommand {
    /// List prompts
    List(JsonFlag),
    /// Show one prompt: its arguments and message templates
    Show {
        /// The prompt's name (see `prompt list`)
        #[arg(add = ArgValueCompleter::new(shell::prompt_names))]
        name: String,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Fill a prompt with arguments and print the messages a host would get
    Render {
        /// The prompt's name (see `prompt list`)
        #[arg(add = ArgValueCompleter::new(shell::prompt_names))]
        name: String,
        /// An argument value: NAME=VALUE, NAME=@FILE (the file's text) or NAME=@- (standard
        /// input); a value starting with @ is written @@ (repeatable, once per name)
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// Print the exact `prompts/get` result (protocol 2026-07-28) as JSON
        #[arg(long)]
        json: bool,
        /// Words after the name that are not flags: refused with a hint to use --arg
        #[arg(hide = true)]
        stray: Vec<String>,
    },
    /// Add or replace a prompt from a markdown file (docs/format.md)
    Add {
        /// A `*.prompt.md` file, or a markdown file whose front matter says `kind: prompt`;
        /// `-` reads the prompt file from standard input
        file: PathBuf,
        /// Replace a collection's prompt of the same name, which then becomes one added by
        /// hand: imports of that collection leave it alone
        #[arg(long)]
        detach: bool,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Edit a prompt in $VISUAL or $EDITOR: a prompt of a collection in its own file, which
    /// is then imported again; one added by hand as a prompt file, stored when it reads
    Edit {
        /// The prompt's name
        #[arg(add = ArgValueCompleter::new(shell::prompt_names))]
        name: String,
    },
    /// Rename a prompt added by hand (a collection's prompt is renamed in its file)
    Mv {
        /// The prompt's name
        #[arg(add = ArgValueCompleter::new(shell::prompt_names))]
        old: String,
        /// Its new name: letters, digits, '-', '_', '.' or '/'
        new: String,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Remove a prompt
    Rm {
        /// The prompt's name
        #[arg(add = ArgValueCompleter::new(shell::prompt_names))]
        name: String,
        /// Remove a collection's prompt and keep imports of that collection from bringing
        /// it back from its file
        #[arg(long)]
        detach: bool,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum ResourceCommand {
    /// List resources
    List(JsonFlag),
    /// Show one resource's metadata
    Show {
        /// The resource's URI (see `resource list`)
        #[arg(add = ArgValueCompleter::new(shell::resource_uris))]
        uri: String,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Print a resource's content (binary content as it is)
    Cat {
        /// The resource's URI
        #[arg(add = ArgValueCompleter::new(shell::resource_uris))]
        uri: String,
        /// Write binary content to a terminal too (by default it is refused there)
        #[arg(long)]
        force: bool,
    },
    /// Add or replace a resource from a file; the MIME type is guessed from its name
    Add {
        /// The file to store (markdown front matter becomes metadata, not content); `-`
        /// reads standard input, which needs --uri
        file: PathBuf,
        #[command(flatten)]
        overrides: ResourceOverrides,
        /// Replace a collection's resource of the same URI, which then becomes one added by
        /// hand: imports of that collection leave it alone
        #[arg(long)]
        detach: bool,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Edit a text resource in $VISUAL or $EDITOR: a collection's in its own file, which is
    /// then imported again; one added by hand as a file, stored when it reads
    Edit {
        /// The resource's URI
        #[arg(add = ArgValueCompleter::new(shell::resource_uris))]
        uri: String,
    },
    /// Give a resource added by hand another URI (a collection's is renamed with its file)
    Mv {
        /// The resource's URI
        #[arg(add = ArgValueCompleter::new(shell::resource_uris))]
        old: String,
        /// Its new URI, e.g. shelf://local/notes.md
        new: String,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Remove a resource
    Rm {
        /// The resource's URI
        #[arg(add = ArgValueCompleter::new(shell::resource_uris))]
        uri: String,
        /// Remove a collection's resource and keep imports of that collection from bringing
        /// it back from its file
        #[arg(long)]
        detach: bool,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
}

// What `resource add` may set instead of what the file says.
#[derive(Debug, Args)]
pub(crate) struct ResourceOverrides {
    /// The resource's URI (default: shelf://local/<file name>)
    #[arg(long)]
    pub uri: Option<String>,
    /// Override the guessed MIME type
    #[arg(long)]
    pub mime_type: Option<String>,
    /// Override the name (default: the file name)
    #[arg(long)]
    pub name: Option<String>,
    /// A title for people (a markdown file's front matter or first heading otherwise)
    #[arg(long)]
    pub title: Option<String>,
    /// What the resource is
    #[arg(long)]
    pub description: Option<String>,
    /// Who the resource is for: user, assistant, or both as user,assistant
    #[arg(long, value_name = "ROLES")]
    pub audience: Option<String>,
    /// How important the resource is, from 0.0 (least) to 1.0 (most)
    #[arg(long, value_name = "0.0..1.0")]
    pub priority: Option<String>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum CollectionCommand {
    /// List the collections: what each holds, when it was last imported, from which folder
    List(JsonFlag),
    /// Remove a collection's prompts, resources and templates (its folder is left alone)
    Rm {
        /// The collection's name (see `collection list`)
        #[arg(add = ArgValueCompleter::new(shell::collection_names))]
        name: String,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum TemplateCommand {
    /// List resource templates
    List(JsonFlag),
    /// Add or replace a resource template (RFC 6570)
    Add {
        /// An RFC 6570 URI template, e.g. 'shelf://docs/{+path}'
        uri_template: String,
        /// A short name for the template (default: the literal text before its first
        /// variable, e.g. `docs` for 'docs://{component}/{page}')
        #[arg(long)]
        name: Option<String>,
        /// A title for people
        #[arg(long)]
        title: Option<String>,
        /// What the template's resources are
        #[arg(long)]
        description: Option<String>,
        /// The MIME type of every resource the template names
        #[arg(long)]
        mime_type: Option<String>,
        /// Complete a variable from a completion table: VARIABLE=TABLE (repeatable)
        #[arg(long = "complete", value_name = "VARIABLE=TABLE")]
        completions: Vec<String>,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Remove a resource template
    Rm {
        /// The URI template, exactly as listed
        uri_template: String,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum ValuesCommand {
    /// List completion tables, or the values of one table
    List {
        /// List this table's values instead of the tables
        #[arg(add = ArgValueCompleter::new(shell::table_names))]
        table: Option<String>,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Add values to a table (created if missing)
    Add {
        /// The completion table
        table: String,
        /// The values to add
        #[arg(required = true)]
        values: Vec<String>,
        /// Weight of the added values (higher ranks first)
        #[arg(long, default_value_t = 0.0)]
        weight: f64,
        /// Offer the values only when another argument has a value: ARGUMENT=VALUE
        #[arg(long)]
        context: Option<String>,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Import values from a file: one per line, or CSV with a value,weight,context header
    Import {
        /// The completion table (created if missing)
        table: String,
        /// A .csv file or a file starting with the CSV header; otherwise one value per line
        file: PathBuf,
        /// Replace the table's values instead of adding to them
        #[arg(long)]
        replace: bool,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
    /// Remove a value from a table, or the whole table
    Rm {
        /// The completion table
        #[arg(add = ArgValueCompleter::new(shell::table_names))]
        table: String,
        /// The value to remove (in every context); without it, the whole table goes
        value: Option<String>,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum TokenCommand {
    /// Make a token and print it (once: only a keyed hash of it is kept)
    Add {
        /// A name for people, to list and remove it by (e.g. the host or the person)
        name: String,
        /// Only these collections (comma-separated), with the resources their prompts
        /// link to; without it, the whole library
        #[arg(long, value_delimiter = ',', value_name = "A,B")]
        collections: Option<Vec<String>>,
        /// Expire after this long: e.g. 30d, 12h, 90m, 2w (without it, never)
        #[arg(long, value_name = "DURATION")]
        expires: Option<String>,
        /// Serve the holder this release channel: each item at the version the label of
        /// this name is on, and only those (`promptshelf label`); without it, the server's
        /// (`serve --channel`), else the library as it is now
        #[arg(long, value_name = "LABEL")]
        channel: Option<String>,
        /// Print the token and its grant as JSON
        #[arg(long)]
        json: bool,
    },
    /// List the tokens: name, collections, when made and when they expire (never the token)
    List(JsonFlag),
    /// Remove a token: hosts presenting it are refused from then on
    Rm {
        /// The token's name, as listed
        name: String,
        /// Print the outcome as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum LabelCommand {
    /// Put a label on items' newest versions (or on one item's version N): a server on the
    /// label's channel serves that version
    #[command(
        override_usage = "promptshelf label set LABEL <ITEM...|--collection NAME|--all> [--version N]"
    )]
    Set {
        /// The label, e.g. production or staging
        #[arg(add = ArgValueCompleter::new(shell::label_names))]
        label: String,
        #[command(flatten)]
        items: LabelItems,
        /// Put it on this version of the one ITEM (`promptshelf history ITEM` lists them)
        #[arg(long, value_name = "N", requires = "items")]
        version: Option<i64>,
        /// Which kind of item, when an ITEM names more than one
        #[arg(long, value_enum, requires = "items")]
        kind: Option<KindArg>,
    },
    /// Take a label off items
    #[command(override_usage = "promptshelf label rm LABEL <ITEM...|--collection NAME|--all>")]
    Rm {
        /// The label
        #[arg(add = ArgValueCompleter::new(shell::label_names))]
        label: String,
        #[command(flatten)]
        items: LabelItems,
        /// Which kind of item, when an ITEM names more than one
        #[arg(long, value_enum, requires = "items")]
        kind: Option<KindArg>,
    },
    /// Make TO name the versions FROM names, and come off what FROM is not on
    Promote {
        /// The label whose versions are promoted, e.g. staging
        #[arg(add = ArgValueCompleter::new(shell::label_names))]
        from: String,
        /// The label moved to them, e.g. production
        #[arg(add = ArgValueCompleter::new(shell::label_names))]
        to: String,
        /// Only this collection's items (and the completion tables they complete from)
        #[arg(long, value_name = "NAME", add = ArgValueCompleter::new(shell::collection_names))]
        collection: Option<String>,
    },
    /// List the labels and how many items each is on, or the items one label is on
    List {
        /// List the items this label is on, with the version it names
        #[arg(add = ArgValueCompleter::new(shell::label_names))]
        label: Option<String>,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// List the label writes kept, newest first, with the versions each label moved between
    History(JsonFlag),
    /// Revert the last label write as one new write; run it again to revert the one before
    Undo,
}

// The items a `label set` or `label rm` acts on: named ones, a collection's, or all. (Not
// a doc comment: clap would take it for the about of the commands it is flattened into.)
#[derive(Debug, Args)]
#[group(id = "selection", required = true, multiple = false)]
pub(crate) struct LabelItems {
    /// Prompt names, resource URIs, URI templates or completion tables
    #[arg(id = "items", value_name = "ITEM")]
    pub items: Vec<String>,
    /// Every item of this collection, and the completion tables its items complete from
    #[arg(long, value_name = "NAME", add = ArgValueCompleter::new(shell::collection_names))]
    pub collection: Option<String>,
    /// Every item of the library
    #[arg(long)]
    pub all: bool,
}
