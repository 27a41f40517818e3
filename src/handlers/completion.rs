//! `completion/complete`: where suggestions come from (a completion table, an enum's values,
//! or the stored URIs a template matches) and how `context.arguments` narrows them; the
//! ranking itself is `complete`, through the table's cached index for tables.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::Connection;

use super::{Completion, Failure, some_of};
use crate::complete::{CompletionIndexes, TableIndex, Values, rank};
use crate::model::StoredPrompt;
use crate::protocol::{CompleteParams, CompletionRef};
use crate::store::read;
use crate::uri_template::UriTemplate;

/// Where one argument's or variable's suggestions come from: its completion table if it
/// names one that exists, else a list.
struct Source<'a> {
    table: Option<String>,
    otherwise: List<'a>,
}

enum List<'a> {
    /// An enum's values (or none), borrowed from the prompt.
    Values(&'a [String]),
    /// The values a template variable takes in the stored URIs; read only when needed.
    Uris {
        template: UriTemplate,
        variable: String,
    },
}

/// Completes an argument of `prompt` (the kept prompt a `ref/prompt` names) from memory
/// alone, when that is certain to be quick: from its completion table's index when `index`
/// has it and it is small, or from a short list of enum values. None: `complete`
/// answers it (it reads what is not kept, and reports what is wrong).
pub fn complete_kept(
    params: &CompleteParams,
    prompt: &StoredPrompt,
    index: impl Fn(&str) -> Option<Arc<TableIndex>>,
) -> Option<Completion> {
    /// Enum values ranked from memory at most (a rank of them is a few microseconds).
    const QUICK_VALUES: usize = 1024;
    let source = prompt_source(prompt, &params.argument.name).ok()?;
    let context = context_of(params);
    let query = params.argument.value.as_str();
    match (source.table, source.otherwise) {
        (Some(table), _) => {
            let index = index(&table)?;
            index.is_quick(&context).then(|| {
                let (values, total) = index.complete(query, &context);
                completion(values, total)
            })
        }
        (None, List::Values(values)) if values.len() <= QUICK_VALUES => {
            Some(from_list(values, query))
        }
        _ => None,
    }
}

/// Completes `params`; for a `ref/prompt`, `prompt` is the prompt it names as the caller
/// found it (None: there is none); `position` is the change-log position the caller read
/// before anything else, which the table indexes are checked against.
pub fn complete(
    conn: &Connection,
    indexes: &CompletionIndexes,
    position: i64,
    params: &CompleteParams,
    prompt: Option<&StoredPrompt>,
) -> Result<Completion, Failure> {
    let context = context_of(params);
    let query = params.argument.value.as_str();
    let source = match &params.reference {
        CompletionRef::Prompt { name } => {
            let stored = prompt.ok_or_else(|| super::prompts::unknown(conn, name))?;
            prompt_source(stored, &params.argument.name)?
        }
        CompletionRef::Resource { uri } => template_source(conn, uri, &params.argument.name)?,
    };
    // A table named but not (or no longer) in the library is a mistake in the library, not
    // in the request: the argument offers what it would without one.
    if let Some(table) = &source.table
        && let Some(index) = indexes.get(conn, table, position)?
    {
        let (values, total) = index.complete(query, &context);
        return Ok(completion(values, total));
    }
    let uris;
    let list = match source.otherwise {
        List::Values(values) => values,
        List::Uris { template, variable } => {
            uris = uri_values(conn, &template, &variable, &context)?;
            &uris[..]
        }
    };
    Ok(from_list(list, query))
}

/// The other arguments' values the client sent, which narrow table values with a context.
fn context_of(params: &CompleteParams) -> HashMap<String, String> {
    params
        .context
        .as_ref()
        .map(|context| &context.arguments)
        .cloned()
        .unwrap_or_default()
}

/// `query` ranked among a list of values of equal weight.
fn from_list(list: &[String], query: &str) -> Completion {
    let (values, total) = rank(list.iter().map(|v| (v.as_str(), 0.0)), query);
    completion(values, total)
}

fn completion(values: Values, total: u64) -> Completion {
    Completion {
        has_more: total > values.len() as u64,
        values,
        total,
    }
}

/// Where an argument of `stored` completes from, or why it cannot.
fn prompt_source<'a>(stored: &'a StoredPrompt, argument: &str) -> Result<Source<'a>, Failure> {
    let prompt = &stored.prompt.name;
    let Some(arg) = stored.prompt.arguments.iter().find(|a| a.name == argument) else {
        let names: Vec<String> = stored
            .prompt
            .arguments
            .iter()
            .map(|a| a.name.clone())
            .collect();
        return Err(Failure::InvalidParams(format!(
            "prompt '{prompt}' has no argument '{argument}'; its arguments are: {}",
            some_of(&names)
        )));
    };
    Ok(Source {
        table: arg.completion.clone(),
        otherwise: List::Values(&arg.values),
    })
}

fn template_source(
    conn: &Connection,
    uri: &str,
    variable: &str,
) -> Result<Source<'static>, Failure> {
    let templates = read::templates(conn)?;
    // The reference names a template by its text, or by a URI (perhaps partly typed) that
    // it matches or that starts with its literal prefix; the longest prefix is the most
    // specific template.
    let found = templates
        .iter()
        .find(|t| t.template.uri_template == uri)
        .or_else(|| {
            templates
                .iter()
                .filter_map(|t| {
                    let parsed = UriTemplate::parse(&t.template.uri_template).ok()?;
                    let prefix = parsed.literal_prefix();
                    (uri.starts_with(prefix) || parsed.matches(uri).is_some())
                        .then_some((prefix.len(), t))
                })
                .max_by_key(|(prefix, _)| *prefix)
                .map(|(_, t)| t)
        });
    let Some(stored) = found else {
        let names: Vec<String> = templates
            .iter()
            .map(|t| t.template.uri_template.clone())
            .collect();
        return Err(Failure::InvalidParams(format!(
            "no resource template '{uri}'; templates: {}",
            some_of(&names)
        )));
    };
    let template = UriTemplate::parse(&stored.template.uri_template)
        .map_err(|err| Failure::Internal(err.to_string()))?;
    if !template.variables().iter().any(|v| v == variable) {
        return Err(Failure::InvalidParams(format!(
            "template '{}' has no variable '{variable}'; its variables are: {}",
            template.as_str(),
            some_of(template.variables())
        )));
    }
    let table = stored
        .template
        .completions
        .iter()
        .find(|(v, _)| v == variable)
        .map(|(_, table)| table.clone());
    Ok(Source {
        table,
        otherwise: List::Uris {
            template,
            variable: variable.to_string(),
        },
    })
}

/// The values `variable` takes in the stored URIs that match `template` and agree with the
/// other variables already chosen.
fn uri_values(
    conn: &Connection,
    template: &UriTemplate,
    variable: &str,
    context: &HashMap<String, String>,
) -> Result<Vec<String>, Failure> {
    let mut values = Vec::new();
    for stored_uri in read::resource_uris_with_prefix(conn, template.literal_prefix())? {
        let Some(matched) = template.matches(&stored_uri) else {
            continue;
        };
        // Other variables already chosen must agree with this URI.
        let agrees = context
            .iter()
            .all(|(name, value)| name == variable || matched.get(name).is_none_or(|v| v == value));
        if agrees && let Some(value) = matched.get(variable) {
            values.push(value.clone());
        }
    }
    Ok(values)
}
