//! Bearer tokens for serving over HTTP: made here, shown once, and kept only as a keyed hash
//! (schema.sql's `tokens`). The key is derived from the database's secret (`meta`), so every
//! instance serving a copy of the file recognises the same tokens, and a hash read out of a
//! stolen copy cannot be checked against guesses without that secret either.
//!
//! A token is `psk_` followed by 32 random bytes in unpadded base64url: 256 bits, so it
//! cannot be guessed, and the prefix lets a secret scanner or a person tell what it is.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rusqlite::{Connection, OptionalExtension, Transaction};
use serde::Serialize;

use super::{Result, StoreError, read};

/// What every token starts with.
pub(crate) const PREFIX: &str = "psk_";

/// The context string of the token-hashing key (blake3 `derive_key`): its own, so the key
/// differs from every other key derived from the same secret.
const KEY_CONTEXT: &str = "promptshelf 2026-12 bearer token hash";

/// What a token grants, as its row says (never the token or its hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Grant {
    pub name: String,
    /// The collections the token sees (with what their prompts link to), sorted; None for
    /// the whole library.
    pub collections: Option<Vec<String>>,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds; None: it never expires.
    pub expires_at: Option<i64>,
    /// The release channel the token is served (a label's name); None: the server's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
}

impl Grant {
    /// Whether it has expired at `now` (Unix milliseconds).
    pub(crate) fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// What presenting a token comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Presented {
    /// A token the library holds, not expired: what it grants.
    Valid(Grant),
    /// A token the library holds, expired (the name, to say which in a log).
    Expired(String),
    /// No token the library holds.
    Unknown,
}

/// The keyed hash of `token`, as stored: the key derived from `secret`.
fn hash(secret: &[u8], token: &str) -> [u8; 32] {
    let key = blake3::derive_key(KEY_CONTEXT, secret);
    *blake3::keyed_hash(&key, token.as_bytes()).as_bytes()
}

/// A new token's text: 32 bytes from the operating system's generator.
fn new_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|err| {
        StoreError::Invalid(format!(
            "the operating system gave no random bytes for a token ({err}); try again"
        ))
    })?;
    Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes)))
}

