//! The Skills extension of MCP (SEP-2640, the draft at commit 753b9f2 of
//! modelcontextprotocol/modelcontextprotocol): its identifier, how a client declares it
//! (`capabilities.extensions`, in `initialize` or in a modern request's
//! `io.modelcontextprotocol/clientCapabilities`), and the plain values `skills/list`,
//! `skills/get` and `resources/directory/read` answer with. `shape::skills` writes them as
//! JSON.

use serde_json::{Map, Value};

/// The extension's identifier, the key of `capabilities.extensions` on both sides.
pub(crate) const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The optional extensions a client declared that this server acts on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extensions {
    /// `io.modelcontextprotocol/skills`: `skills/list` and `skills/get` are served, and the
    /// server's capabilities declare the extension.
    pub skills: bool,
}

impl Extensions {
    /// The extensions a client's `capabilities.extensions` member declares: each is a key
    /// whose value is a settings object (`{}` when it has none).
    pub(super) fn declared_in(extensions: Option<&Value>) -> Extensions {
        let Some(Value::Object(declared)) = extensions else {
            return Extensions::default();
        };
        Extensions {
            skills: matches!(declared.get(SKILLS_EXTENSION), Some(Value::Object(_))),
        }
    }
}

/// The methods whose answer depends on the extensions a modern request declares: the
/// extension's own, and `server/discover`, whose capabilities name it.
pub(super) fn reads_extensions(method: &str) -> bool {
    matches!(
        method,
        "skills/list" | "skills/get" | "resources/directory/read" | "server/discover"
    )
}

/// One direct child of a directory, as `resources/directory/read` lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DirectoryChild {
    /// A stored file, described as `resources/list` describes it.
    File(Box<crate::model::StoredResource>),
    /// A folder that holds stored files, a directory resource itself
    /// (`mimeType: inode/directory`). `key` is where a page after it goes on: its URI and
    /// `/`, after every file under it.
    Directory {
        uri: String,
        name: String,
        key: String,
    },
}

impl DirectoryChild {
    /// The key a page of children is ordered and continued by.
    pub(crate) fn key(&self) -> &str {
        match self {
            DirectoryChild::File(file) => &file.info.uri,
            DirectoryChild::Directory { key, .. } => key,
        }
    }
}

/// One skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkillEntry {
    /// The URI of its `SKILL.md` (`skill://NAME/SKILL.md`).
    pub uri: String,
    /// Its `SKILL.md` front matter, every key as written, as JSON.
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill, `SKILL.md` among them, by URI.
    pub resources: Vec<SkillFile>,
    /// The newest change to any of its files (Unix ms; drives `skills/get`'s TTL hint).
    pub last_modified: i64,
}

/// One file of a skill: what a host checks the file it reads against.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkillFile {
    pub uri: String,
    /// The SHA-256 of the bytes `resources/read` serves.
    pub sha256: [u8; 32],
    /// How many bytes those are.
    pub size: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_is_declared_by_a_settings_object_under_its_key() {
        let declared = |json: &str| {
            Extensions::declared_in(Some(&serde_json::from_str::<Value>(json).unwrap())).skills
        };
        assert!(declared(r#"{"io.modelcontextprotocol/skills": {}}"#));
        assert!(declared(
            r#"{"io.modelcontextprotocol/skills": {"directoryRead": true}, "x/y": {}}"#
        ));
        assert!(!declared(r#"{"io.modelcontextprotocol/skills": true}"#));
        assert!(!declared(r#"{"io.modelcontextprotocol/ui": {}}"#));
        assert!(!declared("[]"));
        assert!(!Extensions::declared_in(None).skills);
    }
}
