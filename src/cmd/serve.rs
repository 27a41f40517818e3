//! `promptshelf serve`: opens the library read-only (creating it from the seed first if it
//! does not exist) and serves it over MCP on stdin/stdout, or with `--http` over Streamable
//! HTTP. An existing file is never written: one that is empty or holds an older schema is
//! refused, naming the command that prepares it. `--replica` serves a Litestream replica
//! instead, which is never created (`Store::open_replica`).

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::cli::{AuthArg, CacheScopeArg, MirrorArg, ServeArgs};
use crate::config::{
    Auth, CacheScope, HttpConfig, JwksSource, Mirror, Mirrors, OAuthConfig, ServeConfig, TlsFiles,
};
use crate::store::{Access, Store};

/// Open streams allowed by default: a process on stdio serves one client; over HTTP, many.
const STDIO_MAX_STREAMS: usize = 64;
const HTTP_MAX_STREAMS: usize = 1_000;

pub(super) fn run(db: &Path, args: ServeArgs) -> Result<()> {
    crate::server::bound_allocator();
    let http = args.http.map(|addr| http_config(addr, &args)).transpose()?;
    for (flag, max) in [
        ("--list-ttl-max-ms", args.list_ttl_max_ms),
        ("--read-ttl-max-ms", args.read_ttl_max_ms),
    ] {
        if args.ttl_min_ms > max {
            anyhow::bail!(
                "--ttl-min-ms ({}) is larger than {flag} ({max}); lower --ttl-min-ms or raise {flag}",
                args.ttl_min_ms
            );
        }
    }
    let config = ServeConfig {
        page_size: args.page_size as usize,
        max_line: args.max_line,
        max_argument_bytes: args.max_argument_bytes,
        ttl_min_ms: args.ttl_min_ms,
        list_ttl_max_ms: args.list_ttl_max_ms,
        read_ttl_max_ms: args.read_ttl_max_ms,
        cache_scope: match args.cache_scope {
            CacheScopeArg::Public => CacheScope::Public,
            CacheScopeArg::Private => CacheScope::Private,
        },
        request_state_ttl: Duration::from_secs(args.request_state_ttl),
        poll_interval: Duration::from_millis(args.poll_ms),
        completion_rate: args.completion_rate,
        completion_burst: args.completion_burst,
        max_prompt_bytes: args.max_prompt_bytes,
        max_prompt_blocks: args.max_prompt_blocks,
        max_streams: args.max_streams.unwrap_or(if http.is_some() {
            HTTP_MAX_STREAMS
        } else {
            STDIO_MAX_STREAMS
        }),
        max_stream_uris: args.max_stream_uris,
        max_subscriptions: args.max_subscriptions,
        mirrors: Mirrors::of(args.tools.iter().map(|mirror| match mirror {
            MirrorArg::Prompts => Mirror::Prompts,
            MirrorArg::Resources => Mirror::Resources,
            MirrorArg::Search => Mirror::Search,
        })),
        elicitation_timeout: Duration::from_secs(args.elicitation_timeout),
        max_index_bytes: args.max_index_bytes,
        channel: args.channel.clone(),
    };
    if let Some(channel) = &config.channel {
        crate::store::labels::check_name(channel)?;
    }
    let store = if args.replica {
        Store::open_replica(db)?
    } else {
        Store::open(db, Access::ReadOnly, crate::seed::load)?
    };
    tracing::info!("serving {}", db.display());
    if let Some(channel) = &config.channel {
        let labelled = crate::store::labels::names(&*store.conn()?)?;
        if !labelled.iter().any(|(label, _)| label == channel) {
            eprintln!(
                "promptshelf: no item has the label {channel} yet, so the channel serves an \
                 empty library until one does (`promptshelf label set {channel} --all`)"
            );
        }
    }
    if let Some(http) = http {
        if http.auth == Auth::Token && crate::store::tokens::list(&*store.conn()?)?.is_empty() {
            eprintln!(
                "promptshelf: this library has no bearer tokens yet, so every request is refused \
                 (401) until one is made with `promptshelf token add NAME`; or serve on a \
                 loopback address with --auth none"
            );
        }
        return crate::server::serve_http(store, config, http);
    }
    if std::io::stdin().is_terminal() {
        // Someone typed the command rather than a host starting it: say what is going on.
        eprintln!(
            "promptshelf: serving {} over MCP, waiting for JSON-RPC messages on stdin; a host \
             starts this command itself (register it with `promptshelf config HOST`, e.g. \
             claude-desktop); Ctrl-D stops",
            db.display()
        );
    }
    crate::server::serve(store, config)
}

/// The scope prefix when `--oauth-scope-prefix` is left out.
const SCOPE_PREFIX: &str = "promptshelf";

