//! JSON and JSON with comments: parsed and edited with jsonc-parser's concrete syntax tree, so
//! comments, key order, indentation and trailing commas outside the entry stay as they were.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::Value;

use super::{Entry, Field, Json, MergeError, NAME, Place, Shape};

/// What the host's own reader accepts, and nothing more.
fn options(dialect: Json) -> ParseOptions {
    ParseOptions {
        allow_comments: dialect != Json::Strict,
        allow_trailing_commas: dialect == Json::CommentsAndTrailingCommas,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

pub(super) fn parse(text: &str, dialect: Json) -> Result<Value, MergeError> {
    jsonc_parser::parse_to_serde_value::<Value>(text, &options(dialect)).map_err(|err| {
        MergeError::Syntax {
            format: super::Format::Json(dialect).describe(),
            message: err.kind().to_string(),
            line: err.line_display(),
            column: err.column_display(),
        }
    })
}

/// `text` with the entry set at `place` (and, in a new file, the preamble's keys first).
/// Only called once `parse` accepted `text` (with comments allowed, the looser reading).
pub(super) fn edit(
    text: &str,
    place: &Place,
    entry: &Entry,
    preamble: &[(&'static str, Field)],
) -> Result<String, String> {
    let root = CstRootNode::parse(text, &options(Json::CommentsAndTrailingCommas))
        .map_err(|err| err.to_string())?;
    let document = root.object_value_or_set();
    for (key, field) in preamble {
        document.append(key, input(field));
    }
    if place.shape != Shape::Map {
        return Err(format!("{} as a list is not written in JSON", place.key));
    }
    let servers = document.object_value_or_set(place.key);
    let value = fields(&entry.fields);
    match servers.get(NAME) {
        Some(old) => old.set_value(value),
        None => {
            servers.append(NAME, value);
        }
    }
    let mut text = root.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

fn fields(fields: &[(&'static str, Field)]) -> CstInputValue {
    CstInputValue::Object(
        fields
            .iter()
            .map(|(key, field)| (key.to_string(), input(field)))
            .collect(),
    )
}

fn input(field: &Field) -> CstInputValue {
    match field {
        Field::Text(text) => CstInputValue::String(text.clone()),
        Field::Texts(texts) => {
            CstInputValue::Array(texts.iter().cloned().map(CstInputValue::String).collect())
        }
        Field::Flag(flag) => CstInputValue::Bool(*flag),
        Field::Number(number) => CstInputValue::Number(number.to_string()),
        Field::EmptyMap => CstInputValue::Object(Vec::new()),
    }
}
