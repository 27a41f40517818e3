//! `promptshelf prompt`: list, show, add (from a markdown file), rename and remove prompts
//! (`edit` is in `cmd::edit`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{Result, anyhow};
use serde::Serialize;

use super::common::{self, Table};
use super::{label, prompt_check};
use crate::arguments::ArgumentProblem;
use crate::cli::PromptCommand;
use crate::library::{self, Item};
use crate::model::{Meta, Origin, PromptArgument, Provenance, StoredPrompt};
use crate::store::history::Kind;
use crate::store::{self, Store};

pub(super) fn run(store: &Store, command: PromptCommand) -> Result<()> {
    match command {
        PromptCommand::List(flags) => list(store, flags.json),
        PromptCommand::Show { name, json } => show(store, &name, json),
        PromptCommand::Render {
            name,
            args,
            json,
            stray,
        } => render(store, &name, &arguments(&args, &stray)?, json),
        PromptCommand::Add { file, detach, json } => add(store, &file, detach, json),
        PromptCommand::Edit { name } => super::edit::prompt(store, &name),
        PromptCommand::Mv { old, new, json } => rename(store, &old, &new, json),
        PromptCommand::Rm { name, detach, json } => {
            common::remove_item(store, Kind::Prompt, &name, detach, json)
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PromptView<'a> {
    name: &'a str,
    title: Option<&'a str>,
    description: Option<&'a str>,
    arguments: Vec<ArgumentView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<Vec<MessageView<'a>>>,
    collection: Option<&'a str>,
    origin: Option<&'a str>,
    last_modified: String,
    content_hash: String,
    /// What a server gives as its `_meta` provenance.
    provenance: Provenance,
    /// The front matter keys of its file that the format does not read, kept as they are.
    #[serde(skip_serializing_if = "Meta::is_empty")]
    front_matter: &'a Meta,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArgumentView<'a> {
    name: &'a str,
    title: Option<&'a str>,
    description: Option<&'a str>,
    required: bool,
    #[serde(rename = "type")]
    kind: &'static str,
    default: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    values: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pattern: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_length: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max: Option<f64>,
    completion: Option<&'a str>,
}

#[derive(Serialize)]
struct MessageView<'a> {
    role: &'static str,
    body: &'a str,
}

fn view(stored: &StoredPrompt, with_messages: bool) -> PromptView<'_> {
    let prompt = &stored.prompt;
    PromptView {
        name: &prompt.name,
        title: prompt.title.as_deref(),
        description: prompt.description.as_deref(),
        arguments: prompt.arguments.iter().map(argument_view).collect(),
        messages: with_messages.then(|| {
            prompt
                .messages
                .iter()
                .map(|message| MessageView {
                    role: message.role.as_str(),
                    body: &message.body,
                })
                .collect()
        }),
        collection: prompt.origin.collection.as_deref(),
        origin: prompt.origin.path.as_deref(),
        last_modified: common::timestamp(stored.last_modified),
        content_hash: store::hex(&stored.content_hash),
        provenance: stored.provenance(),
        front_matter: &prompt.meta,
    }
}

fn argument_view(arg: &PromptArgument) -> ArgumentView<'_> {
    ArgumentView {
        name: &arg.name,
        title: arg.title.as_deref(),
        description: arg.description.as_deref(),
        required: arg.required,
        kind: arg.kind.as_str(),
        default: arg.default.as_deref(),
        values: &arg.values,
        pattern: arg.pattern.as_deref(),
        max_length: arg.max_length,
        min: arg.min,
        max: arg.max,
        completion: arg.completion.as_deref(),
    }
}

fn list(store: &Store, json: bool) -> Result<()> {
    let prompts = store::read::prompts(&*store.conn()?, store::read::Window::ALL, false)?;
    if json {
        let views: Vec<PromptView> = prompts.iter().map(|p| view(p, false)).collect();
        return common::print_json(&views);
    }
    let mut table = Table::new(&["NAME", "ARGS", "TITLE"]);
    for stored in &prompts {
        let prompt = &stored.prompt;
        // Optional arguments in brackets, as in a usage line.
        let args: Vec<String> = prompt
            .arguments
            .iter()
            .map(|arg| {
                if arg.required {
                    arg.name.clone()
                } else {
                    format!("[{}]", arg.name)
                }
            })
            .collect();
        table.row(vec![
            prompt.name.clone(),
            args.join(" "),
            prompt.title.clone().unwrap_or_default(),
        ]);
    }
    table.print("no prompts (add one with `promptshelf prompt add FILE`)")
}

