//! `promptshelf token`: make, list and remove the bearer tokens hosts present when the
//! library is served over HTTP. A token is printed once, when it is made; the database
//! keeps only its keyed hash (`store::tokens`).

use anyhow::{Result, anyhow};
use jiff::{Span, SpanTotal, Unit};
use serde::Serialize;

use super::common::{self, Table};
use crate::cli::TokenCommand;
use crate::store::tokens::{self, Grant};
use crate::store::{self, Store};

pub(super) fn run(store: &Store, command: TokenCommand) -> Result<()> {
    match command {
        TokenCommand::Add {
            name,
            collections,
            expires,
            channel,
            json,
        } => {
            let grant = Asked {
                collections,
                channel,
                expires,
            };
            add(store, &name, grant, json)
        }
        TokenCommand::List(flags) => list(store, flags.json),
        TokenCommand::Rm { name, json } => remove(store, &name, json),
    }
}

/// A token's row as `token list --json` and `token add --json` show it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GrantView<'a> {
    name: &'a str,
    /// The collection names, or null for the whole library.
    collections: Option<&'a [String]>,
    created_at: String,
    expires_at: Option<String>,
    expired: bool,
    /// The release channel, or null for the server's.
    channel: Option<&'a str>,
}

fn view(grant: &Grant, now: i64) -> GrantView<'_> {
    GrantView {
        name: &grant.name,
        collections: grant.collections.as_deref(),
        created_at: common::timestamp(grant.created_at),
        expires_at: grant.expires_at.map(common::timestamp),
        expired: grant.expired(now),
        channel: grant.channel.as_deref(),
    }
}

/// What `token add` was asked to grant.
struct Asked {
    collections: Option<Vec<String>>,
    channel: Option<String>,
    expires: Option<String>,
}

/// What `token add --json` prints: the token, once, with its grant.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Added<'a> {
    token: &'a str,
    #[serde(flatten)]
    grant: GrantView<'a>,
}

fn add(store: &Store, name: &str, asked: Asked, json: bool) -> Result<()> {
    let Asked {
        collections,
        channel,
        expires,
    } = asked;
    if name.trim().is_empty() {
        return Err(anyhow!(
            "the token's name is empty; give it one, e.g. `promptshelf token add laptop`"
        ));
    }
    let collections = match collections {
        None => None,
        Some(names) => {
            let names: Vec<String> = names
                .iter()
                .map(|name| name.trim().to_string())
                .filter(|name| !name.is_empty())
                .collect();
            if names.is_empty() {
                return Err(anyhow!(
                    "--collections names no collection; give one or more names separated by commas, e.g. --collections notes,guides, or leave it out for the whole library"
                ));
            }
            Some(names)
        }
    };
    let now = store::now_ms();
    let expires_at = match expires.as_deref() {
        None => None,
        Some(text) => Some(now.saturating_add(duration_ms(text)?)),
    };
    let token = store.write(|tx| {
        tokens::add(
            tx,
            name,
            collections.as_deref(),
            channel.as_deref(),
            now,
            expires_at,
        )
    })?;
    let mut sorted = collections;
    if let Some(names) = &mut sorted {
        names.sort();
        names.dedup();
    }
    let grant = Grant {
        name: name.to_string(),
        collections: sorted,
        created_at: now,
        expires_at,
        channel,
    };
    if json {
        return common::print_json(&Added {
            token: &token,
            grant: view(&grant, now),
        });
    }
    let sees = match &grant.collections {
        None => "the whole library".to_string(),
        Some(names) => format!("the collections {}", names.join(", ")),
    };
    let until = match grant.expires_at {
        None => "never expires".to_string(),
        Some(at) => format!("expires {}", common::timestamp(at)),
    };
    let sees = match &grant.channel {
        None => sees,
        Some(channel) => format!("{sees} on channel {channel}"),
    };
    common::say(&format!(
        "added token {name} (sees {sees}; {until}):\n\n    {token}\n\n\
         It is shown only now and cannot be shown again: copy it into the host's settings. \
         A host sends it with every request as the header `Authorization: Bearer <token>`."
    ))
}

/// `text` as milliseconds: a friendly duration (`30d`, `12h`, `90m`, `2w`, `1d 12h`) or an
/// ISO 8601 one (`P30D`), days taken as 24 hours.
fn duration_ms(text: &str) -> Result<i64> {
    let accepted = "durations look like 30d, 12h, 90m, 2w or 1d12h (days, hours, minutes, weeks)";
    let span: Span = text
        .trim()
        .parse()
        .map_err(|_| anyhow!("--expires '{text}' is not a duration; {accepted}"))?;
    let total = span
        .total(SpanTotal::from(Unit::Millisecond).days_are_24_hours())
        .map_err(|_| {
            anyhow!("--expires '{text}': months and years have no fixed length; {accepted}")
        })?;
    if total < 1.0 {
        return Err(anyhow!(
            "--expires '{text}' is not a time in the future; {accepted}"
        ));
    }
    // A duration past what a timestamp holds is as good as never expiring: saturate.
    Ok(if total >= i64::MAX as f64 {
        i64::MAX
    } else {
        total as i64
    })
}

fn list(store: &Store, json: bool) -> Result<()> {
    let grants = tokens::list(&*store.conn()?)?;
    let now = store::now_ms();
    if json {
        let views: Vec<GrantView> = grants.iter().map(|grant| view(grant, now)).collect();
        return common::print_json(&views);
    }
    let mut table = Table::new(&["NAME", "COLLECTIONS", "CHANNEL", "CREATED", "EXPIRES"]);
    for grant in &grants {
        let expires = match grant.expires_at {
            None => "never".to_string(),
            Some(at) if grant.expired(now) => format!("{} (expired)", common::timestamp(at)),
            Some(at) => common::timestamp(at),
        };
        table.row(vec![
            grant.name.clone(),
            grant
                .collections
                .as_ref()
                .map_or_else(|| "all".to_string(), |names| names.join(",")),
            grant.channel.clone().unwrap_or_else(|| "-".to_string()),
            common::timestamp(grant.created_at),
            expires,
        ]);
    }
    table.print("no tokens (make one with `promptshelf token add NAME`)")
}

/// What `token rm --json` prints.
#[derive(Serialize)]
struct Removed<'a> {
    action: &'static str,
    name: &'a str,
}

fn remove(store: &Store, name: &str, json: bool) -> Result<()> {
    let removed = store.write(|tx| tokens::remove(tx, name))?;
    if !removed {
        let known: Vec<String> = tokens::list(&*store.conn()?)?
            .into_iter()
            .map(|grant| grant.name)
            .collect();
        return Err(common::unknown(
            "token",
            "tokens",
            name,
            &known,
            "token list",
        ));
    }
    let report = Removed {
        action: "removed",
        name,
    };
    common::report(
        json,
        &format!("removed token {name}: hosts presenting it are refused from now on"),
        &report,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_friendly_or_refused_saying_what_is_accepted() {
        assert_eq!(duration_ms("90m").unwrap(), 90 * 60_000);
        assert_eq!(duration_ms("12h").unwrap(), 12 * 3_600_000);
        assert_eq!(duration_ms("30d").unwrap(), 30 * 86_400_000);
        assert_eq!(duration_ms("2w").unwrap(), 14 * 86_400_000);
        for bad in ["soon", "", "1mo", "-1d", "0s"] {
            let err = duration_ms(bad).unwrap_err().to_string();
            assert!(err.contains("30d, 12h, 90m"), "{bad}: {err}");
        }
    }
}