fn unknown_collections(unknown: &[String], known: &[String]) -> String {
    let names = unknown
        .iter()
        .map(|name| format!("'{name}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let what = if unknown.len() == 1 {
        "collection"
    } else {
        "collections"
    };
    if known.is_empty() {
        format!(
            "no {what} {names} in the library, which has no collections yet; import a folder as one first (`promptshelf import FOLDER`), or leave out --collections for the whole library"
        )
    } else if let [name] = unknown {
        format!(
            "no {what} {names} in the library; {}",
            crate::suggest::advice(name, known, "collections")
        )
    } else {
        format!(
            "no {what} {names} in the library; its collections are: {}",
            known.join(", ")
        )
    }
}

/// Every collection the library knows: the folders imported as collections and the
/// collections items say they belong to, sorted.
pub(crate) fn collections(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT name FROM collections
         UNION SELECT collection FROM prompts WHERE collection IS NOT NULL
         UNION SELECT collection FROM resources WHERE collection IS NOT NULL
         UNION SELECT collection FROM resource_templates WHERE collection IS NOT NULL
         ORDER BY 1",
    )?;
    Ok(stmt
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Adds the token `name` seeing `collections` (None: the whole library) on `channel` (None:
/// the server's) until `expires_at`
/// (None: for ever), made at `now`; returns its text, which is stored nowhere. Within the
/// caller's transaction, so a refusal writes nothing.
pub(crate) fn add(
    tx: &Transaction,
    name: &str,
    collections: Option<&[String]>,
    channel: Option<&str>,
    now: i64,
    expires_at: Option<i64>,
) -> Result<String> {
    if let Some(channel) = channel {
        super::labels::check_name(channel)?;
    }
    let taken: bool = tx
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM tokens WHERE name = ?1)")?
        .query_row([name], |row| row.get(0))?;
    if taken {
        return Err(StoreError::Invalid(format!(
            "a token named '{name}' already exists; pick another name, or remove it first with `promptshelf token rm {name}`"
        )));
    }
    let collections =
        match collections {
            None => None,
            Some(asked) => {
                let known = self::collections(tx)?;
                let mut unknown: Vec<String> = asked
                    .iter()
                    .filter(|name| !known.contains(name))
                    .cloned()
                    .collect();
                if !unknown.is_empty() {
                    unknown.sort();
                    unknown.dedup();
                    return Err(StoreError::Invalid(unknown_collections(&unknown, &known)));
                }
                let mut names = asked.to_vec();
                names.sort();
                names.dedup();
                Some(serde_json::to_string(&names).map_err(|err| {
                    StoreError::Invalid(format!("collection names as JSON: {err}"))
                })?)
            }
        };
    let token = new_token()?;
    let secret = read::secret(tx)?;
    tx.prepare_cached(
        "INSERT INTO tokens (name, hash, collections, created_at, expires_at, channel)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(rusqlite::params![
        name,
        &hash(&secret, &token)[..],
        collections,
        now,
        expires_at,
        channel
    ])?;
    Ok(token)
}

/// Removes the token `name`; false when there is none.
pub(crate) fn remove(tx: &Transaction, name: &str) -> Result<bool> {
    Ok(tx
        .prepare_cached("DELETE FROM tokens WHERE name = ?1")?
        .execute([name])?
        > 0)
}

const GRANT_COLUMNS: &str = "name, collections, created_at, expires_at, channel";

fn grant_row(row: &rusqlite::Row) -> rusqlite::Result<Grant> {
    let collections: Option<String> = row.get(1)?;
    let collections = match collections {
        None => None,
        Some(text) => Some(serde_json::from_str::<Vec<String>>(&text).map_err(|err| {
            rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, err.into())
        })?),
    };
    Ok(Grant {
        name: row.get(0)?,
        collections,
        created_at: row.get(2)?,
        expires_at: row.get(3)?,
        channel: row.get(4)?,
    })
}

/// Every token's grant, by name.
pub(crate) fn list(conn: &Connection) -> Result<Vec<Grant>> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {GRANT_COLUMNS} FROM tokens ORDER BY name"))?;
    Ok(stmt
        .query_map([], grant_row)?
        .collect::<rusqlite::Result<_>>()?)
}

/// Every token of the library by its keyed hash, as a serving process keeps them, so that a
/// request's token is checked in memory (a hash and a map lookup) rather than in the
/// database. It is as current as its last `load`: the server loads it again whenever
/// another process commits (`server::watch`).
#[derive(Debug, Default)]
pub(crate) struct Table {
    /// The hashing key, derived from the secret once.
    key: [u8; 32],
    grants: std::collections::HashMap<[u8; 32], Grant>,
}

impl Table {
    /// The tokens the database at `conn` holds now.
    pub(crate) fn load(conn: &Connection) -> Result<Table> {
        let secret = read::secret(conn)?;
        let mut stmt = conn.prepare_cached(&format!("SELECT {GRANT_COLUMNS}, hash FROM tokens"))?;
        let grants = stmt
            .query_map([], |row| {
                let hash: Vec<u8> = row.get(5)?;
                Ok((hash, grant_row(row)?))
            })?
            .filter_map(|row| match row {
                Ok((hash, grant)) => Some(Ok((<[u8; 32]>::try_from(hash).ok()?, grant))),
                Err(err) => Some(Err(err)),
            })
            .collect::<rusqlite::Result<_>>()?;
        Ok(Table {
            key: blake3::derive_key(KEY_CONTEXT, &secret),
            grants,
        })
    }

    /// What `token` grants at `now`, as `find` would say of the database the table was
    /// loaded from.
    pub(crate) fn find(&self, token: &str, now: i64) -> Presented {
        if !of_our_form(token) {
            return Presented::Unknown;
        }
        let hash = blake3::keyed_hash(&self.key, token.as_bytes());
        presented(self.grants.get(hash.as_bytes()).cloned(), now)
    }
}

