//! Argument types: checking values against them (MCP sends every value as a string; a bad
//! one gets a sentence naming the argument, what it expects and a value that would do), and
//! describing them to people and to clients as text and JSON Schema. Used by the handlers,
//! the result shapes and the library lint alike.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value, json};

use crate::memo::{ANY_POSITION, Memo};
use crate::model::{ArgumentType, Prompt, PromptArgument};
use crate::pattern::Pattern;

/// What is wrong with the arguments of a `prompts/get`.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgumentProblem {
    /// Names the prompt does not declare.
    Unknown(Vec<String>),
    /// A value that does not fit its type: the whole sentence.
    Invalid(String),
    /// Required arguments with no value (and no default), in declaration order.
    Missing(Vec<PromptArgument>),
    /// The prompt itself cannot check a value (its `pattern` is not a valid regex): the
    /// library's fault, not the request's. The whole sentence.
    Broken(String),
}

/// Why a value was not accepted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Misfit {
    /// The value does not fit the argument: the whole sentence for the client.
    Value(String),
    /// The argument's `pattern` is not a valid regex, so no value can be checked.
    Pattern(String),
}

/// The values to render with: given ones (checked), then defaults. An empty string counts
/// as not given, since hosts send "" for fields a person left blank.
pub fn resolve<'a>(
    prompt: &'a Prompt,
    given: &'a BTreeMap<String, String>,
    patterns: &Patterns,
) -> Result<BTreeMap<&'a str, &'a str>, ArgumentProblem> {
    let mut unknown: Vec<String> = given
        .keys()
        .filter(|name| !prompt.arguments.iter().any(|arg| &arg.name == *name))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        unknown.sort();
        return Err(ArgumentProblem::Unknown(unknown));
    }
    let mut values = BTreeMap::new();
    let mut missing = Vec::new();
    for arg in &prompt.arguments {
        match given.get(&arg.name).filter(|value| !value.is_empty()) {
            Some(value) => {
                check(&prompt.name, arg, value, patterns).map_err(|misfit| match misfit {
                    Misfit::Value(message) => ArgumentProblem::Invalid(message),
                    Misfit::Pattern(message) => ArgumentProblem::Broken(message),
                })?;
                values.insert(arg.name.as_str(), value.as_str());
            }
            None => match &arg.default {
                Some(default) => {
                    values.insert(arg.name.as_str(), default.as_str());
                }
                None if arg.required => missing.push(arg.clone()),
                None => {}
            },
        }
    }
    if missing.is_empty() {
        Ok(values)
    } else {
        Err(ArgumentProblem::Missing(missing))
    }
}

/// A value that fits `arg`, for messages and for `promptshelf check`.
pub(crate) fn example(arg: &PromptArgument) -> String {
    if let Some(default) = &arg.default {
        return default.clone();
    }
    match arg.kind {
        ArgumentType::String => "some text".to_string(),
        ArgumentType::Enum => arg.values.first().cloned().unwrap_or_default(),
        ArgumentType::Integer => {
            let value = arg.min.map(|min| min.ceil() as i64).unwrap_or(1);
            value.to_string()
        }
        ArgumentType::Number => arg.min.unwrap_or(1.5).to_string(),
        ArgumentType::Boolean => "true".to_string(),
        ArgumentType::Date => "2025-01-31".to_string(),
        ArgumentType::Uri => "https://example.com/page".to_string(),
    }
}

/// Whether `value` fits `arg` of the prompt `prompt`.
pub(crate) fn check(
    prompt: &str,
    arg: &PromptArgument,
    value: &str,
    patterns: &Patterns,
) -> Result<(), Misfit> {
    let expected = match arg.kind {
        ArgumentType::String => check_string(prompt, arg, value, patterns)?,
        ArgumentType::Enum => {
            if arg.values.iter().any(|allowed| allowed == value) {
                Ok(())
            } else {
                Err(format!("one of: {}", some_of(&arg.values)))
            }
        }
        ArgumentType::Integer => check_number(
            arg,
            value.parse::<i64>().ok().map(|n| n as f64),
            "an integer",
        ),
        ArgumentType::Number => check_number(
            arg,
            value.parse::<f64>().ok().filter(|n| n.is_finite()),
            "a number",
        ),
        ArgumentType::Boolean => match value.to_ascii_lowercase().as_str() {
            "true" | "false" | "yes" | "no" | "1" | "0" => Ok(()),
            _ => Err("true or false (also yes/no, 1/0)".to_string()),
        },
        ArgumentType::Date => value
            .parse::<jiff::civil::Date>()
            .map(|_| ())
            .map_err(|_| "a date as YYYY-MM-DD".to_string()),
        ArgumentType::Uri => {
            if is_uri(value) {
                Ok(())
            } else {
                Err("an absolute URI with a scheme".to_string())
            }
        }
    };
    expected.map_err(|expected| {
        Misfit::Value(format!(
            "argument '{}' of prompt '{prompt}' expects {expected}, e.g. '{}'; got '{}'",
            arg.name,
            example(arg),
            shorten(value)
        ))
    })
}

