//! Relative markdown links between files of one collection, rewritten to the URIs of the
//! resources they point at: `[style](../guides/style.md)` in a file becomes
//! `[style](shelf://notes/guides/style.md)`, which a client can read with `resources/read`,
//! where a path relative to a folder it has never seen would mean nothing.
//!
//! Only links whose target is a resource of the same import are rewritten; anything else
//! (web links, anchors, links to prompts or to files that are not there) stays as written.
//! `missing_links` finds the relative links whose target is no file of the collection, which
//! `validate` reports.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use percent_encoding::percent_decode_str;
use pulldown_cmark::{Event, LinkType, Parser, Tag};

use super::paths::has_extension;
use super::{Item, SKILL_SCHEME};
use crate::model::Content;

/// The relative paths of the resources among `items`, with their URIs: what links can point
/// at.
pub fn link_targets<'a>(
    items: impl IntoIterator<Item = (&'a str, &'a Item)>,
) -> HashMap<String, String> {
    items
        .into_iter()
        .filter_map(|(path, item)| match item {
            Item::Resource(resource) => Some((path.to_string(), resource.info.uri.clone())),
            _ => None,
        })
        .collect()
}

/// Rewrites the links of `item`, read from `relative_path`; `targets` maps the relative paths
/// of the collection's resources to their URIs. Returns whether anything changed.
pub fn resolve_links(
    item: &mut Item,
    relative_path: &str,
    targets: &HashMap<String, String>,
) -> bool {
    rewrite_markdown(item, relative_path, |text, folder| {
        rewrite_links(text, folder, targets)
    })
}

/// The links of `item`, to be written at `relative_path`, whose destination is the URI of a
/// resource in `paths` (URI to its relative path in the same folder), written back as the
/// relative paths an import reads as those URIs again: the inverse of `resolve_links`, so an
/// export into the layout a collection came from keeps its authors' links relative. Returns
/// whether anything changed.
pub(crate) fn relative_links(
    item: &mut Item,
    relative_path: &str,
    paths: &HashMap<String, String>,
) -> bool {
    rewrite_markdown(item, relative_path, |text, folder| {
        relative_text(text, folder, paths)
    })
}

/// Applies `rewrite` (a text and the folder of its file to the new text, or None when it
/// changes nothing) to every markdown text of `item` at `relative_path`: a prompt's message
/// bodies, a text resource's content. Returns whether anything changed.
///
/// A skill's files (resources `skill://NAME/PATH`, its `SKILL.md` among them) keep their
/// links as written, either way: the Skills extension of MCP resolves a relative link against
/// the skill's folder (SEP-2640, "Reading") and serves each file byte for byte, its digest
/// the file's own. The prompt made from a `SKILL.md` has no folder, so its links become URIs.
fn rewrite_markdown(
    item: &mut Item,
    relative_path: &str,
    rewrite: impl Fn(&str, &str) -> Option<String>,
) -> bool {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    if !has_extension(file_name, &["md", "markdown"]) {
        return false;
    }
    if let Item::Resource(resource) = item
        && let Some((scheme, _)) = resource.info.uri.split_once("://")
        && scheme == SKILL_SCHEME
    {
        return false;
    }
    let folder = folder_of(relative_path);
    let mut changed = false;
    let mut apply = |text: &mut String| {
        if let Some(rewritten) = rewrite(text, folder) {
            *text = rewritten;
            changed = true;
        }
    };
    match item {
        Item::Prompt(prompt) => {
            for message in &mut prompt.messages {
                apply(&mut message.body);
            }
        }
        Item::Resource(resource) => {
            if let Content::Text(text) = &mut resource.content {
                apply(text);
            }
        }
        Item::Values { .. } => {}
    }
    changed
}

