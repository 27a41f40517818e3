//! The Skills extension's results on the wire (SEP-2640): a `skills/list` page
//! (`skills`, `nextCursor`, and in 2026-07-28 the list-caching `ttlMs` and `cacheScope`) and a
//! `skills/get` result (`skill`; the draft leaves its caching attributes open, and in
//! 2026-07-28 it carries them as `resources/read` does, as the conformance suite asks).
//! Each entry is `{uri, frontmatter, resources: [{uri, digest: "sha256:HEX", size}]}`. And
//! a `resources/directory/read` page: files as `resources/list` entries, folders as
//! directory resources (`mimeType: inode/directory`).

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::{Hints, Kind, Shaper};
use crate::protocol::id::RequestId;
use crate::protocol::results::Page;
use crate::protocol::skills::{DirectoryChild, SkillEntry, SkillFile};

#[derive(Serialize)]
struct DirectoryBody {
    resources: Vec<Value>,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
}

#[derive(Serialize)]
struct ListBody<'a> {
    skills: Vec<Entry<'a>>,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: Option<&'a str>,
}

#[derive(Serialize)]
struct GetBody<'a> {
    skill: Entry<'a>,
}

#[derive(Serialize)]
struct Entry<'a> {
    uri: &'a str,
    frontmatter: &'a Map<String, Value>,
    resources: Vec<File<'a>>,
}

#[derive(Serialize)]
struct File<'a> {
    uri: &'a str,
    #[serde(serialize_with = "digest")]
    digest: &'a [u8; 32],
    size: u64,
}

/// `sha256:` and the 64 lower-case hexadecimal digits of the hash.
fn digest<S: Serializer>(sha256: &&[u8; 32], serializer: S) -> Result<S::Ok, S::Error> {
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in sha256.iter() {
        text.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        text.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
    }
    serializer.serialize_str(&text)
}

fn entry(skill: &SkillEntry) -> Entry<'_> {
    Entry {
        uri: &skill.uri,
        frontmatter: &skill.frontmatter,
        resources: skill.resources.iter().map(file).collect(),
    }
}

fn file(file: &SkillFile) -> File<'_> {
    File {
        uri: &file.uri,
        digest: &file.sha256,
        size: file.size,
    }
}

impl Shaper<'_> {
    /// A `skills/list` answer line.
    pub(crate) fn skills_line(&self, id: &RequestId, page: &Page<SkillEntry>) -> Vec<u8> {
        let body = ListBody {
            skills: page.items.iter().map(entry).collect(),
            next_cursor: page.next_cursor.as_deref(),
        };
        let hints = Hints::Since(page.last_modified, Kind::List);
        self.respond(id, body, "complete", Some(hints))
    }

    /// A `resources/directory/read` answer line: files as `resources/list` gives them,
    /// folders as directory resources.
    pub(crate) fn directory_line(&self, id: &RequestId, page: &Page<DirectoryChild>) -> Vec<u8> {
        let resources = page
            .items
            .iter()
            .map(|child| match child {
                DirectoryChild::File(file) => self.resource(file),
                DirectoryChild::Directory { uri, name, .. } => {
                    serde_json::json!({"uri": uri, "name": name, "mimeType": "inode/directory"})
                }
            })
            .collect();
        let body = DirectoryBody {
            resources,
            next_cursor: page.next_cursor.clone(),
        };
        let hints = Hints::Since(page.last_modified, Kind::List);
        self.respond(id, body, "complete", Some(hints))
    }

    /// A `skills/get` answer line.
    pub(crate) fn skill_line(&self, id: &RequestId, skill: &SkillEntry) -> Vec<u8> {
        let hints = Hints::Since(skill.last_modified, Kind::List);
        self.respond(
            id,
            GetBody {
                skill: entry(skill),
            },
            "complete",
            Some(hints),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServeConfig;
    use crate::protocol::Revision;

    #[test]
    fn entries_carry_digests_as_the_draft_spells_them() {
        let config = ServeConfig::default();
        let mut frontmatter = Map::new();
        frontmatter.insert("name".into(), "lint".into());
        let skill = SkillEntry {
            uri: "skill://lint/SKILL.md".into(),
            frontmatter,
            resources: vec![SkillFile {
                uri: "skill://lint/SKILL.md".into(),
                sha256: [0xab; 32],
                size: 12,
            }],
            last_modified: 0,
        };
        let page = Page {
            items: vec![skill.clone()],
            next_cursor: Some("c".into()),
            last_modified: 0,
        };
        let id = crate::protocol::id_of(br#"{"id":1}"#);
        for revision in [Revision::MODERN, Revision::LEGACY[0]] {
            let shaper = Shaper {
                revision,
                config: &config,
                now: 0,
                label: None,
            };
            let listed: Value = serde_json::from_slice(&shaper.skills_line(&id, &page)).unwrap();
            let result = &listed["result"];
            assert_eq!(result["nextCursor"], "c");
            let file = &result["skills"][0]["resources"][0];
            assert_eq!(file["digest"], format!("sha256:{}", "ab".repeat(32)));
            assert_eq!(file["size"], 12);
            assert_eq!(result["ttlMs"].is_u64(), revision.is_modern(), "{result}");
            let got: Value = serde_json::from_slice(&shaper.skill_line(&id, &skill)).unwrap();
            assert_eq!(got["result"]["skill"], result["skills"][0]);
            assert_eq!(
                got["result"]["cacheScope"].is_string(),
                revision.is_modern()
            );
        }
    }
}