/// A string's checks: its length, then its pattern. The outer error is the prompt's fault,
/// the inner one the value's.
fn check_string(
    prompt: &str,
    arg: &PromptArgument,
    value: &str,
    patterns: &Patterns,
) -> Result<Result<(), String>, Misfit> {
    if let Some(max) = arg.max_length
        && value.chars().count() as u64 > max
    {
        return Ok(Err(format!("at most {max} characters")));
    }
    if let Some(pattern) = &arg.pattern {
        let regex = compiled_pattern(patterns, pattern).map_err(|err| {
            Misfit::Pattern(format!(
                "prompt '{prompt}' cannot check argument '{}': its pattern {pattern} is not a valid regular expression ({err}); fix the prompt in the library (`promptshelf check` lists such problems)",
                arg.name
            ))
        })?;
        if !regex.is_match(value) {
            return Ok(Err(format!("text matching the pattern {pattern}")));
        }
    }
    Ok(Ok(()))
}

/// Compiled patterns by their text: a pattern is compiled once, not on every request that
/// checks a value against it (compiling costs far more than matching). Kept within
/// `MAX_PATTERN_BYTES` as `Pattern::bytes` counts them, so however many patterns a library
/// holds, what they keep compiled is bounded in bytes. Owned by whoever checks values: the
/// server for as long as it serves, a command or a validation for its own run.
pub struct Patterns(Memo<String, Pattern>);

impl Default for Patterns {
    fn default() -> Patterns {
        Patterns(Memo::sized(MAX_PATTERN_BYTES, |_, pattern| pattern.bytes()))
    }
}

/// A library has a handful of patterns. Compiled, `[a-z0-9-]+` takes 2 KiB, a date of
/// Unicode digits `\d{4}-\d{2}-\d{2}` 67 KiB, `\w+` 87 KiB, `\w{20}` 1.6 MiB (Unicode
/// classes are large), so the budget keeps the last few of the largest kinds.
const MAX_PATTERN_BYTES: usize = 4 << 20;

/// An argument's `pattern` compiled as it is checked: anchored, so the whole value must
/// match, as in JSON Schema's intent for a form field. The error says why it is invalid.
pub(crate) fn compiled_pattern(patterns: &Patterns, pattern: &str) -> Result<Arc<Pattern>, String> {
    if let Some(kept) = patterns.0.get(pattern, ANY_POSITION) {
        return Ok(kept);
    }
    // One that does not compile is not kept: a library holds it only until the problem
    // `promptshelf check` reports is fixed.
    let compiled = Arc::new(Pattern::new(&format!("^(?:{pattern})$"))?);
    patterns
        .0
        .keep(pattern.to_string(), ANY_POSITION, &compiled);
    Ok(compiled)
}

/// "a, b, c" or "a, b, c and 12 more", for error messages that list what exists.
pub(crate) fn some_of(names: &[String]) -> String {
    const SHOWN: usize = 10;
    if names.is_empty() {
        return "none".to_string();
    }
    let shown = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        format!("{shown} and {} more", names.len() - SHOWN)
    } else {
        shown
    }
}

fn check_number(arg: &PromptArgument, parsed: Option<f64>, kind: &str) -> Result<(), String> {
    let range = match (arg.min, arg.max) {
        (Some(min), Some(max)) => format!("{kind} from {min} to {max}"),
        (Some(min), None) => format!("{kind} of at least {min}"),
        (None, Some(max)) => format!("{kind} of at most {max}"),
        (None, None) => kind.to_string(),
    };
    let Some(number) = parsed else {
        return Err(range);
    };
    if arg.min.is_some_and(|min| number < min) || arg.max.is_some_and(|max| number > max) {
        return Err(range);
    }
    Ok(())
}

