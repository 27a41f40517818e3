//! Release channels' labels over the real binary: `label set`, `rm`, `promote`, `list`,
//! `history` and `undo`, the labels `prompt show` and `resource show` print, the errors each
//! refusal gives, and a labelled version kept however few versions `--keep` keeps.

use serde_json::{Value, json};

use crate::advice::refused;
use crate::common::TestContext;

const NOTES: &str = "shelf://team/notes.md";
/// The template an import makes for its collection's documents.
const DOCS: &str = "shelf://team/{+path}";

/// A library without the seed, holding the collection `team`: the prompts greet and extra,
/// the document notes.md and the template `DOCS`.
fn team(ctx: &TestContext) {
    ctx.ok(&["init", "--empty"]);
    write_greet(ctx, "Hello there.");
    ctx.write(
        "team/extra.prompt.md",
        "---\ndescription: Says more.\n---\nAnd one more thing.\n",
    );
    ctx.write("team/notes.md", "# Notes\n\nWhat the team agreed.\n");
    import_team(ctx);
}

fn write_greet(ctx: &TestContext, line: &str) {
    ctx.write(
        "team/greet.prompt.md",
        format!("---\ndescription: Says hello.\n---\n{line}\n"),
    );
}

fn import_team(ctx: &TestContext) {
    ctx.ok(&["import", &ctx.path("team").display().to_string()]);
}

/// Adds (or replaces) the prompt `name`, added by hand, saying `line`.
fn add_prompt(ctx: &TestContext, name: &str, line: &str) {
    let file = ctx.write(
        &format!("{name}.prompt.md"),
        format!("---\ndescription: A prompt.\n---\n{line}\n"),
    );
    ctx.ok(&["prompt", "add", &file.display().to_string()]);
}

/// The versions the history keeps of `key`, newest first.
fn versions(ctx: &TestContext, key: &str) -> Vec<i64> {
    ctx.json(&["history", key, "--json"])
        .as_array()
        .expect("an array")
        .iter()
        .map(|version| version["version"].as_i64().expect("a version"))
        .collect()
}

fn newest(ctx: &TestContext, key: &str) -> i64 {
    versions(ctx, key)[0]
}

/// The items `label` is on, as `label list LABEL --json` gives them.
fn on(ctx: &TestContext, label: &str) -> Value {
    ctx.json(&["label", "list", label, "--json"])
}

#[test]
fn set_on_a_collection_and_on_items_is_listed_shown_and_taken_off() {
    let ctx = TestContext::new();
    team(&ctx);
    let (greet, extra, notes, docs) = (
        newest(&ctx, "greet"),
        newest(&ctx, "extra"),
        newest(&ctx, NOTES),
        newest(&ctx, DOCS),
    );
    assert_eq!(
        ctx.ok(&["label", "set", "staging", "--collection", "team"]),
        format!(
            "staging: prompt extra - -> v{extra}\nstaging: prompt greet - -> v{greet}\n\
             staging: resource {NOTES} - -> v{notes}\nstaging: template {DOCS} - -> v{docs}\n\
             4 labels moved\n"
        )
    );
    add_prompt(&ctx, "solo", "On its own.");
    let solo = newest(&ctx, "solo");
    assert_eq!(
        ctx.ok(&["label", "set", "production", "solo", "greet"]),
        format!(
            "production: prompt solo - -> v{solo}\nproduction: prompt greet - -> v{greet}\n\
             2 labels moved\n"
        )
    );

    let names: Vec<Vec<String>> = ctx
        .ok(&["label", "list"])
        .lines()
        .map(|line| line.split_whitespace().map(str::to_string).collect())
        .collect();
    assert_eq!(
        names,
        [["LABEL", "ITEMS"], ["production", "2"], ["staging", "4"]]
    );
    assert_eq!(
        ctx.json(&["label", "list", "--json"]),
        json!([{"label": "production", "items": 2}, {"label": "staging", "items": 4}])
    );
    assert_eq!(
        on(&ctx, "staging"),
        json!([
            {"kind": "prompt", "key": "extra", "version": extra},
            {"kind": "prompt", "key": "greet", "version": greet},
            {"kind": "resource", "key": NOTES, "version": notes},
            {"kind": "template", "key": DOCS, "version": docs},
        ])
    );
    let table = ctx.ok(&["label", "list", "production"]);
    assert!(
        table.contains(&format!("prompt  greet  {greet}"))
            && table.contains(&format!("prompt  solo   {solo}")),
        "{table}"
    );

    let shown = ctx.ok(&["prompt", "show", "greet"]);
    assert!(
        shown.contains(&format!(
            "\nlabels:      production v{greet}, staging v{greet}\n"
        )),
        "{shown}"
    );
    assert_eq!(
        ctx.json(&["prompt", "show", "greet", "--json"])["labels"],
        json!({"production": greet, "staging": greet})
    );
    assert_eq!(
        ctx.json(&["resource", "show", NOTES, "--json"])["labels"],
        json!({"staging": notes})
    );
    assert!(
        ctx.ok(&["resource", "show", NOTES])
            .contains(&format!("labels:      staging v{notes}\n"))
    );

    assert_eq!(
        ctx.ok(&["label", "rm", "production", "solo"]),
        format!("production: prompt solo v{solo} -> -\n1 label moved\n")
    );
    let bare = ctx.json(&["prompt", "show", "solo", "--json"]);
    assert!(bare.get("labels").is_none(), "no labels, no key: {bare:#}");
    assert!(!ctx.ok(&["prompt", "show", "solo"]).contains("labels:"));
    assert_eq!(
        ctx.ok(&["label", "rm", "production", "solo"]),
        "nothing moved: none of them has the label production\n"
    );
    assert_eq!(
        ctx.ok(&["label", "rm", "staging", "--all"]),
        format!(
            "staging: prompt extra v{extra} -> -\nstaging: prompt greet v{greet} -> -\n\
             staging: resource {NOTES} v{notes} -> -\nstaging: template {DOCS} v{docs} -> -\n\
             4 labels moved\n"
        )
    );
    assert_eq!(on(&ctx, "staging"), json!([]));
}

