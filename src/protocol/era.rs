//! Which revision answers a request, and which methods each era serves. A request's era is
//! decided by its own `_meta` (`request::Era`); a legacy request is answered in the
//! revision its process's `initialize` negotiated. Tools are served only when a mirror is
//! on (`serve --tools`): without one, `tools/*` are methods this server does not serve. The
//! Skills extension's methods are served only to a client that declared the extension: in
//! a modern request's capabilities, or in the `initialize` of a legacy session.

use serde_json::json;

use super::error::{RpcError, code};
use super::request::{Envelope, Era, Method};
use super::revision::{Revision, legacy_names};
use super::skills::{Extensions, SKILLS_EXTENSION};
use crate::config::Mirrors;

/// What a legacy session's `initialize` settled, for the requests that follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub revision: Revision,
    /// The extensions the client declared.
    pub extensions: Extensions,
}

/// The revision `envelope` is answered in, given what the caller's `initialize` negotiated
/// (None: no legacy client has opened) and the mirrors that are on. An `initialize`
/// negotiates its own: the caller keeps it for the legacy requests that follow.
pub fn revision_of(
    envelope: &Envelope,
    negotiated: Option<Negotiated>,
    mirrors: &Mirrors,
) -> Result<Revision, RpcError> {
    let (revision, declared) = match (&envelope.era, &envelope.method) {
        (_, Method::Initialize { version, .. }) => (negotiate(version), Extensions::default()),
        (Era::Modern { extensions, .. }, _) => (Revision::MODERN, *extensions),
        // A discovery probe without `_meta` is still answered, in the modern shape.
        (Era::Legacy, Method::Discover) => (Revision::MODERN, Extensions::default()),
        (Era::Legacy, _) => {
            let negotiated = negotiated.ok_or_else(no_session)?;
            (negotiated.revision, negotiated.extensions)
        }
    };
    served(&envelope.method, revision, mirrors, declared)?;
    Ok(revision)
}

/// The revision an `initialize` asking for `version` gets: that one when it is a legacy
/// revision we speak, else our newest legacy one (the client then decides).
fn negotiate(version: &str) -> Revision {
    Revision::parse(version)
        .filter(|revision| !revision.is_modern())
        .unwrap_or(Revision::LEGACY[0])
}

fn no_session() -> RpcError {
    let supported: Vec<&str> = std::iter::once(Revision::MODERN)
        .chain(Revision::LEGACY)
        .map(Revision::as_str)
        .collect();
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "no session: send initialize first (protocol versions {}), or put protocolVersion {} and clientCapabilities in params._meta",
            legacy_names(),
            Revision::MODERN.as_str()
        ),
    )
    .with_data(json!({ "supported": supported }))
}

/// Methods that exist but not in this era, tools without a mirror, an extension's methods
/// for a client that did not declare it (`declared`), and methods that do not exist: -32601.
fn served(
    method: &Method,
    revision: Revision,
    mirrors: &Mirrors,
    declared: Extensions,
) -> Result<(), RpcError> {
    let modern = revision.is_modern();
    let extension_method = matches!(
        method,
        Method::ListSkills { .. } | Method::GetSkill { .. } | Method::ReadDirectory { .. }
    );
    if extension_method && !declared.skills {
        let declare = if modern {
            "in params._meta[\"io.modelcontextprotocol/clientCapabilities\"].extensions"
        } else {
            "in the capabilities.extensions of initialize"
        };
        return Err(RpcError::new(
            code::METHOD_NOT_FOUND,
            format!(
                "method '{}' is served only to clients that declare the {SKILLS_EXTENSION} extension: add \"{SKILLS_EXTENSION}\": {{}} {declare}",
                method.name()
            ),
        ));
    }
    let name = match method {
        Method::Ping if modern => "ping",
        Method::Subscribe { .. } if modern => "resources/subscribe",
        Method::Unsubscribe { .. } if modern => "resources/unsubscribe",
        Method::Listen(_) if !modern => "subscriptions/listen",
        Method::ListTools { .. } if !mirrors.any() => "tools/list",
        Method::CallTool(_) if !mirrors.any() => "tools/call",
        Method::Unknown(name) => name.as_str(),
        _ => return Ok(()),
    };
    let subscribe = if modern {
        "subscriptions/listen"
    } else {
        "resources/subscribe"
    };
    let tools = if mirrors.any() {
        "tools/list, tools/call, "
    } else {
        ""
    };
    Err(RpcError::new(
        code::METHOD_NOT_FOUND,
        format!(
            "method '{name}' is not served by promptshelf in protocol {}; it serves prompts/list, prompts/get, resources/list, resources/read, resources/templates/list, completion/complete, {tools}and {subscribe}{}",
            revision.as_str(),
            if mirrors.any() {
                ""
            } else {
                " (tools only with serve --tools)"
            }
        ),
    ))
}