/// Whether `token` could be one of ours: a text of another form needs no hashing.
fn of_our_form(token: &str) -> bool {
    token.starts_with(PREFIX) && token.len() <= 128
}

/// What presenting a token whose row is `found` comes to at `now`.
fn presented(found: Option<Grant>, now: i64) -> Presented {
    match found {
        None => Presented::Unknown,
        Some(grant) if grant.expired(now) => Presented::Expired(grant.name),
        Some(grant) => Presented::Valid(grant),
    }
}

/// What `token` (the text after `Bearer `) grants at `now` (Unix milliseconds): one lookup
/// of its keyed hash in the `hash` column's UNIQUE index. No constant-time comparison is
/// needed: what is compared is the hash, whose key an attacker does not know, so how long
/// the index search takes tells nothing about how close a guess came to a stored token.
pub(crate) fn find(conn: &Connection, token: &str, now: i64) -> Result<Presented> {
    if !of_our_form(token) {
        return Ok(Presented::Unknown);
    }
    let secret = read::secret(conn)?;
    let found = conn
        .prepare_cached(&format!(
            "SELECT {GRANT_COLUMNS} FROM tokens WHERE hash = ?1"
        ))?
        .query_row([&hash(&secret, token)[..]], grant_row)
        .optional()?;
    Ok(presented(found, now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_found_by_its_text_until_it_expires_and_never_stored() {
        let (_folder, mut conn) = super::super::seed_library();
        let tx = conn.transaction().expect("transaction");
        let token = add(&tx, "ci", None, None, 1_000, Some(5_000)).expect("added");
        tx.commit().expect("commit");
        assert!(token.starts_with(PREFIX) && token.len() == PREFIX.len() + 43);
        let stored: Vec<u8> = conn
            .query_row("SELECT hash FROM tokens", [], |row| row.get(0))
            .expect("hash");
        assert_eq!(stored.len(), 32);
        assert_ne!(&stored[..], &blake3::hash(token.as_bytes()).as_bytes()[..]);
        let Presented::Valid(grant) = find(&conn, &token, 4_999).expect("find") else {
            panic!("the token is valid before it expires");
        };
        assert_eq!((grant.name.as_str(), grant.collections), ("ci", None));
        assert_eq!(
            find(&conn, &token, 5_000).expect("find"),
            Presented::Expired("ci".into())
        );
        let mut other = token.clone();
        other.pop();
        other.push(if token.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(find(&conn, &other, 0).expect("find"), Presented::Unknown);
        assert_eq!(
            find(&conn, "Bearer x", 0).expect("find"),
            Presented::Unknown
        );
        // The table a server keeps says the same of each.
        let table = Table::load(&conn).expect("load the table");
        for (text, now) in [(&token, 4_999), (&token, 5_000), (&other, 0)] {
            assert_eq!(
                table.find(text, now),
                find(&conn, text, now).expect("find"),
                "{text} at {now}"
            );
        }
    }

    #[test]
    fn collections_must_exist_and_names_are_unique() {
        let (_folder, mut conn) = super::super::seed_library();
        let known = collections(&conn).expect("collections");
        assert!(!known.is_empty(), "the seed has a collection");
        let tx = conn.transaction().expect("transaction");
        let asked = vec![known[0].clone(), known[0].clone()];
        add(&tx, "one", Some(&asked), None, 0, None).expect("added");
        let err = add(&tx, "two", Some(&["nope".to_string()]), None, 0, None).unwrap_err();
        assert!(
            err.to_string().contains("'nope'") && err.to_string().contains(&known[0]),
            "{err}"
        );
        let err = add(&tx, "one", None, None, 0, None).unwrap_err();
        assert!(err.to_string().contains("token rm one"), "{err}");
        let grants = list(&tx).expect("list");
        assert_eq!(grants.len(), 1);
        assert_eq!(grants[0].collections.as_deref(), Some(&known[..1]));
        assert!(remove(&tx, "one").expect("removed"));
        assert!(!remove(&tx, "one").expect("gone"));
    }
}
