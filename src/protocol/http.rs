//! MCP's Streamable HTTP transport as far as it is protocol: the headers a request carries,
//! what each must say about the message it comes with (`check_modern`,
//! `check_legacy_version`), and the errors a request refused before it is answered gets,
//! with the HTTP status each comes with (`refusal_status`).

use base64::Engine;

use super::error::{RpcError, code};
use super::request::Envelope;
use super::revision::{Revision, legacy_names};

/// The headers' names, lower case as `http` spells them (names are case-insensitive).
pub(crate) mod header {
    pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
    pub(crate) const METHOD: &str = "mcp-method";
    pub(crate) const NAME: &str = "mcp-name";
    /// A legacy session's id (2025-11-25 spells it `MCP-Session-Id`: the same header).
    pub(crate) const SESSION_ID: &str = "mcp-session-id";
}

/// The MCP headers of one request, as sent (None: absent).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct McpHeaders<'a> {
    pub version: Option<&'a [u8]>,
    pub method: Option<&'a [u8]>,
    pub name: Option<&'a [u8]>,
}

/// Checks a modern request's headers against its message: `MCP-Protocol-Version` is the
/// `_meta` version (the only modern one), `Mcp-Method` the method, and for the methods that
/// name something, `Mcp-Name` the name or URI (plain, or `=?base64?...?=`).
pub(crate) fn check_modern(envelope: &Envelope, headers: &McpHeaders) -> Result<(), RpcError> {
    let modern = Revision::MODERN.as_str();
    match headers.version {
        None => {
            return Err(header_mismatch(format!(
                "MCP-Protocol-Version is missing; send MCP-Protocol-Version: {modern}, the protocolVersion of params._meta"
            )));
        }
        Some(sent) if sent != modern.as_bytes() => {
            return Err(header_mismatch(format!(
                "MCP-Protocol-Version is '{}' but params._meta says {modern}; send the same version in both",
                shown(sent)
            )));
        }
        Some(_) => {}
    }
    let method = envelope.method.name();
    match headers.method {
        None => {
            return Err(header_mismatch(format!(
                "Mcp-Method is missing; send Mcp-Method: {method}, the method of the message"
            )));
        }
        Some(sent) if sent != method.as_bytes() => {
            return Err(header_mismatch(format!(
                "Mcp-Method is '{}' but the message's method is '{method}' (the header is case-sensitive); send the method exactly",
                shown(sent)
            )));
        }
        Some(_) => {}
    }
    let Some(named) = envelope.method.named() else {
        return Ok(());
    };
    let Some(sent) = headers.name else {
        return Err(header_mismatch(format!(
            "Mcp-Name is missing; a {method} request sends Mcp-Name with its params' name or uri ('{named}'), as =?base64?...?= when it is not printable ASCII"
        )));
    };
    let decoded = decode_name(sent)?;
    if decoded != named {
        return Err(header_mismatch(format!(
            "Mcp-Name says '{decoded}' but the message names '{named}'; send the params' name or uri exactly"
        )));
    }
    Ok(())
}

/// An `Mcp-Name` value: printable ASCII as it is, or `=?base64?{Base64 of UTF-8}?=` (this
/// spelling exactly; padding optional), decoded.
fn decode_name(sent: &[u8]) -> Result<String, RpcError> {
    let sent = sent.trim_ascii();
    if let Some(encoded) = sent
        .strip_prefix(b"=?base64?")
        .and_then(|rest| rest.strip_suffix(b"?="))
    {
        let engine = base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
        );
        let bytes = engine.decode(encoded).map_err(|err| {
            header_mismatch(format!(
                "Mcp-Name's =?base64?...?= holds no valid Base64 ({err}); encode the name's UTF-8 with the standard alphabet"
            ))
        })?;
        return String::from_utf8(bytes).map_err(|_| {
            header_mismatch(
                "Mcp-Name's =?base64?...?= does not decode to UTF-8; encode the name's UTF-8 bytes"
                    .to_string(),
            )
        });
    }
    if sent.iter().all(|byte| (0x20..0x7f).contains(byte)) {
        return Ok(String::from_utf8_lossy(sent).into_owned());
    }
    Err(header_mismatch(
        "Mcp-Name holds characters outside printable ASCII; send such a name as =?base64?{Base64 of its UTF-8}?="
            .to_string(),
    ))
}

/// A header value for a message: printable as it is, escaped otherwise, and cut short.
fn shown(sent: &[u8]) -> String {
    let text: String = sent.escape_ascii().to_string();
    if text.len() > 80 {
        format!("{}...", &text[..80])
    } else {
        text
    }
}

