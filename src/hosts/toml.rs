//! TOML (Codex's `config.toml`): parsed and edited with toml_edit, which keeps comments,
//! ordering and spacing of everything it is not asked to change.

use serde_json::Value;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table};

use super::{Entry, Field, MergeError, NAME, Place, Shape, line_and_column};

pub(super) fn parse(text: &str) -> Result<Value, MergeError> {
    let syntax = |message: &str, span: Option<std::ops::Range<usize>>| {
        let (line, column) = line_and_column(text, span.map_or(0, |span| span.start));
        MergeError::Syntax {
            format: "TOML",
            message: message.trim().to_string(),
            line,
            column,
        }
    };
    let document: DocumentMut = text
        .parse()
        .map_err(|err: toml_edit::TomlError| syntax(err.message(), err.span()))?;
    toml_edit::de::from_document(document).map_err(|err| syntax(err.message(), err.span()))
}

pub(super) fn edit(
    text: &str,
    place: &Place,
    entry: &Entry,
    preamble: &[(&'static str, Field)],
) -> Result<String, String> {
    if place.shape != Shape::Map {
        return Err(format!("{} as a list is not written in TOML", place.key));
    }
    let mut document: DocumentMut = text
        .parse()
        .map_err(|err: toml_edit::TomlError| err.message().to_string())?;
    for (key, field) in preamble {
        document.insert(key, Item::Value(value(field)));
    }
    let mut server = Table::new();
    for (key, field) in &entry.fields {
        server.insert(key, Item::Value(value(field)));
    }
    let servers = document.entry(place.key).or_insert_with(|| {
        // `[mcp_servers.promptshelf]` alone, without an empty `[mcp_servers]` above it.
        let mut servers = Table::new();
        servers.set_implicit(true);
        Item::Table(servers)
    });
    match servers {
        Item::Table(servers) => {
            // A replaced table keeps its place in the file and the comments above it.
            if let Some(Item::Table(old)) = servers.get(NAME) {
                server.set_position(old.position());
                *server.decor_mut() = old.decor().clone();
            }
            servers.insert(NAME, Item::Table(server));
        }
        Item::Value(toml_edit::Value::InlineTable(servers)) => {
            servers.insert(
                NAME,
                toml_edit::Value::InlineTable(server.into_inline_table()),
            );
        }
        _ => {
            return Err(format!(
                "{} is neither a table nor an inline table",
                place.key
            ));
        }
    }
    Ok(document.to_string())
}

fn value(field: &Field) -> toml_edit::Value {
    match field {
        Field::Text(text) => text.as_str().into(),
        Field::Texts(texts) => toml_edit::Value::Array(texts.iter().collect::<Array>()),
        Field::Flag(flag) => (*flag).into(),
        Field::Number(number) => (*number).into(),
        Field::EmptyMap => toml_edit::Value::InlineTable(InlineTable::new()),
    }
}
