//! `promptshelf check`: a lint of the whole library, so an author learns of a broken prompt
//! before a host does. Every prompt and every markdown document of a collection goes through
//! `validate`, the same checks `import` makes of the files it reads (templates parse and
//! render, variables are arguments, embedded and linked URIs resolve, relative links point at
//! files of the collection, arguments are declared so they can work); every resource template
//! must parse and complete from tables that exist.

use std::collections::{BTreeSet, HashMap};

use rusqlite::Connection;

use crate::library::{self, Place};
use crate::model::{Content, Meta};
use crate::store::{self, read};
use crate::uri_template::UriTemplate;
use crate::validate::{self, Files, Finding};

/// One thing wrong, and where.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Problem {
    /// `prompt 'name'`, `resource 'uri'` or `template 'uri'`.
    pub item: String,
    pub problem: String,
}

/// What a check found.
#[derive(Debug, Default)]
pub struct Report {
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

pub fn check(conn: &Connection) -> store::Result<Report> {
    let library = Stored::read(conn)?;
    let mut report = Report::default();
    for stored in read::prompts(conn, read::Window::ALL, true)? {
        report.prompts += 1;
        let item = format!("prompt '{}'", stored.prompt.name);
        let findings = validate::prompt(&stored, &library)?;
        report.add(&item, true, findings);
        report.unknown_keys(&item, &stored.prompt.meta);
    }
    for stored in read::resources(conn, read::Window::ALL)? {
        report.resources += 1;
        let info = &stored.info;
        report.unknown_keys(&format!("resource '{}'", info.uri), &info.meta);
        let markdown = info.mime_type == "text/markdown";
        if !markdown || info.origin.collection.is_none() {
            continue;
        }
        let Some((_, Content::Text(text))) = read::resource_content(conn, &info.uri)? else {
            continue;
        };
        let findings = validate::document(&text, &info.origin, &library);
        report.add(&format!("resource '{}'", info.uri), false, findings);
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
            }));
    }
}
