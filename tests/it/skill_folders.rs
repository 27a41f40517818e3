//! Skill folders given back whole: a real collection of Agent Skills
//! (tests/fixtures/collections/anthropic-skills, see its NOTICE) plus a skill with relative
//! links and a binary asset, imported and then written out again by `export --format skills`
//! and by a whole-library export restored into a new library, compared file for file and
//! item by item; and a skill whose description is longer than Agent Skills allows, imported
//! with all of its files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::TestContext;

const PNG_BYTES: &[u8] = include_bytes!("../../seed/images/layers.png");

/// The vendored skills: a folder named `skills`, so each of its folders is a skill.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/collections/anthropic-skills/skills")
}

/// Every file under `dir` (relative path, with `/`) with its bytes.
fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap_or_else(|err| panic!("{folder:?}: {err}")) {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path.strip_prefix(dir).expect("under the folder");
            let relative = relative.to_string_lossy().replace('\\', "/");
            files.insert(relative, std::fs::read(&path).expect("read the file"));
        }
    }
    files
}

/// The files of two folders are the same, named by path where they differ.
fn same_files(written: &Path, original: &Path) {
    let written = files_of(written);
    let original = files_of(original);
    let names = |files: &BTreeMap<String, Vec<u8>>| files.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&written), names(&original), "the same files");
    for (path, bytes) in &original {
        assert!(
            written[path] == *bytes,
            "{path} differs:\n{}\n---\n{}",
            String::from_utf8_lossy(&written[path]),
            String::from_utf8_lossy(bytes)
        );
    }
}

/// A library made from a copy of the vendored skills, with one more skill whose files link to
/// each other (`linked`: a reference, a link back, an image), imported as the collection
/// `agent-skills` from the folder `skills`. Returns the library and the folder.
fn library() -> (TestContext, PathBuf) {
    let ctx = TestContext::new();
    let skills = ctx.path("skills");
    for (path, bytes) in files_of(&fixture()) {
        ctx.write(&format!("skills/{path}"), bytes);
    }
    ctx.write(
        "skills/linked/SKILL.md",
        "---\nname: linked\ndescription: Read the guide, then draw the layers.\n---\n# Linked\n\n\
         Read [the guide](references/guide.md#steps) first, then draw\n\
         ![the layers](assets/layers.png).\n",
    );
    ctx.write(
        "skills/linked/references/guide.md",
        "# Guide\n\n## Steps\n\nGo back to [the skill](../SKILL.md) when done.\n",
    );
    ctx.write("skills/linked/assets/layers.png", PNG_BYTES);
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&[
        "import",
        skills.to_str().unwrap(),
        "--collection",
        "agent-skills",
    ]);
    (ctx, skills)
}

#[test]
fn export_as_skills_writes_every_file_of_each_skill_as_it_was_imported() {
    let (ctx, skills) = library();
    // The links between the skill's files were made URIs by the import.
    assert!(
        ctx.ok(&["resource", "cat", "skill://linked/SKILL.md"])
            .contains("(skill://linked/references/guide.md#steps)")
    );
    let project = ctx.path("project");
    let output = ctx.run(&["export", project.to_str().unwrap(), "--format", "skills"]);
    assert!(output.status.success(), "{output:?}");
    // No warning: nothing of the skills is lost.
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    same_files(&project.join(".agents/skills"), &skills);
}
