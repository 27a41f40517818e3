//! `completion/complete`: where suggestions come from (a completion table, an enum's values,
//! or the stored URIs a template matches) and how `context.arguments` narrows them; the
//! ranking itself is `complete`.

use std::collections::HashMap;

use rusqlite::Connection;

use super::{Completion, Failure, some_of};
use crate::complete::rank;
use crate::model::CompletionValue;
use crate::protocol::{CompleteParams, CompletionRef};
use crate::store::read;
use crate::uri_template::UriTemplate;

pub fn complete(conn: &Connection, params: &CompleteParams) -> Result<Completion, Failure> {
    let context = params
        .context
        .as_ref()
        .map(|context| &context.arguments)
        .cloned()
        .unwrap_or_default();
    let query = params.argument.value.as_str();
    let (values, total) = match &params.reference {
        CompletionRef::Prompt { name } => {
            let candidates = prompt_candidates(conn, name, &params.argument.name, &context)?;
            rank(candidates.iter().map(|(v, w)| (v.as_str(), *w)), query)
        }
        CompletionRef::Resource { uri } => {
            let candidates = template_candidates(conn, uri, &params.argument.name, &context)?;
            rank(candidates.iter().map(|(v, w)| (v.as_str(), *w)), query)
        }
    };
    Ok(Completion {
        has_more: total > values.len() as u64,
        values,
        total,
    })
}

/// Values of a table that apply in `context`: no context, or a context that matches.
fn table_candidates(
    conn: &Connection,
    table: &str,
    context: &HashMap<String, String>,
) -> Result<Vec<(String, f64)>, Failure> {
    let values: Vec<CompletionValue> = read::table_values(conn, table)?.unwrap_or_default();
    Ok(values
        .into_iter()
        .filter(|value| match &value.context {
            None => true,
            Some((name, wanted)) => context.get(name) == Some(wanted),
        })
        .map(|value| (value.value, value.weight))
        .collect())
}

fn prompt_candidates(
    conn: &Connection,
    prompt: &str,
    argument: &str,
    context: &HashMap<String, String>,
) -> Result<Vec<(String, f64)>, Failure> {
    let Some(stored) = read::prompt(conn, prompt)? else {
        return Err(Failure::InvalidParams(format!(
            "unknown prompt '{prompt}'; known prompts: {}",
            some_of(&read::prompt_names(conn)?)
        )));
    };
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
    if let Some(table) = &arg.completion {
        return table_candidates(conn, table, context);
    }
    Ok(arg.values.iter().map(|v| (v.clone(), 0.0)).collect())
}

fn template_candidates(
    conn: &Connection,
    uri: &str,
    variable: &str,
    context: &HashMap<String, String>,
) -> Result<Vec<(String, f64)>, Failure> {
    let templates = read::templates(conn)?;
    // The reference names a template by its text, or by a URI it starts or matches.
    let found = templates
        .iter()
        .find(|t| t.template.uri_template == uri)
        .or_else(|| {
            templates.iter().find(|t| {
                UriTemplate::parse(&t.template.uri_template).is_ok_and(|parsed| {
                    uri.starts_with(parsed.literal_prefix()) || parsed.matches(uri).is_some()
                })
            })
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
    if let Some((_, table)) = stored
        .template
        .completions
        .iter()
        .find(|(v, _)| v == variable)
    {
        return table_candidates(conn, table, context);
    }
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
            values.push((value.clone(), 0.0));
        }
    }
    Ok(values)
}
