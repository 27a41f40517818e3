//! Agent Skills: `.agents/skills/NAME/SKILL.md`. A prompt imported from a skill folder is
//! written back as that folder, every file of it byte for byte as it was imported. Any other prompt becomes a `SKILL.md` with `name`,
//! `description` and `metadata` (the title) in the front matter and the prompt's text as the
//! body; the resources it embeds or links are written into the skill's `references/` folder
//! and linked from the body by their relative path, which is how a skill points at its files.
//! A skill has no arguments: each is written `<name>` and named in a closing list, for the
//! model to fill in.

use std::collections::BTreeMap;

use percent_encoding::percent_decode_str;

use super::{File, Lost, Source, Written, arguments_note, kept_front};
use crate::export::body::Piece;
use crate::export::safe_segment;
use crate::library::yaml::scalar;
use crate::library::{MAX_SKILL_DESCRIPTION, SKILL_HOST_KEYS, skill_uri, validate_skill_name};
use crate::model::Content;

pub(super) fn files(source: &Source, lost: &mut Lost) -> Option<Written> {
    let prompt = source.prompt;
    let name = skill_name(&prompt.name);
    if let Err(message) = validate_skill_name(&name) {
        lost.say(&format!("a skill name made from its name ({message})"));
        return None;
    }
    if !source.skill.is_empty() {
        return Some(skill_folder(source, &format!(".agents/skills/{name}")));
    }
    let Some(description) = prompt.description.as_ref().or(prompt.title.as_ref()) else {
        lost.say("no description, which a skill must have; give the prompt one");
        return None;
    };
    let mut description = description.clone();
    if description.chars().count() > MAX_SKILL_DESCRIPTION {
        lost.say("the end of its description (a skill's is at most 1024 characters)");
        description = description.chars().take(MAX_SKILL_DESCRIPTION).collect();
    }
    if !prompt.icons.is_empty() {
        lost.say("its icons");
    }
    if !prompt.arguments.is_empty() {
        lost.arguments_in_text("they are named in the text, for the model");
    }
    lost.argument_details(prompt);
    let folder = format!(".agents/skills/{name}");
    let mut files = Vec::new();
    // URI -> the file it is written to, relative to the skill's folder.
    let mut references: BTreeMap<String, String> = BTreeMap::new();
    let mut body = String::new();
    for piece in &source.pieces {
        match piece {
            Piece::Text(text) | Piece::Code(text) => body.push_str(text),
            Piece::Var(name) => body.push_str(&format!("<{name}>")),
            Piece::Embed(uri) | Piece::Link(uri) => {
                let Some((stored, content)) = source.resources.get(uri) else {
                    lost.say(&format!(
                        "the resource {uri}, which is not in the library: written as a link"
                    ));
                    body.push_str(&format!("[{uri}]({uri})"));
                    continue;
                };
                let relative = match references.get(uri) {
                    Some(relative) => relative.clone(),
                    None => {
                        let relative = reference_path(uri, &references);
                        let bytes = match content {
                            Content::Text(text) => text.as_bytes().to_vec(),
                            Content::Binary(bytes) => bytes.clone(),
                        };
                        files.push(File {
                            path: format!("{folder}/{relative}"),
                            bytes,
                        });
                        references.insert(uri.clone(), relative.clone());
                        relative
                    }
                };
                let label = stored.info.title.as_deref().unwrap_or(&stored.info.name);
                let image =
                    matches!(piece, Piece::Embed(_)) && stored.info.mime_type.starts_with("image/");
                body.push_str(&format!(
                    "{}[{}]({relative})",
                    if image { "!" } else { "" },
                    label.replace(['[', ']'], "")
                ));
            }
        }
    }
    let mut front = format!("---\nname: {name}\ndescription: {}\n", scalar(&description));
    if let Some(title) = &prompt.title {
        front.push_str(&format!("metadata:\n  title: {}\n", scalar(title)));
    }
    front.push_str(&kept_front(prompt, &SKILL_HOST_KEYS));
    front.push_str("---\n");
    let path = format!("{folder}/SKILL.md");
    let note = arguments_note(prompt);
    files.insert(
        0,
        File {
            path: path.clone(),
            bytes: format!("{front}{}{}\n", body.trim_end(), note.trim_end()).into_bytes(),
        },
    );
    Some(Written {
        files,
        prompt_file: path,
    })
}

/// The skill folder the prompt was imported from, written whole into `folder`: each file at
/// its path in the skill (`skill://NAME/PATH` is `folder/PATH`), its bytes as stored, which
/// are the file's as it was imported (`library::resolve_links` leaves a skill's files alone).
fn skill_folder(source: &Source, folder: &str) -> Written {
    let prefix = skill_uri(&source.prompt.name, "");
    let files = source
        .skill
        .iter()
        .map(|(stored, content)| {
            let uri = &stored.info.uri;
            let inside = uri.strip_prefix(&prefix).unwrap_or(uri);
            let segments: Vec<String> = inside
                .split('/')
                .map(|segment| safe_segment(&percent_decode_str(segment).decode_utf8_lossy()))
                .collect();
            File {
                path: format!("{folder}/{}", segments.join("/")),
                bytes: content.as_bytes().to_vec(),
            }
        })
        .collect();
    Written {
        files,
        prompt_file: format!("{folder}/SKILL.md"),
    }
}

/// A skill name made from a prompt name: lower case, every run of other characters one `-`,
/// no `-` at either end, at most 64 characters.
fn skill_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(64).collect();
    out.trim_end_matches('-').to_string()
}

/// `references/<the URI's last segment>`, numbered when another resource of the skill has
/// that name.
fn reference_path(uri: &str, taken: &BTreeMap<String, String>) -> String {
    let last = uri
        .split(['?', '#'])
        .next()
        .unwrap_or(uri)
        .rsplit('/')
        .find(|segment| !segment.is_empty())
        .unwrap_or("resource");
    let file = safe_segment(&percent_decode_str(last).decode_utf8_lossy());
    let mut candidate = format!("references/{file}");
    let mut n = 2;
    while taken.values().any(|path| *path == candidate) {
        candidate = format!("references/{n}-{file}");
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_names_follow_the_rules() {
        assert_eq!(skill_name("Code_Review"), "code-review");
        assert_eq!(skill_name("git/commit"), "git-commit");
        assert_eq!(skill_name("--a..b--"), "a-b");
        assert_eq!(skill_name(&"x".repeat(70)).len(), 64);
    }
}
