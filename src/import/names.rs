//! Which names a folder's prompts take in a library of many collections, and what a clash
//! of names says (docs/format.md "Prompt names across collections").
//!
//! A prompt name is one namespace for the whole library, while resource URIs carry their
//! collection. So when a prompt name is another collection's already, the import names its
//! prompt `COLLECTION-NAME` (with a warning) unless told otherwise (`Naming`). Such a name,
//! once stored, is kept by later imports of the same file even when the clash is gone, and a
//! `--prefix` is recorded for the collection (`store::prefix`), so that names do not move
//! back and forth as other collections come and go.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::{Parsed, Source, hash, reread};
use crate::library::{self, FileError, Folder, Item};
use crate::store;

/// What an import does with a prompt name another collection already has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Naming {
    /// The clashing prompts take the collection's name as a prefix (`COLLECTION-NAME`).
    #[default]
    PrefixClashes,
    /// Every prompt of the folder is `PREFIX-NAME` (`import --prefix`).
    PrefixAll(String),
    /// A clash is refused (`import --no-prefix`): every prompt keeps its own name.
    Refuse,
}

/// What joins a prefix and a prompt's name.
pub(crate) const SEPARATOR: char = '-';

/// Gives the prompts of `parsed` (one folder, of the collection of `source`) their names in
/// the library, as `naming` says. `claimed` holds the names the parts imported before this
/// one take (name, collection); a name that cannot be made is a failure.
pub(super) fn name_prompts(
    conn: &Connection,
    source: &Source,
    parsed: &mut Vec<Parsed>,
    naming: &Naming,
    claimed: &HashMap<String, String>,
    problems: (&mut Vec<FileError>, &mut Vec<FileError>),
) -> store::Result<()> {
    let (failures, warnings) = problems;
    let collection = source.collection.name.as_str();
    // A prefix given once is the collection's until another choice is made.
    let recorded = match naming {
        Naming::PrefixClashes => store::prefix::of(conn, collection)?.map(Naming::PrefixAll),
        _ => None,
    };
    let naming = recorded.as_ref().unwrap_or(naming);
    let states = store::read::prompt_states(conn)?;
    let stored: HashMap<&str, &store::ItemState> = states
        .iter()
        .map(|state| (state.key.as_str(), state))
        .collect();
    let owner = |name: &str| -> Option<String> {
        claimed.get(name).cloned().or_else(|| {
            stored
                .get(name)
                .and_then(|state| state.origin.collection.clone())
        })
    };
    // The names the folder gives, which a kept prefixed name must not take.
    let own: HashSet<String> = parsed
        .iter()
        .filter_map(|file| match &file.item {
            Item::Prompt(prompt) => Some(prompt.name.clone()),
            _ => None,
        })
        .collect();
    // Skills renamed (the skill folder's path, with its `/`, and `PREFIX/NAME`): their files
    // move from `skill://NAME/...` to `skill://PREFIX/NAME/...`, a skill path whose last
    // segment still names the skill, as the Skills extension wants.
    let mut skills: Vec<(String, String)> = Vec::new();
    let mut refused = HashSet::new();
    for (at, file) in parsed.iter_mut().enumerate() {
        let Item::Prompt(prompt) = &file.item else {
            continue;
        };
        let name = prompt.name.clone();
        let prefixed = format!("{collection}{SEPARATOR}{name}");
        let kept = stored.get(prefixed.as_str()).is_some_and(|state| {
            state.origin.collection.as_deref() == Some(collection)
                && state.origin.path.as_deref() == Some(file.path.as_str())
                && !own.contains(&prefixed)
        });
        let renamed = match naming {
            Naming::Refuse => name.clone(),
            Naming::PrefixAll(prefix) => format!("{prefix}{SEPARATOR}{name}"),
            Naming::PrefixClashes if kept => prefixed,
            Naming::PrefixClashes => {
                let Some(other) = owner(&name).filter(|other| other != collection) else {
                    continue;
                };
                let renamed = prefixed;
                if library::validate_name(&renamed).is_ok() {
                    warnings.push(FileError::new(
                        &file.path,
                        Some(name_source(source, file).line),
                        format!(
                            "prompt '{name}' belongs to the collection '{other}' already, so \
                             this one is named '{renamed}'; `import --prefix WORD` names every \
                             prompt of the folder WORD-NAME instead, `--no-prefix` refuses the \
                             clash"
                        ),
                    ));
                }
                renamed
            }
        };
        let why = match library::validate_name(&renamed) {
            Err(why) => Some(why),
            Ok(()) if *naming == Naming::PrefixClashes && own.contains(&renamed) => {
                Some("another file of the folder gives that name".to_string())
            }
            // Parts imported together are checked against each other here, since each one's
            // plan sees the store without the others.
            Ok(()) => claimed
                .get(&renamed)
                .filter(|other| *other != collection)
                .map(|other| format!("the collection '{other}', imported with it, has that name")),
        };
        if let Some(why) = why {
            let fix = match naming {
                Naming::PrefixAll(_) => "choose another --prefix, of letters, digits, '-' or '_'",
                Naming::Refuse => "import without --no-prefix, which names it COLLECTION-NAME",
                Naming::PrefixClashes => {
                    "import the folder with --prefix WORD, or under another --collection"
                }
            };
            let what = if renamed == name {
                format!("prompt '{name}'")
            } else {
                format!("prompt '{name}' cannot be named '{renamed}'")
            };
            failures.push(FileError::new(
                &file.path,
                Some(name_source(source, file).line),
                format!("{what}: {why}; {fix}"),
            ));
            refused.insert(at);
            continue;
        }
        if renamed == name {
            continue;
        }
        if let Some((skill, "SKILL.md")) = library::skill_file(&file.path, source.folder)
            && let Some(prefix) = renamed.strip_suffix(&format!("{SEPARATOR}{name}"))
        {
            let folder = file.path.strip_suffix("SKILL.md").unwrap_or_default();
            skills.push((folder.to_string(), format!("{prefix}/{skill}")));
        }
        if let Item::Prompt(prompt) = &mut file.item {
            prompt.name = renamed;
        }
        file.hash = hash(&file.item);
    }
    for file in parsed.iter_mut() {
        let Item::Resource(resource) = &mut file.item else {
            continue;
        };
        let Some((_, inside)) = library::skill_file(&file.path, source.folder) else {
            continue;
        };
        if let Some((_, path)) = skills
            .iter()
            .find(|(folder, _)| file.path.starts_with(folder.as_str()))
            && let Some((prefix, skill)) = path.split_once('/')
        {
            resource.info.uri = library::skill_uri(prefix, &format!("{skill}/{inside}"));
            file.hash = hash(&file.item);
        }
    }
    let mut at = 0;
    parsed.retain(|_| {
        at += 1;
        !refused.contains(&(at - 1))
    });
    Ok(())
}

