//! Tool mirrors (`serve --tools`): the library's prompts and resources, and its search,
//! offered as tools too, for hosts that use tools and show no prompts or resources. Which tools each mirror
//! offers, their input schemas and descriptions (`list`), and what a call's input asks for
//! (`call`): one of the requests the prompts and resources handlers already answer, which
//! the server then answers as it answers those (same cache, same checks, same sentences).
//!
//! `get_prompt` is one tool for every prompt, not one tool per prompt: hosts cap how many
//! tools they take (and every tool costs the model context), tool names have rules prompt
//! names need not follow, and a library's prompts change while a host keeps its tool list.
//! Each prompt's typed arguments are in its input schema all the same: `name` lists the
//! prompts, and a JSON Schema 2020-12 conditional per prompt (`if` the name is this one,
//! `then` `arguments` is that prompt's object) gives its arguments' types, enums, patterns
//! and bounds, in the prompt's order; the description lists the prompts and their arguments
//! in words, for hosts and models that read no conditionals.

use rusqlite::Connection;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::{prompts, search};
use crate::arguments::{self, ObjectSchema};
use crate::config::{Mirror, Mirrors};
use crate::model::StoredPrompt;
use crate::protocol::{CallToolParams, Failure, GetPromptParams, Tool, ToolList, ToolOutput};
use crate::visibility::Visibility;

const LIST_PROMPTS: &str = "list_prompts";
const GET_PROMPT: &str = "get_prompt";
const LIST_RESOURCES: &str = "list_resources";
const READ_RESOURCE: &str = "read_resource";
const SEARCH_LIBRARY: &str = "search_library";

/// How many prompts `get_prompt`'s schema and description name at most: beyond them, the
/// tool list would grow with the library (`list_prompts` pages through the rest).
pub(crate) const DESCRIBED_PROMPTS: usize = 100;

const SCHEMA_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// What a `tools/call` asks for: a request the prompts and resources handlers answer, or
/// input that does not fit the tool.
#[derive(Debug)]
pub(crate) enum Call {
    ListPrompts {
        cursor: Option<String>,
    },
    GetPrompt(GetPromptParams),
    ListResources {
        cursor: Option<String>,
    },
    ReadResource {
        uri: String,
    },
    /// This sentence, answered as the tool's error: the model reads it and can call again.
    Refused(String),
}

/// The tools the mirrors that are on offer, in a fixed order (prompts' first, then
/// resources'). `conn` reads the first prompts `seen` shows, which `get_prompt` describes.
pub(crate) fn list(
    conn: &Connection,
    mirrors: &Mirrors,
    cursor: Option<&str>,
    seen: &Visibility,
) -> Result<ToolList, Failure> {
    if cursor.is_some() {
        return Err(Failure::InvalidParams(
            "invalid cursor: the tool list has one page; call tools/list without a cursor".into(),
        ));
    }
    let mut tools = Vec::new();
    let mut last_modified = 0;
    if mirrors.has(Mirror::Prompts) {
        let described = prompts::page(conn, None, DESCRIBED_PROMPTS, seen)?;
        last_modified = described.last_modified;
        tools.push(Tool {
            name: LIST_PROMPTS,
            title: "List prompts",
            description: "List the library's prompt templates, a page at a time: each with its name, title, description and typed arguments. Pass a page's nextCursor back as cursor for the next page. get_prompt fills one.".into(),
            input_schema: raw(&page_input("prompt")),
            output: ToolOutput::Prompts,
        });
        let more = described.next_cursor.is_some();
        tools.push(Tool {
            name: GET_PROMPT,
            title: "Get a prompt",
            description: get_prompt_description(&described.items, more),
            input_schema: raw(&get_prompt_input(&described.items, more)),
            output: ToolOutput::Prompt,
        });
    }
    if mirrors.has(Mirror::Resources) {
        tools.push(Tool {
            name: LIST_RESOURCES,
            title: "List resources",
            description: "List the library's reference documents and files, a page at a time: each with its URI, name, title, description, MIME type and size. Pass a page's nextCursor back as cursor for the next page. read_resource reads one.".into(),
            input_schema: raw(&page_input("resource")),
            output: ToolOutput::Resources,
        });
        tools.push(Tool {
            name: READ_RESOURCE,
            title: "Read a resource",
            description: "Read one of the library's resources by its URI (list_resources lists them): text as text, other files as base64.".into(),
            input_schema: raw(&json!({
                "$schema": SCHEMA_DIALECT,
                "type": "object",
                "properties": {
                    "uri": {"type": "string", "title": "URI", "description": "The resource's URI, e.g. shelf://library/guides/api-design.md"},
                },
                "required": ["uri"],
                "additionalProperties": false,
            })),
            output: ToolOutput::Contents,
        });
    }
    if mirrors.has(Mirror::Search) {
        tools.push(Tool {
            name: SEARCH_LIBRARY,
            title: "Search the library",
            description: "Search the library's prompts and documents by words: names, titles, descriptions, prompt text and document text. Returns the best 20 hits, best first, as a markdown list, each with its URI or prompt name, title and the matching words in context. A word ending in * matches the words it starts; \"two words\" in quotes is a phrase; every word must match.".into(),
            input_schema: raw(&json!({
                "$schema": SCHEMA_DIALECT,
                "type": "object",
                "properties": {
                    "query": {"type": "string", "title": "Query", "minLength": 1, "description": "The words to look for, e.g. code review checklist"},
                },
                "required": ["query"],
                "additionalProperties": false,
            })),
            output: ToolOutput::Contents,
        });
    }
    Ok(ToolList {
        tools,
        last_modified,
    })
}

