//! `serve --auth oauth`: an OAuth 2.1 resource server's check of an access token. A token is
//! a JWT (RFC 7519, in the shape of RFC 9068) signed by the authorization server with one of
//! its keys (`jwks`); it is taken when its signature verifies with an asymmetric algorithm
//! (`ALGORITHMS`), its `iss` is the configured issuer, its `aud` holds this server's
//! resource URI (RFC 8707), it has not expired (`exp`, required) and is already valid
//! (`nbf`, when present), each within `LEEWAY`. What it sees then comes from its `scope`
//! claim (`Scopes`): `PREFIX:all` the whole library, `PREFIX:collection:NAME` that
//! collection, `PREFIX:channel:NAME` on that release channel. Opaque tokens (token introspection, RFC 7662) are not taken.

mod jwks;

use anyhow::{Result, bail};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};

use crate::config::OAuthConfig;
use crate::visibility::Visibility;

/// The algorithms a token may be signed with: asymmetric ones only, so that no public key
/// can be used as an HMAC secret, and never `none`.
pub(crate) const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The clock skew allowed between the authorization server and this one, in seconds.
const LEEWAY: u64 = 30;

/// What a token's check found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A valid token: what it sees, and whose it is (its `sub` claim; the empty string when
    /// it has none, which makes every such token one caller for the limits).
    Granted { seen: Visibility, subject: String },
    /// A token that is not valid here, and why, in words fit for `error_description` (no
    /// quotes, nothing of the token).
    Invalid(&'static str),
    /// A valid token whose scopes grant nothing of this library.
    Insufficient,
}

/// The scopes that grant what a token sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scopes {
    prefix: String,
}

impl Scopes {
    /// The scope that sees the whole library: `PREFIX:all`.
    pub(crate) fn all(&self) -> String {
        format!("{}:all", self.prefix)
    }

    /// What every scope of ours begins with, before its `:`.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// What a token with these scopes (its `scope` claim, space-separated) sees: the whole
    /// library with `PREFIX:all`, else the collections named by `PREFIX:collection:NAME`;
    /// on the release channel `PREFIX:channel:NAME` names (a token naming two channels
    /// sees nothing: which one it is served would be a guess). None when no scope grants
    /// anything.
    pub(crate) fn visibility(&self, scope: &str) -> Option<Visibility> {
        let mut everything = false;
        let mut collections = Vec::new();
        let mut channels = Vec::new();
        for granted in scope.split_ascii_whitespace() {
            let Some(rest) = granted
                .strip_prefix(self.prefix.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
            else {
                continue;
            };
            if rest == "all" {
                everything = true;
            } else if let Some(name) = rest.strip_prefix("collection:")
                && !name.is_empty()
            {
                collections.push(name.to_string());
            } else if let Some(name) = rest.strip_prefix("channel:")
                && !name.is_empty()
                && !channels.iter().any(|known| known == name)
            {
                channels.push(name.to_string());
            }
        }
        let seen = match (everything, collections.is_empty()) {
            (true, _) => Visibility::EVERYTHING,
            (false, false) => Visibility::collections_only(collections),
            (false, true) => return None,
        };
        match channels.as_slice() {
            [] => Some(seen),
            [channel] => Some(seen.on_channel(Some(channel.clone()))),
            _ => None,
        }
    }
}

/// Checks access tokens for one resource and one authorization server.
pub(crate) struct Verifier {
    issuer: String,
    resource: String,
    scopes: Scopes,
    keys: jwks::Keys,
    /// Tokens found valid, until they expire.
    kept: Kept,
}

/// The claims read beyond those `jsonwebtoken` checks.
#[derive(serde::Deserialize)]
struct Claims {
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    sub: Option<String>,
    /// Checked by `jsonwebtoken`; read again to know how long the token may be kept.
    #[serde(default)]
    exp: u64,
}

/// Tokens found valid, by their blake3 hash, each until it expires (`exp` and `LEEWAY`), so a
/// token presented again (every request of a host carries the same one) costs a hash and a
/// lookup rather than a signature check. Keys that leave the key set do not end a kept
/// token sooner: like any token, it is good until its `exp`.
#[derive(Default)]
struct Kept(std::sync::Mutex<std::collections::HashMap<[u8; 32], Granted>>);

/// At most this many tokens are kept (about 100 bytes each); when full, the expired go, and
/// if none has, all.
const MAX_KEPT: usize = 4_096;

struct Granted {
    seen: Visibility,
    subject: String,
    /// Unix seconds after which the token is checked again (and refused as expired).
    until: u64,
}

impl Kept {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<[u8; 32], Granted>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn find(&self, token: &str, now: u64) -> Option<Verdict> {
        let kept = self.lock();
        let granted = kept.get(blake3::hash(token.as_bytes()).as_bytes())?;
        (now < granted.until).then(|| Verdict::Granted {
            seen: granted.seen.clone(),
            subject: granted.subject.clone(),
        })
    }

