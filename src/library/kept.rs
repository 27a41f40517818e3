//! Front matter keys a file's reader does not take, kept with its item (`Meta`) rather than
//! dropped or refused: a host's own keys (Claude Code's `allowed-tools`, VS Code's `applyTo`)
//! travel with the item, so an export can write them back. Which of them are warned about,
//! and, in a strict reading of our own format, refused as an author's typo.

use std::collections::BTreeMap;

use super::FileError;
use super::front_matter::{TEXT_KEYS, as_text, key_line, without_yaml_position};
use super::yaml::kept_field;
use crate::model::Meta;

/// What a file's reader makes of its front matter keys.
pub(super) struct Keys {
    /// The keys the reader takes itself; never kept.
    pub read: &'static [&'static str],
    /// The host's own keys, which are kept without a warning.
    pub host: &'static [&'static str],
    /// Whether the file is in our own format, where an unknown key is refused when read
    /// strictly (`import --strict`, `check`, `prompt add`).
    pub ours: bool,
}

/// The keys of `front` that `keys.read` leaves, with a warning for each that is not the
/// host's own; read strictly, the first such key of our own format is the error instead.
pub(super) fn keep(
    path: &str,
    front: Option<&str>,
    keys: &Keys,
    strict: bool,
) -> Result<(Meta, Vec<FileError>), FileError> {
    let Some(yaml) = front else {
        return Ok((Meta::new(), Vec::new()));
    };
    let meta = top_level(yaml);
    let mut warnings = Vec::new();
    // A text key read as the text of another value (`front_matter::parse_yaml`).
    for key in TEXT_KEYS.iter().filter(|key| keys.read.contains(key)) {
        if let Some(text) = meta.get(*key).and_then(as_text) {
            warnings.push(FileError::new(
                path,
                key_line(yaml, key),
                format!("front matter `{key}` is not text; read as \"{text}\""),
            ));
        }
    }
    let (meta, more) = left(path, meta, keys, strict, "front matter key", |key| {
        key_line(yaml, key)
    })?;
    warnings.extend(more);
    Ok((meta, warnings))
}

/// `keep` for a TOML file (a Gemini CLI command), whose keys are kept as their JSON values,
/// each warned about as `TOML key` at its line. TOML that does not parse keeps nothing: its
/// reader refuses it.
pub(super) fn keep_toml(
    path: &str,
    text: &str,
    keys: &Keys,
) -> Result<(Meta, Vec<FileError>), FileError> {
    let Ok(meta) = toml_edit::de::from_str::<Meta>(text) else {
        return Ok((Meta::new(), Vec::new()));
    };
    let document = toml_edit::Document::parse(text).ok();
    left(path, meta, keys, false, "TOML key", |key| {
        let span = document.as_ref()?.as_table().key(key)?.span()?;
        Some(text[..span.start].matches('\n').count() as u64 + 1)
    })
}

/// The keys of `meta` that `keys.read` leaves, with a warning for each that is not the host's
/// own, at its line (`line_of`); read strictly, the first such key of our own format is the
/// error instead. `noun` names such a key in the warning.
fn left(
    path: &str,
    mut meta: Meta,
    keys: &Keys,
    strict: bool,
    noun: &str,
    line_of: impl Fn(&str) -> Option<u64>,
) -> Result<(Meta, Vec<FileError>), FileError> {
    meta.retain(|key, _| !keys.read.contains(&key.as_str()));
    let mut warnings = Vec::new();
    for key in meta.keys().filter(|key| !keys.host.contains(&key.as_str())) {
        let line = line_of(key);
        if strict && keys.ours {
            return Err(FileError::new(
                path,
                line,
                format!(
                    "front matter: unknown key `{key}`; use one of: {}",
                    keys.read.join(", ")
                ),
            ));
        }
        warnings.push(FileError::new(
            path,
            line,
            format!("{noun} `{key}` is not one promptshelf reads; kept with the item as it is"),
        ));
    }
    Ok((meta, warnings))
}

/// Front matter that is not YAML (an agent file's `description: Use it when: ...`), which
/// Claude Code reads line by line as `key: value`, written again as YAML that reads so, with
/// the warning that says it was; None for YAML.
pub(super) fn relined(path: &str, yaml: &str) -> Option<(String, FileError)> {
    let err = serde_saphyr::from_str::<BTreeMap<String, serde_json::Value>>(yaml)
        .err()
        .filter(|_| !yaml.trim().is_empty())?;
    let text = top_level(yaml)
        .iter()
        .map(|(key, value)| kept_field(key, value))
        .collect();
    let message = err.to_string();
    let reason = without_yaml_position(message.lines().next().unwrap_or("invalid YAML"));
    let warning = FileError::new(
        path,
        err.location().map(|location| location.line() + 1),
        format!(
            "front matter is not YAML ({reason}); read line by line as `key: value`, as Claude Code reads it"
        ),
    );
    Some((text, warning))
}

/// The top-level keys of `yaml` and their values as JSON. Front matter that is not a YAML
/// mapping (Claude Code reads `argument-hint: [a] [b]`, which YAML does not) gives its
/// `key: value` lines as strings, as Claude Code reads them.
fn top_level(yaml: &str) -> Meta {
    if yaml.trim().is_empty() {
        return Meta::new();
    }
    if let Ok(map) = serde_saphyr::from_str::<BTreeMap<String, serde_json::Value>>(yaml) {
        return map;
    }
    yaml.lines()
        .filter(|line| !line.starts_with([' ', '\t', '#']))
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| {
            let value = value.trim();
            let unquoted = ['"', '\'']
                .iter()
                .find_map(|quote| value.strip_prefix(*quote)?.strip_suffix(*quote))
                .unwrap_or(value);
            (
                key.trim().to_string(),
                serde_json::Value::String(unquoted.to_string()),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: Keys = Keys {
        read: &["name", "description"],
        host: &[],
        ours: true,
    };

    #[test]
    fn unknown_keys_are_kept_with_a_warning_or_refused_when_strict() {
        let yaml = "name: x\napplyTo: '**/*.rs'\ntools: [a, b]\n";
        let (meta, warnings) = keep("a.md", Some(yaml), &OURS, false).expect("kept");
        assert_eq!(meta["applyTo"], "**/*.rs");
        assert_eq!(meta["tools"], serde_json::json!(["a", "b"]));
        assert!(!meta.contains_key("name"));
        let lines: Vec<_> = warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [Some(3), Some(4)]);
        let err = keep("a.md", Some(yaml), &OURS, true).expect_err("refused");
        assert_eq!(err.line, Some(3));
        assert!(err.message.contains("`applyTo`"), "{}", err.message);
    }

    #[test]
    fn a_hosts_keys_are_kept_quietly_and_yaml_it_reads_leniently_line_by_line() {
        let claude = Keys {
            read: &["argument-hint"],
            host: &["allowed-tools"],
            ours: false,
        };
        let yaml = "argument-hint: [a] [b]\nallowed-tools: Bash(git add:*)\n";
        let (meta, warnings) = keep("c.md", Some(yaml), &claude, true).expect("kept");
        assert_eq!(meta["allowed-tools"], "Bash(git add:*)");
        assert_eq!(meta.len(), 1);
        assert!(warnings.is_empty());
    }
}