/// RFC 3986 absolute URI: a scheme, ':', then no white space.
fn is_uri(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once(':') else {
        return false;
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    scheme_ok && !rest.is_empty() && !value.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Values can be whole files; quote only the start of a long one.
fn shorten(value: &str) -> String {
    const LIMIT: usize = 40;
    match value.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}...", &value[..at]),
        None => value.to_string(),
    }
}

/// What a person in a host needs to know to type a value: the author's description plus the
/// type, the allowed values and the default.
pub(crate) fn describe(arg: &PromptArgument) -> String {
    use std::fmt::Write;
    // Written into one string rather than a list of facts joined afterwards: every argument
    // of a `prompts/list` page is described, and making and joining the pieces was two
    // thirds of describing (callgrind, docs/benchmarks.md "A list page's own work").
    let description = arg.description.as_deref().unwrap_or_default();
    // Room for the description and the usual facts, so the string grows at most once.
    let mut text = String::with_capacity(description.len() + 64);
    text.push_str(description);
    let before_facts = text.len();
    let opening = if description.is_empty() { "(" } else { " (" };
    let fact = |text: &mut String| {
        text.push_str(if text.len() == before_facts {
            opening
        } else {
            "; "
        });
    };
    // `write!` into a `String` cannot fail.
    match arg.kind {
        ArgumentType::String => {
            if let Some(max) = arg.max_length {
                fact(&mut text);
                let _ = write!(text, "at most {max} characters");
            }
        }
        ArgumentType::Enum => {
            const SHOWN: usize = 12;
            fact(&mut text);
            let shown = if arg.values.len() <= SHOWN {
                text.push_str("one of: ");
                &arg.values[..]
            } else {
                let _ = write!(text, "one of {} values, e.g. ", arg.values.len());
                &arg.values[..5]
            };
            for (at, value) in shown.iter().enumerate() {
                if at > 0 {
                    text.push_str(", ");
                }
                text.push_str(value);
            }
        }
        ArgumentType::Integer | ArgumentType::Number => {
            let kind = if arg.kind == ArgumentType::Integer {
                "integer"
            } else {
                "number"
            };
            fact(&mut text);
            let _ = match (arg.min, arg.max) {
                (Some(min), Some(max)) => write!(text, "{kind} from {min} to {max}"),
                (Some(min), None) => write!(text, "{kind}, at least {min}"),
                (None, Some(max)) => write!(text, "{kind}, at most {max}"),
                (None, None) => write!(text, "{kind}"),
            };
        }
        ArgumentType::Boolean => {
            fact(&mut text);
            text.push_str("true or false");
        }
        ArgumentType::Date => {
            fact(&mut text);
            text.push_str("date, YYYY-MM-DD");
        }
        ArgumentType::Uri => {
            fact(&mut text);
            text.push_str("URI");
        }
    }
    if let Some(default) = &arg.default {
        fact(&mut text);
        text.push_str("default: ");
        text.push_str(default);
    }
    if text.len() > before_facts {
        text.push(')');
    }
    text
}

/// The argument as a JSON Schema, for clients that read our `_meta`: a struct that borrows
/// from the argument rather than a `serde_json::Value`, because every entry of a
/// `prompts/list` page carries one per argument and building, writing and dropping a map
/// of values for each was a fifth of a cold page's work (callgrind, docs/benchmarks.md).
/// Its fields are in the order a JSON object map keeps keys, so it writes what such a map
/// would.
#[derive(Debug, Serialize)]
pub(crate) struct ArgumentSchema<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    default: Option<Value>,
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    values: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<&'static str>,
    #[serde(rename = "maxLength", skip_serializing_if = "Option::is_none")]
    max_length: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    maximum: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    minimum: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pattern: Option<&'a str>,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// `arg`'s JSON Schema: its type, the bounds or values it allows, and its default typed.
