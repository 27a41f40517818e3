//! Legacy sessions' ids that carry their own state: the revision `initialize` negotiated
//! and when the id expires, signed with a key derived from the database's secret. The
//! signature also covers who opened the session (`callers::Who::binding`: the token's name,
//! the OAuth subject), so an id is taken only from that caller: any other gets the answer
//! an unknown id gets (404), and cannot use, subscribe into or end another's session. Any
//! instance serving the same database accepts an id any other gave, so no instance keeps
//! a table of sessions and a load balancer needs no affinity; the price is that an id
//! cannot be ended before it expires (see `DELETE` in `exchange`).
//!
//! An id is `base64url(payload) "." base64url(MAC)`: only `A-Z a-z 0-9 - _ .`, within
//! the visible ASCII the transport requires; the MAC is of the payload, a newline and the
//! owner's binding. The payload is
//! `2 <revision> <expiry in Unix seconds> <random nonce>`, space-separated, then ` skills`
//! when the client declared the Skills extension (whose methods its requests may then
//! call); the nonce makes every id unique (what this instance keeps for a session, its GET
//! stream and subscriptions, is keyed by it).
//!
//! Whether the client declared form elicitation is not carried: no form of ours is sent
//! over HTTP (a legacy `prompts/get` lacking arguments gets the error naming them), so
//! nothing a session does depends on it.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::protocol::{Extensions, Negotiated, Revision};

/// How long a session id is accepted: a client re-initializes after that (404).
pub(super) const SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The context of the session key's derivation: a key of its own, unrelated to the one
/// that signs `requestState`, though both come from the same secret.
const KEY_CONTEXT: &str = "promptshelf 2026-12-01 legacy HTTP session id";

/// What a session id says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LegacySession {
    pub(super) revision: Revision,
    /// The extensions the client declared in its `initialize`.
    pub(super) extensions: Extensions,
    /// Unix seconds.
    pub(super) expires: u64,
    /// The random part: unique per session, the key of what this instance keeps for it.
    pub(super) nonce: String,
}

/// Why an id is not taken.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Rejected {
    /// Not an id of ours: malformed, or its signature does not match this database's key.
    NotOurs,
    Expired,
}

impl LegacySession {
    /// What the session's `initialize` negotiated, for routing its requests.
    pub(super) fn negotiated(&self) -> Negotiated {
        Negotiated {
            revision: self.revision,
            extensions: self.extensions,
        }
    }
}

impl Rejected {
    /// The sentence's middle: "the Mcp-Session-Id {why}".
    pub(super) fn why(&self) -> &'static str {
        match self {
            Rejected::NotOurs => {
                "was not given by this server to this caller (or its database changed)"
            }
            Rejected::Expired => "has expired",
        }
    }
}

/// The payload's ending for a client that declared the Skills extension.
const SKILLS: &str = " skills";

fn key(secret: &[u8]) -> [u8; 32] {
    blake3::derive_key(KEY_CONTEXT, secret)
}

/// A new session's id, for a session that negotiated `negotiated` at `now` (Unix seconds);
/// fails only when the system has no randomness to give.
pub(super) fn mint(
    secret: &[u8],
    negotiated: Negotiated,
    owner: &str,
    now: u64,
) -> Result<String, getrandom::Error> {
    let mut random = [0u8; 16];
    getrandom::fill(&mut random)?;
    let nonce: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
    let expires = now.saturating_add(SESSION_TTL.as_secs());
    let skills = if negotiated.extensions.skills {
        SKILLS
    } else {
        ""
    };
    let payload = format!(
        "{FORMAT} {} {expires} {nonce}{skills}",
        negotiated.revision.as_str()
    );
    let mac = signature(secret, payload.as_bytes(), owner);
    Ok(format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(payload),
        URL_SAFE_NO_PAD.encode(mac.as_bytes())
    ))
}

/// The first word of a payload: ids of the format before sessions were bound to their
/// owners are not taken.
const FORMAT: &str = "2";

/// The MAC of `payload` for the session of `owner` (a `Who::binding`).
fn signature(secret: &[u8], payload: &[u8], owner: &str) -> blake3::Hash {
    let mut hasher = blake3::Hasher::new_keyed(&key(secret));
    hasher.update(payload);
    hasher.update(b"\n");
    hasher.update(owner.as_bytes());
    hasher.finalize()
}