/// The HTTP settings, refusing what cannot be served safely: without authentication, only
/// a loopback address.
fn http_config(addr: std::net::SocketAddr, args: &ServeArgs) -> Result<HttpConfig> {
    let auth = match args.auth {
        Some(AuthArg::None) => Auth::None,
        Some(AuthArg::OAuth) => Auth::OAuth(oauth_config(args)?),
        Some(AuthArg::Token) | None => Auth::Token,
    };
    if !matches!(auth, Auth::OAuth(_)) {
        let given = [
            ("--oauth-issuer", args.oauth_issuer.is_some()),
            ("--oauth-jwks", args.oauth_jwks.is_some()),
            ("--oauth-resource", args.oauth_resource.is_some()),
            ("--oauth-scope-prefix", args.oauth_scope_prefix.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
            anyhow::bail!("{flag} is for --auth oauth; add --auth oauth, or leave {flag} out");
        }
    }
    if auth == Auth::None && !addr.ip().is_loopback() {
        anyhow::bail!(
            "refusing to serve {addr} without authentication: --auth none serves anyone who can connect, and {addr} is not a loopback address; leave --auth none out (bearer tokens are the default: make one with `promptshelf token add NAME`), or serve on 127.0.0.1 (or ::1)"
        );
    }
    let mut allow_origins = Vec::new();
    for origin in &args.allow_origin {
        let trimmed = origin.trim().trim_end_matches('/');
        let host = trimmed
            .strip_prefix("http://")
            .or_else(|| trimmed.strip_prefix("https://"));
        if !host.is_some_and(|host| !host.is_empty() && !host.contains('/')) {
            anyhow::bail!(
                "--allow-origin '{origin}' is not an origin; give a scheme, host and optional port, e.g. --allow-origin https://app.example.com"
            );
        }
        allow_origins.push(trimmed.to_ascii_lowercase());
    }
    let mut allow_hosts = Vec::new();
    for name in &args.allow_host {
        let trimmed = name.trim().to_ascii_lowercase();
        let bare = crate::server::host_name_of(&trimmed).to_string();
        if bare.is_empty() || bare.contains(['/', '@', ' ']) {
            anyhow::bail!(
                "--allow-host '{name}' is not a host name; give the name clients reach the server by, without scheme or path, e.g. --allow-host shelf.example.com"
            );
        }
        allow_hosts.push(bare);
    }
    if let Auth::OAuth(settings) = &auth
        && let Some(host) = url_host(&settings.resource)
    {
        allow_hosts.push(host);
    }
    Ok(HttpConfig {
        addr,
        allow_origins,
        allow_hosts,
        body_timeout: Duration::from_secs(args.body_timeout),
        max_in_flight_per_caller: usize::try_from(args.max_in_flight_per_token)
            .unwrap_or(usize::MAX),
        header_timeout: Duration::from_secs(args.header_timeout),
        auth,
        request_rate: args.rate_per_token,
        request_burst: args
            .rate_burst
            .unwrap_or_else(|| args.rate_per_token.saturating_mul(2).max(1)),
        max_streams_per_caller: usize::try_from(args.max_streams_per_token).unwrap_or(usize::MAX),
        // clap asks for both or neither.
        tls: args
            .tls_cert
            .clone()
            .zip(args.tls_key.clone())
            .map(|(cert, key)| TlsFiles { cert, key }),
    })
}

/// The host name of an http(s) URL, lower case, without port: the name clients reach
/// `--oauth-resource` by.
fn url_host(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let name = crate::server::host_name_of(host).to_ascii_lowercase();
    (!name.is_empty()).then_some(name)
}

/// `--auth oauth`'s settings, each flag it needs named when missing.
fn oauth_config(args: &ServeArgs) -> Result<OAuthConfig> {
    let needed = |value: &Option<String>, flag: &str, what: &str| match value {
        Some(value) if !value.trim().is_empty() => Ok(value.trim().to_string()),
        _ => Err(anyhow::anyhow!("--auth oauth needs {flag}: {what}")),
    };
    let issuer = needed(
        &args.oauth_issuer,
        "--oauth-issuer URL",
        "the authorization server's issuer identifier, the `iss` of its tokens (e.g. https://auth.example.com)",
    )?;
    let jwks = needed(
        &args.oauth_jwks,
        "--oauth-jwks FILE_OR_URL",
        "the authorization server's signing keys, a JWK Set file or its jwks_uri (e.g. https://auth.example.com/.well-known/jwks.json)",
    )?;
    let resource = needed(
        &args.oauth_resource,
        "--oauth-resource URL",
        "this server's URI as clients reach it, the `aud` its tokens carry (e.g. https://shelf.example.com/mcp)",
    )?;
    for (flag, url) in [("--oauth-issuer", &issuer), ("--oauth-resource", &resource)] {
        if !is_http_url(url) || url.contains('#') {
            anyhow::bail!(
                "{flag} '{url}' is not an http:// or https:// URL without a fragment; give one such as https://shelf.example.com/mcp"
            );
        }
    }
    let jwks = if jwks.starts_with("https://") || jwks.starts_with("http://") {
        if !is_http_url(&jwks) {
            anyhow::bail!("--oauth-jwks '{jwks}' is not a URL; give the JWK Set's URL or a file");
        }
        JwksSource::Url(jwks)
    } else {
        JwksSource::File(jwks.into())
    };
    Ok(OAuthConfig {
        issuer,
        jwks,
        resource,
        scope_prefix: args
            .oauth_scope_prefix
            .clone()
            .unwrap_or_else(|| SCOPE_PREFIX.to_string()),
    })
}

/// Whether `url` is an http(s) URL with a host, and nothing a quoted header parameter could
/// not hold (it goes into `WWW-Authenticate` as it is).
fn is_http_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|rest| {
        !rest.is_empty()
            && !rest.starts_with('/')
            && url
                .chars()
                .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\')
    })
}