#[test]
fn a_label_names_an_older_version_then_moves_to_the_newest() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    add_prompt(&ctx, "greet", "Hello there.");
    add_prompt(&ctx, "greet", "Good morning.");
    let [new, old] = versions(&ctx, "greet")[..] else {
        panic!("two versions of greet");
    };
    let old_arg = old.to_string();
    assert_eq!(
        ctx.ok(&["label", "set", "production", "greet", "--version", &old_arg]),
        format!("production: prompt greet - -> v{old}\n1 label moved\n")
    );
    assert_eq!(
        ctx.json(&["prompt", "show", "greet", "--json"])["labels"],
        json!({"production": old})
    );
    assert_eq!(
        ctx.ok(&["label", "set", "production", "greet"]),
        format!("production: prompt greet v{old} -> v{new}\n1 label moved\n")
    );
    assert_eq!(
        ctx.ok(&["label", "set", "production", "greet"]),
        "nothing moved: production was on those versions already\n"
    );

    // A removed item keeps its labels, and is labelled again only at a version it had.
    ctx.ok(&["prompt", "rm", "greet"]);
    assert_eq!(
        ctx.ok(&["label", "set", "staging", "greet", "--version", &old_arg]),
        format!("staging: prompt greet - -> v{old}\n1 label moved\n")
    );
    assert_eq!(
        ctx.json(&["label", "list", "--json"]),
        json!([{"label": "production", "items": 1}, {"label": "staging", "items": 1}])
    );
}

