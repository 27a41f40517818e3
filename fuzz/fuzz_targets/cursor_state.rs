//! Cursors and `requestState`s, the two opaque tokens a client hands back: a cursor (any
//! text, or one of this server's encodings with any key) through the three list
//! handlers; a `requestState` through `handlers::prompts::get` of a seed prompt, as any
//! text, or signed with the library's secret (any payload, or a well-formed state with
//! any arguments and expiry), so that what lies past the signature check is reached too,
//! with arguments and form answers from the input. A state that led to an answer must be
//! refused the second time.
//!
//! Input: a byte choosing what is fuzzed, a byte choosing the list or the prompt (and,
//! by its top bit, whether the client can elicit), then NUL-separated fields:
//! - 0, a cursor: the cursor;
//! - 1, an encoded cursor: the list version (empty: the real one), the key to go on after;
//! - 2, a state as text: the state, the arguments (a JSON object), `inputResponses` (JSON);
//! - 3, a signed payload: the payload, then as 2;
//! - 4, a signed state: its method (empty: `prompts/get`), its prompt (empty: this one),
//!   its arguments (a JSON object), its expiry (decimal, empty: in ten minutes), then as 2.

#![no_main]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use libfuzzer_sys::fuzz_target;
use promptshelf::handlers::prompts::{self, Caller, Retained};
use promptshelf::handlers::{resources, templates};
use promptshelf::model::StoredPrompt;
use promptshelf::protocol::{GetPromptParams, PromptOutcome};
use promptshelf::store::read;
use promptshelf::visibility::Visibility;
use promptshelf_fuzz::{Fields, config, seed_store};
use serde_json::{Value, json};

/// The lists as stdio serves them: the whole library.
const EVERYTHING: Visibility = Visibility::EVERYTHING;

/// The moment every request is made at, so that expiry is decided by the input alone.
const NOW: i64 = 1_800_000_000_000;

/// What every run uses: the store's secret, its prompts, and each list's version.
struct Fixed {
    secret: Vec<u8>,
    prompts: Vec<StoredPrompt>,
    versions: [String; 3],
}

/// The tag `handlers::prompts` signs a state's payload with.
fn mac(secret: &[u8], payload: &[u8]) -> [u8; 32] {
    let key = *blake3::hash(secret).as_bytes();
    *blake3::keyed_hash(&key, payload).as_bytes()
}

fn sign(secret: &[u8], payload: &[u8]) -> String {
    format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(payload),
        URL_SAFE_NO_PAD.encode(mac(secret, payload))
    )
}

fn list(list: u8, cursor: Option<&str>) -> Option<String> {
    let conn = seed_store().conn().expect("a connection");
    let config = config();
    match list % 3 {
        0 => prompts::list(&conn, &config, cursor, &EVERYTHING).map(|page| page.next_cursor),
        1 => resources::list(&conn, &config, cursor, &EVERYTHING).map(|page| page.next_cursor),
        _ => templates::list(&conn, &config, cursor, &EVERYTHING).map(|page| page.next_cursor),
    }
    .ok()
    .flatten()
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| {
        let conn = seed_store().conn().expect("a connection");
        let secret = read::secret(&conn).expect("the secret");
        let prompts = read::prompts(&conn, read::Window::ALL, true).expect("the prompts");
        // A list's version is what its cursors carry before the key.
        let version = |which: u8| {
            list(which, None)
                .and_then(|cursor| URL_SAFE_NO_PAD.decode(cursor).ok())
                .and_then(|text| String::from_utf8(text).ok())
                .and_then(|text| text.split_once(':').map(|(version, _)| version.to_string()))
                .unwrap_or_default()
        };
        let fixed = Fixed {
            secret,
            versions: [version(0), version(1), version(2)],
            prompts,
        };
        // The signing above must be the handler's, or the signed tokens stop at the check.
        let asked = get(
            &fixed,
            &fixed.prompts[0],
            json!({}),
            true,
            &Retained::new(1),
        );
        let Ok(PromptOutcome::InputRequired { state, .. }) = asked else {
            panic!("the first seed prompt asks for its arguments: {asked:?}");
        };
        let (payload, _) = state.split_once('.').expect("a signed state");
        let payload = URL_SAFE_NO_PAD.decode(payload).expect("base64");
        assert_eq!(
            sign(&fixed.secret, &payload),
            state,
            "requestState is no longer signed as this target signs it"
        );
        fixed
    })
}

fn get(
    fixed: &Fixed,
    stored: &StoredPrompt,
    params: Value,
    can_elicit: bool,
    retained: &Retained,
) -> Result<PromptOutcome, promptshelf::protocol::Failure> {
    let mut params = params;
    params["name"] = json!(stored.prompt.name);
    let params: GetPromptParams = serde_json::from_value(params).expect("prompts/get params");
    let conn = seed_store().conn().expect("a connection");
    let resolve = |uri: &str| resources::stored(&conn, uri);
    let caller = Caller {
        can_elicit,
        now: NOW,
    };
    prompts::get(
        &config(),
        &fixed.secret,
        &params,
        stored,
        &resolve,
        caller,
        retained,
    )
}

/// A JSON object of strings, or none.
fn arguments(text: &str) -> BTreeMap<String, String> {
    serde_json::from_str(text).unwrap_or_default()
}

fuzz_target!(|data: &[u8]| {
    let [mode, choice, data @ ..] = data else {
        return;
    };
    let fixed = fixed();
    let mut fields = Fields::new(data);
    let which = choice & 0x7f;
    match mode % 5 {
        0 => {
            list(which, Some(&fields.text()));
        }
        1 => {
            let version = fields.text();
            let version = match version.as_str() {
                "" => &fixed.versions[usize::from(which % 3)],
                version => version,
            };
            let after = fields.text();
            let cursor = URL_SAFE_NO_PAD.encode(format!("{version}:{after}"));
            list(which, Some(&cursor));
        }
        signed => {
            let stored = &fixed.prompts[usize::from(which) % fixed.prompts.len()];
            let token = match signed {
                2 => fields.text(),
                3 => sign(&fixed.secret, fields.bytes()),
                _ => {
                    let method = fields.text();
                    let prompt = fields.text();
                    let state = json!({
                        "method": if method.is_empty() { "prompts/get" } else { &method },
                        "prompt": if prompt.is_empty() { &stored.prompt.name } else { &prompt },
                        "arguments": arguments(&fields.text()),
                        "expires": fields.text().parse::<i64>().unwrap_or(NOW + 600_000),
                    });
                    sign(&fixed.secret, state.to_string().as_bytes())
                }
            };
            let mut params = json!({
                "arguments": arguments(&fields.text()),
                "requestState": token,
            });
            if let Ok(Value::Object(responses)) = serde_json::from_slice(fields.bytes()) {
                params["inputResponses"] = Value::Object(responses);
            }
            let can_elicit = choice & 0x80 != 0;
            let retained = Retained::new(4);
            let first = get(fixed, stored, params.clone(), can_elicit, &retained);
            let again = get(fixed, stored, params, can_elicit, &retained);
            if first.is_ok() {
                assert!(again.is_err(), "a requestState answered twice: {again:?}");
            }
        }
    }
});
