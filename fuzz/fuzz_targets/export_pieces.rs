//! The export's reading of prompt templates: each message template (any text) through
//! `export::body::pieces`, and the prompt they make through `export::body::prompt_pieces`,
//! which every `export --format` for a host starts from. Beyond "no panic, no hang": every
//! piece of template code is text of the template, every placeholder an identifier, no
//! text piece empty or next to another, a template without `{` one text as it is, and the
//! prompt's roles said lost exactly when it has more than one message or an assistant one.
//!
//! Input: the message templates, each ended by NUL; the first is the user's, and the
//! roles alternate.

#![no_main]

use libfuzzer_sys::fuzz_target;
use promptshelf::export::body::{Piece, pieces, prompt_pieces};
use promptshelf::model::{MessageTemplate, Origin, Prompt, Role};
use promptshelf_fuzz::Fields;

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
            role: if at % 2 == 0 { Role::User } else { Role::Assistant },
            body,
        })
        .collect();
    let several = messages.len() > 1;
    let prompt = Prompt {
        name: "fuzzed".to_string(),
        title: None,
        description: None,
        icons: Vec::new(),
        arguments: Vec::new(),
        messages,
        origin: Origin::default(),
    };
    let (_, roles) = prompt_pieces(&prompt);
    assert_eq!(roles, several, "the roles of {} messages", prompt.messages.len());
});
