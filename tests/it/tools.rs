//! Tool mirrors over real pipes (`serve --tools`): the tools each mirror offers, their
//! results validated against each revision's schema, their order, tool errors and protocol
//! errors, the capability declared only when mirrors are on; and forms and tool inputs
//! laid out in the order a prompt declares its arguments.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::common::{MODERN, TestContext, modern_params, validate};

/// A prompt whose arguments are declared out of alphabetical order, of several types.
const ORDERED: &str = r#"---
name: ordered
description: Arguments in the author's order
arguments:
  - name: zeta
    title: Zeta text
    required: true
  - name: count
    type: integer
    min: 1
    max: 9
    default: "3"
  - name: mode
    type: enum
    values: [fast, slow]
    required: true
  - name: alpha
    type: integer
    min: 0
    max: 100
    required: true
  - name: word
    pattern: "[a-z]+"
---
zeta={{ zeta }} count={{ count }} mode={{ mode }} alpha={{ alpha }} word={{ word }}
"#;

fn with_ordered_prompt(ctx: &TestContext) {
    let path = ctx.write("ordered.prompt.md", ORDERED);
    ctx.ok(&["prompt", "add", &path.display().to_string()]);
}

/// JSON as it was written: objects keep their members in order (a `Value` sorts them).
#[derive(Debug)]
enum Written {
    Object(Vec<(String, Written)>),
    Array(Vec<Written>),
    Scalar,
}

impl<'de> Deserialize<'de> for Written {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Written;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Written, A::Error> {
                let mut members = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Written>()? {
                    members.push((key, value));
                }
                Ok(Written::Object(members))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Written, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Written>()? {
                    items.push(item);
                }
                Ok(Written::Array(items))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl Written {
    /// The member or item at `path` (object keys, or array indexes as numbers).
    fn at(&self, path: &[&str]) -> &Written {
        path.iter().fold(self, |node, step| match node {
            Written::Object(members) => members
                .iter()
                .find(|(key, _)| key == step)
                .map(|(_, value)| value)
                .unwrap_or_else(|| panic!("no member '{step}' of {path:?}")),
            Written::Array(items) => &items[step.parse::<usize>().expect("an index")],
            Written::Scalar => panic!("'{step}' of {path:?} is past a scalar"),
        })
    }

    /// The keys of the object at `path`, in the order they were written.
    fn keys(&self, path: &[&str]) -> Vec<&str> {
        match self.at(path) {
            Written::Object(members) => members.iter().map(|(key, _)| key.as_str()).collect(),
            other => panic!("{path:?} is not an object: {other:?}"),
        }
    }
}

fn written(line: &str) -> Written {
    serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
}

#[test]
fn a_form_asks_for_fields_in_the_prompts_order_with_titles_and_integer_bounds() {
    let ctx = TestContext::new();
    with_ordered_prompt(&ctx);
    let mut server = ctx.server();
    let params = modern_params(
        json!({"name": "ordered", "arguments": {"word": "abc"}}),
        json!({"elicitation": {"form": {}}}),
    );
    let line = server.request_line("prompts/get", params);
    let schema_path = [
        "result",
        "inputRequests",
        "arguments",
        "params",
        "requestedSchema",
    ];
    // The missing required ones, as declared: not sorted (alpha, mode, zeta).
    let properties: Vec<&str> = [&schema_path[..], &["properties"]].concat();
    assert_eq!(
        written(&line).keys(&properties),
        ["zeta", "mode", "alpha"],
        "{line}"
    );
    let response: Value = serde_json::from_str(&line).expect("JSON");
    let result = &response["result"];
    validate(MODERN, "InputRequiredResult", result);
    let form = &result["inputRequests"]["arguments"]["params"];
    validate(MODERN, "ElicitRequestFormParams", form);
    let schema = &form["requestedSchema"];
    assert_eq!(schema["required"], json!(["zeta", "mode", "alpha"]));
    let fields = &schema["properties"];
    // Every field has a title: the author's, else the argument's name.
    assert_eq!(fields["zeta"]["title"], "Zeta text");
    assert_eq!(fields["mode"]["title"], "mode");
    assert_eq!(fields["mode"]["enum"], json!(["fast", "slow"]));
    // Integer bounds are integers, not 0.0 and 100.0.
    assert_eq!(fields["alpha"]["type"], "integer");
    assert!(fields["alpha"]["minimum"].is_i64(), "{}", fields["alpha"]);
    assert!(fields["alpha"]["maximum"].is_i64(), "{}", fields["alpha"]);
    assert_eq!(
        (&fields["alpha"]["minimum"], &fields["alpha"]["maximum"]),
        (&json!(0), &json!(100))
    );
}
