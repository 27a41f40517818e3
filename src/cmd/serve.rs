//! `promptshelf serve`: opens the library read-only (creating it from the seed first if it
//! does not exist) and serves it over MCP on stdin/stdout. An existing file is never written:
//! one that is empty or holds an older schema is refused, naming the command that prepares it.
//! `--replica` serves a Litestream replica instead, which is never created (`Store::open_replica`).

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::cli::{CacheScopeArg, MirrorArg, ServeArgs};
use crate::config::{CacheScope, Mirror, Mirrors, ServeConfig};
use crate::store::{Access, Store};

pub fn run(db: &Path, args: ServeArgs) -> Result<()> {
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
        max_streams: args.max_streams,
        max_stream_uris: args.max_stream_uris,
        max_subscriptions: args.max_subscriptions,
        mirrors: Mirrors::of(args.tools.iter().map(|mirror| match mirror {
            MirrorArg::Prompts => Mirror::Prompts,
            MirrorArg::Resources => Mirror::Resources,
            MirrorArg::Search => Mirror::Search,
        })),
        elicitation_timeout: Duration::from_secs(args.elicitation_timeout),
    };
    let store = if args.replica {
        Store::open_replica(db)?
    } else {
        Store::open(db, Access::ReadOnly, crate::seed::load)?
    };
    tracing::info!("serving {}", db.display());
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
