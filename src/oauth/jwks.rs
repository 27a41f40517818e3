//! The authorization server's signing keys: a JWK Set (RFC 7517) read from a file or an
//! HTTP(S) URL at start, and read again when a token names a key the set does not hold (the
//! authorization server rotated its keys), at most once per `REFRESH_EVERY`, so a stream of
//! tokens with made-up key ids cannot make the server fetch in a loop.
//!
//! Only keys for signatures by the asymmetric algorithms of `super::ALGORITHMS` are kept: a
//! symmetric (`oct`) key, an encryption key (`use: enc`) or a key of another kind is left
//! out, so a token can never be checked with a public key as an HMAC secret.

use std::io::Read;
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

use crate::config::JwksSource;

/// The shortest time between two reads of the key set for an unknown key id.
const REFRESH_EVERY: Duration = Duration::from_secs(60);
/// The largest key set read: a real one is a few KiB.
const MAX_BYTES: u64 = 1024 * 1024;
/// How long fetching the key set from a URL may take, connecting included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// One signing key of the set.
struct Key {
    kid: Option<String>,
    /// The algorithm the set pins the key to (its `alg`), if it does.
    alg: Option<Algorithm>,
    key: DecodingKey,
}

impl Key {
    /// Whether a token signed with `alg` may be checked with this key.
    fn fits(&self, alg: Algorithm) -> bool {
        self.key.family() == alg.family() && self.alg.is_none_or(|pinned| pinned == alg)
    }
}

/// The key set in use, and when it was last read for an unknown key id.
pub(super) struct Keys {
    source: JwksSource,
    keys: RwLock<Vec<Key>>,
    /// Held while the set is read again, so that one refresh runs at a time; None until the
    /// first one.
    refreshed: Mutex<Option<Instant>>,
}

impl Keys {
    /// Reads the key set from `source`; fails, naming the source, when it cannot be read or
    /// holds no signing key this server can use.
    pub(super) fn load(source: JwksSource) -> Result<Keys> {
        let keys = read(&source)?;
        if keys.is_empty() {
            bail!(
                "the key set {} holds no signing key this server can use (RSA, P-256, P-384 or Ed25519 keys for signatures); give the authorization server's JWKS with --oauth-jwks",
                shown(&source)
            );
        }
        Ok(Keys {
            source,
            keys: RwLock::new(keys),
            refreshed: Mutex::new(None),
        })
    }

    /// The key to check a token signed with `alg` and naming `kid` with: the set's key of
    /// that id (or, for a token naming none, the set's one key for `alg`). A key id the set
    /// does not hold reads the set again first, unless it was read for that less than
    /// `REFRESH_EVERY` ago. Blocks while the set is read: call it off the async workers.
    pub(super) fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        if let Some(key) = self.lookup(kid, alg) {
            return Some(key);
        }
        let mut refreshed = self
            .refreshed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Another request may have read the set while this one waited.
        if let Some(key) = self.lookup(kid, alg) {
            return Some(key);
        }
        let now = Instant::now();
        if refreshed.is_some_and(|at| now.duration_since(at) < REFRESH_EVERY) {
            return None;
        }
        *refreshed = Some(now);
        match read(&self.source) {
            Ok(keys) => {
                tracing::info!(
                    "read the key set {} again: {} signing keys",
                    shown(&self.source),
                    keys.len()
                );
                *self.keys.write().unwrap_or_else(PoisonError::into_inner) = keys;
            }
            Err(err) => tracing::warn!("{err:#}; the keys read before are kept"),
        }
        self.lookup(kid, alg)
    }

    fn lookup(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        let mut fitting = keys.iter().filter(|key| key.fits(alg));
        let found = match kid {
            Some(kid) => fitting.find(|key| key.kid.as_deref() == Some(kid)),
            // Without a key id, only a set with one key for the algorithm says which.
            None => match (fitting.next(), fitting.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            },
        };
        found.map(|key| key.key.clone())
    }
}

/// The source as an error message names it.
fn shown(source: &JwksSource) -> String {
    match source {
        JwksSource::File(path) => format!("file {}", path.display()),
        JwksSource::Url(url) => url.clone(),
    }
}

