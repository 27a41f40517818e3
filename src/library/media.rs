//! What a file's bytes are: text or binary, and the MIME type it is served as. The one place
//! that decides it, for import, `resource add` and the way back (`emit`), so that a file
//! reads back as what it was written from.
//!
//! Text is decided by the bytes, not the name: a file that is UTF-8 and holds no NUL is text
//! whatever its extension (`.ts`, `.ps1`, `Dockerfile`, `LICENSE` are scripts and notes a
//! host reads, not media). Its MIME type is the one its name suggests when that one is
//! textual, and otherwise a text type (`text/x-typescript` for TypeScript, `text/plain` for
//! the rest), since a name like `.ts` also names a video format.

use mime_guess::Mime;

use crate::model::Content;

/// A file's content kind and MIME type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Media {
    /// `type/subtype`, without parameters.
    pub mime_type: String,
    /// Whether the bytes are served as text.
    pub text: bool,
}

/// What the file `file_name` holding `bytes` is.
pub(super) fn of(file_name: &str, bytes: &[u8]) -> Media {
    let guessed = mime_guess::from_path(file_name).first_or_octet_stream();
    let text = is_text(bytes);
    let mime_type = if !text || is_textual(&guessed) {
        guessed.essence_str().to_string()
    } else {
        text_type(file_name).to_string()
    };
    Media { mime_type, text }
}

/// Whether bytes are text: UTF-8 without a NUL (which no text file holds, and which marks
/// the binary formats that happen to be valid UTF-8).
pub(super) fn is_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

/// The MIME type of a text file whose name suggests no text type: TypeScript (whose `.ts`
/// MIME guesses take for MPEG transport streams) by its own type, anything else as plain
/// text.
fn text_type(file_name: &str) -> &'static str {
    let extension = file_name
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase());
    match extension.as_deref() {
        Some("ts" | "mts" | "cts" | "tsx") => "text/x-typescript",
        _ => "text/plain",
    }
}

/// Text served as `text`: every `text/*` type and the structured-text application types.
pub(crate) fn is_textual(mime: &Mime) -> bool {
    mime.type_() == mime_guess::mime::TEXT
        || matches!(
            mime.subtype().as_str(),
            "json" | "xml" | "yaml" | "x-yaml" | "toml" | "javascript" | "sql" | "x-sh"
        )
        || mime
            .suffix()
            .is_some_and(|suffix| suffix == "json" || suffix == "xml")
}

/// Content as a MIME type given by hand (`--mime-type`, a metadata file's `mimeType`)
/// serves it: as text when the type is textual and the bytes are text, otherwise as binary.
pub(crate) fn served_as(content: Content, mime: &Mime) -> Content {
    let textual = is_textual(mime);
    match content {
        Content::Text(text) if !textual => Content::Binary(text.into_bytes()),
        Content::Binary(bytes) if textual && is_text(&bytes) => match String::from_utf8(bytes) {
            Ok(text) => Content::Text(text),
            Err(err) => Content::Binary(err.into_bytes()),
        },
        content => content,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn media(mime_type: &str, text: bool) -> Media {
        Media {
            mime_type: mime_type.to_string(),
            text,
        }
    }

    #[test]
    fn text_is_decided_by_the_bytes_and_typed_as_text() {
        assert_eq!(
            of("build.ts", b"export const x = 1;\n"),
            media("text/x-typescript", true)
        );
        for name in [
            "deploy.ps1",
            "main.tf",
            "infra.bicep",
            "Dockerfile",
            "LICENSE",
        ] {
            assert_eq!(of(name, b"text\n"), media("text/plain", true), "{name}");
        }
        assert_eq!(of("main.rs", b"fn main() {}\n"), media("text/x-rust", true));
        assert_eq!(of("data.json", b"{}"), media("application/json", true));
    }

    #[test]
    fn binary_is_what_is_not_text() {
        assert_eq!(
            of("clip.ts", b"G\x40\x00\x10"),
            media("video/vnd.dlna.mpeg-tts", false)
        );
        assert_eq!(
            of("blob", &[0xff, 0xfe]),
            media("application/octet-stream", false)
        );
        assert_eq!(of("notes.txt", &[0xe9, b'a']), media("text/plain", false));
        assert_eq!(of("nul.txt", b"a\0b"), media("text/plain", false));
    }
}