/// What `params` asks for. A tool no mirror that is on offers is the request's error (the
/// client named something that is not there); input that does not fit the tool is the
/// tool's (`Call::Refused`).
pub(crate) fn call(mirrors: &Mirrors, params: &CallToolParams) -> Result<Call, Failure> {
    let name = params.name.as_str();
    let offered = match name {
        LIST_PROMPTS | GET_PROMPT => mirrors.has(Mirror::Prompts),
        LIST_RESOURCES | READ_RESOURCE => mirrors.has(Mirror::Resources),
        SEARCH_LIBRARY => mirrors.has(Mirror::Search),
        _ => false,
    };
    if !offered {
        return Err(Failure::InvalidParams(format!(
            "unknown tool '{name}'; this server's tools are: {} (tools/list describes them)",
            offered_names(mirrors).join(", ")
        )));
    }
    let input = &params.arguments;
    Ok(match name {
        LIST_PROMPTS => match fit::<PageInput>(name, input, "cursor (optional)") {
            Ok(page) => Call::ListPrompts {
                cursor: page.cursor,
            },
            Err(refused) => refused,
        },
        LIST_RESOURCES => match fit::<PageInput>(name, input, "cursor (optional)") {
            Ok(page) => Call::ListResources {
                cursor: page.cursor,
            },
            Err(refused) => refused,
        },
        READ_RESOURCE => match fit::<ReadInput>(name, input, "uri") {
            Ok(read) => Call::ReadResource { uri: read.uri },
            Err(refused) => refused,
        },
        // A search is the read of the search template's URI for the query.
        SEARCH_LIBRARY => match fit::<SearchInput>(name, input, "query") {
            Ok(query) => match search::uri_of(&query.query) {
                Ok(uri) => Call::ReadResource { uri },
                Err(failure) => Call::Refused(failure.message().to_string()),
            },
            Err(refused) => refused,
        },
        _ => match fit::<PromptInput>(name, input, "name and arguments (an object)") {
            Ok(prompt) => prompt_params(prompt),
            Err(refused) => refused,
        },
    })
}

/// The sentence a failure of the mirrored request becomes as the tool's error, when it is
/// about the call's input (an unknown prompt or resource, a value that does not fit, a
/// missing argument); the library's and the server's own failures stay errors of the
/// request.
pub(crate) fn refusal(failure: Failure) -> Result<String, Failure> {
    match failure {
        Failure::InvalidParams(message) | Failure::ResourceNotFound { message, .. } => Ok(message),
        Failure::Internal(_) => Err(failure),
    }
}