#[test]
fn promote_gives_production_stagings_versions_and_takes_it_off_the_rest_of_the_collection() {
    let ctx = TestContext::new();
    team(&ctx);
    add_prompt(&ctx, "solo", "On its own.");
    let (old_greet, extra, notes, docs, solo) = (
        newest(&ctx, "greet"),
        newest(&ctx, "extra"),
        newest(&ctx, NOTES),
        newest(&ctx, DOCS),
        newest(&ctx, "solo"),
    );
    ctx.ok(&["label", "set", "production", "--collection", "team"]);
    ctx.ok(&["label", "set", "production", "solo"]);
    write_greet(&ctx, "Hello again.");
    import_team(&ctx);
    let greet = newest(&ctx, "greet");
    assert!(greet > old_greet);
    ctx.ok(&["label", "set", "staging", "greet", NOTES]);

    // extra and the template are only on production, in the collection: they come off;
    // solo is not in it.
    let promote = ["label", "promote", "staging", "production"];
    assert_eq!(
        ctx.ok(&[&promote[..], &["--collection", "team"]].concat()),
        format!(
            "production: prompt greet v{old_greet} -> v{greet}\n\
             production: prompt extra v{extra} -> -\n\
             production: template {DOCS} v{docs} -> -\n3 labels moved\n"
        )
    );
    assert_eq!(
        on(&ctx, "production"),
        json!([
            {"kind": "prompt", "key": "greet", "version": greet},
            {"kind": "prompt", "key": "solo", "version": solo},
            {"kind": "resource", "key": NOTES, "version": notes},
        ])
    );
    assert_eq!(
        ctx.ok(&promote),
        format!("production: prompt solo v{solo} -> -\n1 label moved\n"),
        "over the whole library, what staging is not on loses production"
    );
    assert_eq!(on(&ctx, "production"), on(&ctx, "staging"));
    assert_eq!(
        ctx.ok(&["label", "rm", "staging", "--collection", "team"]),
        format!(
            "staging: prompt greet v{greet} -> -\nstaging: resource {NOTES} v{notes} -> -\n\
             2 labels moved\n"
        )
    );
}

#[test]
fn history_lists_each_label_write_and_undo_goes_back_one_at_a_time() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    add_prompt(&ctx, "greet", "Hello there.");
    add_prompt(&ctx, "solo", "On its own.");
    let (greet, solo) = (newest(&ctx, "greet"), newest(&ctx, "solo"));
    ctx.ok(&["label", "set", "staging", "greet"]);
    ctx.ok(&["label", "set", "production", "greet", "solo"]);

    let history = ctx.ok(&["label", "history"]);
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(lines.len(), 5, "{history}");
    assert!(
        lines[0].starts_with("#2  ")
            && lines[0].ends_with("  promptshelf label set production greet solo"),
        "{history}"
    );
    assert_eq!(
        lines[1..3],
        [
            format!("    production: prompt greet - -> v{greet}"),
            format!("    production: prompt solo - -> v{solo}"),
        ]
    );
    assert!(
        lines[3].starts_with("#1  ") && lines[3].ends_with("  promptshelf label set staging greet"),
        "{history}"
    );
    assert_eq!(lines[4], format!("    staging: prompt greet - -> v{greet}"));

    assert_eq!(
        ctx.ok(&["label", "undo"]),
        format!(
            "undid label write #2 (promptshelf label set production greet solo)\nproduction: prompt solo v{solo} -> -\n\
             production: prompt greet v{greet} -> -\n2 labels moved\n"
        )
    );
    assert_eq!(
        ctx.json(&["label", "list", "--json"]),
        json!([{"label": "staging", "items": 1}])
    );
    assert_eq!(
        ctx.ok(&["label", "undo"]),
        format!(
            "undid label write #1 (promptshelf label set staging greet)\nstaging: prompt greet v{greet} -> -\n1 label moved\n"
        )
    );
    assert_eq!(ctx.json(&["label", "list", "--json"]), json!([]));
    let nothing = refused(&ctx, &["label", "undo"], 1);
    assert!(
        nothing.starts_with("promptshelf: there is nothing to undo"),
        "{nothing}"
    );

    let writes = ctx.json(&["label", "history", "--json"]);
    let marks: Vec<(i64, bool, Value)> = writes
        .as_array()
        .expect("an array")
        .iter()
        .map(|write| {
            (
                write["id"].as_i64().expect("an id"),
                write["undone"].as_bool().expect("undone"),
                write["reverts"].clone(),
            )
        })
        .collect();
    assert_eq!(
        marks,
        [
            (4, false, json!(1)),
            (3, false, json!(2)),
            (2, true, Value::Null),
            (1, true, Value::Null),
        ]
    );
    assert_eq!(
        writes[0]["moves"],
        json!([{"label": "staging", "kind": "prompt", "key": "greet", "before": greet, "after": null}])
    );
    let history = ctx.ok(&["label", "history"]);
    assert!(
        history.contains("promptshelf label undo  (undo of #1)\n")
            && history.contains("promptshelf label set staging greet  (undone)\n"),
        "{history}"
    );
}