fn show(store: &Store, name: &str, json: bool) -> Result<()> {
    let stored = common::stored_prompt(store, name)?;
    let labels = label::of_item(&*store.conn()?, Kind::Prompt, &stored.prompt.name)?;
    if json {
        return common::print_json(&label::Labelled {
            item: view(&stored, true),
            labels,
        });
    }
    let prompt = &stored.prompt;
    let mut out = common::stdout();
    let mut facts = vec![
        ("name", prompt.name.clone()),
        ("title", prompt.title.clone().unwrap_or_default()),
        (
            "description",
            prompt.description.clone().unwrap_or_default(),
        ),
        ("from", common::origin(&prompt.origin)),
        ("modified", common::timestamp(stored.last_modified)),
        ("hash", store::hex(&stored.content_hash)),
        ("labels", label::fact(&labels)),
    ];
    facts.extend(common::provenance_facts(&stored.provenance()));
    common::write_facts(&mut out, &facts)?;
    if !prompt.arguments.is_empty() {
        writeln!(out)?;
        let mut table = Table::new(&[
            "ARGUMENT",
            "TYPE",
            "REQUIRED",
            "DEFAULT",
            "COMPLETES FROM",
            "DESCRIPTION",
        ]);
        for arg in &prompt.arguments {
            table.row(vec![
                arg.name.clone(),
                argument_type(arg),
                if arg.required { "yes" } else { "no" }.to_string(),
                arg.default.clone().unwrap_or_default(),
                arg.completion.clone().unwrap_or_default(),
                arg.description.clone().unwrap_or_default(),
            ]);
        }
        table.write(&mut out, common::terminal_width())?;
    }
    common::write_kept(&mut out, &prompt.meta)?;
    for message in &prompt.messages {
        writeln!(out, "\n--- {}", message.role.as_str())?;
        writeln!(out, "{}", message.body)?;
    }
    out.flush()?;
    Ok(())
}

/// The type with its constraints, short: `enum (3 values)`, `integer 1..500`, `string <= 200`.
fn argument_type(arg: &PromptArgument) -> String {
    let mut text = arg.kind.as_str().to_string();
    if !arg.values.is_empty() {
        text.push_str(&format!(" ({} values)", arg.values.len()));
    }
    let bound = |n: Option<f64>| n.map(|n| n.to_string()).unwrap_or_default();
    if arg.min.is_some() || arg.max.is_some() {
        text.push_str(&format!(" {}..{}", bound(arg.min), bound(arg.max)));
    }
    if let Some(max_length) = arg.max_length {
        text.push_str(&format!(" <= {max_length} chars"));
    }
    if let Some(pattern) = &arg.pattern {
        text.push_str(&format!(" /{pattern}/"));
    }
    text
}

/// What a prompt read from standard input is read as.
const STDIN_NAME: &str = "stdin.prompt.md";

fn add(store: &Store, file: &Path, detach: bool, json: bool) -> Result<()> {
    let bytes = common::read_input(file)?;
    let shown = common::shown(file);
    let item = if common::is_stdin(file) {
        // Standard input has no file name to say what it is: it is read as a prompt file.
        common::parse_named(&shown, STDIN_NAME, &bytes, crate::library::Folder::Plain)?
    } else {
        common::parse_local_file(file, &bytes, common::folder_of(file))?
    };
    let mut prompt = match item {
        Item::Prompt(prompt) => prompt,
        _ => {
            return Err(anyhow!(
                "{shown} is not a prompt: name it *.prompt.md or put `kind: prompt` in its front \
                 matter (to store it as a document, use `promptshelf resource add {shown}`)"
            ));
        }
    };
    let name = if common::is_stdin(file) {
        STDIN_NAME.to_string()
    } else {
        common::file_name(file)?
    };
    common::warn_hidden(&shown, &name, &bytes);
    // Added by hand, so it belongs to no imported collection.
    prompt.origin = Origin::default();
    let problems = prompt_check::problems(store, &prompt, &shown, &bytes)?;
    if !problems.is_empty() {
        for problem in &problems {
            eprintln!("{}", common::one_line(&problem.to_string()));
        }
        return Err(anyhow!(
            "prompt '{}' is not added: {}; fix {shown} and add it again",
            common::one_line(&prompt.name),
            common::count(problems.len() as u64, "problem", "problems"),
        ));
    }
    let tables = common::table_names(store)?;
    let name = common::one_line(&prompt.name);
    let (outcome, replacing) = common::put_by_hand(
        store,
        Kind::Prompt,
        &prompt.name,
        detach,
        |tx| store::write::put_prompt(tx, &prompt, store::now_ms()),
        |owner, import| {
            anyhow!(
                "prompt '{name}' {owner}; change that file and run `{import}` (`promptshelf \
                 prompt edit {name}` does both), or pass --detach to replace it with {shown} as \
                 a prompt added by hand, which imports of the collection then leave alone"
            )
        },
    )?;
    let line = common::outcome_line(outcome, "prompt", &prompt.name, "", &replacing.note());
    common::note_missing_tables(
        prompt
            .arguments
            .iter()
            .filter_map(|arg| arg.completion.as_ref()),
        &tables,
    );
    let report = common::ItemReport::new(common::action(outcome), "prompt", &prompt.name);
    common::report(json, &line, &report)
}

