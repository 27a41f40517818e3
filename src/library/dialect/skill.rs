//! Agent Skills (`<skills folder>/NAME/SKILL.md`): the skill becomes a prompt named after it,
//! its body the prompt's text, filled in as Claude Code fills in a command's. The name and
//! description are checked against the rules the hosts hold a skill to: a skill they refuse
//! (a bad name, one that is not its folder's, no description) is refused. A description
//! longer than Agent Skills allows is loaded by the hosts all the same, so it is imported
//! with a warning (`description_warning`), whole in the file and cut where a list shows it.
//! The same file is also a resource (`library::skill_document`), which the Skills extension
//! of MCP serves with its front matter as JSON (`skill_front_matter`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Source, claude_code::claude_prompt};
use crate::library::FileError;
use crate::library::front_matter::{key_line, parse_yaml, split_front_matter};
use crate::library::kept::Keys;
use crate::model::Prompt;

/// The keys of a `SKILL.md` that Agent Skills (`license`, `compatibility`, `allowed-tools`)
/// and Claude Code (`model`, `disable-model-invocation`, `argument-hint`) read besides the
/// name and description: an export of a prompt as a skill writes back those it kept.
pub(crate) const SKILL_HOST_KEYS: [&str; 6] = [
    "license",
    "compatibility",
    "allowed-tools",
    "model",
    "disable-model-invocation",
    "argument-hint",
];

/// The keys a skill's reader takes, and the hosts' own keys of a skill, which are kept
/// without a warning.
pub(in crate::library) const SKILL_KEYS: Keys = Keys {
    read: &["name", "description", "argument-hint", "arguments"],
    host: &SKILL_FRONT_MATTER_KEYS,
    ours: false,
};

/// The keys of a `SKILL.md` that the hosts read besides those its reader takes: Agent
/// Skills' and Claude Code's (its skills' front matter reference), the ones VS Code reads
/// among them.
pub(crate) const SKILL_FRONT_MATTER_KEYS: [&str; 16] = [
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
    "disallowed-tools",
    "model",
    "effort",
    "disable-model-invocation",
    "user-invocable",
    "when_to_use",
    "context",
    "agent",
    "background",
    "hooks",
    "paths",
    "shell",
];