#[test]
fn refusals_name_what_is_wrong_and_write_nothing() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    add_prompt(&ctx, "greet", "Hello there.");
    add_prompt(&ctx, "solo", "On its own.");
    add_prompt(&ctx, "gone", "Soon removed.");
    ctx.ok(&["prompt", "rm", "gone"]);
    let (solo, removal) = (newest(&ctx, "solo"), newest(&ctx, "gone"));

    let bad = refused(&ctx, &["label", "set", "prod uction", "greet"], 1);
    assert!(
        bad.starts_with("promptshelf: \"prod uction\" is not a label name")
            && bad.contains("e.g. production"),
        "{bad}"
    );
    let removed = refused(&ctx, &["label", "set", "production", "gone"], 1);
    assert!(
        removed.contains("the prompt \"gone\" was removed from the library")
            && removed.contains("--version"),
        "{removed}"
    );
    let own_removal = refused(
        &ctx,
        &[
            "label",
            "set",
            "production",
            "gone",
            "--version",
            &removal.to_string(),
        ],
        1,
    );
    assert!(
        own_removal.contains(&format!("version {removal} removed the prompt \"gone\"")),
        "{own_removal}"
    );
    // Another item's version, whether it wrote or removed that item, is not greet's.
    for other in [solo, removal] {
        let another = refused(
            &ctx,
            &[
                "label",
                "set",
                "production",
                "greet",
                "--version",
                &other.to_string(),
            ],
            1,
        );
        assert!(
            another.contains(&format!(
                "version {other} is not a kept version of the prompt \"greet\"; `history greet`"
            )),
            "{another}"
        );
    }
    let unknown = refused(&ctx, &["label", "set", "production", "gret"], 1);
    assert!(unknown.contains("keeps nothing named gret"), "{unknown}");
    let nothing = refused(&ctx, &["label", "promote", "staging", "production"], 1);
    assert!(
        nothing.contains("no item has the label \"staging\", so there is nothing to promote"),
        "{nothing}"
    );
    let two = refused(
        &ctx,
        &[
            "label",
            "set",
            "production",
            "greet",
            "solo",
            "--version",
            &solo.to_string(),
        ],
        1,
    );
    assert!(
        two.contains("names a version of one item, and 2 were given"),
        "{two}"
    );

    // Each command's help says what it does (not what its items are).
    let help = ctx.ok(&["label", "set", "--help"]);
    assert!(
        help.starts_with("Put a label on items' newest versions"),
        "{help}"
    );
    let both = refused(&ctx, &["label", "set", "production", "greet", "--all"], 2);
    assert!(both.contains("cannot be used with"), "{both}");
    let neither = refused(&ctx, &["label", "rm", "production"], 2);
    assert!(
        neither.contains("<ITEM|--collection <NAME>|--all>"),
        "{neither}"
    );

    assert_eq!(ctx.json(&["label", "list", "--json"]), json!([]));
    assert_eq!(ctx.json(&["label", "history", "--json"]), json!([]));
}

#[test]
fn a_labelled_version_outlives_the_versions_keep_drops() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let add = |name: &str, line: &str| {
        let file = ctx.write(
            &format!("{name}.prompt.md"),
            format!("---\ndescription: A prompt.\n---\n{line}\n"),
        );
        ctx.ok(&["--keep", "2", "prompt", "add", &file.display().to_string()]);
    };
    add("greet", "Hello 0.");
    add("solo", "Solo 0.");
    let labelled = newest(&ctx, "greet");
    ctx.ok(&["label", "set", "production", "greet"]);
    for n in 1..=3 {
        add("greet", &format!("Hello {n}."));
        add("solo", &format!("Solo {n}."));
    }

    assert_eq!(versions(&ctx, "solo").len(), 2, "--keep 2 keeps two");
    let kept = versions(&ctx, "greet");
    assert_eq!(
        kept.len(),
        3,
        "the two newest and the labelled one: {kept:?}"
    );
    assert_eq!(kept[2], labelled);
    assert_eq!(
        on(&ctx, "production"),
        json!([{"kind": "prompt", "key": "greet", "version": labelled}])
    );
    let old = ctx.ok(&["diff", "greet", &labelled.to_string(), &kept[0].to_string()]);
    assert!(old.contains("\n-Hello 0.\n+Hello 3.\n"), "{old}");
}
