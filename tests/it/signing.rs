//! Signed exports: `export DIR --sign KEY` with a key the real `ssh-keygen -t ed25519` made,
//! checked by the real `ssh-keygen -Y verify` and `sha256sum -c`, and by `import --verify`,
//! which refuses a folder with a file changed, added or missing (naming every one) and leaves
//! the database as it was (`check DIR --verify` finds the same); a signature `ssh-keygen -Y
//! sign` made is accepted, one by another key or for another namespace is not.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{TestContext, files_under, snapshot};

const LIST: &str = "promptshelf-library.sha256";
const SIGNATURE: &str = "promptshelf-library.sha256.sig";

/// Runs a system tool and expects success; returns its output.
fn tool(program: &str, args: &[&str], dir: &Path) -> Output {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|err| panic!("cannot run {program}: {err}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A key pair `ssh-keygen -t ed25519 -N ''` makes in the test's folder, with the comment
/// `NAME@example`; returns the private key's path (the public one is beside it, `.pub`).
fn keygen(ctx: &TestContext, name: &str) -> PathBuf {
    let key = ctx.path(name);
    let comment = format!("{name}@example");
    tool(
        "ssh-keygen",
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            &comment,
            "-f",
            &text(&key),
        ],
        ctx.dir.path(),
    );
    key
}

/// The key's fingerprint as `ssh-keygen -l` shows it (`SHA256:...`).
fn fingerprint(ctx: &TestContext, key: &Path) -> String {
    let listed = tool("ssh-keygen", &["-l", "-f", &public(key)], ctx.dir.path());
    let listed = String::from_utf8_lossy(&listed.stdout);
    listed
        .split_whitespace()
        .nth(1)
        .expect("a fingerprint")
        .to_string()
}

fn public(key: &Path) -> String {
    format!("{}.pub", key.display())
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// The seed library and a resource added by hand, exported whole into `out`, signed with
/// `key`.
fn signed_export(ctx: &TestContext, key: &Path) -> PathBuf {
    ctx.ok(&["init"]);
    let note = ctx.write("note.md", "# A note\n\nKept by hand.\n");
    ctx.add_resource(&note, "shelf://local/note.md");
    let out = ctx.path("out");
    ctx.ok(&["export", &text(&out), "--sign", &text(key)]);
    out
}

/// A new empty library, to import into.
fn empty_library() -> TestContext {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx
}

#[test]
fn a_signed_export_is_checked_by_ssh_keygen_and_sha256sum_and_imported_with_verify() {
    let ctx = TestContext::new();
    let key = keygen(&ctx, "signer");
    let out = signed_export(&ctx, &key);

    // The list names every file of the export but itself and its signature.
    let list = std::fs::read_to_string(out.join(LIST)).expect("the list");
    let listed: Vec<&str> = list.lines().map(|line| &line[66..]).collect();
    let mut exported = files_under(&out);
    exported.retain(|file| file != LIST && file != SIGNATURE);
    assert_eq!(listed, exported);
    assert!(listed.contains(&"promptshelf-library.json"), "{list}");
    assert!(listed.contains(&"local/note.md"), "{list}");
    assert!(listed.contains(&"library/images/layers.png"), "{list}");

    // A person checks it with the two standard commands.
    let allowed = ctx.write(
        "allowed_signers",
        format!(
            "signer@example {}",
            std::fs::read_to_string(public(&key)).unwrap()
        ),
    );
    let list_file = std::fs::File::open(out.join(LIST)).unwrap();
    let verified = Command::new("ssh-keygen")
        .args([
            "-Y",
            "verify",
            "-f",
            &text(&allowed),
            "-I",
            "signer@example",
        ])
        .args(["-n", "promptshelf", "-s", &text(&out.join(SIGNATURE))])
        .stdin(list_file)
        .output()
        .expect("run ssh-keygen -Y verify");
    let said = String::from_utf8_lossy(&verified.stdout);
    assert!(verified.status.success(), "{said}");
    assert!(
        said.contains("Good \"promptshelf\" signature for signer@example"),
        "{said}"
    );
    let sums = tool("sha256sum", &["-c", LIST], &out);
    let said = String::from_utf8_lossy(&sums.stdout);
    assert_eq!(said.lines().count(), exported.len(), "{said}");
    assert!(said.lines().all(|line| line.ends_with(": OK")), "{said}");

    let checked = ctx.run(&["check", &text(&out), "--verify", &public(&key)]);
    assert!(checked.status.success(), "{checked:?}");

    // import --verify takes it, with the public key or the allowed_signers file, and the
    // restored library is the exported one.
    for trusted in [public(&key), text(&allowed)] {
        let restored = empty_library();
        let output = restored.run(&["import", &text(&out), "--verify", &trusted]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("and its {} files", exported.len())),
            "{stderr}"
        );
        let listed = |ctx: &TestContext| {
            [["prompt", "list"], ["resource", "list"]].map(|args| ctx.ok(&args))
        };
        assert_eq!(listed(&restored), listed(&ctx));
    }
}

#[test]
fn a_changed_an_added_and_a_removed_file_are_each_named_and_nothing_is_imported() {
    let ctx = TestContext::new();
    let key = keygen(&ctx, "signer");
    let out = signed_export(&ctx, &key);
    let changed = "library/guides/api-design.md";
    let added = "library/guides/extra.md";
    let removed = "local/note.md";
    let target = empty_library();
    let before = snapshot(&target.db);
    // `check DIR --verify` finds the same (exit status 1), and the import imports nothing.
    let refused = |expected: &[String]| {
        let checked = target.run(&["check", &text(&out), "--verify", &public(&key)]);
        assert_eq!(checked.status.code(), Some(1));
        let stderr = target.fails(&["import", &text(&out), "--verify", &public(&key)]);
        assert!(stderr.contains("nothing was imported"), "{stderr}");
        for line in expected {
            assert!(stderr.contains(line), "{line} not in:\n{stderr}");
            let said = String::from_utf8_lossy(&checked.stderr);
            assert!(said.contains(line), "{line} not in:\n{said}");
        }
        assert_eq!(snapshot(&target.db), before, "the database changed");
    };

    let original = std::fs::read(out.join(changed)).unwrap();
    std::fs::write(out.join(changed), b"# API design\n\nAnother text.\n").unwrap();
    refused(&[format!("changed: {changed}")]);
    std::fs::write(out.join(changed), &original).unwrap();

    std::fs::write(out.join(added), "# Extra\n\nNot signed.\n").unwrap();
    refused(&[format!("added: {added}")]);
    std::fs::remove_file(out.join(added)).unwrap();

    let note = std::fs::read(out.join(removed)).unwrap();
    std::fs::remove_file(out.join(removed)).unwrap();
    refused(&[format!("missing: {removed}")]);

    // All at once: every one is named.
    std::fs::write(out.join(changed), b"changed\n").unwrap();
    std::fs::write(out.join(added), "# Extra\n").unwrap();
    refused(&[
        format!("changed: {changed}"),
        format!("added: {added}"),
        format!("missing: {removed}"),
    ]);

    // Put back as signed, it is taken.
    std::fs::write(out.join(changed), &original).unwrap();
    std::fs::remove_file(out.join(added)).unwrap();
    std::fs::write(out.join(removed), note).unwrap();
    target.ok(&["import", &text(&out), "--verify", &public(&key)]);
    assert_ne!(snapshot(&target.db), before);
}

#[test]
fn a_signature_ssh_keygen_made_over_the_list_is_accepted() {
    let ctx = TestContext::new();
    let key = keygen(&ctx, "signer");
    let out = signed_export(&ctx, &key);
    let ours = std::fs::read(out.join(SIGNATURE)).unwrap();
    std::fs::remove_file(out.join(SIGNATURE)).unwrap();
    tool(
        "ssh-keygen",
        &["-Y", "sign", "-f", &text(&key), "-n", "promptshelf", LIST],
        &out,
    );
    let theirs = std::fs::read(out.join(SIGNATURE)).unwrap();
    // Ed25519 signatures are deterministic: both tools make the same bytes.
    assert_eq!(theirs, ours);
    let target = empty_library();
    target.ok(&["import", &text(&out), "--verify", &public(&key)]);
    assert!(target.ok(&["prompt", "list"]).contains("code-review"));
}

#[test]
fn a_folder_signed_by_another_key_for_another_purpose_or_not_at_all_is_refused() {
    let ctx = TestContext::new();
    let key = keygen(&ctx, "signer");
    let other = keygen(&ctx, "other");
    let out = signed_export(&ctx, &key);
    let target = empty_library();
    let before = snapshot(&target.db);

    let stderr = target.fails(&["import", &text(&out), "--verify", &public(&other)]);
    let fingerprint = fingerprint(&ctx, &key);
    assert!(
        stderr.contains(&format!("signed by the key {fingerprint}")),
        "{stderr}"
    );
    assert!(stderr.contains("does not hold"), "{stderr}");

    // The right key, but a signature made for git is not one for promptshelf.
    std::fs::remove_file(out.join(SIGNATURE)).unwrap();
    tool(
        "ssh-keygen",
        &["-Y", "sign", "-f", &text(&key), "-n", "git", LIST],
        &out,
    );
    let stderr = target.fails(&["import", &text(&out), "--verify", &public(&key)]);
    assert!(
        stderr.contains("signed for 'git', not for 'promptshelf'"),
        "{stderr}"
    );

    // A list changed after signing (a line for an added file) breaks the signature.
    ctx.ok(&["export", &text(&out), "--sign", &text(&key)]);
    let mut list = std::fs::read_to_string(out.join(LIST)).unwrap();
    list.push_str(&format!("{}  local/added.md\n", "0".repeat(64)));
    std::fs::write(out.join(LIST), list).unwrap();
    let stderr = target.fails(&["import", &text(&out), "--verify", &public(&key)]);
    assert!(stderr.contains("the list was changed"), "{stderr}");

    // Exported again without --sign, the folder keeps no stale signature, and --verify says
    // how to sign one.
    let output = ctx.run(&["export", &text(&out)]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("removed the signature"));
    assert!(!out.join(LIST).exists() && !out.join(SIGNATURE).exists());
    let stderr = target.fails(&["import", &text(&out), "--verify", &public(&key)]);
    assert!(stderr.contains("is not signed"), "{stderr}");
    assert!(stderr.contains("--sign KEY"), "{stderr}");
    assert_eq!(snapshot(&target.db), before, "the database changed");
}

#[test]
fn a_signed_collection_imports_without_its_signature_files_as_resources() {
    let ctx = TestContext::new();
    let key = keygen(&ctx, "signer");
    ctx.ok(&["init"]);
    let out = ctx.path("one");
    let report = ctx.json(&[
        "export",
        &text(&out),
        "--collection",
        "library",
        "--sign",
        &text(&key),
        "--json",
    ]);
    assert_eq!(report["signedBy"], fingerprint(&ctx, &key));
    assert!(out.join(LIST).is_file() && out.join(SIGNATURE).is_file());
    let target = empty_library();
    target.ok(&[
        "import",
        &text(&out),
        "--collection",
        "library",
        "--verify",
        &public(&key),
    ]);
    let resources = target.ok(&["resource", "list"]);
    assert!(resources.contains("shelf://library/guides/"), "{resources}");
    assert!(!resources.contains("sha256"), "{resources}");
}

#[test]
fn a_key_that_cannot_sign_is_refused_before_anything_is_written() {
    let ctx = TestContext::new();
    ctx.ok(&["init"]);
    let locked = ctx.path("locked");
    tool(
        "ssh-keygen",
        &["-q", "-t", "ed25519", "-N", "secret", "-f", &text(&locked)],
        ctx.dir.path(),
    );
    let out = ctx.path("out");
    let stderr = ctx.fails(&["export", &text(&out), "--sign", &text(&locked)]);
    assert!(stderr.contains("protected by a passphrase"), "{stderr}");
    let stderr = ctx.fails(&["export", &text(&out), "--sign", &public(&locked)]);
    assert!(stderr.contains("is a public key"), "{stderr}");
    assert!(!out.exists(), "the export wrote files");
}

#[test]
fn signing_warns_of_a_file_in_the_folder_the_export_did_not_write() {
    let ctx = TestContext::new();
    let key = keygen(&ctx, "signer");
    ctx.ok(&["init"]);
    let stale = ctx.write("out/library/old.md", "# Old\n\nFrom an earlier export.\n");
    let output = ctx.run(&["export", &text(&ctx.path("out")), "--sign", &text(&key)]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("library/old.md is in") && stderr.contains("not part of this export"),
        "{stderr}"
    );
    std::fs::remove_file(stale).unwrap();
    empty_library().ok(&["import", &text(&ctx.path("out")), "--verify", &public(&key)]);
}
