//! Signed exports (`export --sign`, `import --verify`): beside an export's files,
//! `promptshelf-library.sha256` lists every file with its SHA-256 in the form `sha256sum -c`
//! checks, and `promptshelf-library.sha256.sig` is an SSHSIG signature of that list in the
//! namespace `promptshelf`, as `ssh-keygen -Y sign` makes it and `ssh-keygen -Y verify`
//! checks it. Both files are made from standard formats so that a person can check a folder
//! with those two commands alone; the keys and signatures are the `ssh-key` crate's.
//!
//! Verifying checks the signature first, then every file of the folder against the list:
//! each one changed, added or missing is named, all of them, so that a refused folder says
//! everything that is wrong with it at once.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use sha2::{Digest as _, Sha256};
use ssh_key::{Algorithm, EcdsaCurve, HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};

/// The list of files and their hashes, at the top of the signed folder.
pub(crate) const LIST: &str = "promptshelf-library.sha256";
/// The signature of the list: the name `ssh-keygen -Y sign` gives it.
pub(crate) const SIGNATURE: &str = "promptshelf-library.sha256.sig";
/// The SSHSIG namespace: a signature made for another purpose (`git`, `file`) is not one.
pub(crate) const NAMESPACE: &str = "promptshelf";

/// A file's SHA-256.
pub(crate) type Digest = [u8; 32];

pub(crate) fn digest(bytes: &[u8]) -> Digest {
    Sha256::digest(bytes).into()
}

/// Lower-case hex, as sha256sum writes a digest.
fn hex(digest: &Digest) -> String {
    let mut text = String::with_capacity(64);
    for byte in digest {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// The key types that sign and verify; `ssh-keygen -t` names them.
const KEY_TYPES: &str = "ed25519, ecdsa (nistp256, nistp384) or rsa";

fn supported(algorithm: &Algorithm) -> bool {
    matches!(
        algorithm,
        Algorithm::Ed25519
            | Algorithm::Rsa { .. }
            | Algorithm::Ecdsa {
                curve: EcdsaCurve::NistP256 | EcdsaCurve::NistP384
            }
    )
}

/// An OpenSSH private key that can sign, read from its file.
pub(crate) struct SigningKey(PrivateKey);

impl SigningKey {
    pub(crate) fn read(path: &Path) -> Result<SigningKey> {
        let shown = path.display();
        let text = std::fs::read_to_string(path).map_err(|err| {
            anyhow!(
                "cannot read the signing key {shown}: {err}; --sign takes an OpenSSH private key \
                 file (`ssh-keygen -t ed25519 -f FILE` makes one)"
            )
        })?;
        let key = PrivateKey::from_openssh(&text).map_err(|err| {
            if PublicKey::from_openssh(text.trim()).is_ok() {
                anyhow!(
                    "{shown} is a public key; --sign takes the private key (the file without \
                     .pub), and import --verify the public one"
                )
            } else {
                anyhow!(
                    "{shown} is not an OpenSSH private key ({err}); --sign takes a file that \
                     begins `-----BEGIN OPENSSH PRIVATE KEY-----` (`ssh-keygen -p -f FILE` \
                     rewrites an older PEM key so)"
                )
            }
        })?;
        if key.is_encrypted() {
            bail!(
                "{shown} is protected by a passphrase, which export does not ask for; sign with \
                 a key that has none (`ssh-keygen -t ed25519 -N '' -f FILE`), kept for signing"
            );
        }
        if !supported(&key.algorithm()) {
            bail!(
                "{shown} is a {} key, which cannot sign here; use an {KEY_TYPES} key",
                key.algorithm()
            );
        }
        Ok(SigningKey(key))
    }

    /// The signature of `list`, as `ssh-keygen -Y sign -n promptshelf` writes it.
    pub(crate) fn sign(&self, list: &[u8]) -> Result<Vec<u8>> {
        let signature = self
            .0
            .sign(NAMESPACE, HashAlg::Sha512, list)
            .map_err(|err| anyhow!("cannot sign the list of files: {err}"))?;
        let pem = signature
            .to_pem(LineEnding::LF)
            .map_err(|err| anyhow!("cannot write the signature: {err}"))?;
        Ok(pem.into_bytes())
    }

    /// The key's fingerprint as `ssh-keygen -l` shows it (`SHA256:...`).
    pub(crate) fn fingerprint(&self) -> String {
        self.0.public_key().fingerprint(HashAlg::Sha256).to_string()
    }
}

/// The list of `files` (paths relative to the folder, `/`-separated, and their digests) as
/// `sha256sum` writes it, in path order.
pub(crate) fn list(files: &[(String, Digest)]) -> Result<Vec<u8>> {
    let sorted: BTreeMap<&str, &Digest> = files
        .iter()
        .map(|(path, digest)| (path.as_str(), digest))
        .collect();
    let mut text = String::new();
    for (path, digest) in sorted {
        // sha256sum escapes such names; export never writes one (its paths are safe segments).
        if path.contains(['\\', '\n', '\r']) {
            bail!("cannot list {path:?}: a backslash or line break in a file name");
        }
        let _ = writeln!(text, "{}  {path}", hex(digest));
    }
    Ok(text.into_bytes())
}

/// The public keys a signature is accepted from: an OpenSSH public key file (`KEY.pub`,
/// one or more keys) or an `allowed_signers` file as `ssh-keygen -Y verify` reads it.
pub(crate) struct Trusted {
    keys: Vec<PublicKey>,
    shown: String,
}

impl Trusted {
    pub(crate) fn read(path: &Path) -> Result<Trusted> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|err| {
            anyhow!(
                "cannot read the public key {shown}: {err}; --verify takes an OpenSSH public \
                 key file (KEY.pub) or an allowed_signers file"
            )
        })?;
        if text.contains("PRIVATE KEY-----") {
            bail!("{shown} is a private key; --verify takes its public key (KEY.pub)");
        }
        let mut keys = Vec::new();
        for (at, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            keys.push(trusted_key(line).map_err(|why| anyhow!("{shown}:{}: {why}", at + 1))?);
        }
        if keys.is_empty() {
            bail!("{shown} holds no public key; --verify takes an OpenSSH public key (KEY.pub)");
        }
        Ok(Trusted { keys, shown })
    }
}

