//! `promptshelf resource`: list, show, print, add (from a file), rename and remove resources
//! (`edit` is in `cmd::edit`).

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Result, anyhow};
use serde::Serialize;

use super::common::{self, Table};
use super::label;
use crate::cli::{ResourceCommand, ResourceOverrides};
use crate::library::{self, Item};
use crate::model::{Content, Kind, Meta, Origin, Provenance, Role, StoredResource};
use crate::store::{self, Store};

pub(super) fn run(store: &Store, command: ResourceCommand) -> Result<()> {
    match command {
        ResourceCommand::List(flags) => list(store, flags.json),
        ResourceCommand::Show { uri, json } => show(store, &uri, json),
        ResourceCommand::Cat { uri, force } => cat(store, &uri, force),
        ResourceCommand::Add {
            file,
            overrides,
            detach,
            json,
        } => add(store, &file, overrides, detach, json),
        ResourceCommand::Edit { uri } => super::edit::resource(store, &uri),
        ResourceCommand::Mv { old, new, json } => rename(store, &old, &new, json),
        ResourceCommand::Rm { uri, detach, json } => {
            common::remove_item(store, Kind::Resource, &uri, detach, json)
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceView<'a> {
    uri: &'a str,
    name: &'a str,
    title: Option<&'a str>,
    description: Option<&'a str>,
    mime_type: &'a str,
    /// Whether the content is served as `text` (else as a base64 `blob`).
    text: bool,
    size: u64,
    audience: Vec<&'static str>,
    priority: Option<f64>,
    collection: Option<&'a str>,
    origin: Option<&'a str>,
    last_modified: String,
    content_hash: String,
    blob_hash: String,
    /// What a server gives as its `_meta` provenance.
    provenance: Provenance,
    /// The front matter keys of its file that the format does not read, kept as they are.
    #[serde(skip_serializing_if = "Meta::is_empty")]
    front_matter: &'a Meta,
}

fn view(stored: &StoredResource) -> ResourceView<'_> {
    let info = &stored.info;
    ResourceView {
        uri: &info.uri,
        name: &info.name,
        title: info.title.as_deref(),
        description: info.description.as_deref(),
        mime_type: &info.mime_type,
        text: stored.is_text,
        size: stored.size,
        audience: info.annotations.audience_names(),
        priority: info.annotations.priority,
        collection: info.origin.collection.as_deref(),
        origin: info.origin.path.as_deref(),
        last_modified: common::timestamp(stored.last_modified),
        content_hash: store::hex(&stored.content_hash),
        blob_hash: store::hex(&stored.blob_hash),
        provenance: stored.provenance(),
        front_matter: &info.meta,
    }
}

fn list(store: &Store, json: bool) -> Result<()> {
    let resources = store::read::resources(&*store.conn()?, store::read::Window::ALL)?;
    if json {
        let views: Vec<ResourceView> = resources.iter().map(view).collect();
        return common::print_json(&views);
    }
    let mut table = Table::new(&["URI", "MIME", "SIZE", "TITLE"]);
    for stored in &resources {
        let info = &stored.info;
        table.row(vec![
            info.uri.clone(),
            info.mime_type.clone(),
            common::human_size(stored.size),
            info.title.clone().unwrap_or_default(),
        ]);
    }
    table.print("no resources (add one with `promptshelf resource add FILE`)")
}

fn show(store: &Store, uri: &str, json: bool) -> Result<()> {
    let Some(stored) = store::read::resource(&*store.conn()?, uri)? else {
        return Err(common::unknown_resource(&*store.conn()?, uri)?);
    };
    let labels = label::of_item(&*store.conn()?, Kind::Resource, &stored.info.uri)?;
    if json {
        return common::print_json(&label::Labelled {
            item: view(&stored),
            labels,
        });
    }
    let info = &stored.info;
    let audience: Vec<&str> = info.annotations.audience_names();
    let mut out = common::stdout();
    let mut facts = vec![
        ("uri", info.uri.clone()),
        ("name", info.name.clone()),
        ("title", info.title.clone().unwrap_or_default()),
        ("description", info.description.clone().unwrap_or_default()),
        ("mime type", info.mime_type.clone()),
        (
            "content",
            format!(
                "{}, {}",
                if stored.is_text { "text" } else { "binary" },
                common::human_size(stored.size)
            ),
        ),
        ("audience", audience.join(", ")),
        (
            "priority",
            info.annotations
                .priority
                .map(|p| p.to_string())
                .unwrap_or_default(),
        ),
        ("from", common::origin(&info.origin)),
        ("modified", common::timestamp(stored.last_modified)),
        ("hash", store::hex(&stored.content_hash)),
        ("labels", label::fact(&labels)),
    ];
    facts.extend(common::provenance_facts(&stored.provenance()));
    common::write_facts(&mut out, &facts)?;
    common::write_kept(&mut out, &info.meta)?;
    out.flush()?;
    Ok(())
}

fn cat(store: &Store, uri: &str, force: bool) -> Result<()> {
    let Some((stored, content)) = store::read::resource_content(&*store.conn()?, uri)? else {
        return Err(common::unknown_resource(&*store.conn()?, uri)?);
    };
    if let Content::Binary(bytes) = &content
        && !force
        && std::io::stdout().is_terminal()
    {
        return Err(anyhow!(
            "{} is binary ({}, {}) and would garble the terminal; redirect it to a file \
             (`> FILE`) or pass --force",
            common::one_line(uri),
            stored.info.mime_type,
            common::human_size(bytes.len() as u64)
        ));
    }
    let mut out = common::stdout();
    out.write_all(content.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `--audience`: `user`, `assistant` or both, separated by commas, each once.
fn audience(given: &str) -> Result<Vec<Role>> {
    let mut roles = Vec::new();
    for word in given.split(',').map(str::trim) {
        let Some(role) = Role::parse(word) else {
            return Err(anyhow!(
                "--audience '{}': '{}' is not a role; give user, assistant, or both as \
                 --audience user,assistant",
                common::one_line(given),
                common::one_line(word)
            ));
        };
        if roles.contains(&role) {
            return Err(anyhow!(
                "--audience '{}' names {} twice; give each role once",
                common::one_line(given),
                role.as_str()
            ));
        }
        roles.push(role);
    }
    Ok(roles)
}

/// `--priority`: a number from 0.0 to 1.0, as MCP's annotations take it.
fn priority(given: &str) -> Result<f64> {
    match given.trim().parse::<f64>() {
        Ok(value) if (0.0..=1.0).contains(&value) => Ok(value),
        _ => Err(anyhow!(
            "--priority '{}' is not a number from 0.0 to 1.0; write e.g. --priority 0.5",
            common::one_line(given)
        )),
    }
}

/// `--title` or `--description`: text that says something.
fn words(given: Option<String>, flag: &str) -> Result<Option<String>> {
    match given {
        Some(text) if text.trim().is_empty() => Err(anyhow!(
            "{flag} is empty; give it some words, or leave the flag out"
        )),
        given => Ok(given),
    }
}

fn add(
    store: &Store,
    file: &Path,
    overrides: ResourceOverrides,
    detach: bool,
    json: bool,
) -> Result<()> {
    let shown = common::shown(file);
    if let Some(uri) = &overrides.uri {
        check_uri(uri, "--uri")?;
    }
    let file_name = if common::is_stdin(file) {
        // The URI's last segment stands in for the missing file name: it tells the MIME type.
        let Some(uri) = &overrides.uri else {
            return Err(anyhow!(
                "a resource read from standard input needs a URI: pass --uri, e.g. \
                 --uri shelf://local/notes.md"
            ));
        };
        common::last_segment(uri)
    } else {
        common::file_name(file)?
    };
    let mime = overrides
        .mime_type
        .as_deref()
        .map(|mime| {
            mime.parse::<mime_guess::Mime>().map_err(|_| {
                anyhow!("--mime-type '{mime}' is not a MIME type; write it as type/subtype, e.g. text/markdown")
            })
        })
        .transpose()?;
    if let Some(name) = &overrides.name
        && name.trim().is_empty()
    {
        return Err(anyhow!("--name is empty; give the resource a name"));
    }
    // Checked before anything is read, so a typo costs nothing.
    let audience = overrides.audience.as_deref().map(audience).transpose()?;
    let priority = overrides.priority.as_deref().map(priority).transpose()?;
    let title = words(overrides.title, "--title")?;
    let description = words(overrides.description, "--description")?;
    let bytes = common::read_input(file)?;
    // Named as a document on purpose: a markdown file in a `commands/` folder stays one.
    let parsed = common::parse_named(
        &shown,
        file_name.trim_start_matches('.'),
        &bytes,
        library::Folder::Plain,
    )?;
    let mut resource = match parsed {
        Item::Resource(resource) => resource,
        Item::Prompt(_) => {
            return Err(anyhow!(
                "{shown} is a prompt file; add it with `promptshelf prompt add {shown}`, or \
                 rename it (not *.prompt.md, no `kind: prompt`) to store it as a document"
            ));
        }
        Item::Values { .. } => return Err(anyhow!("{shown} is not a resource file")),
    };
    if let Content::Text(_) = resource.content {
        common::warn_hidden(&shown, &file_name, &bytes);
    }
    if let Some(name) = &overrides.name {
        common::warn_lookalike("--name", name);
    }
    if let Some(uri) = &overrides.uri {
        common::warn_lookalike("--uri", uri);
    }
    let info = &mut resource.info;
    // Added by hand, so it belongs to no imported collection.
    info.origin = Origin::default();
    info.uri = match overrides.uri {
        Some(uri) => uri,
        None => common::local_collection().resource_uri(&file_name),
    };
    match overrides.name {
        Some(name) => info.name = name,
        // The parser saw the name without leading dots; a hidden file keeps its own name.
        None if info.name == file_name.trim_start_matches('.') => info.name = file_name,
        None => {}
    }
    if let Some(title) = title {
        info.title = Some(title);
    }
    if let Some(description) = description {
        info.description = Some(description);
    }
    if let Some(audience) = audience {
        info.annotations.audience = audience;
    }
    if let Some(priority) = priority {
        info.annotations.priority = Some(priority);
    }
    if let Some(mime) = mime {
        resource.content = library::served_as(resource.content, &mime);
        resource.info.mime_type = mime.essence_str().to_string();
    }
    let uri = common::one_line(&resource.info.uri);
    let (outcome, replacing) = common::put_by_hand(
        store,
        Kind::Resource,
        &resource.info.uri,
        detach,
        |tx| store::write::put_resource(tx, &resource, store::now_ms()),
        |owner, import| {
            anyhow!(
                "resource {uri} {owner}; change that file and run `{import}`, or pass \
                 --detach to replace it with {shown} as a resource added by hand, which \
                 imports of the collection then leave alone"
            )
        },
    )?;
    let line = common::outcome_line(
        outcome,
        "resource",
        &resource.info.uri,
        &common::resource_details(&resource),
        &replacing.note(),
    );
    let report = common::ItemReport {
        mime_type: Some(&resource.info.mime_type),
        size: Some(resource.content.as_bytes().len() as u64),
        ..common::ItemReport::new(common::action(outcome), "resource", &resource.info.uri)
    };
    common::report(json, &line, &report)
}

/// An RFC 3986 URI: a scheme, ':', then only characters a URI may hold, with every '%'
/// starting an escape. Hosts match URIs byte for byte, so a near-URI would never resolve.
/// Errors name the URI as `given` (`--uri`, `the new URI`).
fn check_uri(uri: &str, given: &str) -> Result<()> {
    let fail = |problem: String| {
        anyhow!(
            "{given} '{}' is not a valid URI: {problem} (e.g. shelf://local/notes.md)",
            common::one_line(uri)
        )
    };
    let Some((scheme, _)) = uri.split_once(':') else {
        return Err(fail("it has no scheme such as shelf:".into()));
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(fail(format!(
            "the scheme '{}' must be a letter followed by letters, digits, '+', '-' or '.'",
            common::one_line(scheme)
        )));
    }
    let bytes = uri.as_bytes();
    for (at, c) in uri.char_indices() {
        let allowed = c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=".contains(c);
        if c == '%' {
            let escape_ok = bytes
                .get(at + 1..at + 3)
                .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit));
            if !escape_ok {
                return Err(fail(format!(
                    "'%' at byte {at} does not start an escape like %20; write '%' as %25"
                )));
            }
        } else if !allowed {
            return Err(fail(format!(
                "{c:?} at byte {at} is not allowed in a URI; percent-encode it"
            )));
        }
    }
    Ok(())
}

/// Gives a resource added by hand another URI; a collection's URI comes from its file's path.
/// A name that was the old URI's last segment (the file name `resource add` gives) follows
/// the URI; the MIME type and the other metadata stay.
fn rename(store: &Store, old: &str, new: &str, json: bool) -> Result<()> {
    if old == new {
        return Err(anyhow!(
            "'{}' is the resource's URI already; give it another one",
            common::one_line(new)
        ));
    }
    check_uri(new, "the new URI")?;
    let moved = store.write(|tx| {
        let Some(stored) = store::read::resource(tx, old)? else {
            return Ok(common::Moved::Missing);
        };
        if stored.info.origin.collection.is_some() {
            return Ok(common::Moved::Imported(stored.info.origin));
        }
        if store::read::resource(tx, new)?.is_some() {
            return Ok(common::Moved::Taken);
        }
        let name = if stored.info.name == common::last_segment(old) {
            common::last_segment(new)
        } else {
            stored.info.name
        };
        store::write::rename_resource(tx, old, new, &name, store::now_ms())?;
        Ok(common::Moved::Done)
    })?;
    match moved {
        common::Moved::Done => {}
        common::Moved::Missing => return Err(common::unknown_resource(&*store.conn()?, old)?),
        common::Moved::Imported(origin) => {
            let what = format!("resource {}", common::one_line(old));
            return Err(common::imported_item(store, &what, &origin, |file| {
                format!("rename the file {file}")
            })?);
        }
        common::Moved::Taken => {
            return Err(anyhow!(
                "there is a resource {} already; choose another URI, or remove that one first \
                 with `promptshelf resource rm {}`",
                common::one_line(new),
                common::one_line(new)
            ));
        }
    }
    // Embeds and links are written as URIs: the items that name the old one now point at
    // nothing, and only their authors can say what they meant.
    let referring = store::read::referring_to(&*store.conn()?, old)?;
    if !referring.is_empty() {
        let named: Vec<String> = referring
            .iter()
            .map(|(kind, key)| format!("{kind} {}", common::one_line(key)))
            .collect();
        eprintln!(
            "warning: {} still {} to {}, which is gone now; change {} to {}",
            named.join(", "),
            if referring.len() == 1 {
                "refers"
            } else {
                "refer"
            },
            common::one_line(old),
            if referring.len() == 1 { "it" } else { "them" },
            common::one_line(new)
        );
    }
    let referred_by = referring
        .iter()
        .map(|(kind, key)| common::Reference { kind, key })
        .collect();
    common::report_renamed(json, "resource", old, new, Some(referred_by))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_checked() {
        assert!(check_uri("shelf://local/a%20b.md", "--uri").is_ok());
        assert!(check_uri("https://example.com/x?y=1#z", "--uri").is_ok());
        for bad in [
            "no-scheme",
            "1x://a",
            "shelf://a b",
            "shelf://a%zz",
            "shelf://ä",
            "shelf://a%",
        ] {
            assert!(check_uri(bad, "--uri").is_err(), "{bad}");
        }
    }
}
