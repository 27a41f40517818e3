//! The library file parser with rendering: a file of a collection (any text or bytes, at
//! one of the paths that pick each kind of item: our prompts and documents, Claude Code
//! commands, VS Code prompt files, completion tables, other files) through
//! `library::parse_file_in`, its relative links resolved against itself; a prompt it yields
//! is then rendered with argument values from the input, both as `prompts/get` passes them
//! (checked by `arguments::resolve`, defaults filled in) and unchecked.
//!
//! Input: one byte choosing the path, the argument values (in the prompt's order; one past
//! them is given as `name=value`) each ended by NUL, then an empty field (a second NUL)
//! and the file's bytes.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use promptshelf::library::{self, Collection, DEFAULT_SCHEME, Folder, Item};
use promptshelf::model::StoredPrompt;
use promptshelf::render::{self, Limits};
use promptshelf_fuzz::Fields;

/// The paths a file is parsed at: which one decides what the file may be.
const PATHS: &[(&str, Folder)] = &[
    ("prompts/review.prompt.md", Folder::Plain),
    ("review.md", Folder::Plain),
    ("guides/notes.md", Folder::Plain),
    ("notes.txt", Folder::Plain),
    ("commands/review.md", Folder::Plain),
    ("review.md", Folder::Commands),
    (".github/prompts/review.prompt.md", Folder::Plain),
    ("_values/languages.csv", Folder::Plain),
    ("_values/languages.txt", Folder::Plain),
    ("data/table.json", Folder::Plain),
    ("images/layers.png", Folder::Plain),
];

/// Far below the server's defaults, so that a run stays quick; the limits are still met.
const LIMITS: Limits = Limits {
    bytes: 256 * 1024,
    blocks: 200,
};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, data)) = data.split_first() else {
        return;
    };
    let (path, folder) = PATHS[usize::from(choice) % PATHS.len()];
    let mut fields = Fields::new(data);
    let mut values = Vec::new();
    loop {
        let value = fields.text();
        if value.is_empty() {
            break;
        }
        values.push(value);
    }
    let file = fields.rest();
    let collection = Collection {
        name: "library".into(),
        scheme: DEFAULT_SCHEME.into(),
    };
    let Ok(Some(mut item)) = library::parse_file_in(&collection, path, folder, file) else {
        return;
    };
    let targets = library::link_targets([(path, &item)]);
    library::resolve_links(&mut item, path, &targets);
    let Item::Prompt(prompt) = item else {
        return;
    };
    let mut values = values.into_iter();
    let mut given: BTreeMap<String, String> = prompt
        .arguments
        .iter()
        .zip(values.by_ref())
        .map(|(arg, value)| (arg.name.clone(), value))
        .collect();
    if let Some(stray) = values.next() {
        let (name, value) = stray.split_once('=').unwrap_or((&stray, ""));
        given.insert(name.to_string(), value.to_string());
    }
    let stored = StoredPrompt {
        content_hash: promptshelf::store::hash_prompt(&prompt),
        prompt,
        last_modified: 0,
        version: None,
    };
    let templates = render::Templates::default();
    let _ = render::render_within(&stored, &given, LIMITS, &templates);
    let patterns = Default::default();
    if let Ok(values) = promptshelf::arguments::resolve(&stored.prompt, &given, &patterns) {
        let _ = render::render_within(&stored, &values, LIMITS, &templates);
    }
});