/// One line of a public key file (`TYPE BASE64 [COMMENT]`) or of an allowed_signers file
/// (`PRINCIPALS TYPE BASE64 [COMMENT]`).
fn trusted_key(line: &str) -> Result<PublicKey, String> {
    if let Ok(key) = PublicKey::from_openssh(line) {
        return Ok(key);
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    if let Some(key) = words
        .get(1..)
        .and_then(|rest| PublicKey::from_openssh(&rest.join(" ")).ok())
    {
        return Ok(key);
    }
    // Options (`namespaces=`, `valid-before=`, `cert-authority`) limit what a key is trusted
    // for; taking the key without them would trust it for more.
    if words
        .iter()
        .skip(2)
        .any(|word| Algorithm::new(word).is_ok())
    {
        return Err(
            "an allowed_signers line with options, which are not read here; list the key \
             without them, or check the folder with `ssh-keygen -Y verify`"
                .into(),
        );
    }
    Err(format!(
        "not an OpenSSH public key (`ssh-ed25519 AAAA... COMMENT`) nor an allowed_signers line \
         (`PRINCIPALS ssh-ed25519 AAAA...`); key types: {KEY_TYPES}"
    ))
}

/// What is wrong with a folder against its signed list.
#[derive(Debug, Default, PartialEq, Eq)]
struct Mismatch {
    changed: Vec<String>,
    added: Vec<String>,
    missing: Vec<String>,
}

impl Mismatch {
    fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.added.is_empty() && self.missing.is_empty()
    }

    /// One line each: `changed: PATH`, `added: PATH`, `missing: PATH`.
    fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (what, paths) in [
            ("changed", &self.changed),
            ("added", &self.added),
            ("missing", &self.missing),
        ] {
            lines.extend(paths.iter().map(|path| format!("{what}: {path}")));
        }
        lines
    }
}

/// The folder is not as it was signed, or not signed at all: what `check --verify` reports
/// as a finding, where an error reading the key or the folder is one that it could not run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(String);

/// A folder found as it was signed: its files, as the signed list gives them. The import
/// that follows checks each file it reads against it, so that what is imported is what was
/// checked, even should the folder change in between.
#[derive(Debug)]
pub(crate) struct Signed {
    /// The folder, canonical.
    root: PathBuf,
    files: BTreeMap<String, Digest>,
}

impl Signed {
    pub(crate) fn count(&self) -> usize {
        self.files.len()
    }

    /// Where the folder `folder` (canonical) is in the signed one: `""` for itself,
    /// `library/` for a subfolder.
    fn prefix(&self, folder: &Path) -> Option<String> {
        let inside = folder.strip_prefix(&self.root).ok()?;
        let mut prefix = String::new();
        for part in inside.components() {
            prefix.push_str(part.as_os_str().to_str()?);
            prefix.push('/');
        }
        Some(prefix)
    }

