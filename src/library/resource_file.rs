//! A file read as a resource: the front matter keys of a markdown or text document (falling
//! back to its first heading and paragraph), and any other file as its bytes, served as text
//! when they are text (`media`).

use serde::Deserialize;

use super::FileError;
use super::front_matter::parse_yaml;
use super::kept::{Keys, keep};
use super::media;
use super::paths::Collection;
use super::summary::heading_and_paragraph;
use crate::model::{Annotations, Content, Icon, Origin, Resource, ResourceInfo, Role};

/// The keys of a document's front matter (and of a `NAME.meta.yaml`); any other is kept with
/// the document (`kept`), but refused in a metadata file, which is ours alone.
pub(super) const RESOURCE_KEYS: Keys = Keys {
    read: &[
        "kind",
        "name",
        "title",
        "description",
        "mimeType",
        "audience",
        "priority",
        "icons",
    ],
    host: &[],
    ours: true,
};

#[derive(Debug, Default, Deserialize)]
struct ResourceFront {
    #[serde(rename = "kind")]
    _kind: Option<String>,
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    #[serde(rename = "mimeType")]
    mime_type: Option<String>,
    #[serde(default)]
    audience: Vec<String>,
    priority: Option<f64>,
    #[serde(default)]
    icons: Vec<Icon>,
}

/// A markdown or text file: its front matter's keys, falling back (in markdown) to the body's
/// first heading and paragraph; the body is the content.
pub(super) fn text_resource(
    collection: &Collection,
    relative_path: &str,
    file_name: &str,
    front: Option<&str>,
    body: &str,
    is_markdown: bool,
    origin: Origin,
) -> Result<Resource, FileError> {
    let resource_front: ResourceFront = match front {
        Some(yaml) => parse_yaml(relative_path, yaml)?,
        None => ResourceFront::default(),
    };
    let (heading, paragraph) = if is_markdown {
        heading_and_paragraph(body)
    } else {
        (None, None)
    };
    let mime_type = media::of(file_name, body.as_bytes()).mime_type;
    let info = resource_info(
        collection,
        relative_path,
        file_name,
        resource_front,
        (mime_type, heading, paragraph),
        origin,
    )?;
    Ok(Resource {
        info,
        content: Content::Text(body.to_string()),
    })
}

/// Any other file: no front matter, and its bytes as they are, as text when they are text
/// (`media` decides, and gives the MIME type).
pub(super) fn other_resource(
    collection: &Collection,
    relative_path: &str,
    file_name: &str,
    bytes: &[u8],
    origin: Origin,
) -> Result<Resource, FileError> {
    let media = media::of(file_name, bytes);
    let content = match std::str::from_utf8(bytes) {
        Ok(text) if media.text => Content::Text(text.to_string()),
        _ => Content::Binary(bytes.to_vec()),
    };
    let info = resource_info(
        collection,
        relative_path,
        file_name,
        ResourceFront::default(),
        (media.mime_type, None, None),
        origin,
    )?;
    Ok(Resource { info, content })
}

/// A resource's info from its front matter, falling back to what its file gives:
/// (`fallback`) its MIME type, its first heading and its first paragraph.
fn resource_info(
    collection: &Collection,
    relative_path: &str,
    file_name: &str,
    front: ResourceFront,
    fallback: (String, Option<String>, Option<String>),
    origin: Origin,
) -> Result<ResourceInfo, FileError> {
    let (mime_type, heading, paragraph) = fallback;
    let annotations = checked_annotations(relative_path, &front)?;
    let mime_type = front.mime_type.unwrap_or(mime_type);
    Ok(ResourceInfo {
        uri: collection.resource_uri(relative_path),
        name: front.name.unwrap_or_else(|| file_name.to_string()),
        title: front.title.or(heading),
        description: front.description.or(paragraph),
        mime_type,
        annotations,
        icons: front.icons,
        origin,
        meta: Default::default(),
    })
}

/// The annotations `front` gives (the file at `relative_path`'s), each checked: an audience
/// of MCP's roles, a priority from 0.0 to 1.0.
fn checked_annotations(
    relative_path: &str,
    front: &ResourceFront,
) -> Result<Annotations, FileError> {
    let mut audience = Vec::with_capacity(front.audience.len());
    for name in &front.audience {
        audience.push(Role::parse(name).ok_or_else(|| {
            FileError::new(
                relative_path,
                None,
                format!("audience '{name}' is not 'user' or 'assistant'"),
            )
        })?);
    }
    if let Some(priority) = front.priority
        && !(0.0..=1.0).contains(&priority)
    {
        return Err(FileError::new(
            relative_path,
            None,
            format!("priority {priority} is outside 0.0 to 1.0"),
        ));
    }
    Ok(Annotations {
        audience,
        priority: front.priority,
    })
}

/// The suffix of a file that holds the metadata of the file it is named after
/// (`diagram.png.meta.yaml` for `diagram.png`).
pub(crate) const METADATA_SUFFIX: &str = ".meta.yaml";

/// The file (relative path) that the metadata file at `relative_path` describes, if it is one.
pub(crate) fn described_by(relative_path: &str) -> Option<&str> {
    relative_path
        .strip_suffix(METADATA_SUFFIX)
        .filter(|described| !described.is_empty() && !described.ends_with('/'))
}

/// Sets the keys the metadata file `relative_path` (`yaml`, the keys of a resource's front
/// matter) gives over what `resource`'s own file said.
pub(crate) fn apply_metadata(
    resource: &mut Resource,
    relative_path: &str,
    yaml: &str,
) -> Result<(), FileError> {
    let front: ResourceFront = if yaml.trim().is_empty() {
        ResourceFront::default()
    } else {
        // A metadata file is ours alone: an unknown key in it is a mistake.
        keep(relative_path, Some(yaml), &RESOURCE_KEYS, true)?;
        parse_yaml(relative_path, yaml)?
    };
    let annotations = checked_annotations(relative_path, &front)?;
    let info = &mut resource.info;
    if let Some(name) = front.name {
        info.name = name;
    }
    if let Some(title) = front.title {
        info.title = Some(title);
    }
    if let Some(description) = front.description {
        info.description = Some(description);
    }
    if !annotations.audience.is_empty() {
        info.annotations.audience = annotations.audience;
    }
    if annotations.priority.is_some() {
        info.annotations.priority = annotations.priority;
    }
    if !front.icons.is_empty() {
        info.icons = front.icons;
    }
    if let Some(mime_type) = front.mime_type {
        // The type given decides how the bytes are served, as `resource add --mime-type`'s
        // does, so that an exported resource reads back as it was stored.
        if let Ok(mime) = mime_type.parse() {
            let content = std::mem::replace(&mut resource.content, Content::Text(String::new()));
            resource.content = media::served_as(content, &mime);
        }
        resource.info.mime_type = mime_type;
    }
    Ok(())
}