pub(crate) fn json_schema(arg: &PromptArgument) -> ArgumentSchema<'_> {
    let mut schema = ArgumentSchema {
        default: None,
        values: None,
        format: None,
        max_length: None,
        maximum: None,
        minimum: None,
        pattern: None,
        kind: "string",
    };
    match arg.kind {
        ArgumentType::String => {
            schema.pattern = arg.pattern.as_deref();
            schema.max_length = arg.max_length;
        }
        ArgumentType::Enum => schema.values = Some(&arg.values),
        ArgumentType::Integer | ArgumentType::Number => {
            schema.kind = if arg.kind == ArgumentType::Integer {
                "integer"
            } else {
                "number"
            };
            let bound = |bound: f64| match arg.kind {
                // An integer's bounds are written as integers (`9`, not `9.0`) when they are
                // whole, as a form or a validator reading `"type": "integer"` expects.
                ArgumentType::Integer if bound.fract() == 0.0 && bound.abs() < 2f64.powi(53) => {
                    json!(bound as i64)
                }
                _ => json!(bound),
            };
            schema.minimum = arg.min.map(bound);
            schema.maximum = arg.max.map(bound);
        }
        ArgumentType::Boolean => schema.kind = "boolean",
        ArgumentType::Date => schema.format = Some("date"),
        ArgumentType::Uri => schema.format = Some("uri"),
    }
    schema.default = arg.default.as_ref().map(|default| {
        // A schema's default has the schema's type, not MCP's string.
        match arg.kind {
            ArgumentType::Boolean => {
                json!(matches!(
                    default.to_ascii_lowercase().as_str(),
                    "true" | "yes" | "1"
                ))
            }
            ArgumentType::Integer => default.parse::<i64>().map_or(json!(default), |n| json!(n)),
            ArgumentType::Number => default.parse::<f64>().map_or(json!(default), |n| json!(n)),
            _ => json!(default),
        }
    });
    schema
}

/// One argument as a field of a form or of a tool's input: its JSON Schema with a `title`
/// (the author's, else the argument's name) and the `describe` text as its description.
pub(crate) fn field_schema(arg: &PromptArgument) -> Map<String, Value> {
    let mut field = match serde_json::to_value(json_schema(arg)) {
        Ok(Value::Object(schema)) => schema,
        _ => Map::new(),
    };
    let title = arg.title.as_deref().unwrap_or(&arg.name);
    field.insert("title".into(), json!(title));
    field.insert("description".into(), json!(describe(arg)));
    field
}

/// The JSON Schema of an object whose properties are some of a prompt's arguments, in the
/// order the prompt declares them: a form lays its fields out in the order of the JSON it
/// is sent, and the author's order is the one that reads well (code, then language, ...).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ObjectSchema {
    #[serde(rename = "type")]
    kind: &'static str,
    properties: InOrder,
    required: Vec<String>,
    /// `false` where names other than the arguments are refused (a tool's input).
    #[serde(
        rename = "additionalProperties",
        skip_serializing_if = "Option::is_none"
    )]
    additional_properties: Option<bool>,
}

impl ObjectSchema {
    /// `args` as properties, each shaped by `field`; `required` are the names that must
    /// be given; `closed` refuses other names.
    pub(crate) fn of<'a>(
        args: impl IntoIterator<Item = &'a PromptArgument>,
        field: impl Fn(&PromptArgument) -> Map<String, Value>,
        required: Vec<String>,
        closed: bool,
    ) -> ObjectSchema {
        ObjectSchema {
            kind: "object",
            properties: InOrder(
                args.into_iter()
                    .map(|arg| (arg.name.clone(), Value::Object(field(arg))))
                    .collect(),
            ),
            required,
            additional_properties: closed.then_some(false),
        }
    }
}

/// A JSON object written with its members in the order given. serde_json's `Map` sorts its
/// keys; its `preserve_order` feature would keep them, but for every map in the program
/// (an index kept beside each one, and every other object's order changed), where only
/// these objects need an order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InOrder(Vec<(String, Value)>);