    fn keep(&self, token: &str, granted: Granted, now: u64) {
        let mut kept = self.lock();
        if kept.len() >= MAX_KEPT {
            kept.retain(|_, granted| now < granted.until);
            if kept.len() >= MAX_KEPT {
                kept.clear();
            }
        }
        kept.insert(*blake3::hash(token.as_bytes()).as_bytes(), granted);
    }
}

/// Unix seconds now.
fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

impl Verifier {
    /// Reads the key set; fails when it cannot be read, or the settings cannot work.
    pub(crate) fn new(config: &OAuthConfig) -> Result<Verifier> {
        if config.scope_prefix.is_empty() || config.scope_prefix.contains(char::is_whitespace) {
            bail!(
                "--oauth-scope-prefix '{}' cannot be a scope's beginning; give a word without spaces, e.g. promptshelf",
                config.scope_prefix
            );
        }
        Ok(Verifier {
            issuer: config.issuer.clone(),
            resource: config.resource.clone(),
            scopes: Scopes {
                prefix: config.scope_prefix.clone(),
            },
            keys: jwks::Keys::load(config.jwks.clone())?,
            kept: Kept::default(),
        })
    }

    pub(crate) fn issuer(&self) -> &str {
        &self.issuer
    }

    pub(crate) fn resource(&self) -> &str {
        &self.resource
    }

    pub(crate) fn scopes(&self) -> &Scopes {
        &self.scopes
    }

    /// What `token` was granted when it was last found valid, if that was before and it has
    /// not expired since; None: `check` it. A lookup in memory, never the network.
    pub(crate) fn kept(&self, token: &str) -> Option<Verdict> {
        self.kept.find(token, now_secs())
    }

    /// Checks `token`. May read the key set again (`jwks::Keys::find`), so it blocks: call
    /// it off the async workers.
    pub(crate) fn check(&self, token: &str) -> Verdict {
        if let Some(verdict) = self.kept(token) {
            return verdict;
        }
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return Verdict::Invalid(
                "the token is not a signed JWT with an algorithm this server knows",
            );
        };
        if !ALGORITHMS.contains(&header.alg) {
            return Verdict::Invalid(
                "the token is signed with an algorithm this server does not take (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 or EdDSA)",
            );
        }
        let Some(key) = self.keys.find(header.kid.as_deref(), header.alg) else {
            return Verdict::Invalid(
                "the token is signed with a key the authorization server's key set does not hold",
            );
        };
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY;
        let claims = match jsonwebtoken::decode::<Claims>(token, &key, &validation) {
            Ok(data) => data.claims,
            Err(err) => return Verdict::Invalid(refused(err.kind())),
        };
        match self
            .scopes
            .visibility(claims.scope.as_deref().unwrap_or(""))
        {
            Some(seen) => {
                let subject = claims.sub.unwrap_or_default();
                let granted = Granted {
                    seen: seen.clone(),
                    subject: subject.clone(),
                    until: claims.exp.saturating_add(LEEWAY),
                };
                self.kept.keep(token, granted, now_secs());
                Verdict::Granted { seen, subject }
            }
            None => Verdict::Insufficient,
        }
    }
}

/// Why a token that was read was refused.
fn refused(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)",
        ErrorKind::InvalidIssuer => "the token was issued by another authorization server (iss)",
        ErrorKind::InvalidAudience => "the token is not meant for this resource (aud)",
        ErrorKind::MissingRequiredClaim(_) => "the token lacks exp, iss or aud",
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key",
        _ => "the token could not be read",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_map_onto_collections() {
        let scopes = Scopes {
            prefix: "shelf".into(),
        };
        assert_eq!(scopes.all(), "shelf:all");
        assert_eq!(
            scopes.visibility("openid shelf:collection:b shelf:collection:a shelf:collection:b"),
            Some(Visibility::collections_only(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            scopes.visibility("shelf:all shelf:channel:production"),
            Some(Visibility::EVERYTHING.on_channel(Some("production".into())))
        );
        assert_eq!(
            scopes.visibility("shelf:collection:a shelf:channel:staging shelf:channel:staging"),
            Some(Visibility::collections_only(vec!["a".into()]).on_channel(Some("staging".into())))
        );
        assert_eq!(
            scopes.visibility("shelf:all shelf:channel:staging shelf:channel:production"),
            None,
            "two channels grant nothing"
        );
        assert_eq!(scopes.visibility("shelf:channel:production"), None);
        assert_eq!(
            scopes.visibility("shelf:collection:a shelf:all"),
            Some(Visibility::EVERYTHING)
        );
        for nothing in [
            "",
            "openid profile",
            "shelf:collection:",
            "shelfall",
            "other:all",
            "shelfx:all",
        ] {
            assert_eq!(scopes.visibility(nothing), None, "{nothing}");
        }
    }

    #[test]
    fn a_token_is_kept_until_it_expires_and_what_is_kept_stays_bounded() {
        let kept = Kept::default();
        let granted = |until| Granted {
            seen: Visibility::EVERYTHING,
            subject: "someone".into(),
            until,
        };
        kept.keep("a.b.c", granted(100), 50);
        assert_eq!(
            kept.find("a.b.c", 99),
            Some(Verdict::Granted {
                seen: Visibility::EVERYTHING,
                subject: "someone".into()
            })
        );
        assert_eq!(kept.find("a.b.c", 100), None, "expired: checked again");
        assert_eq!(kept.find("x.y.z", 50), None, "never checked");
        for n in 0..MAX_KEPT + 10 {
            kept.keep(&format!("token-{n}"), granted(1_000), 50);
        }
        assert!(kept.lock().len() <= MAX_KEPT);
    }
}
