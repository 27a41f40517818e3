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
    assert_eq!(
        shown["audience"],
        json!(["user", "assistant"])
    );
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
