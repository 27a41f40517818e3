//! Whether an item works as a host will use it: a prompt's templates parse, use no variable
//! that no argument gives, render with sample values and embed or link only URIs the
//! library holds; its arguments are declared so that they can work; a markdown text's
//! relative links point at files of its collection. `import` refuses a file whose item fails
//! here and `check` reports the same for what is stored: both call `prompt` and `document`,
//! so the two cannot disagree about what is broken.
//!
//! Each finding is one sentence, what is wrong and then how to fix it, with the place in the
//! item's file it is about (`library::Place`).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::arguments::{self, Misfit};
use crate::library::{self, Place};
use crate::model::{ArgumentType, Origin, Prompt, PromptArgument, StoredPrompt};
use crate::render::{self, Piece};
use crate::store;

/// One thing wrong with an item: where, and the sentence that says it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    pub place: Option<Place>,
    pub message: String,
    /// A relative link to no file: in a host's own file (a command, a VS Code prompt file,
    /// a skill) it is often an example for the model, which `import` keeps with a warning.
    pub missing_link: bool,
}

/// What the items an item refers to are checked against: the library, and for an import
/// the files being imported.
pub(crate) trait Library {
    /// Whether a resource with this URI exists.
    fn has_resource(&self, uri: &str) -> store::Result<bool>;
    /// Whether a completion table of this name exists.
    fn has_table(&self, name: &str) -> bool;
    /// The files of the collection, None when they are not known.
    fn files(&self, collection: &str) -> Option<&Files>;
}

/// The paths of a collection's files, relative to its folder, and the folders that hold
/// them: what a relative link may point at.
#[derive(Debug, Default)]
pub(crate) struct Files {
    paths: HashSet<String>,
    folders: HashSet<String>,
}

impl Files {
    pub(crate) fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> Files {
        let mut files = Files::default();
        for path in paths {
            let mut folder = path;
            while let Some((parent, _)) = folder.rsplit_once('/') {
                if !files.folders.insert(parent.to_string()) {
                    break;
                }
                folder = parent;
            }
            files.paths.insert(path.to_string());
        }
        files
    }

    /// Whether `path` names one of the files or folders ("" is the collection's own).
    pub(crate) fn contains(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        path.is_empty() || self.paths.contains(path) || self.folders.contains(path)
    }
}

/// Everything wrong with a stored prompt. Its templates and patterns are compiled once for
/// all the checks, and kept no longer.
pub(crate) fn prompt(stored: &StoredPrompt, library: &dyn Library) -> store::Result<Vec<Finding>> {
    let prompt = &stored.prompt;
    let templates = render::Templates::default();
    let patterns = arguments::Patterns::default();
    let mut findings: Vec<Finding> = prompt
        .arguments
        .iter()
        .flat_map(|arg| argument(prompt, arg, library, &patterns))
        .collect();
    for (index, message) in prompt.messages.iter().enumerate() {
        findings.extend(links(&message.body, index, &prompt.origin, library));
    }
    let used = match render::looked_up(stored, &templates) {
        Ok(used) => used,
        Err(err) => {
            findings.push(Finding {
                place: err.line.map(|line| Place::Message {
                    message: err.message.saturating_sub(1),
                    line,
                }),
                message: format!(
                    "the template does not parse: {}; fix the tag (every `{{% if %}}` and \
                     `{{% for %}}` needs its `{{% endif %}}` or `{{% endfor %}}`)",
                    without_line(&err.reason)
                ),
                missing_link: false,
            });
            return Ok(findings);
        }
    };
    for (index, names) in used.iter().enumerate() {
        for name in names {
            if prompt.arguments.iter().any(|arg| &arg.name == name) {
                continue;
            }
            let body = &prompt.messages[index].body;
            findings.push(Finding {
                place: line_using(body, name).map(|line| Place::Message {
                    message: index,
                    line,
                }),
                message: format!(
                    "the template uses '{name}', which is not a declared argument, so it would \
                     always be empty; declare it under `arguments:` in the front matter, or \
                     remove it"
                ),
                missing_link: false,
            });
        }
    }
    findings.extend(rendered(stored, library, &templates)?);
    Ok(findings)
}

