//! Agent Skills (`<skills folder>/NAME/SKILL.md`): the skill becomes a prompt named after it,
//! its body the prompt's text as written. The name and description are checked against the
//! Agent Skills rules, since a host refuses a skill that breaks them.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Source, finish, translate};
use crate::library::FileError;
use crate::library::front_matter::{key_line, parse_yaml};
use crate::model::Prompt;

/// Agent Skills' limit on a description.
const MAX_DESCRIPTION: usize = 1024;

/// The keys read; the others (`license`, `allowed-tools`, the hosts' own) are accepted and
/// left out, as they steer the host rather than say what the skill is.
#[derive(Debug, Default, Deserialize)]
struct SkillFront {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    metadata: BTreeMap<String, MetaValue>,
}

/// A `metadata` value: Agent Skills says strings; anything else is accepted and left out.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum MetaValue {
    Text(String),
    Other(serde::de::IgnoredAny),
}

/// Whether `name` is a skill name: 1 to 64 of `a-z`, `0-9` and `-`, without a `-` at either
/// end or two in a row.
pub fn validate_skill_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "skill name '{name}' must be 1 to 64 lower-case letters, digits and single '-' \
             inside (e.g. code-review)"
        ))
    }
}

/// The SKILL.md of the skill folder `folder_name`.
pub(in crate::library) fn skill(
    front: Option<&str>,
    body: &str,
    folder_name: &str,
    source: Source,
) -> Result<Prompt, FileError> {
    let yaml = front.unwrap_or("");
    let parsed: SkillFront = parse_yaml(source.path, yaml)?;
    let line = |key: &str| key_line(yaml, key).or(Some(1));
    let name = parsed.name.unwrap_or_else(|| folder_name.to_string());
    validate_skill_name(&name)
        .map_err(|message| FileError::new(source.path, line("name"), message))?;
    if name != folder_name {
        return Err(FileError::new(
            source.path,
            line("name"),
            format!(
                "skill name '{name}' is not its folder's name '{folder_name}'; rename one so \
                 that they are the same"
            ),
        ));
    }
    let description = match parsed.description {
        Some(text) if !text.trim().is_empty() => text,
        _ => {
            return Err(FileError::new(
                source.path,
                line("description"),
                "a skill needs a description (what it does and when to use it); add \
                 `description: ...` to the front matter",
            ));
        }
    };
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(FileError::new(
            source.path,
            line("description"),
            format!(
                "the description has {} characters, more than the 1024 a skill may have; \
                 shorten it",
                description.chars().count()
            ),
        ));
    }
    let template = translate(body, |_| None);
    let title = parsed.metadata.get("title").and_then(|value| match value {
        MetaValue::Text(text) => Some(text.clone()),
        MetaValue::Other(_) => None,
    });
    let mut prompt = finish(
        Some(description),
        Vec::new(),
        body,
        &template,
        &name,
        source,
    )?;
    if title.is_some() {
        prompt.title = title;
    }
    Ok(prompt)
}