/// The signing keys of the set at `source`.
fn read(source: &JwksSource) -> Result<Vec<Key>> {
    let text = match source {
        JwksSource::File(path) => {
            let file = std::fs::File::open(path)
                .with_context(|| format!("cannot open the key set file {}", path.display()))?;
            let mut text = Vec::new();
            file.take(MAX_BYTES + 1)
                .read_to_end(&mut text)
                .with_context(|| format!("cannot read the key set file {}", path.display()))?;
            text
        }
        JwksSource::Url(url) => fetch(url)?,
    };
    if text.len() as u64 > MAX_BYTES {
        bail!(
            "the key set {} is over {MAX_BYTES} bytes; is it a JWK Set?",
            shown(source)
        );
    }
    parse(&text).with_context(|| format!("the key set {} is not a JWK Set", shown(source)))
}

/// GET `url`, within `FETCH_TIMEOUT` and `MAX_BYTES`; an https URL's certificate checked
/// against the system's trusted roots.
fn fetch(url: &str) -> Result<Vec<u8>> {
    let mut response = crate::http_client::agent(Some(FETCH_TIMEOUT))
        .get(url)
        .header("accept", "application/json, application/jwk-set+json")
        .call()
        .with_context(|| format!("cannot fetch the key set {url}"))?;
    if !response.status().is_success() {
        bail!("cannot fetch the key set {url}: HTTP {}", response.status());
    }
    response
        .body_mut()
        .with_config()
        .limit(MAX_BYTES + 1)
        .read_to_vec()
        .with_context(|| format!("cannot read the key set {url}"))
}

/// The signing keys of a JWK Set's text; each key is read on its own, so one of a kind this
/// server does not know leaves the others usable.
fn parse(text: &[u8]) -> Result<Vec<Key>> {
    #[derive(serde::Deserialize)]
    struct Set {
        keys: Vec<serde_json::Value>,
    }
    let set: Set = serde_json::from_slice(text).context("expected {\"keys\": [...]}")?;
    let mut keys = Vec::new();
    for value in set.keys {
        let Ok(jwk) = serde_json::from_value::<Jwk>(value) else {
            continue;
        };
        if let Some(key) = signing_key(&jwk) {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// `jwk` as a key for checking signatures, or None if it is not one: symmetric, for
/// encryption, pinned to an algorithm not in `super::ALGORITHMS`, or unreadable.
fn signing_key(jwk: &Jwk) -> Option<Key> {
    if let Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_)) = &jwk.common.public_key_use {
        return None;
    }
    if !matches!(
        jwk.algorithm,
        AlgorithmParameters::RSA(_)
            | AlgorithmParameters::EllipticCurve(_)
            | AlgorithmParameters::OctetKeyPair(_)
    ) {
        return None;
    }
    let alg = match jwk.common.key_algorithm {
        None => None,
        Some(pinned) => Some(allowed(pinned)?),
    };
    Some(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        key: DecodingKey::from_jwk(jwk).ok()?,
    })
}

/// `alg` as one of `super::ALGORITHMS`, or None.
fn allowed(alg: KeyAlgorithm) -> Option<Algorithm> {
    let alg = Algorithm::try_from(alg).ok()?;
    super::ALGORITHMS.contains(&alg).then_some(alg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_asymmetric_signing_keys_are_kept() {
        let set = br#"{"keys": [
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
            {"kty": "OKP", "crv": "Ed25519", "kid": "enc", "use": "enc",
             "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
            {"kty": "OKP", "crv": "Ed25519", "kid": "hs", "alg": "HS256",
             "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
            {"kty": "XYZ", "kid": "unknown"},
            {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "use": "sig",
             "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
        ]}"#;
        let keys = parse(set).expect("a JWK Set");
        let kids: Vec<_> = keys.iter().map(|key| key.kid.as_deref()).collect();
        assert_eq!(kids, [Some("ed")]);
        assert!(keys[0].fits(Algorithm::EdDSA));
        assert!(!keys[0].fits(Algorithm::RS256) && !keys[0].fits(Algorithm::HS256));
    }

    #[test]
    fn a_set_without_keys_is_refused() {
        let err = parse(b"{\"kty\": \"OKP\"}").err().expect("refused");
        assert!(format!("{err:#}").contains("expected {\"keys\""), "{err:#}");
    }
}
