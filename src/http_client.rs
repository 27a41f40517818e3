//! The one way this program makes HTTP requests of its own (the OAuth key set, `sync
//! --from`): ureq over rustls with the ring provider, certificates checked against the
//! platform's trusted roots.

use std::time::Duration;

/// An agent whose every request ends within `timeout` (None: no limit, for a stream that
/// stays open), and whose HTTP error statuses are answers to read, not errors.
pub(crate) fn agent(timeout: Option<Duration>) -> ureq::Agent {
    let tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::Rustls)
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .unversioned_rustls_crypto_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .build();
    ureq::Agent::config_builder()
        .timeout_global(timeout)
        .http_status_as_error(false)
        .tls_config(tls)
        .build()
        .into()
}