    /// Whether `bytes`, read from `relative` in the folder `folder`, are the signed file's.
    pub(crate) fn check(&self, folder: &Path, relative: &str, bytes: &[u8]) -> Result<(), String> {
        let Some(prefix) = self.prefix(folder) else {
            return Err("outside the folder import --verify checked".into());
        };
        match self.files.get(&(prefix + relative)) {
            Some(expected) if *expected == digest(bytes) => Ok(()),
            Some(_) => Err(format!(
                "changed since import --verify checked {LIST}; nothing was imported"
            )),
            None => Err(format!(
                "not in {LIST}: added since import --verify checked it; nothing was imported"
            )),
        }
    }

    /// The signed files of the folder `folder` (canonical) that `found` (its files, relative
    /// to it) lacks: removed since the check.
    pub(crate) fn missing(&self, folder: &Path, found: &BTreeSet<&str>) -> Vec<String> {
        let Some(prefix) = self.prefix(folder) else {
            return Vec::new();
        };
        self.files
            .keys()
            .filter_map(|path| path.strip_prefix(&prefix))
            .filter(|relative| !found.contains(relative))
            .map(str::to_string)
            .collect()
    }
}

/// Checks the folder `dir`, whose files (relative paths, `/`-separated, the list and the
/// signature left out) are `present`: its list is signed by a key of `trusted`, and every
/// file is as listed.
pub(crate) fn verify(dir: &Path, trusted: &Trusted, present: &[String]) -> Result<Signed> {
    let shown = dir.display();
    let list_path = dir.join(LIST);
    let signature_path = dir.join(SIGNATURE);
    if !list_path.is_file() || !signature_path.is_file() {
        return Err(Refused(format!(
            "{shown} is not signed (it has no {LIST} and {SIGNATURE}); sign it with \
             `promptshelf export {shown} --sign KEY` from the library it came from"
        ))
        .into());
    }
    let read = |path: &Path| {
        std::fs::read(path).map_err(|err| anyhow!("cannot read {}: {err}", path.display()))
    };
    let list = read(&list_path)?;
    let signature = read(&signature_path)?;
    check_signature(&list, &signature, trusted)
        .map_err(|why| Refused(format!("{}: {why}", signature_path.display())))?;
    let listed =
        parse_list(&list).map_err(|why| Refused(format!("{}: {why}", list_path.display())))?;
    let mismatch = compare(dir, &listed, present);
    if !mismatch.is_empty() {
        return Err(Refused(format!(
            "{shown} is not as it was signed ({LIST}):\n  {}",
            mismatch.lines().join("\n  ")
        ))
        .into());
    }
    let root = dir
        .canonicalize()
        .map_err(|err| anyhow!("cannot read {shown}: {err}"))?;
    Ok(Signed {
        root,
        files: listed,
    })
}

/// Whether `signature` is a `promptshelf` SSHSIG of `list` by a key `trusted` holds.
fn check_signature(list: &[u8], signature: &[u8], trusted: &Trusted) -> Result<(), String> {
    let signature = SshSig::from_pem(signature)
        .map_err(|err| format!("not an SSH signature ({err}); sign with export --sign"))?;
    let signer = signature.public_key();
    let fingerprint = signer.fingerprint(HashAlg::Sha256);
    let Some(key) = trusted.keys.iter().find(|key| key.key_data() == signer) else {
        return Err(format!(
            "signed by the key {fingerprint}, which {} does not hold",
            trusted.shown
        ));
    };
    if signature.namespace() != NAMESPACE {
        return Err(format!(
            "signed for '{}', not for '{NAMESPACE}' (ssh-keygen -Y sign -n {NAMESPACE})",
            signature.namespace()
        ));
    }
    key.verify(NAMESPACE, list, &signature).map_err(|err| {
        format!(
            "the signature by {fingerprint} does not match {LIST} ({err}): the list was changed"
        )
    })
}

/// `HASH  PATH` lines (or `HASH *PATH`, binary mode) into each path's digest.
fn parse_list(list: &[u8]) -> Result<BTreeMap<String, Digest>, String> {
    let text = std::str::from_utf8(list).map_err(|_| "not UTF-8 text".to_string())?;
    let mut listed = BTreeMap::new();
    for (at, line) in text.lines().enumerate() {
        let line_no = at + 1;
        let bad = || {
            format!(
                "line {line_no} is not `SHA256  PATH` as sha256sum writes it (an escaped name, \
                 beginning `\\`, is not read)"
            )
        };
        let (hash, path) = line
            .split_at_checked(64)
            .filter(|(hash, _)| hash.bytes().all(|byte| byte.is_ascii_hexdigit()))
            .ok_or_else(bad)?;
        let path = path
            .strip_prefix("  ")
            .or_else(|| path.strip_prefix(" *"))
            .filter(|path| !path.is_empty())
            .ok_or_else(bad)?;
        let mut digest = [0u8; 32];
        for (byte, at) in digest.iter_mut().zip((0..64).step_by(2)) {
            *byte = u8::from_str_radix(&hash[at..at + 2], 16).map_err(|_| bad())?;
        }
        if listed.insert(path.to_string(), digest).is_some() {
            return Err(format!("line {line_no} lists {path} a second time"));
        }
    }
    Ok(listed)
}