/// Checks the `MCP-Protocol-Version` of a legacy request after `initialize` against the
/// revision its session negotiated. Absent is fine (2025-03-26 clients send none).
pub(crate) fn check_legacy_version(
    sent: Option<&[u8]>,
    negotiated: Revision,
) -> Result<(), RpcError> {
    let Some(sent) = sent else {
        return Ok(());
    };
    if sent == negotiated.as_str().as_bytes() {
        return Ok(());
    }
    Err(RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "MCP-Protocol-Version is '{}' but this session's initialize negotiated {}; send MCP-Protocol-Version: {} (versions served to initialize: {})",
            shown(sent),
            negotiated.as_str(),
            negotiated.as_str(),
            legacy_names()
        ),
    ))
}

/// A message whose `_meta` names a version not served (`error`, -32022): when its
/// `MCP-Protocol-Version` header names another version, header and body disagree, and that
/// is said first (-32020), as it is for a served version; otherwise `error` stands.
pub(crate) fn unserved_version(error: RpcError, sent: Option<&[u8]>) -> RpcError {
    let requested = error
        .data
        .as_ref()
        .and_then(|data| data["requested"].as_str());
    match (requested, sent) {
        (Some(requested), Some(sent)) if sent != requested.as_bytes() => header_mismatch(format!(
            "MCP-Protocol-Version is '{}' but params._meta says '{requested}'; send the same version in both",
            shown(sent)
        )),
        _ => error,
    }
}

/// A message sent with `MCP-Protocol-Version: 2026-07-28` and without the `_meta` such a
/// request carries: malformed (-32602), not a legacy request without its session.
pub(crate) fn modern_without_meta() -> RpcError {
    let modern = Revision::MODERN.as_str();
    RpcError::invalid_params(format!(
        "MCP-Protocol-Version says {modern} but params._meta lacks \"io.modelcontextprotocol/protocolVersion\" and \"io.modelcontextprotocol/clientCapabilities\"; a {modern} request carries both there"
    ))
}

fn header_mismatch(detail: String) -> RpcError {
    RpcError::new(code::HEADER_MISMATCH, format!("Header mismatch: {detail}"))
}

/// A legacy request after `initialize` came without `Mcp-Session-Id`.
pub(crate) fn session_required() -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "Mcp-Session-Id is missing; send the id the initialize answer's Mcp-Session-Id header gave, or put protocolVersion {} and clientCapabilities in params._meta",
            Revision::MODERN.as_str()
        ),
    )
}

/// A legacy session id that this server did not give (or no longer takes): answered with
/// 404, so that the client initializes again.
pub(crate) fn session_unknown(why: &str) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!("the Mcp-Session-Id {why}; send initialize again for a new session"),
    )
}

/// A request without a bearer token, or with one this library does not hold (`why`), to a
/// server that asks for one: answered with 401 and `WWW-Authenticate: Bearer`.
pub(crate) fn unauthorized(why: &str) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "{why}; send a token made with `promptshelf token add NAME` as Authorization: Bearer TOKEN"
        ),
    )
}

/// `serve --auth oauth`: a request without an access token, or with one that is not valid
/// here (`why`): answered with 401 and a `WWW-Authenticate: Bearer` challenge naming the
/// protected resource metadata.
pub(crate) fn access_token_refused(why: &str) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "{why}; send an access token from the authorization server that this server's protected resource metadata names (/.well-known/oauth-protected-resource) as Authorization: Bearer TOKEN"
        ),
    )
}

/// `serve --auth oauth`: a valid access token whose scopes grant nothing of this library:
/// answered with 403 and `error="insufficient_scope"`.
pub(crate) fn insufficient_scope(all: &str, prefix: &str) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "the access token's scopes grant nothing of this library; ask the authorization server for the scope {all} (everything) or {prefix}:collection:NAME (one collection)"
        ),
    )
}

/// A request's `Origin` is not one this server takes.
pub(crate) fn origin_refused(origin: &str) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "Origin '{origin}' is not allowed; start the server with --allow-origin {origin} to allow it"
        ),
    )
}

/// A request's `Host` is not a name this server is reached by: a page whose DNS name was
/// rebound to this address sends its own name.
pub(crate) fn host_refused(host: &str) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "Host '{host}' is not a name this server is served by; reach it as localhost or by its address, or start it with --allow-host {host}"
        ),
    )
}

/// A request whose body did not arrive whole within `seconds` (`--body-timeout`).
pub(crate) fn body_timed_out(seconds: u64) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "the request body did not arrive within {seconds} s (serve --body-timeout); send the whole message at once"
        ),
    )
}

