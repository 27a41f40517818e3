//! A request's id, kept as the JSON text it was sent as: an integer of any size is echoed
//! digit for digit (a `serde_json::Value` would round one beyond 64 bits to a float).

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// The id of a request (or `null` when it could not be read), written back raw.
#[derive(Debug, Clone)]
pub struct RequestId(Box<RawValue>);

/// What the text of an id is.
pub(super) enum IdText {
    /// A string or an integer: a usable id.
    Id(RequestId),
    /// A number with a fraction or an exponent: JSON-RPC ids are strings or integers.
    NotAnInteger(RequestId),
    /// `null`, a boolean, an array or an object.
    Other,
}

impl RequestId {
    /// The id of a message whose id could not be read: left out of an answer.
    pub(crate) fn null() -> RequestId {
        RequestId(RawValue::NULL.to_owned())
    }

    /// The id `text` spells as a JSON string.
    pub(super) fn of_string(text: &str) -> RequestId {
        RequestId(
            serde_json::value::to_raw_value(text).unwrap_or_else(|_| RawValue::NULL.to_owned()),
        )
    }

    pub fn is_null(&self) -> bool {
        self.0.get() == "null"
    }

    /// The id as its JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// Reads the JSON text of an id member (already parsed as JSON, so its first byte says
    /// what it is).
    pub(super) fn read(raw: &RawValue) -> IdText {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'"') => IdText::Id(RequestId(raw.to_owned())),
            Some(b'-' | b'0'..=b'9') if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) => {
                IdText::NotAnInteger(RequestId(raw.to_owned()))
            }
            Some(b'-' | b'0'..=b'9') => IdText::Id(RequestId(raw.to_owned())),
            _ => IdText::Other,
        }
    }

    /// The id as a key, for finding a running request or stream by the id a cancellation
    /// names: a string by its decoded text (so `"a\u0062"` and `"ab"` are one id), a
    /// number by its exact text; `1` and `"1"` stay apart.
    pub fn key(&self) -> String {
        let text = self.0.get();
        if text.starts_with('"') {
            match serde_json::from_str::<String>(text) {
                // Re-encoded: one spelling per string, always starting with a quote.
                Ok(decoded) => serde_json::to_string(&decoded).unwrap_or_else(|_| text.into()),
                Err(_) => text.to_string(),
            }
        } else {
            text.to_string()
        }
    }
}

impl PartialEq for RequestId {
    fn eq(&self, other: &RequestId) -> bool {
        self.0.get() == other.0.get() || self.key() == other.key()
    }
}

impl Eq for RequestId {}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> RequestId {
        match RequestId::read(&RawValue::from_string(text.into()).expect("json")) {
            IdText::Id(id) => id,
            _ => panic!("{text} is not an id"),
        }
    }

    #[test]
    fn ids_match_by_what_they_spell() {
        assert_eq!(id(r#""a\u0062""#), id(r#""ab""#));
        assert_eq!(id(r#""a\u0062""#).key(), id(r#""ab""#).key());
        assert_ne!(id("1"), id(r#""1""#));
        assert_eq!(
            id("18446744073709551616").key(),
            "18446744073709551616".to_string()
        );
        assert_ne!(id("18446744073709551616"), id("18446744073709551617"));
        assert!(matches!(
            RequestId::read(&RawValue::from_string("1e400".into()).expect("json")),
            IdText::NotAnInteger(_)
        ));
        assert!(matches!(
            RequestId::read(&RawValue::from_string("true".into()).expect("json")),
            IdText::Other
        ));
    }

    #[test]
    fn ids_are_written_as_sent() {
        let written = serde_json::to_string(&id("18446744073709551616")).expect("json");
        assert_eq!(written, "18446744073709551616");
        let written = serde_json::to_string(&id(r#""a\u0062""#)).expect("json");
        assert_eq!(written, r#""a\u0062""#);
    }
}
