//! The built-in resource template `shelf://search/{query}`: listed with the library's
//! templates, read as the ranked hits of a full-text search (a markdown listing), its
//! `query` completed from the index's terms. A URI stored as a resource is read as that
//! resource first; the library's own templates come after this one.

use std::fmt::Write;
use std::sync::{Arc, LazyLock};

use rusqlite::Connection;

use crate::complete::{self, Ranking, Values};
use crate::model::{
    Annotations, Content, Origin, ResourceInfo, ResourceTemplate, StoredResource, StoredTemplate,
};
use crate::protocol::{Failure, ReadResult};
use crate::store::search::{self, Hit, Kind, Query};
use crate::uri_template::UriTemplate;

/// The template's text and its one variable.
pub(crate) const TEMPLATE: &str = "shelf://search/{query}";
pub(crate) const VARIABLE: &str = "query";

/// How many hits a read lists, best first.
const HITS: usize = 20;

/// How many of the index's terms starting with the word being typed are ranked at most:
/// beyond that, the answer says there are more without counting them.
const MAX_TERMS: usize = 10_000;

static PARSED: LazyLock<UriTemplate> =
    LazyLock::new(|| UriTemplate::parse(TEMPLATE).expect("the search template parses"));

/// The template as `resources/templates/list` shows it.
pub(crate) fn template() -> StoredTemplate {
    StoredTemplate {
        template: ResourceTemplate {
            uri_template: TEMPLATE.to_string(),
            name: "search".to_string(),
            title: Some("Search the library".to_string()),
            description: Some(
                "Prompts and resources holding every word of the query, best match first \
                 (a word ending in * matches the words it starts, \"two words\" a phrase)"
                    .to_string(),
            ),
            mime_type: Some("text/markdown".to_string()),
            icons: Vec::new(),
            completions: Vec::new(),
            collection: None,
        },
        content_hash: *blake3::hash(TEMPLATE.as_bytes()).as_bytes(),
        last_modified: 0,
        version: None,
    }
}

/// The URI that reads the hits for `query`: the template expanded, `query` percent-encoded.
pub(crate) fn uri_of(query: &str) -> Result<String, Failure> {
    let values = std::collections::HashMap::from([(VARIABLE.to_string(), query.to_string())]);
    PARSED
        .expand(&values)
        .map_err(|err| Failure::InvalidParams(format!("search query '{query}': {err}")))
}

/// The query `uri` asks for, when it is an expansion of the template.
pub(crate) fn query_of(uri: &str) -> Option<String> {
    PARSED.matches(uri)?.remove(VARIABLE)
}

/// Whether a completion's `ref/resource` names this template: by its text, or by a URI
/// (perhaps partly typed) under its literal start.
pub(crate) fn is_referred_to(uri: &str) -> bool {
    uri == TEMPLATE || uri.starts_with(PARSED.literal_prefix())
}

/// The hits for `query` among the collections `within` (None: the whole library) as the
/// resource `uri`: a markdown listing. Its lastModified is the
/// library's last change, which every write moves, so the caching hint made from it is as
/// short as the library is lively.
pub(crate) fn read(
    conn: &Connection,
    uri: &str,
    query: &str,
    within: Option<&[String]>,
) -> Result<Arc<ReadResult>, Failure> {
    let expression = search::match_expression(query)
        .map_err(|err| Failure::InvalidParams(format!("{err}, in {uri}")))?;
    let hits = search::search(
        conn,
        &Query {
            expression: &expression,
            kind: None,
            collection: None,
            within,
            limit: HITS,
            marks: ("**", "**"),
        },
    )?;
    let listing = listing(query, &hits);
    let last_modified = search::last_change(conn)?;
    let bytes = listing.as_bytes();
    let resource = StoredResource {
        info: ResourceInfo {
            meta: Default::default(),
            uri: uri.to_string(),
            name: "search".to_string(),
            title: Some(format!("Search: {query}")),
            description: None,
            mime_type: "text/markdown".to_string(),
            annotations: Annotations::default(),
            icons: Vec::new(),
            origin: Origin::default(),
        },
        is_text: true,
        size: bytes.len() as u64,
        blob_hash: *blake3::hash(bytes).as_bytes(),
        content_hash: *blake3::hash(bytes).as_bytes(),
        last_modified,
        version: None,
    };
    Ok(Arc::new(ReadResult::new(resource, Content::Text(listing))))
}

/// `# Search: …`, then one numbered entry per hit: a resource as a link to its URI, a
/// prompt by its name (what `prompts/get` takes), each with its title and snippet.
fn listing(query: &str, hits: &[Hit]) -> String {
    let mut text = format!("# Search: {query}\n\n");
    if hits.is_empty() {
        text.push_str(
            "Nothing in the library matches: every word must be there. \
             Try fewer words, or `word*` for the words it starts.\n",
        );
        return text;
    }
    let best = if hits.len() == 1 {
        "hit"
    } else {
        "hits, best first"
    };
    let _ = writeln!(text, "{} {best}.\n", hits.len());
    for (at, hit) in hits.iter().enumerate() {
        let title = hit.title.as_deref().unwrap_or(&hit.key);
        let _ = match hit.kind {
            Kind::Resource => writeln!(text, "{}. [{title}]({}) (resource)", at + 1, hit.key),
            Kind::Prompt => writeln!(text, "{}. {title} (prompt `{}`)", at + 1, hit.key),
        };
        if !hit.snippet.is_empty() {
            let _ = writeln!(text, "   {}", hit.snippet);
        }
    }
    text
}

/// Completions for the `query` being typed: its last word completed from the index's
/// terms that start with it, ranked as every completion is (the number of items holding
/// a term is its weight), each offered as the whole query with that word completed.
pub(crate) fn complete(conn: &Connection, typed: &str) -> Result<Ranking, Failure> {
    let head = typed.trim_end_matches(char::is_alphanumeric);
    let word = &typed[head.len()..];
    let folded = complete::fold(word);
    let terms = search::terms_with_prefix(conn, &folded, MAX_TERMS + 1)?;
    let cut = terms.len() > MAX_TERMS;
    let ranked = complete::rank(
        terms
            .iter()
            .take(MAX_TERMS)
            .map(|(term, items)| (term.as_str(), *items as f64)),
        &folded,
    );
    let mut values = Values::with_capacity(ranked.values.len(), ranked.values.text().len());
    for term in ranked.values.iter() {
        values.push(&format!("{head}{term}"));
    }
    Ok(Ranking {
        values,
        total: if cut { None } else { ranked.total },
        has_more: cut || ranked.has_more,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_uri_gives_back_its_query() {
        assert_eq!(
            query_of("shelf://search/code%20review").as_deref(),
            Some("code review")
        );
        assert_eq!(query_of("shelf://library/code"), None);
        assert!(is_referred_to(TEMPLATE) && is_referred_to("shelf://search/co"));
    }

    #[test]
    fn a_listing_links_resources_and_names_prompts() {
        let hits = [
            Hit {
                kind: Kind::Resource,
                key: "shelf://notes/a.md".into(),
                title: Some("Notes".into()),
                snippet: "the **word**".into(),
            },
            Hit {
                kind: Kind::Prompt,
                key: "review".into(),
                title: None,
                snippet: String::new(),
            },
        ];
        assert_eq!(
            listing("word", &hits),
            "# Search: word\n\n2 hits, best first.\n\n\
             1. [Notes](shelf://notes/a.md) (resource)\n   the **word**\n\
             2. review (prompt `review`)\n"
        );
    }
}
