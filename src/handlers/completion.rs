//! `completion/complete`: where suggestions come from (a completion table, an enum's values,
//! or the stored URIs a template matches) and how `context.arguments` narrows them; the
//! ranking itself is `complete`, through the table's cached index for tables.

use std::collections::HashMap;

use rusqlite::Connection;

mod indexes;

pub(crate) use indexes::CompletionIndexes;

use super::templates::Templates;
use crate::arguments::some_of;
use crate::complete::{Ranking, rank};
use crate::model::StoredPrompt;
use crate::protocol::{CompleteParams, CompletionRef, Failure};
use crate::store::{StoreError, read};
use crate::uri_template::UriTemplate;
use crate::visibility::Visibility;

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
        template: &'a UriTemplate,
        variable: &'a str,
    },
}

/// What a completion's `ref` names, as the caller found it.
pub(crate) enum Target<'a> {
    /// `ref/prompt`: the prompt of that name, None when the library holds none.
    Prompt(Option<&'a StoredPrompt>),
    /// `ref/resource`: the library's templates, among which the reference is looked up.
    Templates(&'a Templates),
}

/// A connection to the library, taken only when an answer needs the database (a table's
/// index not known to be current, the stored URIs of a template, an unknown prompt's
/// neighbours); a caller that has none at hand answers `E` saying so.
pub(crate) type Connect<'c, E> = &'c dyn Fn() -> Result<&'c Connection, E>;

/// Completes `params` for `target`, as the caller found it among what `seen` shows;
/// `position` is the change-log position the caller read before anything else, which the
/// table indexes are checked against. Suggestions that are the library's own items (the
/// stored URIs a template matches, the search index's terms) are of what `seen` shows.
pub(crate) fn complete<E: From<Failure> + From<StoreError>>(
    conn: Connect<E>,
    indexes: &CompletionIndexes,
    position: i64,
    params: &CompleteParams,
    target: Target,
    seen: &Visibility,
) -> Result<Ranking, E> {
    let context = context_of(params);
    let query = params.argument.value.as_str();
    let variable = params.argument.name.as_str();
    let source = match (target, &params.reference) {
        (Target::Prompt(Some(stored)), _) => prompt_source(stored, variable)?,
        (Target::Prompt(None), CompletionRef::Prompt { name }) => {
            return Err(super::prompts::unknown(conn()?, name, seen).into());
        }
        (Target::Templates(templates), CompletionRef::Resource { uri }) => {
            if super::search::is_referred_to(uri) && !names_a_stored_template(templates, uri) {
                return search_query(conn, variable, query, seen);
            }
            template_source(templates, uri, variable)?
        }
        (Target::Prompt(None) | Target::Templates(_), _) => {
            return Err(Failure::Internal(
                "a completion was looked up for a reference of another kind".into(),
            )
            .into());
        }
    };
    // A table named but not (or no longer) in the library is a mistake in the library, not
    // in the request: the argument offers what it would without one.
    if let Some(table) = &source.table
        && let Some(index) = indexes.get(conn, table, position)?
    {
        return Ok(index.complete(query, &context));
    }
    let uris;
    let list = match source.otherwise {
        List::Values(values) => values,
        List::Uris { template, variable } => {
            uris = uri_values(conn()?, template, variable, &context, seen)?;
            &uris[..]
        }
    };
    Ok(from_list(list, query))
}

/// Whether `uri` is the text of one of the library's own templates (which may start as the
/// built-in search template does, and is then what the reference means).
fn names_a_stored_template(templates: &Templates, uri: &str) -> bool {
    templates
        .entries()
        .any(|(stored, _)| stored.template.uri_template == uri)
}

/// The built-in search template's one variable, completed from the index's terms; for a
/// caller limited to some collections, from nothing: the terms are counted over the whole
/// library, and telling which of them its collections hold would take a pass over them.
fn search_query<E: From<Failure> + From<StoreError>>(
    conn: Connect<E>,
    variable: &str,
    typed: &str,
    seen: &Visibility,
) -> Result<Ranking, E> {
    if variable != super::search::VARIABLE {
        return Err(Failure::InvalidParams(format!(
            "template '{}' has no variable '{variable}'; its variables are: {}",
            super::search::TEMPLATE,
            super::search::VARIABLE
        ))
        .into());
    }
    if seen.is_limited() {
        return Ok(from_list(&[], typed));
    }
    Ok(super::search::complete(conn()?, typed)?)
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
fn from_list(list: &[String], query: &str) -> Ranking {
    rank(list.iter().map(|v| (v.as_str(), 0.0)), query)
}

/// Where an argument of `stored` completes from, or why it cannot.
fn prompt_source<'a>(stored: &'a StoredPrompt, argument: &str) -> Result<Source<'a>, Failure> {
    let Some(arg) = stored.prompt.arguments.iter().find(|a| a.name == argument) else {
        return Err(Failure::InvalidParams(super::prompts::no_argument(
            &stored.prompt,
            &[argument.to_string()],
        )));
    };
    Ok(Source {
        table: arg.completion.clone(),
        // An enum's values, or else the default: what the argument is when left out is a
        // value worth offering.
        otherwise: List::Values(if arg.values.is_empty() {
            arg.default.as_slice()
        } else {
            &arg.values
        }),
    })
}

fn template_source<'a>(
    templates: &'a Templates,
    uri: &str,
    variable: &'a str,
) -> Result<Source<'a>, Failure> {
    // The reference names a template by its text, or by a URI (perhaps partly typed) that
    // it matches or that starts with its literal prefix; the longest prefix is the most
    // specific template.
    let found = templates
        .entries()
        .find(|(stored, _)| stored.template.uri_template == uri)
        .or_else(|| {
            templates
                .entries()
                .filter_map(|(stored, parsed)| {
                    let parsed = parsed?;
                    let prefix = parsed.literal_prefix();
                    (uri.starts_with(prefix) || parsed.matches(uri).is_some())
                        .then_some((prefix.len(), (stored, Some(parsed))))
                })
                .max_by_key(|(prefix, _)| *prefix)
                .map(|(_, found)| found)
        });
    let Some((stored, parsed)) = found else {
        let names: Vec<String> = templates
            .entries()
            .map(|(stored, _)| stored.template.uri_template.clone())
            .collect();
        return Err(Failure::InvalidParams(format!(
            "no resource template '{uri}'; templates: {}",
            some_of(&names)
        )));
    };
    let Some(template) = parsed else {
        return Err(Failure::Internal(format!(
            "resource template '{}' in the library does not parse; fix or remove it",
            stored.template.uri_template
        )));
    };
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
        otherwise: List::Uris { template, variable },
    })
}

/// The values `variable` takes in the stored URIs (of what `seen` shows) that match
/// `template` and agree with the other variables already chosen.
fn uri_values(
    conn: &Connection,
    template: &UriTemplate,
    variable: &str,
    context: &HashMap<String, String>,
    seen: &Visibility,
) -> Result<Vec<String>, Failure> {
    let mut values = Vec::new();
    let prefix = template.literal_prefix();
    for stored_uri in read::resource_uris_with_prefix_within(conn, prefix, seen.collections())? {
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
