//! Writing a string as JSON, byte for byte as serde_json writes it, but eight bytes at a
//! time: prompt text is mostly plain, and serde_json's writer looks at every byte on its
//! own (with it, escaping was a quarter of a `prompts/get`'s instructions).

/// Appends `text` to `out` as a JSON string literal, quotes included.
pub(crate) fn write_json_string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // `copied` is where the bytes not yet appended start.
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let flagged = match bytes[at..].first_chunk::<8>() {
            Some(word) => match escape_mask(u64::from_le_bytes(*word)) {
                0 => {
                    at += 8;
                    continue;
                }
                // The lowest flagged byte is always a real one.
                mask => at + (mask.trailing_zeros() / 8) as usize,
            },
            None if needs_escape(bytes[at]) => at,
            None => {
                at += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[copied..flagged]);
        push_escape(out, bytes[flagged]);
        copied = flagged + 1;
        at = flagged + 1;
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

/// JSON text made of what this module and ASCII literals wrote, as a `String`: it is UTF-8
/// whenever what was escaped was, so the lossy copy is never made in practice; it only
/// keeps a wrong byte from becoming a panic.
pub(crate) fn written_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

/// Appends `values`, whose text back to back is `text`, as JSON string literals separated
/// by commas. `text` is looked at once, eight bytes at a time: when nothing in it needs an
/// escape, as in nearly every completion answer, each value is copied between its quotes
/// without a look of its own (with a look per value, writing a hundred short values cost
/// more than ranking them).
pub(crate) fn write_json_strings<'a>(
    out: &mut Vec<u8>,
    text: &str,
    values: impl ExactSizeIterator<Item = &'a str>,
) {
    out.reserve(text.len() + 3 * values.len());
    let plain = escape_free(text.as_bytes());
    for (index, value) in values.enumerate() {
        if index > 0 {
            out.push(b',');
        }
        if plain {
            out.push(b'"');
            out.extend_from_slice(value.as_bytes());
            out.push(b'"');
        } else {
            write_json_string(out, value);
        }
    }
}

/// Whether no byte of `bytes` needs an escape in a JSON string.
fn escape_free(bytes: &[u8]) -> bool {
    let (words, rest) = bytes.as_chunks::<8>();
    words
        .iter()
        .all(|word| escape_mask(u64::from_le_bytes(*word)) == 0)
        && !rest.iter().any(|&byte| needs_escape(byte))
}

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// The high bit of each of the eight bytes of `word` (read little-endian) that is a control
/// byte, a quote or a backslash: the classic "has a byte less than n" and "has a zero byte"
/// tests, which never miss one and may flag bytes above a flagged one, never below.
fn escape_mask(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    let quote = has_zero(word ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(word ^ (ONES * u64::from(b'\\')));
    control | quote | backslash
}

fn push_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ours(text: &str) -> String {
        let mut out = Vec::new();
        write_json_string(&mut out, text);
        String::from_utf8(out).expect("the output is UTF-8")
    }

    #[test]
    fn escapes_what_json_requires() {
        assert_eq!(ours(""), r#""""#);
        assert_eq!(
            ours("a \"quoted\"\\path\n\ttab\u{1}\u{1f}\u{7f} é ✓ 🦀"),
            serde_json::to_string("a \"quoted\"\\path\n\ttab\u{1}\u{1f}\u{7f} é ✓ 🦀")
                .expect("serde_json writes a string")
        );
    }

    fn ours_listed(values: &[String]) -> String {
        let text = values.concat();
        let mut out = Vec::new();
        write_json_strings(&mut out, &text, values.iter().map(String::as_str));
        String::from_utf8(out).expect("the output is UTF-8")
    }

    fn serde_listed(values: &[String]) -> String {
        let array = serde_json::to_string(values).expect("serde_json writes a list");
        array[1..array.len() - 1].to_string()
    }

    proptest! {
        #[test]
        fn lists_what_serde_json_lists(values in proptest::collection::vec("(?s).{0,20}", 0..20)) {
            prop_assert_eq!(ours_listed(&values), serde_listed(&values));
        }

        #[test]
        fn lists_plain_values_as_serde_json_does(values in proptest::collection::vec("[a-z0-9-]{0,20}", 0..20)) {
            prop_assert_eq!(ours_listed(&values), serde_listed(&values));
        }

        #[test]
        fn writes_what_serde_json_writes(text in "(?s).{0,200}") {
            prop_assert_eq!(ours(&text), serde_json::to_string(&text).expect("serde_json writes a string"));
        }

        #[test]
        fn writes_what_serde_json_writes_for_mostly_plain_text(
            text in "[a-z \"\\\\\n\t\u{0}-\u{1f}]{0,200}"
        ) {
            prop_assert_eq!(ours(&text), serde_json::to_string(&text).expect("serde_json writes a string"));
        }
    }
}