/// The session `id` stands for, if it is one of ours, opened by `owner` (a `Who::binding`),
/// and current at `now`.
pub(super) fn verify(
    secret: &[u8],
    id: &[u8],
    owner: &str,
    now: u64,
) -> Result<LegacySession, Rejected> {
    let (payload, mac) = id
        .iter()
        .position(|byte| *byte == b'.')
        .map(|at| (&id[..at], &id[at + 1..]))
        .ok_or(Rejected::NotOurs)?;
    let payload = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| Rejected::NotOurs)?;
    let mac: [u8; 32] = URL_SAFE_NO_PAD
        .decode(mac)
        .ok()
        .and_then(|mac| mac.try_into().ok())
        .ok_or(Rejected::NotOurs)?;
    // blake3's Hash compares in constant time.
    if signature(secret, &payload, owner) != blake3::Hash::from_bytes(mac) {
        return Err(Rejected::NotOurs);
    }
    let payload = String::from_utf8(payload).map_err(|_| Rejected::NotOurs)?;
    let (payload, skills) = match payload.strip_suffix(SKILLS) {
        Some(payload) => (payload, true),
        None => (payload.as_str(), false),
    };
    let mut parts = payload.split(' ');
    let (Some(FORMAT), Some(revision), Some(expires), Some(nonce), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(Rejected::NotOurs);
    };
    let revision = Revision::parse(revision).ok_or(Rejected::NotOurs)?;
    let expires: u64 = expires.parse().map_err(|_| Rejected::NotOurs)?;
    if expires <= now {
        return Err(Rejected::Expired);
    }
    Ok(LegacySession {
        revision,
        extensions: Extensions { skills },
        expires,
        nonce: nonce.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"the database's secret";
    const NOW: u64 = 1_800_000_000;
    const OWNER: &str = "token:alice";

    #[test]
    fn an_id_carries_its_revision_until_it_expires() {
        let revision = Revision::LEGACY[1];
        let negotiated = Negotiated {
            revision,
            extensions: Extensions::default(),
        };
        let id = mint(SECRET, negotiated, OWNER, NOW).unwrap();
        assert!(id.bytes().all(|byte| (0x21..=0x7e).contains(&byte)), "{id}");
        let session = verify(SECRET, id.as_bytes(), OWNER, NOW + 10).unwrap();
        assert_eq!(session.negotiated(), negotiated);
        assert_ne!(
            mint(SECRET, negotiated, OWNER, NOW).unwrap(),
            id,
            "ids are unique"
        );
        let skills = Negotiated {
            revision,
            extensions: Extensions { skills: true },
        };
        let id = mint(SECRET, skills, OWNER, NOW).unwrap();
        assert_eq!(
            verify(SECRET, id.as_bytes(), OWNER, NOW).map(|session| session.negotiated()),
            Ok(skills)
        );
        let later = NOW + SESSION_TTL.as_secs();
        assert_eq!(
            verify(SECRET, id.as_bytes(), OWNER, later),
            Err(Rejected::Expired)
        );
    }

    #[test]
    fn a_tampered_or_foreign_id_is_refused() {
        let negotiated = Negotiated {
            revision: Revision::LEGACY[0],
            extensions: Extensions::default(),
        };
        let id = mint(SECRET, negotiated, OWNER, NOW).unwrap();
        assert_eq!(
            verify(b"another database", id.as_bytes(), OWNER, NOW),
            Err(Rejected::NotOurs)
        );
        let (payload, mac) = id.split_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD.encode(
            String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap())
                .unwrap()
                .replace("2025-11-25", "2025-06-18"),
        );
        assert_eq!(
            verify(SECRET, format!("{forged}.{mac}").as_bytes(), OWNER, NOW),
            Err(Rejected::NotOurs)
        );
        // Another caller's id is no more taken than a forged one.
        assert_eq!(
            verify(SECRET, id.as_bytes(), "token:mallory", NOW),
            Err(Rejected::NotOurs)
        );
        for junk in ["", ".", "abc", "a.b", "é.é"] {
            assert_eq!(
                verify(SECRET, junk.as_bytes(), OWNER, NOW),
                Err(Rejected::NotOurs)
            );
        }
    }
}
