//! Regular expressions that the library's text asks for (an argument's `pattern`, the
//! matcher of a URI template), compiled as the `regex` crate compiles them, with the memory
//! each takes counted: whoever keeps compiled patterns keeps them within a budget of bytes,
//! and a library of many or large patterns cannot grow the server's memory past it.
//!
//! Built on `regex-automata`'s meta engine, the engine behind the `regex` crate, because
//! that one says how much memory a compiled expression holds (`memory_usage`) and `regex`
//! does not.

use regex_automata::meta;
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind};

/// A compiled regular expression and what keeping it costs.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    regex: meta::Regex,
    /// Its compiled form and one search cache, as the engine counts them, and its text.
    bytes: usize,
}

impl Pattern {
    /// `source` compiled with the `regex` crate's defaults (Unicode, leftmost-first,
    /// matches on character boundaries, at most 10 MiB for the compiled form); the error
    /// says why it does not compile.
    pub(crate) fn new(source: &str) -> Result<Pattern, String> {
        let config = meta::Config::new()
            .match_kind(MatchKind::LeftmostFirst)
            .utf8_empty(true)
            .nfa_size_limit(Some(10 << 20))
            .hybrid_cache_capacity(2 << 20);
        let regex = meta::Builder::new()
            .configure(config)
            .syntax(syntax::Config::new().utf8(true))
            .build(source)
            .map_err(|err| {
                if let Some(limit) = err.size_limit() {
                    format!("compiled, it would take more than {limit} bytes; simplify it")
                } else if let Some(syntax) = err.syntax_error() {
                    syntax.to_string()
                } else {
                    err.to_string()
                }
            })?;
        // A search cache grows as a search needs (up to the 2 MiB above, for patterns far
        // from any a prompt or template holds); what it starts at is counted.
        let bytes = regex.memory_usage() + regex.create_cache().memory_usage() + source.len();
        Ok(Pattern { regex, bytes })
    }

    /// Whether the expression matches somewhere in `text` (anchor it to match the whole).
    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// The text of each capture group (group 0 is the whole match) in the first match in
    /// `text`, if there is one; `None` for a group that took no part in it.
    pub(crate) fn captures<'t>(&self, text: &'t str) -> Option<Vec<Option<&'t str>>> {
        let mut captures = self.regex.create_captures();
        self.regex.captures(Input::new(text), &mut captures);
        captures.is_match().then(|| {
            (0..captures.group_len())
                .map(|group| captures.get_group(group).map(|span| &text[span]))
                .collect()
        })
    }

    /// Bytes of memory keeping it costs, as the engine counts its compiled form and a fresh
    /// search cache, plus its text.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

/// `text` with every character that means something in a pattern escaped, so that a
/// pattern holding it matches it literally.
pub(crate) fn escape(text: &str) -> String {
    regex_syntax::escape(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_matches_and_captures_as_the_regex_crate_does() {
        let anchored = Pattern::new("^(?:[a-z]+-[0-9]{2})$").expect("compiles");
        assert!(anchored.is_match("alpha-42"));
        assert!(!anchored.is_match("alpha-42 "));
        assert!(!anchored.is_match("Alpha-42"));
        // Unicode classes, as in the regex crate.
        assert!(Pattern::new(r"^\w+$").expect("compiles").is_match("grüße"));
        let uri = Pattern::new("^docs://([^/]*)/(x)?(.*)$").expect("compiles");
        assert_eq!(
            uri.captures("docs://guide/intro.md"),
            Some(vec![
                Some("docs://guide/intro.md"),
                Some("guide"),
                None,
                Some("intro.md")
            ])
        );
        assert_eq!(uri.captures("https://elsewhere"), None);
    }

    #[test]
    fn a_pattern_that_does_not_compile_says_why() {
        let err = Pattern::new("[a-").expect_err("an unclosed class");
        assert!(err.contains("unclosed character class"), "{err}");
        let err = Pattern::new(r"\w{1000}{1000}").expect_err("too large");
        assert!(err.contains("more than 10485760 bytes"), "{err}");
    }

    #[test]
    fn a_pattern_is_charged_for_what_it_compiles_to() {
        let literal = Pattern::new("^(?:abc)$").expect("compiles");
        let unicode = Pattern::new(r"^(?:\w{20})$").expect("compiles");
        assert!(literal.bytes() > "^(?:abc)$".len(), "{}", literal.bytes());
        // Twenty Unicode word characters compile to far more than three literal ones.
        assert!(
            unicode.bytes() > 10 * literal.bytes(),
            "{} {}",
            unicode.bytes(),
            literal.bytes()
        );
    }
}