/// Where a prompt's name comes from in its file, and how to give it another.
pub(super) struct NameSource {
    /// The line of its `name:` (or its row), or line 1 when the file's name is its name.
    pub line: u64,
    pub fix: &'static str,
}

/// Where the prompt of `file` gets its name, for messages about a clash.
pub(super) fn name_source(source: &Source, file: &Parsed) -> NameSource {
    if let Some(line) = file.line {
        return NameSource {
            line,
            fix: "change its row's name",
        };
    }
    let text = reread(source, &file.path);
    let name_line = text.as_deref().and_then(|text| front_matter_keys(text).0);
    let (by_file, fix) = rename_fix(&file.path, source.folder, text.as_deref());
    NameSource {
        line: name_line.filter(|_| !by_file).unwrap_or(1),
        fix,
    }
}

/// How to give the prompt of the file at `path` (of a folder read as `folder`, with the text
/// `text` when it could be read) another name, as its dialect names it; and whether the
/// file's name is the prompt's.
pub(crate) fn rename_fix(path: &str, folder: Folder, text: Option<&str>) -> (bool, &'static str) {
    let kind = text.is_some_and(|text| front_matter_keys(text).1);
    if path.ends_with(".csv") {
        (false, "change its row's name")
    } else if let Some((_, "SKILL.md")) = library::skill_file(path, folder)
        && !kind
    {
        (
            false,
            "rename its folder and its `name:` together (a skill's name is its folder's)",
        )
    } else if path.ends_with(".toml") {
        (
            true,
            "rename the file (Gemini CLI names a command after its path)",
        )
    } else if library::is_cursor_command(path) && !kind {
        (
            true,
            "rename the file (Cursor names a command after its file)",
        )
    } else if library::is_command_path(path, folder) && !kind {
        (
            true,
            "rename the file (Claude Code names a command after its file and ignores `name:`)",
        )
    } else {
        (false, "give it another `name:` in its front matter")
    }
}

