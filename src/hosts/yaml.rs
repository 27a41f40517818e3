//! YAML (Continue's and Goose's `config.yaml`): parsed with serde-saphyr, edited as text.
//!
//! No maintained Rust crate edits YAML while keeping its comments, so the edit is the smallest
//! one that works on block-style YAML: the lines of the entry (a member of the top-level
//! mapping `key`, or an item of the top-level list `key`) are replaced, or new lines are added
//! at the end of that block (or of the file); every other line is kept byte for byte. What it
//! does not understand (a flow-style `key: {...}` with servers in it) it refuses, and
//! `hosts::merge` parses the result back, so an edit that changed anything else is refused too.

use serde_json::Value;

use super::{Entry, Field, MergeError, NAME, Place, Shape, is_named};

/// How much deeper each level of the lines written is indented.
const STEP: usize = 2;

pub(super) fn parse(text: &str) -> Result<Value, MergeError> {
    serde_saphyr::from_str::<Value>(text).map_err(|err| {
        let location = err.location();
        let message = err.to_string();
        let first_line = message.lines().next().unwrap_or("invalid YAML");
        MergeError::Syntax {
            format: "YAML",
            message: without_position(first_line).to_string(),
            line: location.map_or(1, |location| location.line() as usize),
            column: location.map_or(1, |location| location.column() as usize),
        }
    })
}

/// serde-saphyr's messages start with "error: line L column C: "; the position is given apart.
fn without_position(message: &str) -> &str {
    let rest = message.strip_prefix("error: ").unwrap_or(message);
    match rest
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(": "))
    {
        Some((position, rest)) if position.contains("column") => rest,
        _ => rest,
    }
}

pub(super) fn edit(
    text: &str,
    place: &Place,
    before: &Value,
    entry: &Entry,
    preamble: &[(&'static str, Field)],
) -> Result<String, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len() + 256);
    for (key, field) in preamble {
        out.push_str(&format!("{key}: {}\n", scalar(field)));
    }
    let Some(key_line) = lines
        .iter()
        .position(|line| value_after_key(line, place.key).is_some())
    else {
        // No such key yet: the whole block goes at the end of the file.
        out.push_str(text);
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{}:\n", place.key));
        out.push_str(&render(place.shape, entry, STEP));
        return Ok(out);
    };
    let inline = value_after_key(lines[key_line], place.key).unwrap_or_default();
    if !inline.is_empty() {
        if !matches!(inline, "{}" | "[]" | "null" | "~") {
            return Err(format!(
                "{} is written in flow style ({inline}); write it as a block (one server per \
                 line) or add the entry by hand",
                place.key
            ));
        }
        // `key: {}` and the like: the key's line becomes `key:` with the entry under it.
        out.extend(lines[..key_line].iter().copied());
        out.push_str(&format!("{}:\n", place.key));
        out.push_str(&render(place.shape, entry, STEP));
        out.extend(lines[key_line + 1..].iter().copied());
        return Ok(out);
    }

    let block = Block::after(&lines, key_line, place.shape);
    let indent = block.indent.unwrap_or(STEP);
    let old = match place.shape {
        Shape::Map => block.find(&lines, |line| value_after_key(line, NAME).is_some()),
        Shape::ListByName => {
            let index = before
                .get(place.key)
                .and_then(Value::as_array)
                .and_then(|servers| servers.iter().position(is_named));
            index.and_then(|index| block.nth_item(&lines, index))
        }
    };
    let (start, end) = old.unwrap_or((block.end, block.end));
    out.extend(lines[..start].iter().copied());
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&render(place.shape, entry, indent));
    out.extend(lines[end..].iter().copied());
    Ok(out)
}

/// The lines under a top-level key: from the line after it to its last indented line (or,
/// for a list, its last `- ` item line at the left edge, which YAML allows).
struct Block {
    start: usize,
    /// One past the last line that belongs to the block (trailing comments and blank lines
    /// stay outside it, with whatever follows).
    end: usize,
    /// The indentation of the block's entries, when it has any.
    indent: Option<usize>,
}

impl Block {
    fn after(lines: &[&str], key_line: usize, shape: Shape) -> Block {
        let start = key_line + 1;
        let mut end = start;
        let mut indent = None;
        for (index, line) in lines.iter().enumerate().skip(start) {
            if is_trivia(line) {
                continue;
            }
            let depth = depth(line);
            let left_edge_item = shape == Shape::ListByName && line.starts_with('-');
            if depth == 0 && !left_edge_item {
                break;
            }
            indent.get_or_insert(depth);
            end = index + 1;
        }
        Block { start, end, indent }
    }

    /// The lines of the entry whose first line (at the block's indentation) passes `first`:
    /// up to the next line at that indentation or less, without trailing trivia.
    fn find(&self, lines: &[&str], first: impl Fn(&str) -> bool) -> Option<(usize, usize)> {
        let indent = self.indent?;
        let start = (self.start..self.end).find(|&index| {
            let line = lines[index];
            !is_trivia(line) && depth(line) == indent && first(&line[indent..])
        })?;
        Some((start, self.entry_end(lines, start, indent)))
    }

    /// The lines of the list's `index`th item.
    fn nth_item(&self, lines: &[&str], index: usize) -> Option<(usize, usize)> {
        let indent = self.indent?;
        let start = (self.start..self.end)
            .filter(|&line| {
                let line = lines[line];
                !is_trivia(line) && depth(line) == indent && line[indent..].starts_with('-')
            })
            .nth(index)?;
        Some((start, self.entry_end(lines, start, indent)))
    }