fn offered_names(mirrors: &Mirrors) -> Vec<&'static str> {
    let mut names = Vec::new();
    if mirrors.has(Mirror::Prompts) {
        names.extend([LIST_PROMPTS, GET_PROMPT]);
    }
    if mirrors.has(Mirror::Resources) {
        names.extend([LIST_RESOURCES, READ_RESOURCE]);
    }
    if mirrors.has(Mirror::Search) {
        names.push(SEARCH_LIBRARY);
    }
    names
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PageInput {
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    uri: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchInput {
    query: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptInput {
    name: String,
    #[serde(default)]
    arguments: Map<String, Value>,
}

/// The tool's input as `T`, or the tool error saying what it takes.
fn fit<T: DeserializeOwned>(
    tool: &str,
    input: &Map<String, Value>,
    takes: &str,
) -> Result<T, Call> {
    serde_json::from_value(Value::Object(input.clone())).map_err(|err| {
        Call::Refused(format!(
            "tool '{tool}' takes {takes}: {err}; see its input schema in tools/list"
        ))
    })
}

/// `prompts/get`'s params from `get_prompt`'s input. MCP gives prompts their values as
/// strings; a tool's input is JSON, so numbers and true/false are taken as their text (the
/// prompt's own checks then apply), and null as not given.
fn prompt_params(input: PromptInput) -> Call {
    let mut arguments = std::collections::BTreeMap::new();
    for (argument, value) in input.arguments {
        let text = match value {
            Value::String(text) => text,
            Value::Number(number) => number.to_string(),
            Value::Bool(flag) => flag.to_string(),
            Value::Null => continue,
            Value::Array(_) | Value::Object(_) => {
                return Call::Refused(format!(
                    "argument '{argument}' of prompt '{}' is {value}; give a string, a number or true/false",
                    input.name
                ));
            }
        };
        arguments.insert(argument, text);
    }
    Call::GetPrompt(GetPromptParams {
        name: input.name,
        arguments,
        input_responses: None,
        request_state: None,
    })
}

fn raw(value: &impl Serialize) -> Box<RawValue> {
    // Plain maps, strings and numbers always serialize.
    serde_json::value::to_raw_value(value).unwrap_or_default()
}

/// `list_prompts`' and `list_resources`' input: an optional cursor.
fn page_input(kind: &str) -> Value {
    json!({
        "$schema": SCHEMA_DIALECT,
        "type": "object",
        "properties": {
            "cursor": {
                "type": "string",
                "title": "Cursor",
                "description": format!("The nextCursor of the previous page; leave out for the first page of {kind}s"),
            },
        },
        "additionalProperties": false,
    })
}

/// `get_prompt`'s input: `name` (one of `described` unless there are `more`), and
/// `arguments`, typed per prompt by a conditional.
#[derive(Serialize)]
struct GetPromptInput {
    #[serde(rename = "$schema")]
    dialect: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    properties: GetPromptProperties,
    required: [&'static str; 1],
    #[serde(rename = "additionalProperties")]
    additional_properties: bool,
    #[serde(rename = "allOf", skip_serializing_if = "Vec::is_empty")]
    all_of: Vec<ForPrompt>,
}

/// `name` before `arguments`, as a form shows them.
#[derive(Serialize)]
struct GetPromptProperties {
    name: Value,
    arguments: Value,
}

/// If `name` is this prompt's (`named`), `arguments` is its arguments' object.
#[derive(Serialize)]
struct ForPrompt {
    #[serde(rename = "if")]
    named: Value,
    then: ArgumentsAre,
}

#[derive(Serialize)]
struct ArgumentsAre {
    properties: ArgumentsProperty,
}

#[derive(Serialize)]
struct ArgumentsProperty {
    arguments: ObjectSchema,
}

fn get_prompt_input(described: &[StoredPrompt], more: bool) -> GetPromptInput {
    let mut name = json!({
        "type": "string",
        "title": "Prompt",
        "description": "The prompt's name (the tool's description lists them; list_prompts lists them all)",
    });
    if !more {
        let names: Vec<&str> = described.iter().map(|p| p.prompt.name.as_str()).collect();
        name["enum"] = json!(names);
    }
    let all_of = described
        .iter()
        .map(|stored| {
            let prompt = &stored.prompt;
            let required = prompt
                .arguments
                .iter()
                .filter(|arg| arg.required && arg.default.is_none())
                .map(|arg| arg.name.clone())
                .collect();
            ForPrompt {
                named: json!({"properties": {"name": {"const": prompt.name}}, "required": ["name"]}),
                then: ArgumentsAre {
                    properties: ArgumentsProperty {
                        arguments: ObjectSchema::of(
                            &prompt.arguments,
                            arguments::field_schema,
                            required,
                            true,
                        ),
                    },
                },
            }
        })
        .collect();
    GetPromptInput {
        dialect: SCHEMA_DIALECT,
        kind: "object",
        properties: GetPromptProperties {
            name,
            arguments: json!({
                "type": "object",
                "title": "Arguments",
                "description": "The prompt's arguments by name: strings, or numbers and true/false for typed ones",
            }),
        },
        required: ["name"],
        additional_properties: false,
        all_of,
    }
}

fn get_prompt_description(described: &[StoredPrompt], more: bool) -> String {
    let mut text = String::from(
        "Fill one of the library's prompt templates with its arguments and return its messages (what MCP prompts/get returns), to follow as instructions. A value that does not fit, an unknown argument or a missing required one comes back as an error saying which and how to fix it.\n\nPrompts:",
    );
    for stored in described {
        let prompt = &stored.prompt;
        text.push_str("\n- ");
        text.push_str(&prompt.name);
        if let Some(title) = &prompt.title {
            text.push_str(&format!(" ({title})"));
        }
        if let Some(description) = &prompt.description {
            text.push_str(": ");
            text.push_str(description);
        }
        for arg in &prompt.arguments {
            let required = if arg.required && arg.default.is_none() {
                ", required"
            } else {
                ""
            };
            text.push_str(&format!(
                "\n  - {} ({}{required}): {}",
                arg.name,
                arg.kind.as_str(),
                arguments::describe(arg)
            ));
        }
    }
    if more {
        text.push_str(&format!(
            "\n- ...: these are the first {DESCRIBED_PROMPTS}; list_prompts lists them all, with their arguments"
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mirrors() -> Mirrors {
        Mirrors::of([Mirror::Prompts, Mirror::Resources])
    }

    fn params(name: &str, arguments: Value) -> CallToolParams {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object");
        };
        CallToolParams {
            name: name.into(),
            arguments,
        }
    }

    #[test]
    fn input_is_taken_as_the_request_it_mirrors_or_refused_with_a_sentence() {
        let taken = call(
            &mirrors(),
            &params(
                GET_PROMPT,
                json!({"name": "p", "arguments": {"n": 5, "flag": true, "text": "x", "gone": null}}),
            ),
        );
        let Ok(Call::GetPrompt(get)) = taken else {
            panic!("{taken:?}");
        };
        assert_eq!(
            get.arguments.into_iter().collect::<Vec<_>>(),
            [("flag", "true"), ("n", "5"), ("text", "x")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        let refused = |name: &str, input: Value| match call(&mirrors(), &params(name, input)) {
            Ok(Call::Refused(sentence)) => sentence,
            other => panic!("{other:?}"),
        };
        assert!(refused(GET_PROMPT, json!({})).contains("missing field `name`"));
        assert!(
            refused(GET_PROMPT, json!({"name": "p", "arguments": {"a": [1]}}))
                .contains("argument 'a'")
        );
        assert!(refused(READ_RESOURCE, json!({"url": "x"})).contains("unknown field `url`"));
        assert!(refused(LIST_PROMPTS, json!({"cursor": 3})).contains("takes cursor"));
        // A tool no mirror that is on offers is not there.
        let only_resources = Mirrors::of([Mirror::Resources]);
        let unknown = call(&only_resources, &params(GET_PROMPT, json!({"name": "p"})));
        assert!(
            matches!(&unknown, Err(Failure::InvalidParams(m)) if m.contains("list_resources, read_resource")),
            "{unknown:?}"
        );
    }
}
