//! YAML front matter: finding it at the start of a file, telling an unclosed one from a
//! horizontal rule, and parsing it with errors placed at the file's own lines.

use super::FileError;

/// Splits YAML front matter that starts at byte 0 (after a BOM) from the body. Returns the
/// YAML, the body, and the 1-based line the YAML starts on (for error positions).
pub(super) fn split_front_matter(text: &str) -> (Option<&str>, &str, u64) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text, 1);
    };
    let mut offset = 0;
    for (index, line) in rest.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed == "---" || trimmed == "..." {
            let body = &rest[offset + line.len()..];
            return (Some(&rest[..offset]), body, index as u64 + 3);
        }
        offset += line.len();
    }
    (None, text, 1)
}

/// Whether `text` opens front matter (`---` on its first line) with a line that reads as a
/// YAML key: then a missing closing `---` is a mistake to report, not a horizontal rule
/// followed by text.
pub(super) fn opens_yaml_front_matter(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return false;
    };
    let first = rest.lines().next().unwrap_or("").trim_end();
    let key_length = first
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(first.len());
    key_length > 0
        && first.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && first[key_length..]
            .strip_prefix(':')
            .is_some_and(|after| after.is_empty() || after.starts_with(' '))
}

/// The line of the file on which the top-level `key:` of `yaml` is written (front matter
/// starts on line 2), for errors about that key's value.
pub(super) fn key_line(yaml: &str, key: &str) -> Option<u64> {
    yaml.lines()
        .position(|line| {
            line.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|index| index as u64 + 2)
}

/// The line of the file on which the argument `name` is declared (`- name: NAME` under
/// `arguments:`), for errors about that argument.
pub(super) fn argument_line(yaml: &str, name: &str) -> Option<u64> {
    let arguments = yaml
        .lines()
        .position(|line| line.starts_with("arguments:"))?;
    yaml.lines()
        .skip(arguments + 1)
        .position(|line| {
            let line = line.trim_start().trim_start_matches(['-', ' ']);
            line.strip_prefix("name:")
                .is_some_and(|value| value.trim().trim_matches(['"', '\'']) == name)
        })
        .map(|index| (arguments + 1 + index) as u64 + 2)
}

/// The keys whose values are text wherever a reader takes them.
pub(super) const TEXT_KEYS: [&str; 3] = ["name", "title", "description"];

/// A value of a text key that is not text, as the text a host makes of it: a number or a
/// yes/no as written, a list's items joined by ", "; None for text itself and for what has
/// no text (a mapping).
pub(super) fn as_text(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::Bool(_) | Value::Number(_) => Some(value.to_string()),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => Some(text.clone()),
                other => as_text(other),
            })
            .collect::<Option<Vec<_>>>()
            .map(|items| items.join(", ")),
        _ => None,
    }
}

/// Front matter into `T`. A text key with a value of another type (`description: [a, b]`,
/// `name: 2024`), which the hosts read, is read as its text (`as_text`); `kept` warns of it.
pub(super) fn parse_yaml<T: serde::de::DeserializeOwned + Default>(
    path: &str,
    yaml: &str,
) -> Result<T, FileError> {
    if yaml.trim().is_empty() {
        return Ok(T::default());
    }
    serde_saphyr::from_str(yaml)
        .or_else(|err| with_text_values(yaml).ok_or(err))
        .map_err(|err| {
            // Front matter starts on line 2 of the file.
            let location = err.location();
            let line = location.map(|location| location.line() + 1);
            let message = err.to_string();
            let first_line = message.lines().next().unwrap_or("invalid YAML");
            let mut text = format!("front matter: {}", without_yaml_position(first_line));
            if let Some(location) = location {
                text.push_str(&format!(" (column {})", location.column()));
            }
            FileError::new(path, line, text)
        })
}

/// `yaml` read with each text key's value made text (`as_text`), when that changes something
/// and then reads as `T`.
fn with_text_values<T: serde::de::DeserializeOwned>(yaml: &str) -> Option<T> {
    let mut map: serde_json::Map<String, serde_json::Value> = serde_saphyr::from_str(yaml).ok()?;
    let mut changed = false;
    for key in TEXT_KEYS {
        if let Some(text) = map.get(key).and_then(as_text) {
            map.insert(key.to_string(), serde_json::Value::String(text));
            changed = true;
        }
    }
    changed
        .then(|| serde_json::from_value(serde_json::Value::Object(map)).ok())
        .flatten()
}

/// serde-saphyr starts its messages with "error: line L column C: ", counted from the start
/// of the YAML rather than of the file; the file's line is reported separately.
pub(super) fn without_yaml_position(message: &str) -> &str {
    let rest = message.strip_prefix("error: ").unwrap_or(message);
    let Some((position, text)) = rest.split_once(": ") else {
        return rest;
    };
    let is_position = position
        .strip_prefix("line ")
        .and_then(|position| position.split_once(" column "))
        .is_some_and(|(line, column)| {
            [line, column]
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
    if is_position { text } else { rest }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_yaml_after_an_opening_line_is_taken_for_front_matter() {
        assert!(opens_yaml_front_matter("---\nname: x\nbody\n"));
        assert!(opens_yaml_front_matter(
            "\u{feff}---\r\ndescription:\n  text\n"
        ));
        assert!(!opens_yaml_front_matter("---\nSome text after a rule.\n"));
        assert!(!opens_yaml_front_matter("---\n\nname: x\n"));
        assert!(!opens_yaml_front_matter("---\nhttp://example.com\n"));
        assert!(!opens_yaml_front_matter("text\n---\nname: x\n"));
    }

    #[test]
    fn front_matter_only_at_the_start() {
        let (front, body, line) = split_front_matter("---\nname: x\n---\nbody\n");
        assert_eq!(front, Some("name: x\n"));
        assert_eq!(body, "body\n");
        assert_eq!(line, 4);
        let (front, _, _) = split_front_matter("text\n---\nname: x\n---\n");
        assert_eq!(front, None);
    }
}