/// Everything wrong with a markdown document of `origin`'s collection, whose text is `text`.
pub(crate) fn document(text: &str, origin: &Origin, library: &dyn Library) -> Vec<Finding> {
    links(text, 0, origin, library)
}

/// What is wrong with one argument's declaration.
fn argument(
    prompt: &Prompt,
    arg: &PromptArgument,
    library: &dyn Library,
    patterns: &arguments::Patterns,
) -> Vec<Finding> {
    let name = &arg.name;
    let mut problems = Vec::new();
    if let Some(table) = &arg.completion
        && !library.has_table(table)
    {
        problems.push(format!(
            "argument '{name}' completes from table '{table}', which does not exist; add \
             `_values/{table}.csv` or `_values/{table}.txt`, or fix `completion:`"
        ));
    }
    if let Some(pattern) = &arg.pattern
        && let Err(err) = arguments::compiled_pattern(patterns, pattern)
    {
        problems.push(format!(
            "argument '{name}' has an invalid pattern {pattern}: {err}; fix the regular \
             expression"
        ));
    }
    if let Some(default) = &arg.default
        && let Err(Misfit::Value(message)) = arguments::check(&prompt.name, arg, default, patterns)
    {
        problems.push(format!(
            "the default of argument '{name}' does not fit: {message}; change `default:`"
        ));
    }
    let kind = arg.kind.as_str();
    if !arg.values.is_empty() && arg.kind != ArgumentType::Enum {
        problems.push(format!(
            "argument '{name}' lists `values:` but its type is {kind}, which does not read \
             them; give it `type: enum`, or remove `values:`"
        ));
    }
    if (arg.pattern.is_some() || arg.max_length.is_some()) && arg.kind != ArgumentType::String {
        problems.push(format!(
            "argument '{name}' has `pattern:` or `max_length:` but its type is {kind}, which \
             does not read them; remove them, or give it `type: string`"
        ));
    }
    let numeric = matches!(arg.kind, ArgumentType::Integer | ArgumentType::Number);
    if (arg.min.is_some() || arg.max.is_some()) && !numeric {
        problems.push(format!(
            "argument '{name}' has `min:` or `max:` but its type is {kind}, which does not \
             read them; remove them, or give it `type: integer` or `type: number`"
        ));
    }
    if let (Some(min), Some(max)) = (arg.min, arg.max)
        && min > max
    {
        problems.push(format!(
            "argument '{name}' has min {min} above max {max}, so no value fits; swap them"
        ));
    }
    problems
        .into_iter()
        .map(|message| Finding {
            place: Some(Place::Argument(name.clone())),
            message,
            missing_link: false,
        })
        .collect()
}

/// The relative links of one message (or a document's text) whose target is no file of the
/// collection. An item added by hand has no folder to resolve them in.
fn links(text: &str, message: usize, origin: &Origin, library: &dyn Library) -> Vec<Finding> {
    let (Some(collection), Some(path)) = (&origin.collection, &origin.path) else {
        return Vec::new();
    };
    let Some(files) = library.files(collection) else {
        return Vec::new();
    };
    library::missing_links(text, path, |target| files.contains(target))
        .into_iter()
        .map(|link| Finding {
            place: Some(Place::Message {
                message,
                line: link.line,
            }),
            message: if link.outside {
                format!(
                    "links to `{}`, which is outside the imported folder, so no host can \
                     follow it; link to a web address instead, or import the folder above",
                    link.dest
                )
            } else {
                format!(
                    "links to `{}`, which is not a file of the folder; fix the path, or remove \
                     the link",
                    link.dest
                )
            },
            missing_link: true,
        })
        .collect()
}

