//! The HTTP face of `serve --auth oauth` (`crate::oauth` checks the tokens): the Protected
//! Resource Metadata document (RFC 9728 §2 and §3) served without a token at
//! `/.well-known/oauth-protected-resource` and `/.well-known/oauth-protected-resource/mcp`,
//! and the `WWW-Authenticate: Bearer` challenges (RFC 6750 §3, RFC 9728 §5.1) of a 401 or
//! 403, which point a client at that document.

use serde_json::json;

use crate::oauth::Verifier;

/// Where the metadata is served: the root document, and the one RFC 9728 §3.1 derives for a
/// resource at `/mcp`.
const METADATA_PATHS: [&str; 2] = [
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
];

/// Why a request is challenged.
pub(super) enum Problem {
    /// It carries no access token.
    Missing,
    /// Its token is not valid here, and why.
    Invalid(&'static str),
    /// Its token is valid and grants nothing of this library.
    Insufficient,
}

/// Whether `path` is one of the metadata document's.
pub(super) fn is_metadata_path(path: &str) -> bool {
    METADATA_PATHS.contains(&path)
}

/// The Protected Resource Metadata document. `scopes_supported` names the scope that sees
/// everything and no collection's scope: the document is public, and listing them would
/// name the library's collections to anyone.
pub(super) fn metadata(verifier: &Verifier) -> Vec<u8> {
    json!({
        "resource": verifier.resource(),
        "authorization_servers": [verifier.issuer()],
        "bearer_methods_supported": ["header"],
        "scopes_supported": [verifier.scopes().all()],
    })
    .to_string()
    .into_bytes()
}

/// The metadata document's URL for `resource` (RFC 9728 §3.1): the well-known path put
/// between the resource's host and its path.
pub(super) fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("https", resource));
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = path.trim_end_matches('/');
    format!("{scheme}://{authority}{}{path}", METADATA_PATHS[0])
}

/// The `WWW-Authenticate` value for `problem`. Every part is the server's own text (the
/// resource URI was checked at start to hold no quote), so nothing needs escaping.
pub(super) fn challenge(verifier: &Verifier, problem: &Problem) -> String {
    let metadata = metadata_url(verifier.resource());
    let scope = verifier.scopes().all();
    match problem {
        Problem::Missing => format!("Bearer resource_metadata=\"{metadata}\", scope=\"{scope}\""),
        Problem::Invalid(why) => format!(
            "Bearer error=\"invalid_token\", error_description=\"{why}\", resource_metadata=\"{metadata}\", scope=\"{scope}\""
        ),
        Problem::Insufficient => format!(
            "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{metadata}\", error_description=\"the token's scopes grant no collection of this library\""
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_puts_the_well_known_path_before_the_resources_path() {
        assert_eq!(
            metadata_url("https://shelf.example.com/mcp"),
            "https://shelf.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("https://shelf.example.com:8443/team/mcp/"),
            "https://shelf.example.com:8443/.well-known/oauth-protected-resource/team/mcp"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
    }
}
