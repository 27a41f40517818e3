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
pub fn parse_values_lines(path: &str, bytes: &[u8]) -> Result<Vec<CompletionValue>, FileError> {
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

/// CSV with a `value,weight,context` header (weight and context columns optional).
pub fn parse_values_csv(path: &str, bytes: &[u8]) -> Result<Vec<CompletionValue>, FileError> {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|err| FileError::new(path, Some(1), err.to_string()))?
        .clone();
    let column = |name: &str| headers.iter().position(|header| header == name);
    let Some(value_at) = column("value") else {
        return Err(FileError::new(
            path,
            Some(1),
            "the first line must be the header `value,weight,context`",
        ));
    };
    let weight_at = column("weight");
    let context_at = column("context");
    let mut values = Vec::new();
    for record in reader.records() {
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
                    FileError::new(path, line, format!("weight '{text}' is not a number"))
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
pub fn parse_context(text: &str) -> Option<(String, String)> {
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
}