/// Renders the prompt twice with sample values: a render error is a finding, and so is a URI
/// it embeds or links in both renders (fixed by the author, not built from arguments) that
/// the library does not hold.
fn rendered(
    stored: &StoredPrompt,
    library: &dyn Library,
    templates: &render::Templates,
) -> store::Result<Vec<Finding>> {
    let prompt = &stored.prompt;
    let mut findings = Vec::new();
    let first = render::render(stored, &samples(prompt, 0), templates);
    let second = render::render(stored, &samples(prompt, 1), templates);
    let (first, second) = match (first, second) {
        (Ok(first), Ok(second)) => (uris(&first), uris(&second)),
        (Err(err), _) | (_, Err(err)) => {
            findings.push(Finding {
                place: err.line.map(|line| Place::Message {
                    message: err.message.saturating_sub(1),
                    line,
                }),
                message: format!(
                    "does not render with sample values: {}; fix the expression on that line",
                    without_line(&err.reason)
                ),
                missing_link: false,
            });
            return Ok(findings);
        }
    };
    for uri in first.intersection(&second) {
        if !library.has_resource(uri)? {
            findings.push(Finding {
                place: Some(Place::Text(uri.clone())),
                message: format!(
                    "refers to {uri}, which is not in the library; fix the URI, or add that \
                     resource (import its file, or `promptshelf resource add`)"
                ),
                missing_link: false,
            });
        }
    }
    Ok(findings)
}

/// A value for every argument; `variant` picks another value where the type allows.
fn samples(prompt: &Prompt, variant: usize) -> BTreeMap<String, String> {
    prompt
        .arguments
        .iter()
        .map(|arg| {
            let value = match (&arg.kind, variant) {
                (ArgumentType::Enum, _) => arg
                    .values
                    .get(variant % arg.values.len().max(1))
                    .cloned()
                    .unwrap_or_default(),
                (_, 0) => arguments::example(arg),
                (ArgumentType::String, _) => "other text".to_string(),
                (ArgumentType::Uri, _) => "https://example.org/other".to_string(),
                _ => arguments::example(arg),
            };
            (arg.name.clone(), value)
        })
        .collect()
}

fn uris(rendered: &[render::RenderedTemplate]) -> BTreeSet<String> {
    rendered
        .iter()
        .flat_map(|template| &template.pieces)
        .filter_map(|piece| match piece {
            Piece::Embed(uri) | Piece::EmbedResource(uri) | Piece::Link(uri) => Some(uri.clone()),
            Piece::Text(_) => None,
        })
        .collect()
}

/// The first line (from 1) of `body` where `name` is a word inside a template tag, else
/// where it is a word at all. minijinja names the variables a template uses, not where.
fn line_using(body: &str, name: &str) -> Option<usize> {
    let is_word_at = |line: &str, at: usize| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !part(before) && !part(after)
    };
    let has_word = |line: &str| line.match_indices(name).any(|(at, _)| is_word_at(line, at));
    let in_tag = |line: &str| {
        line.match_indices(name).any(|(at, _)| {
            is_word_at(line, at) && {
                let before = &line[..at];
                let opened = before.rfind("{{").max(before.rfind("{%"));
                let closed = before.rfind("}}").max(before.rfind("%}"));
                opened.is_some() && opened > closed
            }
        })
    };
    let lines: Vec<&str> = body.lines().collect();
    lines
        .iter()
        .position(|line| in_tag(line))
        .or_else(|| lines.iter().position(|line| has_word(line)))
        .map(|index| index + 1)
}

/// A render error's reason without what the place already gives: minijinja's "line N: "
/// before it and " (in TEMPLATE:LINE)" after it, which name the message by its index.
fn without_line(reason: &str) -> &str {
    let reason = reason
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(": "))
        .filter(|(number, _)| number.bytes().all(|b| b.is_ascii_digit()))
        .map_or(reason, |(_, rest)| rest);
    match reason.rfind(" (in ") {
        Some(at) if reason.ends_with(')') => &reason[..at],
        _ => reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_know_their_folders() {
        let files = Files::new(["a/b/c.md", "d.md"]);
        for known in ["a/b/c.md", "a/b", "a/", "d.md", ""] {
            assert!(files.contains(known), "{known}");
        }
        assert!(!files.contains("a/c.md"));
    }

    #[test]
    fn the_line_of_a_variable_is_where_a_tag_uses_it() {
        assert_eq!(line_using("who is there\nHi {{ who }}\n", "who"), Some(2));
        assert_eq!(line_using("{% if whom %}\n{{ who }}", "who"), Some(2));
        assert_eq!(line_using("nothing", "who"), None);
    }

    #[test]
    fn a_reason_loses_the_place_minijinja_gives() {
        assert_eq!(
            without_line("line 2: syntax error: unexpected end of input (in 0:2)"),
            "syntax error: unexpected end of input"
        );
        assert_eq!(without_line("plain"), "plain");
    }
}