    fn entry_end(&self, lines: &[&str], start: usize, indent: usize) -> usize {
        let mut end = start + 1;
        for (index, line) in lines.iter().enumerate().take(self.end).skip(start + 1) {
            if is_trivia(line) {
                continue;
            }
            if depth(line) <= indent {
                break;
            }
            end = index + 1;
        }
        end
    }
}

/// The entry's lines at `indent`: a member `promptshelf:` with its fields under it, or a list
/// item `- name: promptshelf` with the rest of its fields aligned under the first.
fn render(shape: Shape, entry: &Entry, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    match shape {
        Shape::Map => {
            out.push_str(&format!("{pad}{NAME}:\n"));
            for (key, field) in &entry.fields {
                out.push_str(&format!(
                    "{pad}{}{key}: {}\n",
                    " ".repeat(STEP),
                    scalar(field)
                ));
            }
        }
        Shape::ListByName => {
            for (position, (key, field)) in entry.fields.iter().enumerate() {
                let lead = if position == 0 { "- " } else { "  " };
                out.push_str(&format!("{pad}{lead}{key}: {}\n", scalar(field)));
            }
        }
    }
    out
}

/// A field as a YAML flow value. Strings are written as JSON strings, which YAML reads as
/// double-quoted scalars with the same escapes, so no path needs YAML's quoting rules.
fn scalar(field: &Field) -> String {
    let quoted = |text: &str| serde_json::to_string(text).unwrap_or_default();
    match field {
        Field::Text(text) => quoted(text),
        Field::Texts(texts) => {
            let items: Vec<String> = texts.iter().map(|text| quoted(text)).collect();
            format!("[{}]", items.join(", "))
        }
        Field::Flag(flag) => flag.to_string(),
        Field::Number(number) => number.to_string(),
        Field::EmptyMap => "{}".to_string(),
    }
}

/// For a line `key: rest` at the left edge (the key plain or quoted), the rest without a
/// trailing comment; None for any other line.
fn value_after_key<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = [
        format!("{key}:"),
        format!("\"{key}\":"),
        format!("'{key}':"),
    ]
    .iter()
    .find_map(|prefix| line.strip_prefix(prefix.as_str()))?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n'])) {
        return None;
    }
    let rest = rest.trim();
    let value = match rest.find(" #") {
        Some(comment) => &rest[..comment],
        None if rest.starts_with('#') => "",
        None => rest,
    };
    Some(value.trim())
}

/// A blank line or one holding only a comment.
fn is_trivia(line: &str) -> bool {
    let content = line.trim();
    content.is_empty() || content.starts_with('#')
}

fn depth(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goose_entry() -> Entry {
        Entry {
            fields: vec![
                ("cmd", Field::Text("/bin/promptshelf".into())),
                ("enabled", Field::Flag(true)),
            ],
        }
    }

    const EXTENSIONS: Place = Place {
        key: "extensions",
        shape: Shape::Map,
    };

    #[test]
    fn a_member_is_replaced_in_place_and_its_neighbours_kept() {
        let text = "# top\nextensions:\n  # dev tools\n  developer:\n    enabled: true\n  promptshelf:\n    cmd: old\n\n  # last\n  other:\n    enabled: false\nGOOSE_MODEL: x # model\n";
        let before = parse(text).unwrap();
        let edited = edit(text, &EXTENSIONS, &before, &goose_entry(), &[]).unwrap();
        assert_eq!(
            edited,
            "# top\nextensions:\n  # dev tools\n  developer:\n    enabled: true\n  promptshelf:\n    cmd: \"/bin/promptshelf\"\n    enabled: true\n\n  # last\n  other:\n    enabled: false\nGOOSE_MODEL: x # model\n"
        );
    }

    #[test]
    fn a_new_member_goes_after_the_last_line_of_the_block() {
        let text = "extensions:\n    developer:\n        enabled: true\n# after\nother: 1";
        let before = parse(text).unwrap();
        let edited = edit(text, &EXTENSIONS, &before, &goose_entry(), &[]).unwrap();
        assert_eq!(
            edited,
            "extensions:\n    developer:\n        enabled: true\n    promptshelf:\n      cmd: \"/bin/promptshelf\"\n      enabled: true\n# after\nother: 1"
        );
    }

    #[test]
    fn flow_style_with_servers_is_refused() {
        let text = "extensions: {developer: {enabled: true}}\n";
        let before = parse(text).unwrap();
        let err = edit(text, &EXTENSIONS, &before, &goose_entry(), &[]).unwrap_err();
        assert!(err.contains("flow style"), "{err}");
    }

    #[test]
    fn a_list_item_at_the_left_edge_is_found_by_its_name() {
        let place = Place {
            key: "mcpServers",
            shape: Shape::ListByName,
        };
        let entry = Entry {
            fields: vec![("name", Field::Text(NAME.into()))],
        };
        let text = "mcpServers:\n- name: a\n- name: promptshelf\n  command: old\n- name: b\n";
        let before = parse(text).unwrap();
        let edited = edit(text, &place, &before, &entry, &[]).unwrap();
        assert_eq!(
            edited,
            "mcpServers:\n- name: a\n- name: \"promptshelf\"\n- name: b\n"
        );
    }
}
