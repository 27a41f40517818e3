//! The built-in resource `promptshelf://prompt/{name}`: a prompt as its file in the library's
//! own format (docs/format.md), template, typed arguments and kept front matter whole, where
//! `prompts/get` gives only the text filled in. `sync --from` reads it to write a team
//! server's prompts into the hosts' folders as `export --format` writes a local library's.
//! Read by whoever may get the prompt; not listed, as the prompts themselves are.

use std::sync::Arc;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use crate::library::emit;
use crate::model::{Annotations, Content, ResourceInfo, StoredPrompt, StoredResource};
use crate::protocol::ReadResult;

/// What every such URI starts with; the prompt's name, percent-encoded, follows.
pub(crate) const PREFIX: &str = "promptshelf://prompt/";

/// The path the file is written for and read back at: a name other than `prompt` is then
/// always in its front matter, whatever characters it has.
pub(crate) const FILE: &str = "prompt.prompt.md";

/// What a name keeps unencoded: RFC 3986's unreserved characters.
const NAME: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The URI of the prompt `name`'s file.
pub(crate) fn uri_of(name: &str) -> String {
    format!("{PREFIX}{}", utf8_percent_encode(name, NAME))
}

/// The prompt name `uri` asks for, when it is one of these URIs.
pub(crate) fn name_of(uri: &str) -> Option<String> {
    let encoded = uri.strip_prefix(PREFIX)?;
    let name = percent_decode_str(encoded).decode_utf8().ok()?;
    (!name.is_empty()).then(|| name.into_owned())
}

/// The prompt's file as the resource `uri`, with the prompt's hash and lastModified: the
/// caching hints of a read follow the prompt's.
pub(crate) fn read(stored: &StoredPrompt, uri: &str) -> Arc<ReadResult> {
    let text = emit::prompt_file(&stored.prompt, FILE);
    let prompt = &stored.prompt;
    let resource = StoredResource {
        info: ResourceInfo {
            meta: Default::default(),
            uri: uri.to_string(),
            name: prompt.name.clone(),
            title: prompt.title.clone(),
            description: Some(format!(
                "The prompt {} as its file in promptshelf's format",
                prompt.name
            )),
            mime_type: "text/markdown".to_string(),
            annotations: Annotations::default(),
            icons: Vec::new(),
            origin: prompt.origin.clone(),
        },
        is_text: true,
        size: text.len() as u64,
        blob_hash: *blake3::hash(text.as_bytes()).as_bytes(),
        content_hash: stored.content_hash,
        last_modified: stored.last_modified,
        version: stored.version,
    };
    Arc::new(ReadResult::new(resource, Content::Text(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_goes_into_its_uri_and_comes_back() {
        for name in ["code-review", "git/commit", "plan day", "é", "a%2Fb"] {
            let uri = uri_of(name);
            assert!(!uri[PREFIX.len()..].contains('/'), "{uri}");
            assert_eq!(name_of(&uri).as_deref(), Some(name), "{uri}");
        }
        assert_eq!(name_of(PREFIX), None);
        assert_eq!(name_of("shelf://prompt/x"), None);
    }
}
