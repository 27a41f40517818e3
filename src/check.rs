//! `promptshelf check`: a lint of the whole library, so an author learns of a broken prompt
//! before a host does. Every prompt and every markdown document of a collection goes through
//! `validate`, the same checks `import` makes of the files it reads (templates parse and
//! render, variables are arguments, embedded and linked URIs resolve, relative links point at
//! files of the collection, arguments are declared so they can work); every resource template
//! must parse and complete from tables that exist. Hidden text (`library::hidden`) in a
//! prompt's messages and description, a text resource's content and description, and
//! lookalike letters in names and URIs are problems too, each at its line and column.

use std::collections::{BTreeSet, HashMap};

use rusqlite::Connection;

use crate::library::hidden::{self, Hidden};
use crate::library::{self, Place};
use crate::model::{Content, Meta, Origin};
use crate::store::{self, read};
use crate::uri_template::UriTemplate;
use crate::validate::{self, Files, Finding};

/// One thing wrong, and where.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Problem {
    /// `prompt 'name'`, `resource 'uri'` or `template 'uri'`.
    pub item: String,
    pub problem: String,
    /// Where hidden text is, and what it says.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<HiddenAt>,
}

/// Hidden text in an item: the file it was imported from, the part of the item, the line
/// and column in that part (from 1, the column in characters), the kind and the text made
/// visible.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct HiddenAt {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `message 1`, `description`, `text`, `name` or `uri`.
    pub part: String,
    pub line: u64,
    pub column: u64,
    pub kind: hidden::Kind,
    pub text: String,
}

/// What a check found.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub prompts: usize,
    pub resources: usize,
    pub templates: usize,
    pub problems: Vec<Problem>,
}

/// The stored library as `validate` sees it.
struct Stored<'a> {
    conn: &'a Connection,
    tables: BTreeSet<String>,
    /// Each collection's files: the paths its prompts and resources were imported from,
    /// and its completion tables' files.
    files: HashMap<String, Files>,
}

impl validate::Library for Stored<'_> {
    fn has_resource(&self, uri: &str) -> store::Result<bool> {
        Ok(read::resource(self.conn, uri)?.is_some())
    }

    fn has_table(&self, name: &str) -> bool {
        self.tables.contains(name)
    }

    fn files(&self, collection: &str) -> Option<&Files> {
        self.files.get(collection)
    }
}

