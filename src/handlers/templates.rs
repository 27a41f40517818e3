//! `resources/templates/list`, and the library's templates parsed, as reads and
//! completions match URIs against them.

use rusqlite::Connection;

use super::paging;
use crate::config::ServeConfig;
use crate::model::StoredTemplate;
use crate::protocol::{Failure, Page};
use crate::store::read::{self, Listed, Window};
use crate::uri_template::UriTemplate;
use crate::visibility::Visibility;

/// A page of the templates `seen` shows. The built-in search template (`handlers::search`) heads the
/// first page, on top of its page size; cursors carry only stored templates' keys, so the
/// pages after the first are the stored templates' as they would be without it.
pub fn list(
    conn: &Connection,
    config: &ServeConfig,
    cursor: Option<&str>,
    seen: &Visibility,
) -> Result<Page<StoredTemplate>, Failure> {
    let within = seen.collections();
    let mut page = paging::list(
        conn,
        Listed::Templates,
        cursor,
        config.page_size,
        |tx, window| read::templates_within(tx, window, within),
        |t| &t.template.uri_template,
    )?;
    if seen.is_limited() {
        paging::dated_by_items(&mut page, |t| t.last_modified);
    }
    if cursor.is_none() {
        page.items.insert(0, super::search::template());
    }
    Ok(page)
}

/// Every stored template with its parsed form: parsing (and compiling the matcher) costs
/// far more than matching, so the server keeps this until the library changes.
#[derive(Debug)]
pub(crate) struct Templates {
    /// In the store's order; `None` where the stored text does not parse (a template the
    /// store accepted always does; such a one is passed over).
    entries: Vec<(StoredTemplate, Option<UriTemplate>)>,
}

impl Templates {
    pub(crate) fn load(conn: &Connection) -> Result<Templates, Failure> {
        let entries = read::templates(conn, Window::ALL)?
            .into_iter()
            .map(|stored| {
                let parsed = UriTemplate::parse(&stored.template.uri_template)
                    .inspect_err(|err| {
                        tracing::warn!("template {}: {err}", stored.template.uri_template)
                    })
                    .ok();
                (stored, parsed)
            })
            .collect();
        Ok(Templates { entries })
    }

    /// Those of the templates `seen` shows: what a completion for a caller limited to some
    /// collections looks among.
    pub(crate) fn seen_by(&self, seen: &Visibility) -> Templates {
        Templates {
            entries: self
                .entries
                .iter()
                .filter(|(stored, _)| seen.shows(stored.template.collection.as_deref()))
                .cloned()
                .collect(),
        }
    }

    /// The templates that parse.
    pub(crate) fn parsed(&self) -> impl Iterator<Item = &UriTemplate> {
        self.entries
            .iter()
            .filter_map(|(_, parsed)| parsed.as_ref())
    }

    /// Every stored template with its parsed form, if it has one.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&StoredTemplate, Option<&UriTemplate>)> {
        self.entries
            .iter()
            .map(|(stored, parsed)| (stored, parsed.as_ref()))
    }

    /// About what keeping them costs, in bytes: each one's text, and its matcher as
    /// `UriTemplate::bytes` counts it (most of it).
    pub(crate) fn bytes(&self) -> usize {
        let text = |text: &Option<String>| text.as_ref().map_or(0, String::len);
        self.entries
            .iter()
            .map(|(stored, parsed)| {
                let template = &stored.template;
                let icons: usize = template.icons.iter().map(|icon| 64 + icon.src.len()).sum();
                let completions: usize = template
                    .completions
                    .iter()
                    .map(|(variable, table)| 48 + variable.len() + table.len())
                    .sum();
                256 + template.uri_template.len()
                    + template.name.len()
                    + text(&template.title)
                    + text(&template.description)
                    + text(&template.mime_type)
                    + text(&template.collection)
                    + icons
                    + completions
                    + parsed.as_ref().map_or(0, UriTemplate::bytes)
            })
            .sum()
    }
}
