//! RFC 6570 URI templates: validation and expansion through uri-template-system, plus what
//! no crate offers, matching a URI back to the template's variables (for `resources/read`
//! through a template and for completing a template variable from stored URIs).
//!
//! Matching covers every operator with single-value variables; an exploded or prefixed
//! (`{var*}`, `{var:3}`) variable matches the raw text of its place. A template that names a
//! variable twice is refused, though RFC 6570 allows it: matching would have to find a split
//! of the URI where both places hold the same text, which a regex without backreferences
//! cannot say, and such a template is no use for a stored document's URI.

use std::collections::HashMap;

use percent_encoding::percent_decode_str;

use crate::pattern::{Pattern, escape};

/// A parsed template that can expand and match.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    source: String,
    /// Anchored regex with one group per variable, in `variables` order.
    pattern: Pattern,
    variables: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("'{template}' {reason}")]
pub struct TemplateError {
    pub template: String,
    pub reason: String,
}

impl UriTemplate {
    pub fn parse(source: &str) -> Result<UriTemplate, TemplateError> {
        let error = |reason: String| TemplateError {
            template: source.to_string(),
            reason,
        };
        uri_template_system::Template::parse(&for_parser(source))
            .map_err(|err| error(format!("is not a valid RFC 6570 URI template: {err:?}")))?;
        let mut pattern = String::from("^");
        let mut variables = Vec::new();
        let mut rest = source;
        while let Some(open) = rest.find('{') {
            push_literal(&rest[..open], &mut pattern);
            let close = rest[open..].find('}').ok_or_else(|| {
                error(
                    "is not a valid RFC 6570 URI template: an expression is not closed with '}'"
                        .into(),
                )
            })?;
            let expression = &rest[open + 1..open + close];
            push_expression(expression, &mut pattern, &mut variables);
            rest = &rest[open + close + 1..];
        }
        push_literal(rest, &mut pattern);
        if let Some(twice) = variables
            .iter()
            .enumerate()
            .find_map(|(at, name)| variables[..at].contains(name).then_some(name))
        {
            return Err(error(format!(
                "names the variable '{twice}' twice; name each variable once (a URI read \
                 through the template gives each variable one value)"
            )));
        }
        pattern.push('$');
        let pattern = Pattern::new(&pattern)
            .map_err(|err| error(format!("cannot be matched against URIs: {err}")))?;
        Ok(UriTemplate {
            source: source.to_string(),
            pattern,
            variables,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// Bytes of memory keeping it costs: its matcher (`Pattern::bytes`) and its text.
    pub(crate) fn bytes(&self) -> usize {
        self.pattern.bytes()
            + self.source.len()
            + self
                .variables
                .iter()
                .map(|name| name.len() + 24)
                .sum::<usize>()
    }

    /// Expands the template with string values (missing variables expand to nothing).
    pub fn expand(&self, values: &HashMap<String, String>) -> Result<String, TemplateError> {
        let error = |err: &dyn std::fmt::Debug| TemplateError {
            template: self.source.clone(),
            reason: format!("could not be expanded: {err:?}"),
        };
        let values: uri_template_system::Values = values
            .iter()
            .map(|(name, value)| {
                (
                    name.clone(),
                    uri_template_system::Value::item(value.clone()),
                )
            })
            .collect();
        // In pieces between the literal triplets (see `for_parser`), which expansion copies.
        let mut expanded = String::new();
        let mut start = 0;
        for at in literal_triplets(&self.source)
            .into_iter()
            .chain([self.source.len()])
        {
            let piece = &self.source[start..at];
            if !piece.is_empty() {
                let template =
                    uri_template_system::Template::parse(piece).map_err(|err| error(&err))?;
                expanded.push_str(&template.expand(&values).map_err(|err| error(&err))?);
            }
            expanded.push_str(&self.source[at..(at + 3).min(self.source.len())]);
            start = at + 3;
        }
        Ok(expanded)
    }

    /// The variables' (percent-decoded) values if `uri` is an expansion of this template.
    pub fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let captures = self.pattern.captures(uri)?;
        let mut values = HashMap::with_capacity(self.variables.len());
        for (index, name) in self.variables.iter().enumerate() {
            if let Some(Some(capture)) = captures.get(index + 1) {
                let decoded = percent_decode_str(capture).decode_utf8().ok()?;
                values.insert(name.clone(), decoded.into_owned());
            }
        }
        Some(values)
    }

    /// The literal text before the first expression: every expansion starts with it.
    pub fn literal_prefix(&self) -> &str {
        match self.source.find('{') {
            Some(at) => &self.source[..at],
            None => &self.source,
        }
    }
}

/// Where the literal text of `source` (outside every `{...}`) holds a percent-encoded
/// triplet (`%` and two hex digits): the byte offsets of their `%`.
fn literal_triplets(source: &str) -> Vec<usize> {
    let bytes = source.as_bytes();
    let mut found = Vec::new();
    let mut in_expression = false;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'{' => in_expression = true,
            b'}' => in_expression = false,
            b'%' if !in_expression
                && bytes.get(at + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(at + 2).is_some_and(u8::is_ascii_hexdigit) =>
            {
                found.push(at);
                at += 3;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    found
}

/// `source` as uri-template-system 0.1's parser can take it: that parser never returns
/// from a template whose literal text holds a percent-encoded triplet with anything after
/// it (`shelf://my%20docs/{+path}`, a collection named with a space). Each such triplet
/// becomes `___`, a literal as valid as the triplet and as long, so the parser's verdict and
/// the positions it reports are the template's own.
pub(crate) fn for_parser(source: &str) -> std::borrow::Cow<'_, str> {
    let triplets = literal_triplets(source);
    if triplets.is_empty() {
        return std::borrow::Cow::Borrowed(source);
    }
    let mut text = source.to_string();
    for at in triplets {
        text.replace_range(at..at + 3, "___");
    }
    std::borrow::Cow::Owned(text)
}

/// Appends the regex for literal text. Expansion percent-encodes a literal character
/// outside ASCII (RFC 6570, section 3.1), so a client that expands the template itself
/// sends the encoding, while one that copies it sends the character: each such character
/// matches as either. ASCII literals are copied as they are.
fn push_literal(literal: &str, pattern: &mut String) {
    for character in literal.chars() {
        let mut utf8 = [0; 4];
        let text = character.encode_utf8(&mut utf8);
        if character.is_ascii() {
            pattern.push_str(&escape(text));
            continue;
        }
        pattern.push_str("(?:");
        pattern.push_str(&escape(text));
        pattern.push_str("|(?i:");
        for byte in text.bytes() {
            pattern.push_str(&format!("%{byte:02X}"));
        }
        pattern.push_str("))");
    }
}

/// Appends the regex for one `{...}` expression and records its variable names.
fn push_expression(expression: &str, pattern: &mut String, variables: &mut Vec<String>) {
    let (operator, list) = match expression.chars().next() {
        Some(op @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(op), &expression[1..]),
        _ => (None, expression),
    };
    // What one value may contain: reserved expansion keeps '/', '?' etc.; every other
    // operator percent-encodes all but the unreserved characters. Either way a '%' in an
    // expansion starts a triplet (reserved expansion writes a lone '%' as %25), and a value
    // is read a whole triplet at a time, so a literal after the expression is never found
    // inside a triplet of the value (`{+a}0{+b}` against `%D0`: a split there would decode
    // to something that is not UTF-8, and the URI would not match).
    let value = match operator {
        Some('+') | Some('#') => "(?:[^%]|%[0-9A-Fa-f]{2})*?",
        _ => "(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})*",
    };
    let names: Vec<&str> = list
        .split(',')
        .map(|spec| spec.trim_end_matches('*'))
        .map(|spec| spec.split(':').next().unwrap_or(spec))
        .collect();
    let (first, separator) = match operator {
        None | Some('+') => ("", ","),
        Some('#') => ("#", ","),
        Some('.') => (".", "."),
        Some('/') => ("/", "/"),
        Some(';') => (";", ";"),
        Some('?') => ("?", "&"),
        Some('&') => ("&", "&"),
        Some(_) => ("", ","),
    };
    let named = matches!(operator, Some(';') | Some('?') | Some('&'));
    let mut group = String::new();
    for (index, name) in names.iter().enumerate() {
        group.push_str(&escape(if index == 0 { first } else { separator }));
        if named {
            group.push_str(&escape(name));
            group.push_str(if operator == Some(';') { "=?" } else { "=" });
        }
        group.push('(');
        group.push_str(value);
        group.push(')');
        variables.push(name.to_string());
    }
    // An undefined variable expands to nothing, so the whole expression may be absent.
    pattern.push_str(&format!("(?:{group})?"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Found by the `uri_template` fuzz target: a literal that also appears inside the
    /// percent-encoding of a reserved expansion's value.
    #[test]
    fn a_literal_inside_a_values_triplet_is_not_where_the_value_ends() {
        let template = UriTemplate::parse("s:/{+a}0{+b}").expect("a valid template");
        let expected = values(&[("a", "О"), ("b", "x/y")]);
        let uri = template.expand(&expected).expect("an expansion");
        assert_eq!(uri, "s:/%D0%9E0x/y");
        assert_eq!(template.matches(&uri), Some(expected));
        // A '%' that starts no triplet is no expansion's.
        assert_eq!(template.matches("s:/50%off0x"), None);
    }

    #[test]
    fn a_template_is_charged_for_its_matcher_and_its_text() {
        let short = UriTemplate::parse("docs://{page}").expect("a valid template");
        let longer = UriTemplate::parse("docs://{team}/{year}/{page}{?lang,version}")
            .expect("a valid template");
        assert!(short.bytes() > short.pattern.bytes(), "{}", short.bytes());
        assert!(
            longer.bytes() > short.bytes(),
            "{} {}",
            longer.bytes(),
            short.bytes()
        );
    }

    #[test]
    fn match_inverts_expand() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("shelf://docs/{+path}", &[("path", "guides/a b.md")]),
            (
                "docs://{component}/{page}",
                &[("component", "ui"), ("page", "buttons")],
            ),
            ("file:///{dir}{/name}", &[("dir", "x"), ("name", "y z")]),
            ("s://q{?lang,level}", &[("lang", "rust"), ("level", "3")]),
            ("s://m{;mode}", &[("mode", "fast")]),
            ("s://f{.ext}", &[("ext", "md")]),
            ("s://a{#frag}", &[("frag", "top/part")]),
        ];
        for (source, pairs) in cases {
            let template = UriTemplate::parse(source).unwrap();
            let expected = values(pairs);
            let uri = template.expand(&expected).unwrap();
            assert_eq!(template.matches(&uri), Some(expected), "{source} -> {uri}");
        }
    }

    proptest::proptest! {
        /// uri-template-system is the oracle: whatever it expands, matching gives back.
        #[test]
        fn matching_inverts_the_oracles_expansion(
            first in "\\PC{0,12}",
            second in "\\PC{0,12}",
            reserved in "[a-z0-9/._~-]{1,20}",
        ) {
            let two = UriTemplate::parse("docs://{first}/{second}").unwrap();
            let expected = values(&[("first", &first), ("second", &second)]);
            let uri = two.expand(&expected).unwrap();
            proptest::prop_assert_eq!(two.matches(&uri), Some(expected));
            for source in ["s://x/{+path}", "s://x{/path}", "s://x{?path}", "s://x{;path}", "s://x{#path}"] {
                let template = UriTemplate::parse(source).unwrap();
                let expected = values(&[("path", &reserved)]);
                let uri = template.expand(&expected).unwrap();
                proptest::prop_assert_eq!(template.matches(&uri), Some(expected), "{} -> {}", source, uri);
            }
        }
    }

    /// Found by fuzzing (fuzz/fuzz_targets/uri_template.rs): a literal outside ASCII is
    /// percent-encoded by expansion, and its expansion did not match the template.
    #[test]
    fn a_literal_outside_ascii_matches_as_written_and_encoded() {
        let template = UriTemplate::parse("s:/\u{38e}//{name}").unwrap();
        let expected = values(&[("name", "liY")]);
        let uri = template.expand(&expected).unwrap();
        assert_eq!(uri, "s:/%CE%8E//liY");
        assert_eq!(template.matches(&uri), Some(expected.clone()));
        assert_eq!(template.matches("s:/%ce%8e//liY"), Some(expected.clone()));
        assert_eq!(template.matches("s:/\u{38e}//liY"), Some(expected));
        assert_eq!(template.matches("s:/%CE//liY"), None);
    }

    /// Found by fuzzing (fuzz/fuzz_targets/uri_template.rs): parsing a template whose
    /// literal text holds a percent-encoded triplet before more text never returned.
    #[test]
    fn a_percent_encoded_literal_parses_expands_and_matches() {
        let template = UriTemplate::parse("shelf://my%20docs/{+path}").unwrap();
        assert_eq!(template.variables(), ["path"]);
        let expected = values(&[("path", "guides/a b.md")]);
        let uri = template.expand(&expected).unwrap();
        assert_eq!(uri, "shelf://my%20docs/guides/a%20b.md");
        assert_eq!(template.matches(&uri), Some(expected));
        let plain = UriTemplate::parse("filile:///x/y%20z").unwrap();
        assert_eq!(plain.expand(&HashMap::new()).unwrap(), "filile:///x/y%20z");
        assert_eq!(plain.matches("filile:///x/y%20z"), Some(HashMap::new()));
        // Still refused where the template is wrong, at the template's own position.
        let err = UriTemplate::parse("a%20b{x").unwrap_err();
        assert!(err.reason.contains("position: 7"), "{err}");
    }

    #[test]
    fn a_variable_named_twice_is_refused() {
        for source in ["s://{a}/x/{a}", "s://{a}{?b,a}", "s:/{+a}0{a}"] {
            let err = UriTemplate::parse(source).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("'{source}' names the variable 'a' twice")),
                "{source}: {err}"
            );
        }
        let distinct = UriTemplate::parse("s://{a}/x/{b}{?c,d}").expect("a valid template");
        assert_eq!(distinct.variables(), ["a", "b", "c", "d"]);
    }

    #[test]
    fn other_uris_do_not_match() {
        let template = UriTemplate::parse("docs://{component}/{page}").unwrap();
        assert_eq!(template.matches("docs://a/b/c"), None);
        assert_eq!(template.matches("other://a/b"), None);
    }

    #[test]
    fn invalid_templates_are_refused() {
        assert!(UriTemplate::parse("docs://{unclosed").is_err());
    }
}
