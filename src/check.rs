//! `promptshelf check`: a lint of the whole library, so an author learns of a broken prompt
//! before a host does. Every prompt is rendered with sample values, every URI it embeds or
//! links must resolve, every completion source must exist, every template must parse.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;

use crate::arguments::{self, Misfit};
use crate::model::{ArgumentType, Prompt, StoredPrompt};
use crate::render::{self, Piece};
use crate::store::{self, read};
use crate::uri_template::UriTemplate;

/// One thing wrong, and where.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Problem {
    /// `prompt 'name'` or `template 'uri'`.
    pub item: String,
    pub problem: String,
}

/// What a check found.
#[derive(Debug, Default)]
pub struct Report {
    pub prompts: usize,
    pub templates: usize,
    pub problems: Vec<Problem>,
}

pub fn check(conn: &Connection) -> store::Result<Report> {
    let tables: BTreeSet<String> = read::tables(conn)?.into_iter().map(|t| t.name).collect();
    let mut report = Report::default();
    for stored in read::prompts(conn, read::Window::ALL, true)? {
        report.prompts += 1;
        let item = format!("prompt '{}'", stored.prompt.name);
        for problem in check_prompt(conn, &stored, &tables)? {
            report.problems.push(Problem {
                item: item.clone(),
                problem,
            });
        }
    }
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

fn check_prompt(
    conn: &Connection,
    stored: &StoredPrompt,
    tables: &BTreeSet<String>,
) -> store::Result<Vec<String>> {
    let prompt = &stored.prompt;
    let mut problems = Vec::new();
    for arg in &prompt.arguments {
        if let Some(table) = &arg.completion
            && !tables.contains(table)
        {
            problems.push(format!(
                "argument '{}' completes from table '{table}', which does not exist",
                arg.name
            ));
        }
        if let Some(pattern) = &arg.pattern
            && let Err(err) = arguments::compiled_pattern(pattern)
        {
            problems.push(format!(
                "argument '{}' has an invalid pattern {pattern}: {err}",
                arg.name
            ));
        }
        if let Some(default) = &arg.default
            && let Err(Misfit::Value(message)) = arguments::check(&prompt.name, arg, default)
        {
            problems.push(format!(
                "the default of argument '{}' does not fit: {message}",
                arg.name
            ));
        }
    }
    // Two renders with different sample values: a URI that is the same in both is fixed by
    // the author and must resolve; one that changes is built from arguments.
    let first = samples(prompt, 0);
    let second = samples(prompt, 1);
    let (first, second) = match (
        render::render(stored, &first),
        render::render(stored, &second),
    ) {
        (Ok(first), Ok(second)) => (uris(&first), uris(&second)),
        (Err(err), _) | (_, Err(err)) => {
            problems.push(format!("does not render: {err}"));
            return Ok(problems);
        }
    };
    for uri in first.intersection(&second) {
        if read::resource(conn, uri)?.is_none() {
            problems.push(format!("refers to {uri}, which is not in the library"));
        }
    }
    Ok(problems)
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
            Piece::Embed(uri) | Piece::Link(uri) => Some(uri.clone()),
            Piece::Text(_) => None,
        })
        .collect()
}