/// Every file of `present` against `listed`; only files the walk found are read.
fn compare(dir: &Path, listed: &BTreeMap<String, Digest>, present: &[String]) -> Mismatch {
    let present: BTreeSet<&str> = present.iter().map(String::as_str).collect();
    let mut mismatch = Mismatch::default();
    for (path, expected) in listed {
        if !present.contains(path.as_str()) {
            mismatch.missing.push(path.clone());
            continue;
        }
        match std::fs::read(dir.join(path)) {
            Ok(bytes) if digest(&bytes) == *expected => {}
            Ok(_) => mismatch.changed.push(path.clone()),
            Err(err) => mismatch
                .changed
                .push(format!("{path} (cannot read it: {err})")),
        }
    }
    mismatch.added = present
        .into_iter()
        .filter(|path| !listed.contains_key(*path))
        .map(str::to_string)
        .collect();
    mismatch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_reads_back_as_written_and_sha256sums_binary_mode_too() {
        let files = vec![
            ("b/c.md".to_string(), digest(b"c")),
            ("a b.md".to_string(), digest(b"a")),
        ];
        let text = list(&files).expect("the list of files");
        let written = String::from_utf8(text.clone()).expect("the list is text");
        assert!(written.starts_with(&format!("{}  a b.md\n", hex(&digest(b"a")))));
        let read = parse_list(&text).expect("the list reads back");
        assert_eq!(read.len(), 2);
        assert_eq!(read["b/c.md"], digest(b"c"));
        let binary = format!("{} *x.png\n", hex(&digest(b"x")));
        assert_eq!(
            parse_list(binary.as_bytes()).expect("a binary entry reads")["x.png"],
            digest(b"x")
        );
    }

    #[test]
    fn a_list_line_that_is_not_sha256sums_is_refused_at_its_line() {
        let good = format!("{}  a.md\n", hex(&digest(b"a")));
        for bad in ["\\abc  a\\\\b.md\n", "xyz  a.md\n", "é", "\n"] {
            let text = format!("{good}{bad}");
            let err = parse_list(text.as_bytes()).unwrap_err();
            assert!(err.starts_with("line 2 "), "{bad:?}: {err}");
        }
        let twice = format!("{good}{good}");
        assert!(
            parse_list(twice.as_bytes())
                .unwrap_err()
                .contains("second time")
        );
        assert!(list(&[("a\\b".into(), digest(b""))]).is_err());
    }

    #[test]
    fn a_file_read_after_the_check_is_taken_only_as_it_was_checked() {
        let root = PathBuf::from("/signed");
        let signed = Signed {
            root: root.clone(),
            files: [
                ("promptshelf-library.json".to_string(), digest(b"{}")),
                ("library/a.md".to_string(), digest(b"a")),
                ("library/b.md".to_string(), digest(b"b")),
            ]
            .into(),
        };
        let part = root.join("library");
        assert_eq!(
            signed.check(&root, "promptshelf-library.json", b"{}"),
            Ok(())
        );
        assert_eq!(signed.check(&part, "a.md", b"a"), Ok(()));
        let changed = signed.check(&part, "a.md", b"A").unwrap_err();
        assert!(changed.starts_with("changed since"), "{changed}");
        let added = signed.check(&part, "c.md", b"c").unwrap_err();
        assert!(added.starts_with("not in "), "{added}");
        let outside = signed.check(Path::new("/elsewhere"), "a.md", b"a");
        assert!(outside.is_err());
        assert_eq!(signed.missing(&part, &["a.md"].into()), ["b.md"]);
        assert!(
            signed
                .missing(&root.join("local"), &BTreeSet::new())
                .is_empty()
        );
    }

    #[test]
    fn a_key_line_or_an_allowed_signers_line_is_trusted_but_not_one_with_options() {
        let key =
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMKjsQehnbmJ6yTk7kTYoCHfB9po2YJn795YWci82CeZ";
        let plain = trusted_key(&format!("{key} me@example")).expect("a public key line");
        let signer =
            trusted_key(&format!("me@example,you@example {key}")).expect("an allowed_signers line");
        assert_eq!(plain.key_data(), signer.key_data());
        let limited = trusted_key(&format!("me@example namespaces=\"git\" {key}")).unwrap_err();
        assert!(limited.contains("options"), "{limited}");
        let garbage = trusted_key("me@example not-a-key").unwrap_err();
        assert!(garbage.contains("not an OpenSSH public key"), "{garbage}");
    }
}
