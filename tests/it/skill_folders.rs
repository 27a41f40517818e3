//! Skill folders given back whole: a real collection of Agent Skills
//! (tests/fixtures/collections/anthropics-skills, see its NOTICE) plus a skill with relative
//! links and a binary asset, imported and then written out again by `export --format skills`
//! and by a whole-library export restored into a new library, compared file for file and
//! item by item (by content hash, and by `skills/list` through a server); a skill whose
//! description is longer than Agent Skills allows, imported with all of its files, and a
//! refused one, with none; and each skill's `SKILL.md` listed under the skill's title.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Server, TestContext, modern_params};
use crate::skills::sha256sum;

const PNG_BYTES: &[u8] = include_bytes!("../../seed/images/layers.png");

/// The vendored skills: a folder named `skills`, so each of its folders is a skill.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/collections/anthropics-skills/skills")
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
         Read [the guide](./references/guide.md#steps) first, then draw\n\
         ![the layers](assets/layers.png).\n",
    );
    ctx.write(
        "skills/linked/references/guide.md",
        "# Guide\n\n## Steps\n\nGo back to [the skill](../SKILL.md), or read it by its URI,\n\
         [skill://linked/SKILL.md](skill://linked/SKILL.md), when done.\n",
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
    // The prompt's links are URIs; the skill's files keep theirs relative, as the Skills
    // extension reads them.
    let prompt = ctx.json(&["prompt", "show", "linked", "--json"]);
    assert!(
        prompt
            .to_string()
            .contains("(skill://linked/references/guide.md#steps)"),
        "{prompt}"
    );
    assert!(
        ctx.ok(&["resource", "cat", "skill://linked/SKILL.md"])
            .contains("(./references/guide.md#steps)")
    );
    let project = ctx.path("project");
    let output = ctx.run(&["export", project.to_str().unwrap(), "--format", "skills"]);
    assert!(output.status.success(), "{output:?}");
    // No warning: nothing of the skills is lost.
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    same_files(&project.join(".agents/skills"), &skills);
}

/// Everything a library holds, by content hash: each prompt, resource and template with its
/// collection, the file it came from and its hash, and each completion table's values.
fn contents(ctx: &TestContext) -> Value {
    let keep = |list: Value, keys: &[&str]| -> Vec<Value> {
        let mut items: Vec<Value> = list
            .as_array()
            .expect("a JSON list")
            .iter()
            .map(|item| keys.iter().map(|key| item[*key].clone()).collect())
            .collect();
        items.sort_by_key(|item| item.to_string());
        items
    };
    let tables: BTreeMap<String, Value> = ctx
        .json(&["values", "list", "--json"])
        .as_array()
        .expect("tables")
        .iter()
        .map(|table| {
            let name = table["name"].as_str().expect("a table's name").to_string();
            let values = ctx.json(&["values", "list", &name, "--json"]);
            (name, values)
        })
        .collect();
    json!({
        "prompts": keep(
            ctx.json(&["prompt", "list", "--json"]),
            &["name", "collection", "origin", "contentHash"],
        ),
        "resources": keep(
            ctx.json(&["resource", "list", "--json"]),
            &["uri", "collection", "origin", "contentHash", "blobHash"],
        ),
        "templates": keep(
            ctx.json(&["template", "list", "--json"]),
            &["uriTemplate", "collection", "contentHash"],
        ),
        "tables": tables,
    })
}

/// `skills/list`, through a server on `db`, to a client that declares the extension.
fn listed_skills(db: &Path) -> Value {
    let mut server = Server::start(db, &[]);
    let declaring = json!({"extensions": {"io.modelcontextprotocol/skills": {}}});
    let listed = server.request("skills/list", modern_params(json!({}), declaring));
    assert!(listed["result"]["nextCursor"].is_null(), "{listed}");
    listed["result"]["skills"].clone()
}

