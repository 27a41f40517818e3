//! `serve --tls-cert FILE --tls-key FILE`: HTTPS, with rustls on the ring provider. The
//! certificate chain and the key are PEM files read once at start; a file that cannot be
//! read, holds no certificate or key, or a key that is not the certificate's is refused
//! before the server listens, naming the file and what is wrong with it. Only HTTP/1.1 is
//! offered (ALPN), as the server speaks nothing else.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::{self, PemObject};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};

/// The acceptor that makes each accepted connection a TLS one.
pub(super) fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor> {
    let chain = certificates(cert)?;
    let private = private_key(key)?;
    let provider = Arc::new(ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("rustls offers no protocol version with the ring provider")?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|err| match err {
            rustls::Error::InconsistentKeys(_) => anyhow!(
                "the key in --tls-key {} is not the key of the certificate in --tls-cert {} (the first certificate of the file); give the key the certificate was made for",
                key.display(),
                cert.display()
            ),
            other => anyhow!(
                "the certificate in --tls-cert {} or the key in --tls-key {} cannot be used: {other}",
                cert.display(),
                key.display()
            ),
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn read(flag: &str, path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {flag} {}", path.display()))
}

/// The certificate chain in `path`, the server's own first.
fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let text = read("--tls-cert", path)?;
    let chain = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| {
            anyhow!(
                "--tls-cert {} is not a PEM file of certificates: {err}",
                path.display()
            )
        })?;
    if chain.is_empty() {
        anyhow::bail!(
            "--tls-cert {} holds no certificate: give a PEM file with a -----BEGIN CERTIFICATE----- block (the server's certificate, then its chain)",
            path.display()
        );
    }
    Ok(chain)
}

/// The private key in `path` (PKCS#8, PKCS#1 or SEC1).
fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    let text = read("--tls-key", path)?;
    PrivateKeyDer::from_pem_slice(&text).map_err(|err| match err {
        pem::Error::NoItemsFound => anyhow!(
            "--tls-key {} holds no private key: give a PEM file with a -----BEGIN PRIVATE KEY----- (or RSA PRIVATE KEY, EC PRIVATE KEY) block",
            path.display()
        ),
        other => anyhow!(
            "--tls-key {} is not a PEM file of a private key: {other}",
            path.display()
        ),
    })
}
