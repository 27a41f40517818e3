//! `promptshelf template`: list, add and remove RFC 6570 resource templates.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow};
use serde::Serialize;
use uri_template_system::{ParseError, Template};

use super::common::{self, Table};
use crate::cli::TemplateCommand;
use crate::model::{ResourceTemplate, StoredTemplate};
use crate::store::{self, Store};

pub(super) fn run(store: &Store, command: TemplateCommand) -> Result<()> {
    match command {
        TemplateCommand::List(flags) => list(store, flags.json),
        TemplateCommand::Add {
            uri_template,
            name,
            title,
            description,
            mime_type,
            completions,
            json,
        } => add(
            store,
            ResourceTemplate {
                name: name.unwrap_or_else(|| name_of(&uri_template)),
                uri_template,
                title,
                description,
                mime_type,
                icons: Vec::new(),
                completions: Vec::new(),
                collection: None,
            },
            &completions,
            json,
        ),
        TemplateCommand::Rm { uri_template, json } => remove(store, &uri_template, json),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateView<'a> {
    uri_template: &'a str,
    name: &'a str,
    title: Option<&'a str>,
    description: Option<&'a str>,
    mime_type: Option<&'a str>,
    /// Variable -> the completion table it completes from.
    completions: BTreeMap<&'a str, &'a str>,
    collection: Option<&'a str>,
    last_modified: String,
    content_hash: String,
}

fn view(stored: &StoredTemplate) -> TemplateView<'_> {
    let template = &stored.template;
    TemplateView {
        uri_template: &template.uri_template,
        name: &template.name,
        title: template.title.as_deref(),
        description: template.description.as_deref(),
        mime_type: template.mime_type.as_deref(),
        completions: template
            .completions
            .iter()
            .map(|(variable, table)| (variable.as_str(), table.as_str()))
            .collect(),
        collection: template.collection.as_deref(),
        last_modified: common::timestamp(stored.last_modified),
        content_hash: store::hex(&stored.content_hash),
    }
}

fn list(store: &Store, json: bool) -> Result<()> {
    let templates = store::read::templates(&*store.conn()?, store::read::Window::ALL)?;
    if json {
        let views: Vec<TemplateView> = templates.iter().map(view).collect();
        return common::print_json(&views);
    }
    let mut table = Table::new(&["URI TEMPLATE", "NAME", "COMPLETES", "TITLE"]);
    for stored in &templates {
        let template = &stored.template;
        let completes: Vec<String> = template
            .completions
            .iter()
            .map(|(variable, table)| format!("{variable}={table}"))
            .collect();
        table.row(vec![
            template.uri_template.clone(),
            template.name.clone(),
            completes.join(" "),
            template.title.clone().unwrap_or_default(),
        ]);
    }
    table.print("no resource templates (add one with `promptshelf template add`)")
}

fn add(
    store: &Store,
    mut template: ResourceTemplate,
    completions: &[String],
    json: bool,
) -> Result<()> {
    let variables = variables(&template.uri_template)?;
    if template.name.trim().is_empty() {
        return Err(anyhow!(
            "the template's name is empty; give it one with --name NAME"
        ));
    }
    if let Some(mime) = &template.mime_type
        && mime.parse::<mime_guess::Mime>().is_err()
    {
        return Err(anyhow!(
            "--mime-type '{mime}' is not a MIME type; write it as type/subtype, e.g. text/markdown"
        ));
    }
    for spec in completions {
        let Some((variable, table)) = spec
            .split_once('=')
            .map(|(variable, table)| (variable.trim(), table.trim()))
            .filter(|(variable, table)| !variable.is_empty() && !table.is_empty())
        else {
            return Err(anyhow!(
                "--complete '{spec}' must be VARIABLE=TABLE (e.g. --complete language=languages)"
            ));
        };
        if !variables.iter().any(|known| known == variable) {
            return Err(anyhow!(
                "--complete names variable '{variable}', which '{}' does not have; its variables: {}",
                template.uri_template,
                variables.join(", ")
            ));
        }
        if template
            .completions
            .iter()
            .any(|(seen, _)| seen == variable)
        {
            return Err(anyhow!(
                "--complete names variable '{variable}' twice; give each variable one table"
            ));
        }
        template
            .completions
            .push((variable.to_string(), table.to_string()));
    }
    // The store reads variables back in name order; storing them so keeps the hash stable.
    template.completions.sort();
    let tables = common::table_names(store)?;
    let outcome = store.write(|tx| store::write::put_template(tx, &template, store::now_ms()))?;
    common::note_missing_tables(template.completions.iter().map(|(_, table)| table), &tables);
    let line = common::outcome_line(outcome, "template", &template.uri_template, "", "");
    let report =
        common::ItemReport::new(common::action(outcome), "template", &template.uri_template);
    common::report(json, &line, &report)
}