#[test]
fn a_whole_library_export_restores_skills_whatever_their_collection_is_called() {
    let (ctx, skills) = library();
    // Beside the skills: a plain collection whose prompt completes from a table, and a
    // template and a resource added by hand.
    ctx.write(
        "notes/paint.prompt.md",
        "---\ndescription: Paint a wall.\narguments:\n  - name: shade\n    completion: shades\n\
         ---\nPaint it {{ shade }}.\n",
    );
    ctx.write("notes/walls.md", "# Walls\n\nThey need paint.\n");
    ctx.ok(&["values", "add", "shades", "light", "dark"]);
    ctx.ok(&["import", ctx.path("notes").to_str().unwrap()]);
    ctx.ok(&[
        "template",
        "add",
        "paint://{shade}/swatch",
        "--name",
        "swatch",
        "--complete",
        "shade=shades",
    ]);
    let note = ctx.write("note.txt", "Buy more paint.\n");
    ctx.ok(&[
        "resource",
        "add",
        note.to_str().unwrap(),
        "--uri",
        "https://example.com/note.txt",
        "--title",
        "A note",
        "--priority",
        "0.5",
    ]);
    let before = contents(&ctx);
    assert_eq!(before["prompts"].as_array().map(Vec::len), Some(5));
    assert_eq!(before["tables"]["shades"].as_array().map(Vec::len), Some(2));
    assert_eq!(before["templates"].as_array().map(Vec::len), Some(3));

    let out = ctx.path("whole");
    let output = ctx.run(&["export", out.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    // The skills' folder is written as it was, file for file.
    same_files(&out.join("agent-skills"), &skills);

    let restored = TestContext::new();
    restored.ok(&["init", "--empty"]);
    restored.ok(&["import", out.to_str().unwrap()]);
    assert_eq!(contents(&restored), before);
    assert_eq!(String::from_utf8_lossy(&output.stderr), "", "no warning");
    let listed = listed_skills(&ctx.db);
    assert_eq!(listed.as_array().map(Vec::len), Some(4), "{listed}");
    // Each digest is the file's own: its links are served as written.
    for skill in listed.as_array().expect("skills") {
        for file in skill["resources"].as_array().expect("its files") {
            let uri = file["uri"].as_str().expect("a URI");
            let path = skills.join(uri.strip_prefix("skill://").expect("a skill's file"));
            assert_eq!(file["digest"], json!(sha256sum(&path)), "{uri}");
        }
    }
    assert_eq!(listed_skills(&restored.db), listed);
    // Imported again from its own folder (as `prompt edit` does), it is still skills.
    let again = restored.json(&[
        "import",
        out.join("agent-skills").to_str().unwrap(),
        "--collection",
        "agent-skills",
        "--json",
    ]);
    assert_eq!(
        (&again["added"], &again["updated"]),
        (&json!(0), &json!(0)),
        "{again}"
    );
    assert_eq!(again["unchanged"], 17, "{again}");
    assert_eq!(contents(&restored), before);

    // Exported alone into a folder of another name, it would not be read as skills: said.
    let alone = ctx.path("alone");
    let output = ctx.run(&[
        "export",
        alone.to_str().unwrap(),
        "--collection",
        "agent-skills",
    ]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("collection agent-skills: it is a folder of skill folders"),
        "{stderr}"
    );
}

#[test]
fn a_skill_whose_description_passes_the_agent_skills_limit_imports_with_its_files() {
    let ctx = TestContext::new();
    // 1,068 characters, as a real skill's was: hosts load it, Agent Skills allows 1,024.
    let description: String = "Write status reports, newsletters and FAQ answers in the house \
                               style. "
        .repeat(20)
        .chars()
        .take(1068)
        .collect();
    let description = description.trim_end().to_string();
    assert_eq!(description.chars().count(), 1068);
    let skill = format!(
        "---\nname: house-style\ndescription: {description}\n---\n# House style\n\n\
         Follow [the format](references/format.md), then run `scripts/check.sh`.\n"
    );
    ctx.write("skills/house-style/SKILL.md", &skill);
    ctx.write(
        "skills/house-style/references/format.md",
        "# Format\n\nShort.\n",
    );
    ctx.write("skills/house-style/scripts/check.sh", "wc -w \"$1\"\n");
    ctx.ok(&["init", "--empty"]);

    let imported = ctx.json(&["import", ctx.path("skills").to_str().unwrap(), "--json"]);
    assert_eq!(imported["failed"], 0, "{imported}");
    assert_eq!(
        imported["added"], 4,
        "the prompt and three files: {imported}"
    );
    let warning = &imported["warnings"][0];
    assert!(
        warning["file"]
            .as_str()
            .is_some_and(|file| file.ends_with("skills/house-style/SKILL.md")),
        "{imported}"
    );
    assert_eq!(warning["line"], 3);
    assert!(
        warning["message"]
            .as_str()
            .is_some_and(|message| message.contains("1068 characters")),
        "{imported}"
    );

    // A host's list of commands shows it shortened, to the limit, saying so at its end.
    let prompt = ctx.json(&["prompt", "show", "house-style", "--json"]);
    let listed = prompt["description"].as_str().expect("a description");
    assert_eq!(listed.chars().count(), 1024);
    let kept: String = description.chars().take(1023).collect();
    assert_eq!(listed, format!("{kept}…"));
    // The file is kept whole, and so is its resource's description and its front matter as
    // skills/list gives it.
    assert_eq!(
        ctx.ok(&["resource", "cat", "skill://house-style/SKILL.md"]),
        skill
    );
    let resources = ctx.json(&["resource", "list", "--json"]);
    assert_eq!(resources[0]["uri"], "skill://house-style/SKILL.md");
    assert_eq!(resources[0]["description"], json!(description));
    assert_eq!(
        ctx.ok(&["resource", "cat", "skill://house-style/scripts/check.sh"]),
        "wc -w \"$1\"\n"
    );
    let skills = listed_skills(&ctx.db);
    assert_eq!(skills[0]["frontmatter"]["description"], json!(description));
    let files: Vec<&str> = skills[0]["resources"]
        .as_array()
        .expect("its files")
        .iter()
        .filter_map(|file| file["uri"].as_str())
        .collect();
    assert_eq!(
        files,
        [
            "skill://house-style/SKILL.md",
            "skill://house-style/references/format.md",
            "skill://house-style/scripts/check.sh"
        ]
    );
}

#[test]
fn a_skills_document_is_listed_with_the_skills_title_and_description() {
    let (ctx, _) = library();
    let mut server = Server::start(&ctx.db, &[]);
    let listed = server.modern("resources/list", json!({}));
    let resources = listed["result"]["resources"].as_array().expect("resources");
    let mut seen = 0;
    for prompt in ctx
        .json(&["prompt", "list", "--json"])
        .as_array()
        .expect("prompts")
    {
        let name = prompt["name"].as_str().expect("a name");
        let uri = format!("skill://{name}/SKILL.md");
        let document = resources
            .iter()
            .find(|resource| resource["uri"] == uri.as_str())
            .unwrap_or_else(|| panic!("{uri} is not listed: {listed}"));
        assert_eq!(document["name"], name, "{document}");
        assert_eq!(document["title"], prompt["title"], "{document}");
        assert_eq!(document["description"], prompt["description"], "{document}");
        seen += 1;
    }
    assert_eq!(seen, 4);
    let brand = resources
        .iter()
        .find(|resource| resource["uri"] == "skill://brand-guidelines/SKILL.md")
        .expect("listed");
    assert_eq!(brand["title"], "Anthropic Brand Styling");
}

#[test]
fn a_refused_skill_leaves_none_of_its_files_behind() {
    let ctx = TestContext::new();
    // A name hosts refuse: the skill is refused, and its files with it.
    ctx.write(
        "skills/Bad_Name/SKILL.md",
        "---\nname: Bad_Name\ndescription: Do it.\n---\nDo it.\n",
    );
    ctx.write("skills/Bad_Name/scripts/run.sh", "echo run\n");
    ctx.write("skills/Bad_Name/references/notes.md", "# Notes\n");
    ctx.write(
        "skills/fine/SKILL.md",
        "---\nname: fine\ndescription: Fine.\n---\nFine.\n",
    );
    ctx.ok(&["init", "--empty"]);
    let skills = ctx.path("skills");
    let stderr = ctx.fails(&["import", skills.to_str().unwrap(), "--keep-going"]);
    assert!(
        stderr.contains("Bad_Name/SKILL.md:2: skill name 'Bad_Name' must be"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "Bad_Name: the skill's 2 other files are left out with its SKILL.md, which failed"
        ),
        "{stderr}"
    );
    let uris: Vec<String> = ctx
        .json(&["resource", "list", "--json"])
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|resource| resource["uri"].as_str().map(str::to_string))
        .collect();
    assert_eq!(uris, ["skill://fine/SKILL.md"]);
}