/// `text`, of a file in `folder`, with the links to the URIs in `paths` made relative, or None
/// when it has none.
fn relative_text(text: &str, folder: &str, paths: &HashMap<String, String>) -> Option<String> {
    rewrite_each(text, |dest| {
        let (uri, fragment) = match dest.find('#') {
            Some(at) => (&dest[..at], &dest[at..]),
            None => (dest, ""),
        };
        let path = paths.get(uri)?;
        Some(format!("{}{fragment}", relative_to(folder, path)))
    })
}

/// Characters a relative link's path segment percent-encodes, so that it reads as one
/// destination and decodes to the file's name (`target_path` decodes it).
const LINK_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'(')
    .add(b')')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'`');

/// The path of `target` (relative to the collection) from the folder `folder`, as a link
/// destination: `other.md`, `../guides/style.md`.
fn relative_to(folder: &str, target: &str) -> String {
    let from: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    let to: Vec<&str> = target.split('/').collect();
    let shared = from
        .iter()
        .zip(&to)
        .take_while(|(a, b)| a == b)
        .count()
        .min(to.len().saturating_sub(1));
    let mut segments: Vec<String> = vec!["..".to_string(); from.len() - shared];
    segments.extend(
        to[shared..].iter().map(|segment| {
            percent_encoding::utf8_percent_encode(segment, LINK_SEGMENT).to_string()
        }),
    );
    segments.join("/")
}

/// `text` with its relative link destinations replaced, or None when none resolves.
fn rewrite_links(text: &str, folder: &str, targets: &HashMap<String, String>) -> Option<String> {
    rewrite_each(text, |dest| resolve(dest, folder, targets))
}

