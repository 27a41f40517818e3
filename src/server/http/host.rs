//! Which `Host` names are served: the guard against DNS rebinding. A page on another site can
//! rebind its own DNS name to this server's address; the browser then sends it requests that
//! carry no `Origin` (a plain GET such as `/metrics`) but do carry the page's name as `Host`.
//! So every request's `Host` must be a name this server is reached by, or it is refused (403)
//! before anything else is looked at.
//!
//! Served: any IP literal (a rebound page cannot send one: its `Host` is its own name),
//! `localhost`, the host of `--oauth-resource`, and each `--allow-host` name (`*`: any name,
//! for a server behind a proxy that checks names itself). The port is not compared: proxies
//! and port mappings change it. A request without `Host` (HTTP/1.0) is served; browsers
//! always send one.

use std::net::IpAddr;

/// The names a request's `Host` may carry, besides IP literals.
pub(super) struct Hosts {
    /// Lower case, without port.
    names: Vec<String>,
    /// `--allow-host '*'`.
    any: bool,
}

impl Hosts {
    /// `localhost` and `allowed` (names, already lower case; `*` for any).
    pub(super) fn new(allowed: &[String]) -> Hosts {
        let mut names = vec!["localhost".to_string()];
        names.extend(allowed.iter().filter(|name| *name != "*").cloned());
        Hosts {
            names,
            any: allowed.iter().any(|name| name == "*"),
        }
    }

    /// Whether a request with this `Host` header (None: none) is served.
    pub(super) fn allows(&self, host: Option<&[u8]>) -> bool {
        let Some(host) = host else {
            return true;
        };
        let Ok(host) = std::str::from_utf8(host) else {
            return false;
        };
        let name = name_of(host.trim()).to_ascii_lowercase();
        if name.parse::<IpAddr>().is_ok() {
            return true;
        }
        self.any || self.names.contains(&name)
    }
}

/// The name of a `Host` value: without its port, an IPv6 literal without its brackets.
pub(crate) fn name_of(host: &str) -> &str {
    if let Some(bracketed) = host.strip_prefix('[') {
        return bracketed.split(']').next().unwrap_or(bracketed);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|byte| byte.is_ascii_digit()) => name,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_and_allowed_names_are_served_and_others_refused() {
        let hosts = Hosts::new(&["shelf.example.com".to_string()]);
        for served in [
            None,
            Some("127.0.0.1:8080"),
            Some("localhost:8080"),
            Some("LOCALHOST"),
            Some("[::1]:8080"),
            Some("10.0.0.5:80"),
            Some("shelf.example.com"),
            Some("Shelf.Example.com:443"),
        ] {
            assert!(hosts.allows(served.map(str::as_bytes)), "{served:?}");
        }
        for refused in [
            "evil.example:8080",
            "localhost.evil.example",
            "shelf.example.com.evil",
            "",
        ] {
            assert!(!hosts.allows(Some(refused.as_bytes())), "{refused}");
        }
        assert!(!hosts.allows(Some(b"\xff")));
        assert!(Hosts::new(&["*".to_string()]).allows(Some(b"anything:1")));
    }
}
