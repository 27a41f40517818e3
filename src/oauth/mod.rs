//! `serve --auth oauth`: an OAuth 2.1 resource server's check of an access token. A token is
//! a JWT (RFC 7519, in the shape of RFC 9068) signed by the authorization server with one of
//! its keys (`jwks`); it is taken when its signature verifies with an asymmetric algorithm
//! (`ALGORITHMS`), its `iss` is the configured issuer, its `aud` holds this server's
//! resource URI (RFC 8707), it has not expired (`exp`, required) and is already valid
//! (`nbf`, when present), each within `LEEWAY`. What it sees then comes from its `scope`
//! claim (`Scopes`): `PREFIX:all` the whole library, `PREFIX:collection:NAME` that
//! collection. Opaque tokens (token introspection, RFC 7662) are not taken.

mod jwks;

use anyhow::{Result, bail};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};

use crate::config::OAuthConfig;
use crate::visibility::Visibility;

/// The algorithms a token may be signed with: asymmetric ones only, so that no public key
/// can be used as an HMAC secret, and never `none`.
pub const ALGORITHMS: [Algorithm; 9] = [
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
pub enum Verdict {
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
pub struct Scopes {
    prefix: String,
}

impl Scopes {
    /// The scope that sees the whole library: `PREFIX:all`.
    pub fn all(&self) -> String {
        format!("{}:all", self.prefix)
    }

    /// What every scope of ours begins with, before its `:`.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// What a token with these scopes (its `scope` claim, space-separated) sees: the whole
    /// library with `PREFIX:all`, else the collections named by `PREFIX:collection:NAME`;
    /// None when no scope is one of these.
    pub fn visibility(&self, scope: &str) -> Option<Visibility> {
        let mut collections = Vec::new();
        for granted in scope.split_ascii_whitespace() {
            let Some(rest) = granted
                .strip_prefix(self.prefix.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
            else {
                continue;
            };
            if rest == "all" {
                return Some(Visibility::Everything);
            }
            if let Some(name) = rest.strip_prefix("collection:")
                && !name.is_empty()
            {
                collections.push(name.to_string());
            }
        }
        if collections.is_empty() {
            return None;
        }
        collections.sort();
        collections.dedup();
        Some(Visibility::Collections(collections))
    }
}

/// Checks access tokens for one resource and one authorization server.
pub struct Verifier {
    issuer: String,
    resource: String,
    scopes: Scopes,
    keys: jwks::Keys,
}

/// The claims read beyond those `jsonwebtoken` checks.
#[derive(serde::Deserialize)]
struct Claims {
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    sub: Option<String>,
}

impl Verifier {
    /// Reads the key set; fails when it cannot be read, or the settings cannot work.
    pub fn new(config: &OAuthConfig) -> Result<Verifier> {
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
        })
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    pub fn resource(&self) -> &str {
        &self.resource
    }

    pub fn scopes(&self) -> &Scopes {
        &self.scopes
    }

    /// Checks `token`. May read the key set again (`jwks::Keys::find`), so it blocks: call
    /// it off the async workers.
    pub fn check(&self, token: &str) -> Verdict {
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
            Some(seen) => Verdict::Granted {
                seen,
                subject: claims.sub.unwrap_or_default(),
            },
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
            Some(Visibility::Collections(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            scopes.visibility("shelf:collection:a shelf:all"),
            Some(Visibility::Everything)
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
}