/// `text` with each link destination that `replace` gives another one replaced, or None when
/// it gives none.
fn rewrite_each(text: &str, replace: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    each_link(text, |span, opener, dest| {
        if let Some(new) = replace(dest)
            && let Some(range) = place(text, span, opener, dest)
        {
            edits.push((range, new));
        }
    });
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(text.len() + edits.len() * 32);
    let mut at = 0;
    for (range, uri) in edits {
        if range.start < at {
            // Overlapping spans cannot come from one document; keep the text as it is.
            continue;
        }
        out.push_str(&text[at..range.start]);
        out.push_str(&uri);
        at = range.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// Calls `found` with the span, the opener (`](` or `]:`) and the destination of every
/// inline link, image and link reference definition of the markdown `text`.
fn each_link(text: &str, mut found: impl FnMut(Range<usize>, &str, &str)) {
    // Most files link nowhere; skip the parse for them.
    if !text.contains("](") && !text.contains("]:") {
        return;
    }
    let parser = Parser::new(text).into_offset_iter();
    let definitions: Vec<(String, Range<usize>, String)> = parser
        .reference_definitions()
        .iter()
        .map(|(label, definition)| {
            let dest = definition.dest.to_string();
            (label.to_lowercase(), definition.span.clone(), dest)
        })
        .collect();
    // A definition no link uses renders as nothing (`[Category]: [tools/examples]` in a
    // list of categories): it links nowhere, so it is neither rewritten nor checked.
    let mut used = HashSet::new();
    let mut inline = Vec::new();
    for (event, range) in parser {
        let (Event::Start(Tag::Link {
            link_type,
            dest_url,
            id,
            ..
        })
        | Event::Start(Tag::Image {
            link_type,
            dest_url,
            id,
            ..
        })) = event
        else {
            continue;
        };
        match link_type {
            LinkType::Inline => inline.push((range, dest_url)),
            LinkType::Reference | LinkType::Collapsed | LinkType::Shortcut => {
                used.insert(id.to_lowercase());
            }
            _ => {}
        }
    }
    for (label, span, dest) in definitions {
        if used.contains(&label) {
            found(span, "]:", &dest);
        }
    }
    for (range, dest) in inline {
        found(range, "](", &dest);
    }
}

/// A relative link whose target is not a file of the collection.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MissingLink {
    /// As the author wrote it.
    pub dest: String,
    /// The line of `text` (from 1) it is on.
    pub line: usize,
    /// It climbs out of the collection's folder (`../../x.md` one folder down).
    pub outside: bool,
}

/// The relative links and images of the markdown `text`, read from `relative_path`, whose
/// target `exists` does not know (it is given the target's path in the collection, without
/// its `#fragment`). Links a template writes (`{{ ... }}` in the destination) are not
/// checked: their target is known only when the prompt renders.
pub(crate) fn missing_links(
    text: &str,
    relative_path: &str,
    exists: impl Fn(&str) -> bool,
) -> Vec<MissingLink> {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    if !has_extension(file_name, &["md", "markdown"]) {
        return Vec::new();
    }
    let folder = folder_of(relative_path);
    let mut missing = Vec::new();
    each_link(text, |span, _, dest| {
        if dest.contains("{{") || dest.contains("{%") {
            return;
        }
        let outside = match target_path(dest, folder) {
            None => return,
            Some(Ok((path, _))) if exists(&path) => return,
            Some(Ok(_)) => false,
            Some(Err(Outside)) => true,
        };
        missing.push(MissingLink {
            dest: dest.to_string(),
            line: text[..span.start].matches('\n').count() + 1,
            outside,
        });
    });
    missing
}

/// The folder part of a relative path ("" at the top).
fn folder_of(relative_path: &str) -> &str {
    relative_path
        .rsplit_once('/')
        .map(|(folder, _)| folder)
        .unwrap_or("")
}

/// Where `dest` is written inside `span` (after the last `opener`, as the author wrote it,
/// so an escaped destination is left alone).
fn place(text: &str, span: Range<usize>, opener: &str, dest: &str) -> Option<Range<usize>> {
    let source = text.get(span.clone())?;
    let after_opener = source.rfind(opener)? + opener.len();
    let rest = &source[after_opener..];
    let skipped = rest.len() - rest.trim_start().len();
    let mut start = after_opener + skipped;
    if source[start..].starts_with('<') {
        start += 1;
    }
    if !source[start..].starts_with(dest) {
        return None;
    }
    let start = span.start + start;
    Some(start..start + dest.len())
}

/// The URI of the resource a relative `dest` in `folder` points at, keeping its `#fragment`.
fn resolve(dest: &str, folder: &str, targets: &HashMap<String, String>) -> Option<String> {
    let (path, fragment) = target_path(dest, folder)?.ok()?;
    let uri = targets.get(&path)?;
    Some(format!("{uri}{fragment}"))
}

/// A relative destination that climbs out of the collection's folder.
struct Outside;

/// The path in the collection a relative `dest` in `folder` points at, and its `#fragment`
/// (a query means nothing to a stored file and is dropped); None for a destination that is
/// not a relative path (a URI, an anchor, an absolute path) or not UTF-8 once decoded.
fn target_path<'a>(dest: &'a str, folder: &str) -> Option<Result<(String, &'a str), Outside>> {
    let has_scheme = dest.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if dest.is_empty() || has_scheme || dest.starts_with(['#', '/', '?']) {
        return None;
    }
    let (path, fragment) = match dest.find(['#', '?']) {
        Some(at) => (&dest[..at], &dest[at..]),
        None => (dest, ""),
    };
    let path = percent_decode_str(path).decode_utf8().ok()?;
    let mut segments: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Some(Err(Outside));
                }
            }
            segment => segments.push(segment),
        }
    }
    let fragment = if fragment.starts_with('#') {
        fragment
    } else {
        ""
    };
    Some(Ok((segments.join("/"), fragment)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_go_back_to_the_relative_paths_they_were_read_from() {
        assert_eq!(relative_to("", "guides/style.md"), "guides/style.md");
        assert_eq!(relative_to("guides", "guides/style.md"), "style.md");
        assert_eq!(relative_to("a/b", "c/d.md"), "../../c/d.md");
        assert_eq!(relative_to("a", "a b.md"), "../a%20b.md");
        let text =
            "[s](shelf://n/guides/style.md#names) [w](https://x.org) `[c](shelf://n/a%20b.md)`";
        let paths: HashMap<String, String> = targets()
            .into_iter()
            .map(|(path, uri)| (uri, path))
            .collect();
        let relative = relative_text(text, "notes", &paths);
        assert_eq!(
            relative.as_deref(),
            Some("[s](../guides/style.md#names) [w](https://x.org) `[c](shelf://n/a%20b.md)`")
        );
        // Read back, the links are the URIs again.
        let back = rewrite_links(relative.as_deref().unwrap_or_default(), "notes", &targets());
        assert_eq!(back.as_deref(), Some(text));
    }

    fn targets() -> HashMap<String, String> {
        HashMap::from([
            ("guides/style.md".into(), "shelf://n/guides/style.md".into()),
            ("a b.md".into(), "shelf://n/a%20b.md".into()),
            ("img/x.png".into(), "shelf://n/img/x.png".into()),
        ])
    }

    #[test]
    fn relative_links_become_uris() {
        let text = "See [style](../guides/style.md#names), ![x](../img/x.png \"t\"), \
                    [ab](<../a b.md>), [web](https://e.com/a.md), [missing](nope.md), \
                    `[code](../guides/style.md)` and [ref].\n\n[ref]: ../a%20b.md\n";
        let rewritten = rewrite_links(text, "docs", &targets()).unwrap();
        assert_eq!(
            rewritten,
            "See [style](shelf://n/guides/style.md#names), ![x](shelf://n/img/x.png \"t\"), \
             [ab](<shelf://n/a%20b.md>), [web](https://e.com/a.md), [missing](nope.md), \
             `[code](../guides/style.md)` and [ref].\n\n[ref]: shelf://n/a%20b.md\n"
        );
    }

    #[test]
    fn any_text_rewrites_without_failing_and_only_at_links() {
        const PIECES: [&str; 20] = [
            "[",
            "]",
            "](",
            ")",
            "<",
            ">",
            "../",
            "guides/style.md",
            "a b.md",
            "a%20b.md",
            "#x",
            ":",
            "`",
            "\n",
            "é",
            "\\",
            " ",
            "\"t\"",
            "]: ",
            "!",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let length = (next() % 20) as usize;
            let text: String = (0..length)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            if let Some(rewritten) = rewrite_links(&text, "docs", &targets()) {
                // A rewrite puts a resource's URI in.
                assert!(
                    rewritten.contains("shelf://n/"),
                    "{text:?} -> {rewritten:?}"
                );
            }
        }
    }

    #[test]
    fn links_to_files_that_are_not_there_are_found_with_their_lines() {
        let text = "# T\n\n[ok](../guides/style.md) [gone](gone.md#x)\n[up](../../x.md) \
                    [web](https://e.com) [made]({{ x }}.md) [ref]\n\n[ref]: nope.md\n\
                    [Category]: [tools/examples]\n[unused]: gone-too.md\n";
        let exists = |path: &str| path == "guides/style.md";
        let missing: Vec<(String, usize, bool)> = missing_links(text, "docs/a.md", exists)
            .into_iter()
            .map(|link| (link.dest, link.line, link.outside))
            .collect();
        assert_eq!(
            missing,
            [
                ("nope.md".to_string(), 6, false),
                ("gone.md#x".to_string(), 3, false),
                ("../../x.md".to_string(), 4, true),
            ]
        );
    }

    #[test]
    fn text_without_links_is_left_alone() {
        assert_eq!(
            rewrite_links("# Title\n\nNo links.\n", "", &targets()),
            None
        );
        assert_eq!(resolve("../../x.md", "a", &targets()), None);
        assert_eq!(resolve("mailto:x@y", "", &targets()), None);
    }
}
