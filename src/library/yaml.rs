//! YAML written by hand, a line at a time: a string as a scalar that reads back as the same
//! string, a list, a number, and a front matter key kept from another tool. `emit` writes
//! our own files with these, `kept` relines a host's front matter that is not YAML, and
//! `export` writes the hosts' files.

use std::fmt::Write as _;

/// A kept front matter key and its value as a line of YAML: a string as a scalar, anything
/// else in JSON's flow style, which YAML reads as the same value.
pub(crate) fn kept_field(key: &str, value: &serde_json::Value) -> String {
    let value = match value {
        serde_json::Value::String(text) => scalar(text),
        other => other.to_string(),
    };
    format!("{}: {value}\n", scalar(key))
}

/// Words YAML (1.1 or 1.2) reads as something other than a string.
const YAML_WORDS: [&str; 10] = [
    "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~",
];

/// A string as a YAML scalar: plain when it is unmistakably a string, else double-quoted.
pub(crate) fn scalar(text: &str) -> String {
    let plain = text.starts_with(|c: char| c.is_ascii_alphabetic())
        && !text.ends_with(' ')
        && !text.contains("  ")
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.' | '/'))
        && !YAML_WORDS.contains(&text.to_ascii_lowercase().as_str());
    if plain {
        text.to_string()
    } else {
        quoted(text)
    }
}

/// A double-quoted YAML scalar; everything outside YAML's printable set is escaped.
pub(super) fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if printable(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

/// YAML 1.2's `c-printable`, less the characters some readers treat as line breaks or a
/// byte order mark.
fn printable(c: char) -> bool {
    matches!(u32::from(c), 0x20..=0x7e | 0xa0..=0xd7ff | 0xe000..=0xfffd | 0x10000..)
        && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// A flow list of scalars: `[a, "b c:"]`.
pub(super) fn list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| scalar(item)).collect();
    format!("[{}]", items.join(", "))
}

/// A number YAML reads back as the same `f64`.
pub(super) fn number(n: f64) -> String {
    if n.is_nan() {
        ".nan".to_string()
    } else if n.is_infinite() {
        if n > 0.0 { ".inf" } else { "-.inf" }.to_string()
    } else {
        // Debug keeps a fraction or exponent (`1.0`, `1e20`), so the value reads as a float.
        format!("{n:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_quote_what_yaml_would_reinterpret() {
        assert_eq!(scalar("Code review"), "Code review");
        assert_eq!(scalar("no"), "\"no\"");
        assert_eq!(scalar("12"), "\"12\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(quoted("\u{1}\u{85}"), "\"\\u0001\\u0085\"");
        assert_eq!(number(1.0), "1.0");
    }
}