/// The prefix the collection `collection` put before the name a prompt's file gives, when
/// its stored `name` has one: the collection's recorded `--prefix`, or the collection's own
/// name where a clash gave it one (`own`, the name the file gives, when it could be read).
pub(crate) fn prefix_of(
    conn: &Connection,
    name: &str,
    collection: &str,
    own: Option<&str>,
) -> store::Result<Option<String>> {
    if let Some(prefix) = store::prefix::of(conn, collection)?
        && name.starts_with(&format!("{prefix}{SEPARATOR}"))
    {
        return Ok(Some(prefix));
    }
    let by_clash = own.is_some_and(|own| name == format!("{collection}{SEPARATOR}{own}"));
    Ok(by_clash.then(|| collection.to_string()))
}

/// What to change in `file`, a collection's prompt's file, for the prompt to be named `new`:
/// `fix` (`rename_fix`), and, where the collection puts `prefix` before the name the file
/// gives, which name to give there, or that a name without it needs `--no-prefix`.
pub(crate) fn rename_advice(file: &str, fix: &str, prefix: Option<&str>, new: &str) -> String {
    let change = format!("to name it '{new}', for {file}: {fix}");
    let Some(prefix) = prefix else {
        return change;
    };
    let put = format!("the collection puts '{prefix}{SEPARATOR}' before the name its file gives");
    match new.strip_prefix(&format!("{prefix}{SEPARATOR}")) {
        Some(own) if !own.is_empty() => format!("{change}, to give it the name '{own}' ({put})"),
        _ => format!(
            "{change}, and add `--no-prefix` to the import below ({put}; `--no-prefix` leaves \
             it off every prompt of the collection)"
        ),
    }
}

/// The line of the `name:` key of a file's front matter, if any, and whether the front
/// matter sets `kind` (then the file is in our format, whose `name:` counts).
fn front_matter_keys(text: &str) -> (Option<u64>, bool) {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return (None, false);
    }
    let mut name = None;
    let mut kind = false;
    for (at, line) in lines.enumerate() {
        if line.trim_end() == "---" {
            break;
        }
        if line.starts_with("name:") {
            name = Some(at as u64 + 2);
        }
        kind |= line.starts_with("kind:");
    }
    (name, kind)
}

/// A failure for the second of two files of one folder that give the same prompt name:
/// both files at the lines their names come from, and how to rename each.
pub(super) fn in_folder_clash(
    source: &Source,
    name: &str,
    first: &Parsed,
    second: &Parsed,
) -> FileError {
    let one = name_source(source, first);
    let other = name_source(source, second);
    let fix = if one.fix == other.fix {
        format!("in one of them, {}", other.fix)
    } else {
        format!(
            "for {}, {}; or for {}, {}",
            second.path, other.fix, first.path, one.fix
        )
    };
    FileError::new(
        &second.path,
        Some(other.line),
        format!(
            "prompt '{name}' is also given by {}:{}; {fix}",
            first.path, one.line
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_key_is_found_in_front_matter_only() {
        assert_eq!(
            front_matter_keys("---\ndescription: x\nname: a\n---\nname: b\n"),
            (Some(3), false)
        );
        assert_eq!(front_matter_keys("name: a\n"), (None, false));
        assert_eq!(front_matter_keys("---\nkind: prompt\n---\n"), (None, true));
    }

    #[test]
    fn the_separator_makes_valid_names() {
        assert!(library::validate_name(&format!("notes{SEPARATOR}review")).is_ok());
    }
}