/// A request over its caller's share of the requests answered at once
/// (`--max-in-flight-per-token`); `caller` says whose. Retried after a second.
pub(crate) fn over_in_flight_share(caller: &str, share: usize) -> RpcError {
    RpcError::new(
        code::RATE_LIMITED,
        format!(
            "too many requests in flight for {caller}: each caller has at most {share} requests being sent or answered at once (serve --max-in-flight-per-token); wait for an answer, then send more"
        ),
    )
    .with_data(serde_json::json!({ "retryAfterMs": 1000, "limit": "--max-in-flight-per-token" }))
}

/// An HTTP method the endpoint does not serve for this request.
pub(crate) fn method_not_allowed(method: &str, allowed: &str) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "HTTP {method} is not served here; send {allowed} (GET and DELETE only with a legacy session's Mcp-Session-Id)"
        ),
    )
}

/// A request to a path other than the endpoint's.
pub(crate) fn not_found(path: &str, endpoint: &str) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!("there is nothing at '{path}'; MCP is served at {endpoint}"),
    )
}

/// A stream over the cap on open streams (`--max-streams`).
pub(crate) fn too_many_streams(max: usize) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "too many open streams: this server keeps at most {max} streams open at once (serve --max-streams); close one, or retry later"
        ),
    )
}

/// A stream over its caller's cap (`--max-streams-per-token`); `caller` says whose.
pub(crate) fn too_many_streams_for(caller: &str, max: usize) -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "too many open streams for {caller}: each caller keeps at most {max} streams open at once (serve --max-streams-per-token); close one of them first"
        ),
    )
}

/// The server is shutting down: no new requests are taken.
pub(crate) fn shutting_down() -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        "the server is shutting down; retry on another instance or once it is back",
    )
}

/// The HTTP status of an error answered before the request reached a handler: 404 for a
/// method not served, 429 over a rate limit (completion, or a caller's requests), 400 for everything else (headers,
/// version, `_meta`, session, malformed message). A handler's own errors (an unknown
/// prompt) are answered 200.
pub(crate) fn refusal_status(error: &RpcError) -> u16 {
    match error.code {
        code::METHOD_NOT_FOUND => 404,
        code::RATE_LIMITED => 429,
        _ => 400,
    }
}

/// The HTTP status of an error answering a request of a legacy session: 200, since the
/// message was taken and answered (a 404 would tell the client its session ended, a 400
/// that the request was malformed), except 429 over the completion rate.
pub(crate) fn legacy_refusal_status(error: &RpcError) -> u16 {
    match error.code {
        code::RATE_LIMITED => 429,
        _ => 200,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Incoming, parse_line};

    fn envelope(line: &str) -> Envelope {
        match parse_line(line.as_bytes()) {
            Incoming::Request(envelope) => envelope,
            other => panic!("not a request: {other:?}"),
        }
    }

    const GET: &str = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"café","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

    fn check(method: &str, name: Option<&str>) -> Result<(), RpcError> {
        let headers = McpHeaders {
            version: Some(b"2026-07-28"),
            method: Some(method.as_bytes()),
            name: name.map(str::as_bytes),
        };
        check_modern(&envelope(GET), &headers)
    }

    #[test]
    fn headers_are_checked_against_the_message() {
        assert!(check("prompts/get", Some("=?base64?Y2Fmw6k=?=")).is_ok());
        assert!(check("prompts/get", Some("=?base64?Y2Fmw6k?=")).is_ok());
        assert!(check("prompts/get", Some("  =?base64?Y2Fmw6k=?= ")).is_ok());
        for (method, name) in [
            ("PROMPTS/GET", Some("=?base64?Y2Fmw6k=?=")),
            ("prompts/get", None),
            ("prompts/get", Some("cafe")),
            ("prompts/get", Some("=?base64?!!!?=")),
            ("prompts/get", Some("=?BASE64?Y2Fmw6k=?=")),
            ("prompts/get", Some("café")),
        ] {
            let error = check(method, name).expect_err(method);
            assert_eq!(error.code, code::HEADER_MISMATCH, "{method} {name:?}");
            assert!(error.message.starts_with("Header mismatch: "));
        }
        let missing = McpHeaders {
            version: None,
            ..McpHeaders::default()
        };
        assert_eq!(
            check_modern(&envelope(GET), &missing).unwrap_err().code,
            code::HEADER_MISMATCH
        );
    }

    #[test]
    fn a_legacy_version_header_must_be_the_negotiated_one() {
        let negotiated = Revision::LEGACY[0];
        assert!(check_legacy_version(None, negotiated).is_ok());
        assert!(check_legacy_version(Some(negotiated.as_str().as_bytes()), negotiated).is_ok());
        assert!(check_legacy_version(Some(b"2025-03-26"), negotiated).is_err());
        assert!(check_legacy_version(Some(b"nonsense"), negotiated).is_err());
    }
}