impl Serialize for InOrder {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argument(
        name: &str,
        kind: ArgumentType,
        min: Option<f64>,
        max: Option<f64>,
    ) -> PromptArgument {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: true,
            kind,
            default: None,
            values: Vec::new(),
            pattern: None,
            max_length: None,
            min,
            max,
            completion: None,
        }
    }

    #[test]
    fn a_description_carries_the_type_the_values_and_the_default() {
        let described = |change: &dyn Fn(&mut PromptArgument)| {
            let mut arg = argument("a", ArgumentType::String, None, None);
            change(&mut arg);
            describe(&arg)
        };
        assert_eq!(described(&|_| {}), "");
        assert_eq!(
            described(&|a| a.description = Some("What to greet".into())),
            "What to greet"
        );
        assert_eq!(
            described(&|a| {
                a.description = Some("Who".into());
                a.max_length = Some(20);
                a.default = Some("world".into());
            }),
            "Who (at most 20 characters; default: world)"
        );
        assert_eq!(
            described(&|a| {
                a.kind = ArgumentType::Enum;
                a.values = vec!["low".into(), "high".into()];
            }),
            "(one of: low, high)"
        );
        assert_eq!(
            described(&|a| {
                a.kind = ArgumentType::Enum;
                a.values = (1..=13).map(|n| format!("v{n}")).collect();
            }),
            "(one of 13 values, e.g. v1, v2, v3, v4, v5)"
        );
        let number = |kind, min, max| describe(&argument("n", kind, min, max));
        assert_eq!(
            number(ArgumentType::Integer, Some(1.0), Some(5.0)),
            "(integer from 1 to 5)"
        );
        assert_eq!(
            number(ArgumentType::Number, Some(0.5), None),
            "(number, at least 0.5)"
        );
        assert_eq!(
            number(ArgumentType::Integer, None, Some(9.0)),
            "(integer, at most 9)"
        );
        assert_eq!(number(ArgumentType::Number, None, None), "(number)");
        for (kind, fact) in [
            (ArgumentType::Boolean, "(true or false)"),
            (ArgumentType::Date, "(date, YYYY-MM-DD)"),
            (ArgumentType::Uri, "(URI)"),
        ] {
            assert_eq!(described(&|a| a.kind = kind.clone()), fact);
        }
    }

    #[test]
    fn a_pattern_is_compiled_once_and_kept_only_within_its_budget_in_bytes() {
        let patterns = Patterns::default();
        let first = compiled_pattern(&patterns, "[a-z]+-[0-9]+").expect("compiles");
        let again = compiled_pattern(&patterns, "[a-z]+-[0-9]+").expect("compiles");
        assert!(Arc::ptr_eq(&first, &again), "a small pattern is kept");
        assert!(first.is_match("ticket-42") && !first.is_match("ticket-42!"));
        // Compiled, this one is past the whole budget alone: it works, and is never kept.
        let huge = r"\w{200}";
        let compiled = compiled_pattern(&patterns, huge).expect("compiles");
        assert!(compiled.bytes() > MAX_PATTERN_BYTES, "{}", compiled.bytes());
        assert!(compiled.is_match(&"é".repeat(200)));
        let recompiled = compiled_pattern(&patterns, huge).expect("compiles");
        assert!(!Arc::ptr_eq(&compiled, &recompiled));
        // One that does not compile says why, every time.
        let err = compiled_pattern(&patterns, "(a").expect_err("an unclosed group");
        assert!(err.contains("unclosed group"), "{err}");
    }

    #[test]
    fn whole_integer_bounds_are_integers_and_properties_keep_their_order() {
        let count = argument("count", ArgumentType::Integer, Some(1.0), Some(9.0));
        let schema = |arg: &PromptArgument| json!(json_schema(arg));
        assert_eq!(
            schema(&count),
            json!({"type": "integer", "minimum": 1, "maximum": 9})
        );
        let odd = argument("odd", ArgumentType::Integer, Some(0.5), None);
        assert_eq!(schema(&odd)["minimum"], json!(0.5));
        let ratio = argument("ratio", ArgumentType::Number, Some(0.0), Some(1.0));
        assert_eq!(schema(&ratio)["maximum"], json!(1.0));
        let schema = ObjectSchema::of([&ratio, &count], field_schema, vec!["count".into()], true);
        let text = serde_json::to_string(&schema).expect("JSON");
        let at = |key: &str| text.find(key).expect("written");
        assert!(at("\"ratio\":") < at("\"count\":"), "{text}");
        assert!(text.contains("\"additionalProperties\":false"), "{text}");
        assert!(text.contains("\"title\":\"count\""), "{text}");
    }
}