/// Renames a prompt added by hand; a collection's prompt is named by its file.
fn rename(store: &Store, old: &str, new: &str, json: bool) -> Result<()> {
    if old == new {
        return Err(anyhow!(
            "'{}' is the prompt's name already; give it another one",
            common::one_line(new)
        ));
    }
    crate::library::validate_name(new).map_err(|message| anyhow!("{message}"))?;
    let moved = store.write(|tx| {
        let Some(stored) = store::read::prompt(tx, old)? else {
            return Ok(common::Moved::Missing);
        };
        if stored.prompt.origin.collection.is_some() {
            return Ok(common::Moved::Imported(stored.prompt.origin));
        }
        if store::read::prompt(tx, new)?.is_some() {
            return Ok(common::Moved::Taken);
        }
        store::write::rename_prompt(tx, old, new, store::now_ms())?;
        Ok(common::Moved::Done)
    })?;
    match moved {
        common::Moved::Done => {}
        common::Moved::Missing => {
            return Err(common::unknown_prompt(&*store.conn()?, old)?);
        }
        common::Moved::Imported(origin) => {
            let what = format!("prompt '{}'", common::one_line(old));
            let change = renamed_in_file(store, &origin, old, &common::one_line(new))?;
            return Err(common::imported_item(store, &what, &origin, change)?);
        }
        common::Moved::Taken => {
            return Err(anyhow!(
                "there is a prompt '{}' already; choose another name, or remove that one first \
                 with `promptshelf prompt rm {}`",
                common::one_line(new),
                common::one_line(new)
            ));
        }
    }
    common::report_renamed(json, "prompt", old, new, None)
}

/// How the prompt `old` of a collection, from its file at `origin`, is given the name `new`
/// there, said of its file: as its dialect names it (`import::rename_fix`), and with the
/// prefix the collection puts before the name its file gives, if any.
fn renamed_in_file(
    store: &Store,
    origin: &Origin,
    old: &str,
    new: &str,
) -> Result<impl FnOnce(&str) -> String + use<>> {
    let collection = origin.collection.as_deref().unwrap_or_default();
    let path = origin.path.as_deref().unwrap_or_default();
    let conn = store.conn()?;
    let (layout, bytes) = match common::collection_source(store, collection)? {
        Some(dir) => (
            crate::import::layout_of(&conn, collection, &dir)?,
            std::fs::read(common::item_file(&dir, path)).ok(),
        ),
        None => (library::Folder::Plain, None),
    };
    let text = bytes
        .as_deref()
        .and_then(|bytes| std::str::from_utf8(bytes).ok());
    let (_, fix) = crate::import::rename_fix(path, layout, text);
    let read = library::Collection {
        name: collection.to_string(),
        scheme: library::DEFAULT_SCHEME.to_string(),
    };
    let own = bytes
        .and_then(|bytes| library::parse_file_kept(&read, path, layout, &bytes).ok())
        .flatten()
        .and_then(|item| match item {
            Item::Prompt(prompt) => Some(prompt.name),
            _ => None,
        });
    let prefix = crate::import::prefix_of(&conn, old, collection, own.as_deref())?;
    let new = new.to_string();
    Ok(move |file: &str| crate::import::rename_advice(file, fix, prefix.as_deref(), &new))
}

/// The `--arg NAME=VALUE` flags as argument values: `@FILE` reads a file, `@-` standard
/// input, `@@` stands for a leading `@`. `stray` are words given without `--arg`.
fn arguments(args: &[String], stray: &[String]) -> Result<BTreeMap<String, String>> {
    if let Some(word) = stray.first() {
        let example = if word.contains('=') {
            format!("--arg {word}")
        } else {
            "--arg NAME=VALUE".to_string()
        };
        return Err(anyhow!(
            "unexpected '{word}' after the prompt name; give argument values with --arg, e.g. \
             {example}"
        ));
    }
    let mut arguments = BTreeMap::new();
    let mut stdin_read_by: Option<&str> = None;
    for arg in args {
        let Some((key, given)) = arg.split_once('=').filter(|(key, _)| !key.is_empty()) else {
            return Err(anyhow!(
                "--arg '{arg}' is not NAME=VALUE; write e.g. --arg language=rust"
            ));
        };
        if arguments.contains_key(key) {
            return Err(anyhow!(
                "--arg {key} is given twice; give each argument once"
            ));
        }
        let value = if let Some(literal) = given.strip_prefix("@@") {
            format!("@{literal}")
        } else if given == "@-" {
            if let Some(first) = stdin_read_by {
                return Err(anyhow!(
                    "--arg {first} and --arg {key} both read standard input; read one of them \
                     from a file with {key}=@FILE"
                ));
            }
            stdin_read_by = Some(key);
            text_of(common::read_input(Path::new("-"))?, "standard input", key)?
        } else if let Some(file) = given.strip_prefix('@') {
            text_of(common::read_file(Path::new(file))?, file, key)?
        } else {
            given.to_string()
        };
        arguments.insert(key.to_string(), value);
    }
    Ok(arguments)
}