/// Agent Skills' limit on a description, in characters.
pub(crate) const MAX_SKILL_DESCRIPTION: usize = 1024;

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
pub(crate) fn validate_skill_name(name: &str) -> Result<(), String> {
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

/// The SKILL.md of the skill folder `folder_name`: its prompt, whose description is cut to
/// Agent Skills' limit (a host's list of commands shows it), and the description whole (the
/// `SKILL.md` resource's, as the Skills extension has it). Its body is filled in as Claude
/// Code fills in a skill, as it does a command (`claude_prompt`): its placeholders, or else
/// the text typed after it at its end.
pub(in crate::library) fn skill(
    front: Option<&str>,
    body: &str,
    folder_name: &str,
    source: Source,
) -> Result<(Prompt, String), FileError> {
    let (name, description, parsed) = checked(front, folder_name, source.path)?;
    let title = parsed.metadata.get("title").and_then(|value| match value {
        MetaValue::Text(text) => Some(text.clone()),
        MetaValue::Other(_) => None,
    });
    let mut prompt = claude_prompt(front, body, &name, source)?;
    prompt.description = Some(listed(description.clone()));
    if title.is_some() {
        prompt.title = title;
    }
    Ok((prompt, description))
}

/// A description as a list shows it: within Agent Skills' limit, a longer one cut, with `…`
/// at the end to say so.
fn listed(description: String) -> String {
    if description.chars().count() <= MAX_SKILL_DESCRIPTION {
        return description;
    }
    let mut cut: String = description
        .chars()
        .take(MAX_SKILL_DESCRIPTION - 1)
        .collect();
    cut.push('…');
    cut
}

/// The warning for the SKILL.md at `path` with the front matter `front` when its description
/// is longer than Agent Skills allows. The hosts load such a skill, so it is imported: the
/// file and its resource's description whole, the prompt's description cut.
pub(in crate::library) fn description_warning(
    front: Option<&str>,
    path: &str,
) -> Option<FileError> {
    let yaml = front?;
    let parsed: SkillFront = parse_yaml(path, yaml).ok()?;
    let count = parsed.description?.chars().count();
    (count > MAX_SKILL_DESCRIPTION).then(|| {
        FileError::new(
            path,
            key_line(yaml, "description"),
            format!(
                "the description has {count} characters, more than the \
                 {MAX_SKILL_DESCRIPTION} Agent Skills allows: imported whole, and cut to \
                 {MAX_SKILL_DESCRIPTION} in the prompt's, which lists of commands show; \
                 shorten it for a host that holds skills to the limit"
            ),
        )
    })
}

fn checked(
    front: Option<&str>,
    folder_name: &str,
    path: &str,
) -> Result<(String, String, SkillFront), FileError> {
    let yaml = front.unwrap_or("");
    let mut parsed: SkillFront = parse_yaml(path, yaml)?;
    let line = |key: &str| key_line(yaml, key).or(Some(1));
    let name = parsed
        .name
        .take()
        .unwrap_or_else(|| folder_name.to_string());
    validate_skill_name(&name).map_err(|message| FileError::new(path, line("name"), message))?;
    if name != folder_name {
        return Err(FileError::new(
            path,
            line("name"),
            format!(
                "skill name '{name}' is not its folder's name '{folder_name}'; rename one so \
                 that they are the same"
            ),
        ));
    }
    let description = match parsed.description.take() {
        Some(text) if !text.trim().is_empty() => text,
        _ => {
            return Err(FileError::new(
                path,
                line("description"),
                "a skill needs a description (what it does and when to use it); add \
                 `description: ...` to the front matter",
            ));
        }
    };
    Ok((name, description, parsed))
}

/// The front matter of the SKILL.md `text` as a JSON object, every key as written (what
/// `skills/list` calls a skill's `frontmatter`), when it names the skill `name` and has a
/// description, as the Skills extension requires; otherwise what is wrong.
pub(crate) fn skill_front_matter(text: &str, name: &str) -> Result<Map<String, Value>, String> {
    let (front, _, _) = split_front_matter(text);
    let Some(yaml) = front else {
        return Err("its SKILL.md has no front matter".into());
    };
    let front: Map<String, Value> =
        parse_yaml("SKILL.md", yaml).map_err(|err| err.message.clone())?;
    if front.get("name").and_then(Value::as_str) != Some(name) {
        return Err(format!(
            "its SKILL.md's front matter does not say `name: {name}`, the last segment of its URI"
        ));
    }
    if front
        .get("description")
        .and_then(Value::as_str)
        .is_none_or(|text| text.trim().is_empty())
    {
        return Err("its SKILL.md's front matter has no description".into());
    }
    Ok(front)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_comes_back_whole_as_json() {
        let text = "---\nname: lint\ndescription: Lint it.\nlicense: MIT\nmetadata:\n  version: \"2\"\nallowed-tools: [Read, Bash]\n---\nBody\n";
        let front = skill_front_matter(text, "lint").unwrap();
        assert_eq!(
            Value::Object(front),
            serde_json::json!({
                "name": "lint",
                "description": "Lint it.",
                "license": "MIT",
                "metadata": {"version": "2"},
                "allowed-tools": ["Read", "Bash"],
            })
        );
        assert!(skill_front_matter(text, "other").is_err());
        assert!(skill_front_matter("---\nname: lint\n---\n", "lint").is_err());
        assert!(skill_front_matter("no front matter", "lint").is_err());
    }

    #[test]
    fn a_long_description_is_cut_where_listed_and_warned_about_at_its_line() {
        // YAML drops the last space.
        let long = "word ".repeat(300);
        let shown = listed(long.clone());
        assert_eq!(shown.chars().count(), MAX_SKILL_DESCRIPTION);
        assert!(shown.ends_with('…'), "{shown}");
        assert_eq!(listed("Short.".into()), "Short.");
        let front = format!("name: x\ndescription: {long}");
        let warning = description_warning(Some(&front), "x/SKILL.md").expect("a warning");
        assert_eq!(warning.line, Some(3));
        assert!(warning.message.contains("1499 characters"), "{warning}");
        assert!(description_warning(Some("name: x\ndescription: Short."), "x/SKILL.md").is_none());
    }
}
