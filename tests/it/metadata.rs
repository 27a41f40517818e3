//! Metadata of binary resources: `resource add`'s flags, and the `NAME.meta.yaml` file beside
//! a file that cannot carry front matter, read by import and written by export.

use serde_json::json;

use crate::common::TestContext;

const PNG: &[u8] = include_bytes!("../../seed/images/layers.png");

#[test]
fn resource_add_takes_title_description_audience_and_priority() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let file = ctx.write("pixel.png", PNG);
    let file = file.to_str().expect("UTF-8");
    ctx.ok(&[
        "resource",
        "add",
        file,
        "--title",
        "Layers",
        "--description",
        "The layers, drawn",
        "--audience",
        "user,assistant",
        "--priority",
        "0.5",
    ]);
    let shown = ctx.json(&["resource", "show", "shelf://local/pixel.png", "--json"]);
    assert_eq!(shown["title"], "Layers");
    assert_eq!(shown["description"], "The layers, drawn");
    assert_eq!(shown["audience"], json!(["user", "assistant"]));
    assert_eq!(shown["priority"], 0.5);
    for (flag, value, said) in [
        ("--audience", "user,bot", "'bot' is not a role"),
        ("--audience", "user,user", "names user twice"),
        ("--priority", "2", "is not a number from 0.0 to 1.0"),
        ("--priority", "high", "is not a number from 0.0 to 1.0"),
        ("--title", " ", "--title is empty"),
    ] {
        let error = ctx.fails(&[
            "resource",
            "add",
            file,
            "--uri",
            "shelf://local/x.png",
            flag,
            value,
        ]);
        assert!(error.contains(said), "{flag} {value}: {error}");
    }
    ctx.fails(&["resource", "show", "shelf://local/x.png"]);
}

#[test]
fn a_metadata_file_beside_a_binary_file_is_its_metadata_through_import_and_export() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.write("art/diagram.png", PNG);
    let meta = "title: The layers\ndescription: How the parts sit on each other\naudience: [assistant]\npriority: 0.25\n";
    ctx.write("art/diagram.png.meta.yaml", meta);
    let dir = ctx.path("art");
    let stdout = ctx.ok(&["import", dir.to_str().expect("UTF-8")]);
    assert!(stdout.contains("added 1,"), "{stdout}");
    let shown = ctx.json(&["resource", "show", "shelf://art/diagram.png", "--json"]);
    assert_eq!(shown["title"], "The layers");
    assert_eq!(shown["description"], "How the parts sit on each other");
    assert_eq!(shown["audience"], json!(["assistant"]));
    assert_eq!(shown["priority"], 0.25);
    assert_eq!(shown["mimeType"], "image/png");
    ctx.fails(&["resource", "show", "shelf://art/diagram.png.meta.yaml"]);

    let out = ctx.path("out");
    let out_arg = out.to_str().expect("UTF-8");
    let exported = ctx.run(&["export", out_arg, "--collection", "art"]);
    assert!(exported.status.success());
    assert_eq!(String::from_utf8_lossy(&exported.stderr), "", "no warnings");
    assert_eq!(std::fs::read(out.join("diagram.png")).expect("read"), PNG);
    let written = std::fs::read_to_string(out.join("diagram.png.meta.yaml")).expect("read");
    assert!(written.contains("title: The layers"), "{written}");
    assert!(written.contains("priority: 0.25"), "{written}");
    let again = ctx.json(&["import", out_arg, "--collection", "art", "--json"]);
    assert_eq!(again["unchanged"], 1, "{again}");
    assert_eq!(again["updated"], 0, "{again}");
}

#[test]
fn a_metadata_file_that_does_not_read_fails_its_file() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.write("art/diagram.png", PNG);
    ctx.write("art/diagram.png.meta.yaml", "titel: Typo\n");
    let dir = ctx.path("art");
    let error = ctx.fails(&["import", dir.to_str().expect("UTF-8")]);
    assert!(error.contains("diagram.png.meta.yaml"), "{error}");
    assert!(error.contains("titel"), "{error}");
    ctx.fails(&["resource", "show", "shelf://art/diagram.png"]);
}

#[test]
fn an_audience_or_priority_out_of_range_fails_its_file_in_front_matter_and_metadata_alike() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let dir = ctx.path("art");
    let dir = dir.to_str().expect("UTF-8");
    ctx.write("art/diagram.png", PNG);
    for (front, said) in [
        (
            "audience: [user, robot]",
            "audience 'robot' is not 'user' or 'assistant'",
        ),
        ("priority: 1.5", "priority 1.5 is outside 0.0 to 1.0"),
    ] {
        // The same keys in a markdown file's front matter and in a binary file's metadata.
        for (file, contents) in [
            ("notes.md", format!("---\n{front}\n---\n# Notes\n")),
            ("diagram.png.meta.yaml", format!("{front}\n")),
        ] {
            let path = ctx.write(&format!("art/{file}"), contents);
            let error = ctx.fails(&["import", dir]);
            assert!(error.contains(file) && error.contains(said), "{error}");
            std::fs::remove_file(path).expect("remove");
        }
    }
    // Nothing of a failed import was stored; the same folder without the faults imports.
    ctx.fails(&["resource", "show", "shelf://art/notes.md"]);
    ctx.fails(&["resource", "show", "shelf://art/diagram.png"]);
    let stdout = ctx.ok(&["import", dir]);
    assert!(stdout.contains("added 1,"), "{stdout}");
}

#[test]
fn embed_as_resource_gives_an_embedded_resource_block_where_an_image_block_would_be() {
    let ctx = TestContext::new();
    ctx.ok(&["init"]);
    let png = "shelf://library/images/layers.png";
    let file = ctx.write(
        "pic.prompt.md",
        format!("{{{{ embed(\"{png}\") }}}}\n{{{{ embed(\"{png}\", as=\"resource\") }}}}\n"),
    );
    ctx.ok(&["prompt", "add", file.to_str().expect("UTF-8")]);
    let rendered = ctx.json(&["prompt", "render", "pic", "--json"]);
    let blocks: Vec<&serde_json::Value> = rendered["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|message| &message["content"])
        .filter(|content| content["type"] != "text")
        .collect();
    assert_eq!(blocks.len(), 2, "{rendered:#}");
    assert_eq!(blocks[0]["type"], "image");
    assert_eq!(blocks[1]["type"], "resource");
    assert_eq!(blocks[1]["resource"]["uri"], png);
    assert_eq!(blocks[1]["resource"]["mimeType"], "image/png");
    assert!(blocks[1]["resource"]["blob"].is_string(), "{:#}", blocks[1]);

    let bad = ctx.write(
        "bad/bad.prompt.md",
        format!("{{{{ embed(\"{png}\", as=\"image\") }}}}\n"),
    );
    let error = ctx.fails(&[
        "import",
        bad.parent().expect("folder").to_str().expect("UTF-8"),
    ]);
    assert!(error.contains("as=\"resource\""), "{error}");
}
