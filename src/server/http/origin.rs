//! Which `Origin`s are served: a browser page on another site must not reach a server on
//! the user's machine (DNS rebinding), so a request whose `Origin` is present and not in
//! the set is refused (403). Absent is fine: clients that are not browsers send none.

use std::net::SocketAddr;

/// The origins a request may come from.
pub(super) struct Origins(Vec<String>);

impl Origins {
    /// The server's own origins on its loopback address and port, with the scheme it
    /// serves (`http`, or `https` with TLS), and `extra` (already checked and lower case,
    /// `cmd::serve`).
    pub(super) fn new(local: SocketAddr, scheme: &str, extra: &[String]) -> Origins {
        let port = local.port();
        let mut origins = vec![format!("{scheme}://localhost:{port}")];
        origins.push(match local {
            SocketAddr::V4(addr) => format!("{scheme}://{}:{port}", addr.ip()),
            SocketAddr::V6(addr) => format!("{scheme}://[{}]:{port}", addr.ip()),
        });
        origins.extend(extra.iter().cloned());
        Origins(origins)
    }

    /// Whether a request with this `Origin` header (None: none) is served.
    pub(super) fn allows(&self, origin: Option<&[u8]>) -> bool {
        let Some(origin) = origin else {
            return true;
        };
        // Scheme and host are case-insensitive; browsers send them in lower case anyway.
        let origin = origin.to_ascii_lowercase();
        let origin = origin.strip_suffix(b"/").unwrap_or(&origin);
        self.0.iter().any(|allowed| allowed.as_bytes() == origin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_origins_and_the_allowed_ones_are_served() {
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let origins = Origins::new(local, "http", &["https://app.example.com".to_string()]);
        for served in [
            None,
            Some("http://127.0.0.1:8080"),
            Some("http://localhost:8080"),
            Some("HTTP://LOCALHOST:8080"),
            Some("https://app.example.com"),
        ] {
            assert!(origins.allows(served.map(str::as_bytes)), "{served:?}");
        }
        for refused in [
            "http://localhost:8081",
            "https://evil.example",
            "null",
            "http://127.0.0.1",
        ] {
            assert!(!origins.allows(Some(refused.as_bytes())), "{refused}");
        }
        let tls = Origins::new(local, "https", &[]);
        assert!(tls.allows(Some(b"https://localhost:8080")));
        assert!(!tls.allows(Some(b"http://localhost:8080")));
    }
}
