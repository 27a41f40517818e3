//! The export's reading of prompt templates: each message template (any text) through
//! `export::body::pieces`, and the prompt they make through `export::body::prompt_pieces`,
//! which every `export --format` for a host starts from. Beyond "no panic, no hang": every
//! piece of template code is text of the template, every placeholder an identifier, no
//! text piece empty or next to another, a template without `{` one text as it is, the
//! prompt's roles said lost exactly when it has more than one message or an assistant one,
//! and, for a template the pieces read as text and placeholders alone, the text they make
//! with a value for each placeholder is what `render::render` makes of it (what a host is
//! sent over MCP), blank lines at either end aside as `render` trims them.
//!
//! Input: the message templates, each ended by NUL; the first is the user's, and the
//! roles alternate.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use promptshelf::export::body::{Piece, pieces, prompt_pieces};
use promptshelf::model::{MessageTemplate, Origin, Prompt, PromptArgument, Role, StoredPrompt};
use promptshelf::render;
use promptshelf_fuzz::Fields;

/// A prompt of `messages`.
fn prompt_of(messages: Vec<MessageTemplate>) -> Prompt {
    Prompt {
        name: "fuzzed".to_string(),
        title: None,
        description: None,
        icons: Vec::new(),
        arguments: Vec::new(),
        messages,
        origin: Origin::default(),
        meta: Default::default(),
    }
}

/// Checks that `found`, the pieces of `body`, say what minijinja renders of it, where they
/// are all text and placeholders and the template renders.
fn renders_as_read(body: &str, found: &[Piece]) {
    let mut values = BTreeMap::new();
    let mut expected = String::new();
    for piece in found {
        match piece {
            Piece::Text(text) => expected.push_str(text),
            Piece::Var(name) => {
                let value = format!("<{name}>");
                expected.push_str(&value);
                values.insert(name.clone(), value);
            }
            Piece::Code(_) | Piece::Embed(_) | Piece::Link(_) => return,
        }
    }
    let mut prompt = prompt_of(vec![MessageTemplate {
        role: Role::User,
        body: body.to_string(),
    }]);
    // Only declared arguments' values are rendered.
    prompt.arguments = values
        .keys()
        .map(|name| PromptArgument {
            name: name.clone(),
            ..PromptArgument::default()
        })
        .collect();
    let stored = StoredPrompt {
        content_hash: promptshelf::store::hash_prompt(&prompt),
        prompt,
        last_modified: 0,
        version: None,
    };
    let Ok(rendered) = render::render(&stored, &values, &Default::default()) else {
        return;
    };
    let text: String = rendered
        .iter()
        .flat_map(|message| &message.pieces)
        .map(|piece| match piece {
            render::Piece::Text(text) => text.as_str(),
            other => panic!("{body:?} rendered {other:?}"),
        })
        .collect();
    let expected = expected.trim_matches(['\n', '\r']);
    let expected = if expected.trim().is_empty() {
        ""
    } else {
        expected
    };
    assert_eq!(text, expected, "{body:?} as {found:?}");
}

fuzz_target!(|data: &[u8]| {
    let bodies = Fields::new(data).remaining();
    for body in &bodies {
        let found = pieces(body);
        for (at, piece) in found.iter().enumerate() {
            match piece {
                Piece::Code(code) => assert!(body.contains(code.as_str()), "{code:?} of {body:?}"),
                Piece::Var(name) => assert!(
                    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{name:?} of {body:?}"
                ),
                Piece::Text(text) => {
                    assert!(!text.is_empty(), "an empty text of {body:?}");
                    assert!(
                        !matches!(found.get(at + 1), Some(Piece::Text(_))),
                        "two texts in a row of {body:?}"
                    );
                }
                Piece::Embed(_) | Piece::Link(_) => {}
            }
        }
        renders_as_read(body, &found);
        if !body.contains('{') {
            let whole: Vec<Piece> = if body.is_empty() {
                Vec::new()
            } else {
                vec![Piece::Text(body.clone())]
            };
            assert_eq!(found, whole, "{body:?}");
        }
    }
    let messages: Vec<MessageTemplate> = bodies
        .into_iter()
        .enumerate()
        .map(|(at, body)| MessageTemplate {
            role: if at % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            body,
        })
        .collect();
    let several = messages.len() > 1;
    let prompt = prompt_of(messages);
    let (_, roles) = prompt_pieces(&prompt);
    assert_eq!(
        roles,
        several,
        "the roles of {} messages",
        prompt.messages.len()
    );
});