/// Bytes read for an argument, as its text.
fn text_of(bytes: Vec<u8>, source: &str, key: &str) -> Result<String> {
    String::from_utf8(bytes)
        .map_err(|_| anyhow!("{source} is not UTF-8 text, which the value of --arg {key} must be"))
}

/// "prompt 'review' needs the required argument 'code'; give it with --arg code=VALUE".
fn missing_arguments(prompt: &str, missing: &[PromptArgument]) -> anyhow::Error {
    let names: Vec<String> = missing
        .iter()
        .map(|arg| format!("'{}'", arg.name))
        .collect();
    let flags: Vec<String> = missing
        .iter()
        .map(|arg| format!("--arg {}=VALUE", arg.name))
        .collect();
    let (plural, them) = if missing.len() == 1 {
        ("", "it")
    } else {
        ("s", "them")
    };
    anyhow!(
        "prompt '{prompt}' needs the required argument{plural} {}; give {them} with {} \
         (NAME=@FILE takes the value from a file)",
        names.join(", "),
        flags.join(" ")
    )
}

/// Renders through the same handler `prompts/get` uses, so the preview is what a host gets.
fn render(
    store: &Store,
    name: &str,
    arguments: &BTreeMap<String, String>,
    json: bool,
) -> Result<()> {
    let conn = store.conn()?;
    let config = crate::config::ServeConfig::default();
    let secret = store::read::secret(&conn)?;
    let params = crate::protocol::GetPromptParams {
        name: name.to_string(),
        arguments: arguments.clone(),
        input_responses: None,
        request_state: None,
    };
    let caller = crate::handlers::prompts::Caller {
        can_elicit: false,
        now: store::now_ms(),
    };
    let stored = store::read::prompt(&conn, name)?.ok_or_else(|| {
        let failure = crate::handlers::prompts::unknown(
            &conn,
            name,
            &crate::visibility::Visibility::EVERYTHING,
        );
        anyhow!("{}", failure.message())
    })?;
    // The command line sends no requestState: nothing to remember but what it compiles.
    let retained = crate::handlers::prompts::Retained::new(1);
    // The handler names a missing argument as an MCP client gives it; here it is a flag.
    if let Err(ArgumentProblem::Missing(missing)) =
        crate::arguments::resolve(&stored.prompt, arguments, &retained.patterns)
    {
        return Err(missing_arguments(name, &missing));
    }
    let outcome = crate::handlers::prompts::get(
        &config,
        &secret,
        &params,
        &stored,
        &|uri| crate::handlers::resources::stored(&conn, uri),
        caller,
        &retained,
    )
    .map_err(|failure| anyhow!("{}", failure.message()))?;
    if json {
        let shaper = crate::protocol::Shaper {
            revision: crate::protocol::Revision::MODERN,
            config: &config,
            now: caller.now,
            label: None,
        };
        return common::print_json(&shaper.prompt_result(&outcome));
    }
    let crate::protocol::PromptOutcome::Rendered { prompt, .. } = outcome else {
        return Err(anyhow!(
            "prompt '{name}' asked for input instead of rendering"
        ));
    };
    let mut out = common::stdout();
    for message in &prompt.messages {
        writeln!(out, "--- {}", message.role.as_str())?;
        match &message.block {
            crate::protocol::Block::Text(text) => writeln!(out, "{text}")?,
            crate::protocol::Block::Embedded(read) => {
                writeln!(
                    out,
                    "[embedded {} ({}, {})]",
                    read.resource.info.uri,
                    read.resource.info.mime_type,
                    common::human_size(read.resource.size)
                )?;
                if let Some(text) = read.body.text() {
                    writeln!(out, "{text}")?;
                }
            }
            crate::protocol::Block::Media { read, .. } => writeln!(
                out,
                "[{} {} ({})]",
                read.resource.info.mime_type,
                read.resource.info.uri,
                common::human_size(read.resource.size)
            )?,
            crate::protocol::Block::Link(read) => writeln!(
                out,
                "[link {} ({}){}]",
                read.resource.info.uri,
                read.resource.info.mime_type,
                read.resource
                    .info
                    .title
                    .as_deref()
                    .map(|title| format!(": {title}"))
                    .unwrap_or_default()
            )?,
        }
    }
    out.flush()?;
    Ok(())
}
