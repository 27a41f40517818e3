//! Completion tables: `_values/<table>.txt` (one value a line) and `_values/<table>.csv`
//! (`value,weight,context`), also read on their own by `promptshelf values`.

use super::{FileError, Item};
use crate::model::CompletionValue;

/// `_values/<table>.txt` (one value a line) or `_values/<table>.csv` (`value,weight,context`).
pub(super) fn parse_values(path: &str, table_file: &str, bytes: &[u8]) -> Result<Item, FileError> {
    let (table, is_csv) = if let Some(table) = table_file.strip_suffix(".csv") {
        (table, true)
    } else if let Some(table) = table_file.strip_suffix(".txt") {
        (table, false)
    } else {
        return Err(FileError::new(
            path,
            None,
            "a completion table must be _values/<table>.csv or _values/<table>.txt",
        ));
    };
    if table.is_empty() || table.contains('/') {
        return Err(FileError::new(
            path,
            None,
            "a completion table file sits directly in _values/ and has a name",
        ));
    }
    let values = if is_csv {
        parse_values_csv(path, bytes)?
    } else {
        parse_values_lines(path, bytes)?
    };
    Ok(Item::Values {
        table: table.to_string(),
        values,
    })
}

/// One value per line; blank lines and `#` comments are skipped.
pub(crate) fn parse_values_lines(
    path: &str,
    bytes: &[u8],
) -> Result<Vec<CompletionValue>, FileError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|err| FileError::new(path, None, format!("not UTF-8 text: {err}")))?;
    // Editors on Windows often start a UTF-8 file with a byte order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| CompletionValue {
            value: line.to_string(),
            weight: 0.0,
            context: None,
        })
        .collect())
}

/// The columns of a values CSV, in the order of a file without a header row.
const COLUMNS: [&str; 3] = ["value", "weight", "context"];

/// CSV rows of `value,weight,context` (weight and context optional). A first row naming one
/// of those columns (in any case) is the header, which may put them in any order among
/// columns of other names; any other first row is the first value, as a file written by hand
/// from the README's `value,weight,context rows` has it.
pub(crate) fn parse_values_csv(
    path: &str,
    bytes: &[u8],
) -> Result<Vec<CompletionValue>, FileError> {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let first = reader
        .headers()
        .map_err(|err| FileError::new(path, Some(1), err.to_string()))?
        .clone();
    let column = |name: &str| {
        first
            .iter()
            .position(|field| field.eq_ignore_ascii_case(name))
    };
    let is_header = COLUMNS.iter().any(|name| column(name).is_some());
    let (value_at, weight_at, context_at) = if is_header {
        let Some(value_at) = column("value") else {
            return Err(FileError::new(
                path,
                first.position().map(|position| position.line()),
                "the header row names no `value` column; name it (`value,weight,context`), or \
                 leave the header out: rows are then value,weight,context",
            ));
        };
        (value_at, column("weight"), column("context"))
    } else {
        (0, Some(1), Some(2))
    };
    let first_row = (!is_header).then(|| Ok(first.clone()));
    let mut values = Vec::new();
    for record in first_row.into_iter().chain(reader.records()) {
        let record = record.map_err(|err| {
            let line = err.position().map(|position| position.line());
            FileError::new(path, line, err.to_string())
        })?;
        let line = record.position().map(|position| position.line());
        let value = record.get(value_at).unwrap_or_default();
        if value.is_empty() {
            continue;
        }
        let weight = match weight_at
            .and_then(|at| record.get(at))
            .filter(|w| !w.is_empty())
        {
            None => 0.0,
            Some(text) => text
                .parse::<f64>()
                .ok()
                .filter(|w| w.is_finite())
                .ok_or_else(|| {
                    // A header of other names is read as a first value: say what a header is.
                    let header = if is_header || record.position() != first.position() {
                        ""
                    } else {
                        "; a header row names the columns value, weight, context"
                    };
                    FileError::new(
                        path,
                        line,
                        format!("weight '{text}' is not a number{header}"),
                    )
                })?,
        };
        let context = match context_at
            .and_then(|at| record.get(at))
            .filter(|c| !c.is_empty())
        {
            None => None,
            Some(text) => Some(parse_context(text).ok_or_else(|| {
                FileError::new(
                    path,
                    line,
                    format!("context '{text}' must be argument=value (e.g. language=python)"),
                )
            })?),
        };
        values.push(CompletionValue {
            value: value.to_string(),
            weight,
            context,
        });
    }
    Ok(values)
}

/// `argument=value`.
pub(crate) fn parse_context(text: &str) -> Option<(String, String)> {
    let (name, value) = text.split_once('=')?;
    let (name, value) = (name.trim(), value.trim());
    (!name.is_empty() && !value.is_empty()).then(|| (name.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_skip_a_byte_order_mark() {
        let values = parse_values_lines("v.txt", "\u{feff}rust\ngo\n".as_bytes()).unwrap();
        assert_eq!(values[0].value, "rust");
        let values =
            parse_values_csv("v.csv", "\u{feff}value,weight\nrust,3\n".as_bytes()).unwrap();
        assert_eq!(values[0].value, "rust");
    }

    #[test]
    fn a_csv_without_a_header_row_is_read_as_value_weight_context() {
        let values =
            parse_values_csv("v.csv", b"rust,90\ngo\npython,80,framework=django\n").unwrap();
        let read: Vec<_> = values
            .iter()
            .map(|v| (v.value.as_str(), v.weight, v.context.clone()))
            .collect();
        assert_eq!(
            read,
            [
                ("rust", 90.0, None),
                ("go", 0.0, None),
                (
                    "python",
                    80.0,
                    Some(("framework".to_string(), "django".to_string()))
                ),
            ]
        );
    }

    #[test]
    fn a_header_row_names_the_columns_in_any_order_and_case() {
        let values = parse_values_csv("v.csv", b"Weight,Notes,Value\n3,x,rust\n").unwrap();
        assert_eq!((values[0].value.as_str(), values[0].weight), ("rust", 3.0));
        let err = parse_values_csv("v.csv", b"weight,context\n3,a=b\n").unwrap_err();
        assert!(err.to_string().contains("names no `value` column"), "{err}");
        // A header of other names is read as a value, and its second column as a weight.
        let err = parse_values_csv("v.csv", b"name,description\nrust,fast\n").unwrap_err();
        assert!(
            err.to_string().contains(
                "weight 'description' is not a number; a header row names the columns value, \
                 weight, context"
            ),
            "{err}"
        );
    }
}