impl<'a> Stored<'a> {
    fn read(conn: &'a Connection) -> store::Result<Stored<'a>> {
        let tables: BTreeSet<String> = read::tables(conn)?.into_iter().map(|t| t.name).collect();
        let mut paths: HashMap<String, Vec<String>> = HashMap::new();
        for state in read::prompt_states(conn)?
            .into_iter()
            .chain(read::resource_states(conn)?)
        {
            if let (Some(collection), Some(path)) = (state.origin.collection, state.origin.path) {
                paths.entry(collection).or_default().push(path);
            }
        }
        // Tables keep no file of their own; a link to `_values/NAME.csv` finds the table.
        for list in paths.values_mut() {
            for table in &tables {
                for extension in ["csv", "txt"] {
                    list.push(format!("_values/{table}.{extension}"));
                }
            }
        }
        let files = paths
            .into_iter()
            .map(|(collection, list)| (collection, Files::new(list.iter().map(String::as_str))))
            .collect();
        Ok(Stored {
            conn,
            tables,
            files,
        })
    }
}

pub(crate) fn check(conn: &Connection) -> store::Result<Report> {
    let library = Stored::read(conn)?;
    let mut report = Report::default();
    for stored in read::prompts(conn, read::Window::ALL, true)? {
        report.prompts += 1;
        let item = format!("prompt '{}'", stored.prompt.name);
        let findings = validate::prompt(&stored, &library)?;
        report.add(&item, true, findings);
        report.unknown_keys(&item, &stored.prompt.meta);
        let prompt = &stored.prompt;
        let origin = &prompt.origin;
        report.lookalike(&item, origin, "name", &prompt.name);
        let mut parts: Vec<(String, &str, bool)> = prompt
            .messages
            .iter()
            .enumerate()
            .map(|(index, message)| (format!("message {}", index + 1), &*message.body, true))
            .collect();
        if let Some(description) = &prompt.description {
            parts.push(("description".into(), description, false));
        }
        report.hidden(&item, origin, &parts);
    }
    for stored in read::resources(conn, read::Window::ALL)? {
        report.resources += 1;
        let info = &stored.info;
        let item = format!("resource '{}'", info.uri);
        report.unknown_keys(&item, &info.meta);
        let origin = &info.origin;
        let uri = percent_encoding::percent_decode_str(&info.uri).decode_utf8_lossy();
        report.lookalike(&item, origin, "uri", &uri);
        report.lookalike(&item, origin, "name", &info.name);
        let content = read::resource_content(conn, &info.uri)?;
        let text = match &content {
            Some((_, Content::Text(text))) => Some(text.as_str()),
            _ => None,
        };
        let markdown = info.mime_type == "text/markdown";
        let parts = [
            ("text".to_string(), text, markdown),
            (
                "description".to_string(),
                info.description.as_deref(),
                false,
            ),
        ];
        let parts: Vec<(String, &str, bool)> = parts
            .into_iter()
            .filter_map(|(part, text, markdown)| Some((part, text?, markdown)))
            .collect();
        report.hidden(&item, origin, &parts);
        let Some(text) = text else {
            continue;
        };
        if !markdown || origin.collection.is_none() {
            continue;
        }
        let findings = validate::document(text, origin, &library);
        report.add(&item, false, findings);
    }
    let tables = &library.tables;
    for stored in read::templates(conn, read::Window::ALL)? {
        report.templates += 1;
        let template = &stored.template;
        let item = format!("template '{}'", template.uri_template);
        let mut problems = Vec::new();
        match UriTemplate::parse(&template.uri_template) {
            Err(err) => problems.push(err.to_string()),
            Ok(parsed) => {
                for (variable, table) in &template.completions {
                    if !parsed.variables().contains(variable) {
                        problems.push(format!(
                            "completes variable '{variable}', which it does not have"
                        ));
                    }
                    if !tables.contains(table) {
                        problems.push(format!("variable '{variable}' completes from table '{table}', which does not exist"));
                    }
                }
            }
        }
        report
            .problems
            .extend(problems.into_iter().map(|problem| Problem {
                item: item.clone(),
                problem,
                hidden: None,
            }));
    }
    Ok(report)
}

impl Report {
    /// The kept front matter keys of an item that no host's reader knows either: a typo to
    /// an author, as `import --strict` has it.
    fn unknown_keys(&mut self, item: &str, meta: &Meta) {
        let known = |key: &str| {
            library::CLAUDE_HOST_KEYS.contains(&key)
                || library::VSCODE_HOST_KEYS.contains(&key)
                || library::SKILL_FRONT_MATTER_KEYS.contains(&key)
        };
        self.problems.extend(
            meta.keys()
                .filter(|key| !known(key))
                .map(|key| Problem {
                    item: item.to_string(),
                    problem: format!(
                        "front matter key `{key}` is not one promptshelf reads (kept from its file); remove it if it is a mistake"
                    ),
                    hidden: None,
                }),
        );
    }

    /// The findings of one item; a prompt's lines are counted in its messages, a document's
    /// in its text.
    fn add(&mut self, item: &str, prompt: bool, findings: Vec<Finding>) {
        self.problems
            .extend(findings.into_iter().map(|finding| Problem {
                item: item.to_string(),
                problem: match finding.place {
                    Some(Place::Message { message, line }) if prompt => {
                        format!("message {}, line {line}: {}", message + 1, finding.message)
                    }
                    Some(Place::Message { line, .. }) => {
                        format!("line {line}: {}", finding.message)
                    }
                    _ => finding.message,
                },
                hidden: None,
            }));
    }

    /// The hidden text of the parts of an item: each part's name, text, and whether it is
    /// markdown. What a later part holds that an earlier one showed already (a description
    /// taken from the text's first paragraph) is not found again.
    fn hidden(&mut self, item: &str, origin: &Origin, parts: &[(String, &str, bool)]) {
        let mut seen = Vec::new();
        for (part, text, markdown) in parts {
            let found = hidden::scan(text, *markdown);
            let new: Vec<Hidden> = found
                .into_iter()
                .filter(|found| !seen.contains(&(found.kind, found.text.clone())))
                .collect();
            seen.extend(new.iter().map(|found| (found.kind, found.text.clone())));
            for found in new {
                self.push_hidden(item, origin, part, found);
            }
        }
    }

    /// Lookalike letters in an item's name or URI.
    fn lookalike(&mut self, item: &str, origin: &Origin, part: &str, name: &str) {
        if let Some(found) = hidden::lookalike(name) {
            self.push_hidden(item, origin, part, found);
        }
    }

    fn push_hidden(&mut self, item: &str, origin: &Origin, part: &str, found: Hidden) {
        self.problems.push(Problem {
            item: item.to_string(),
            problem: format!(
                "{part}, line {}, column {}: {}",
                found.line,
                found.column,
                found.message()
            ),
            hidden: Some(HiddenAt {
                file: origin.path.clone(),
                part: part.to_string(),
                line: found.line,
                column: found.column,
                kind: found.kind,
                text: found.text,
            }),
        });
    }
}