/// A name for a template given none: the literal text before its first expression, past
/// the scheme, its runs of other characters than letters and digits made one `-`
/// (`docs://{component}/{page}` -> `docs`, `shelf://team/notes/{+path}` ->
/// `team-notes`); the scheme when that leaves nothing.
fn name_of(uri_template: &str) -> String {
    let literal = uri_template.split('{').next().unwrap_or_default();
    let (scheme, rest) = literal.split_once(':').unwrap_or(("", literal));
    let words: Vec<&str> = rest
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    if words.is_empty() {
        scheme.to_string()
    } else {
        words.join("-")
    }
}

/// The variable names of an RFC 6570 template, in order; an error that says what is wrong
/// and where when it is not one the server can match URIs against.
fn variables(uri_template: &str) -> Result<Vec<String>> {
    let shown = common::one_line(uri_template);
    if uri_template.is_empty() {
        return Err(anyhow!(
            "the URI template is empty; write one like 'shelf://docs/{{+path}}'"
        ));
    }
    if let Err(ParseError::UnexpectedInput {
        position,
        message,
        expected,
    }) = Template::parse(&crate::uri_template::for_parser(uri_template))
    {
        return Err(anyhow!(
            "'{shown}' is not a valid RFC 6570 URI template: {message} at byte {position}, \
             expected {expected} (e.g. 'shelf://docs/{{+path}}')"
        ));
    }
    // The syntax is right; what the server's own parse refuses beyond it (a variable named
    // twice) is said in its words.
    let names = crate::uri_template::UriTemplate::parse(uri_template)
        .map_err(|err| anyhow!("{err}"))?
        .variables()
        .to_vec();
    if names.is_empty() {
        return Err(anyhow!(
            "'{shown}' has no variables, so it matches one URI only; add one like {{+path}} \
             or add the document with `promptshelf resource add`"
        ));
    }
    Ok(names)
}

fn remove(store: &Store, uri_template: &str, json: bool) -> Result<()> {
    let removed = store.write(|tx| store::write::remove_template(tx, uri_template))?;
    if !removed {
        let known: Vec<String> = store::read::templates(&*store.conn()?, store::read::Window::ALL)?
            .into_iter()
            .map(|stored| stored.template.uri_template)
            .collect();
        return Err(common::unknown(
            "template",
            "templates",
            uri_template,
            &known,
            "template list",
        ));
    }
    let line = format!("removed template {}", common::one_line(uri_template));
    let report = common::ItemReport::new("removed", "template", uri_template);
    common::report(json, &line, &report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_come_out_in_order_without_operators_or_modifiers() {
        assert_eq!(
            variables("shelf://{host}/{+path}{?q,lang:2}{&list*}").unwrap(),
            ["host", "path", "q", "lang", "list"]
        );
    }

    #[test]
    fn invalid_templates_say_where() {
        let err = variables("shelf://docs/{path").unwrap_err().to_string();
        assert!(err.contains("byte 18"), "{err}");
        assert!(variables("shelf://docs/readme").is_err());
        assert!(variables("").is_err());
    }
}
