//! Text a reader does not see but a model reads: invisible Unicode (tag characters, bidi
//! controls, zero-width characters inside words, runs of variation selectors, other
//! default-ignorable code points) and markup a markdown view hides (HTML comments, elements
//! marked `hidden` or `display:none`), each found at its line and column and made visible;
//! and names that look like other names (mixed scripts, letters confusable with ASCII).
//!
//! Ordinary text in any script is left alone: a joiner inside an emoji sequence or between
//! letters of a script that uses it, an emoji's flag tags and variation selector, the
//! directional marks of Arabic and Hebrew text, a byte order mark at the very start.

use icu_properties::CodePointSetData;
use icu_properties::props::{Alphabetic, DefaultIgnorableCodePoint, Emoji};
use pulldown_cmark::{Event, Options, Parser, Tag};
use regex_automata::meta::Regex;
use unicode_script::{Script, UnicodeScript};
use unicode_security::{RestrictionLevel, RestrictionLevelDetection};

/// What kind of hidden text a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Kind {
    /// Unicode tag characters outside an emoji flag: ASCII no host shows.
    TagCharacters,
    /// A bidi embedding, override or isolate control, which shows text in another order
    /// than it is read.
    BidiControl,
    /// Zero-width characters splitting a word, or a run of them.
    ZeroWidth,
    /// A run of variation selectors, which can carry any bytes after one character.
    VariationSelectors,
    /// Another default-ignorable code point.
    Invisible,
    /// An HTML comment in markdown.
    HtmlComment,
    /// An HTML element a markdown view does not show (`hidden`, `display:none`).
    HiddenHtml,
    /// A name that mixes scripts or holds letters that look like ASCII.
    Lookalike,
}

/// One piece of hidden text: where it starts (line and column from 1, columns in
/// characters), what kind it is, and what it says, made visible.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hidden {
    pub line: u64,
    pub column: u64,
    pub kind: Kind,
    /// The hidden text as a reader can see it: invisible characters named (`<U+200B ZERO
    /// WIDTH SPACE>`), tag characters decoded, a comment's text.
    pub text: String,
}

impl Hidden {
    /// The warning's sentence: what is hidden, what it says, what to do.
    pub(crate) fn message(&self) -> String {
        let text = &self.text;
        match self.kind {
            Kind::TagCharacters => format!(
                "hidden text in Unicode tag characters, which no host shows but a model reads: \
                 \"{text}\"; remove them"
            ),
            Kind::BidiControl => format!(
                "hidden bidi control, which shows the text after it in another order than a \
                 model reads it: {text}; remove it"
            ),
            Kind::ZeroWidth => {
                format!("hidden zero-width character: {text}; remove it")
            }
            Kind::VariationSelectors => {
                format!("hidden bytes in a run of variation selectors: \"{text}\"; remove them")
            }
            Kind::Invisible => format!("hidden invisible character {text}; remove it"),
            Kind::HtmlComment => format!(
                "hidden HTML comment, which a markdown view does not show but a model reads: \
                 \"{text}\"; remove it, or write it as visible text"
            ),
            Kind::HiddenHtml => format!(
                "hidden HTML element, which a markdown view does not show but a model reads: \
                 \"{text}\"; remove it, or write it as visible text"
            ),
            Kind::Lookalike => format!(
                "lookalike characters: {text}; write each word in one script (an ASCII name in \
                 plain ASCII)"
            ),
        }
    }
}

/// Everything hidden in `text`; `markdown` looks for HTML a markdown view hides too (not in
/// code spans or code blocks, where `<!-- -->` is an example shown as it is).
pub(crate) fn scan(text: &str, markdown: bool) -> Vec<Hidden> {
    let lines = Lines::new(text);
    // Nothing ASCII is invisible, and most text is ASCII: it is not read a character at a
    // time.
    let mut found = if text.is_ascii() {
        Vec::new()
    } else {
        characters(text, &lines)
    };
    if markdown && may_hide_html(text) {
        found.extend(html(text, &lines));
        found.sort_by_key(|hidden| (hidden.line, hidden.column));
    }
    found
}

/// What is wrong with a name or URI that should read as what it looks like: a word of it
/// that mixes scripts as UTS #39 does not allow even moderately (Latin with Cyrillic or
/// Greek, say), or letters confusable with ASCII in a name otherwise of ASCII letters
/// (`cоde-review` with a Cyrillic `о`). The finding is at the first such letter.
pub(crate) fn lookalike(name: &str) -> Option<Hidden> {
    let mixed = name
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| word.detect_restriction_level() > RestrictionLevel::ModeratelyRestrictive);
    let confusable = |c: char| !c.is_ascii() && c.is_alphabetic() && like_ascii(c).is_some();
    let looks_ascii = name
        .chars()
        .filter(|c| c.is_alphabetic())
        .all(|c| c.is_ascii() || confusable(c));
    if !mixed && !looks_ascii {
        return None;
    }
    let (at, c) = name
        .chars()
        .enumerate()
        .find(|&(_, c)| confusable(c) || (mixed && !c.is_ascii() && c.is_alphabetic()))?;
    let letter = format!("{} (a {} letter)", code_point(c), c.script().full_name());
    let text = match like_ascii(c) {
        Some(like) => format!("'{name}' holds {letter}, which looks like '{like}'"),
        None => format!("'{name}' mixes scripts: {letter} among letters of another"),
    };
    Some(Hidden {
        line: 1,
        column: at as u64 + 1,
        kind: Kind::Lookalike,
        text,
    })
}

/// The ASCII a character is confusable with (UTS #39's skeleton), if it is.
fn like_ascii(c: char) -> Option<String> {
    let mut one = [0; 4];
    let skeleton: String = unicode_security::skeleton(c.encode_utf8(&mut one)).collect();
    (!skeleton.is_empty() && skeleton.is_ascii()).then_some(skeleton)
}

/// Where each line starts, to turn a byte offset into a line and a column.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|at| at + 1));
        Lines { text, starts }
    }

    /// Line and column (from 1, the column in characters) of the byte at `at`.
    fn position(&self, at: usize) -> (u64, u64) {
        let line = self.starts.partition_point(|&start| start <= at) - 1;
        let column = self.text[self.starts[line]..at].chars().count() + 1;
        (line as u64 + 1, column as u64)
    }

    /// The rest of the line from the byte at `at`.
    fn rest(&self, at: usize) -> &'a str {
        let rest = &self.text[at..];
        rest.split('\n').next().unwrap_or(rest)
    }
}

/// The invisible characters of `text` that hide something.
fn characters(text: &str, lines: &Lines) -> Vec<Hidden> {
    let mut found = Vec::new();
    // The line of the last bidi control that opens an embedding, override or isolate: the
    // one that closes it on that line is shown with it rather than found again.
    let mut opened_on = None;
    let mut before = None;
    let mut chars = text.char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        let own = class(c);
        if own == Class::Visible {
            before = Some(c);
            continue;
        }
        // A run of characters of one class is one finding.
        let mut taken = vec![c];
        let mut end = offset + c.len_utf8();
        while let Some(&(at, next)) = chars.peek() {
            if class(next) != own {
                break;
            }
            taken.push(next);
            end = at + next.len_utf8();
            chars.next();
        }
        let run = taken.len();
        let after = chars.peek().map(|&(_, next)| next);
        let hidden = match own {
            Class::Tag if !is_emoji_tag_sequence(before, &taken) => Some((
                Kind::TagCharacters,
                visible(&taken.iter().map(|&tag| untagged(tag)).collect::<String>()),
            )),
            Class::Bidi if closes(c) && opened_on == Some(lines.position(offset).0) => None,
            Class::Bidi => Some((
                Kind::BidiControl,
                format!(
                    "{}, before \"{}\" as stored",
                    code_point(c),
                    visible(lines.rest(offset + c.len_utf8()))
                ),
            )),
            // A byte order mark at the very start only says how the file is encoded.
            Class::ZeroWidth if offset == 0 && c == '\u{FEFF}' && run == 1 => None,
            Class::ZeroWidth if run > 1 || c == '\u{FEFF}' || splits_word(before, after) => Some((
                Kind::ZeroWidth,
                format!(
                    "\"{}{}{}\"",
                    visible(&word_end(&text[..offset])),
                    visible(&taken.iter().collect::<String>()),
                    visible(&word_start(&text[end..]))
                ),
            )),
            Class::VariationSelector if run > 1 => {
                let bytes: Vec<u8> = taken.iter().filter_map(|&c| selector_byte(c)).collect();
                Some((
                    Kind::VariationSelectors,
                    visible(&String::from_utf8_lossy(&bytes)),
                ))
            }
            Class::Other => Some((
                Kind::Invisible,
                taken
                    .iter()
                    .map(|&c| code_point(c))
                    .collect::<Vec<_>>()
                    .join(", "),
            )),
            _ => None,
        };
        if let Some((kind, text)) = hidden {
            let (line, column) = lines.position(offset);
            if kind == Kind::BidiControl && !closes(c) {
                opened_on = Some(line);
            }
            found.push(Hidden {
                line,
                column,
                kind,
                text,
            });
        }
        before = taken.last().copied();
    }
    found
}

/// How a character is read here: the invisible ones by what they can hide, everything
/// else (`Visible`) as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Visible,
    Tag,
    Bidi,
    ZeroWidth,
    VariationSelector,
    /// Another default-ignorable code point with no business in prompt text.
    Other,
}

fn class(c: char) -> Class {
    match c {
        _ if c.is_ascii() => Class::Visible,
        '\u{E0000}'..='\u{E007F}' => Class::Tag,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => Class::Bidi,
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => Class::ZeroWidth,
        '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}' => Class::VariationSelector,
        // Ignorable but part of ordinary text: the soft hyphen (a hyphenation hint), the
        // combining grapheme joiner, the Arabic letter mark and the left-to-right and
        // right-to-left marks, the Hangul jamo fillers of old Hangul, the Khmer inherent
        // vowels and the Mongolian variation selectors.
        '\u{00AD}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' => Class::Visible,
        _ if CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c) => Class::Other,
        _ => Class::Visible,
    }
}

/// Whether a bidi control closes what another opened (POP DIRECTIONAL FORMATTING or
/// ISOLATE).
fn closes(c: char) -> bool {
    c == '\u{202C}' || c == '\u{2069}'
}

/// An emoji tag sequence (the flags of England, Scotland, Wales): an emoji, then one to six
/// tag digits or small letters, then CANCEL TAG.
fn is_emoji_tag_sequence(before: Option<char>, tags: &[char]) -> bool {
    let Some((&last, spec)) = tags.split_last() else {
        return false;
    };
    before.is_some_and(|base| CodePointSetData::new::<Emoji>().contains(base))
        && last == '\u{E007F}'
        && (1..=6).contains(&spec.len())
        && spec
            .iter()
            .all(|&tag| untagged(tag).is_ascii_digit() || untagged(tag).is_ascii_lowercase())
}

/// The ASCII character a tag character stands for (U+E0041 TAG LATIN CAPITAL LETTER A is
/// `A`).
fn untagged(tag: char) -> char {
    char::from_u32(tag as u32 - 0xE0000).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The byte a variation selector stands for when a run of them carries bytes: VS1 to VS16
/// are 0 to 15, VS17 to VS256 are 16 to 255.
fn selector_byte(c: char) -> Option<u8> {
    match c {
        '\u{FE00}'..='\u{FE0F}' => u8::try_from(c as u32 - 0xFE00).ok(),
        '\u{E0100}'..='\u{E01EF}' => u8::try_from(c as u32 - 0xE0100 + 16).ok(),
        _ => None,
    }
}

/// Whether a zero-width character between `before` and `after` splits a word of Latin
/// letters or digits, where no script needs a joiner (Persian, Hindi and others do, and
/// emoji sequences join with one).
fn splits_word(before: Option<char>, after: Option<char>) -> bool {
    before.is_some_and(is_latin_word) && after.is_some_and(is_latin_word)
}

fn is_latin_word(c: char) -> bool {
    c.is_ascii_digit()
        || (CodePointSetData::new::<Alphabetic>().contains(c) && c.script() == Script::Latin)
}

/// The letters of the word that ends `text`, just before a zero-width run.
fn word_end(text: &str) -> String {
    let start = text
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_latin_word(c))
        .map_or(0, |(at, c)| at + c.len_utf8());
    text[start..].to_string()
}

/// The letters of the word that starts `text`, just after a zero-width run.
fn word_start(text: &str) -> String {
    text.chars().take_while(|&c| is_latin_word(c)).collect()
}

/// `text` with every invisible or control character named, and made one line.
fn visible(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\n' || c == '\r' || c == '\t' {
            shown.push(' ');
        } else if c.is_control() || class(c) != Class::Visible {
            shown.push('<');
            shown.push_str(&code_point(c));
            shown.push('>');
        } else {
            shown.push(c);
        }
    }
    shown
}

/// `U+200B ZERO WIDTH SPACE`: the code point and, for the invisible ones, its name.
fn code_point(c: char) -> String {
    let number = c as u32;
    let name = match c {
        '\u{200B}' => "ZERO WIDTH SPACE".to_string(),
        '\u{200C}' => "ZERO WIDTH NON-JOINER".to_string(),
        '\u{200D}' => "ZERO WIDTH JOINER".to_string(),
        '\u{2060}' => "WORD JOINER".to_string(),
        '\u{FEFF}' => "ZERO WIDTH NO-BREAK SPACE".to_string(),
        '\u{202A}' => "LEFT-TO-RIGHT EMBEDDING".to_string(),
        '\u{202B}' => "RIGHT-TO-LEFT EMBEDDING".to_string(),
        '\u{202C}' => "POP DIRECTIONAL FORMATTING".to_string(),
        '\u{202D}' => "LEFT-TO-RIGHT OVERRIDE".to_string(),
        '\u{202E}' => "RIGHT-TO-LEFT OVERRIDE".to_string(),
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE".to_string(),
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE".to_string(),
        '\u{2068}' => "FIRST STRONG ISOLATE".to_string(),
        '\u{2069}' => "POP DIRECTIONAL ISOLATE".to_string(),
        '\u{2061}' => "FUNCTION APPLICATION".to_string(),
        '\u{2062}' => "INVISIBLE TIMES".to_string(),
        '\u{2063}' => "INVISIBLE SEPARATOR".to_string(),
        '\u{2064}' => "INVISIBLE PLUS".to_string(),
        '\u{3164}' => "HANGUL FILLER".to_string(),
        '\u{FFA0}' => "HALFWIDTH HANGUL FILLER".to_string(),
        '\u{E0001}' => "LANGUAGE TAG".to_string(),
        '\u{E007F}' => "CANCEL TAG".to_string(),
        '\u{FE00}'..='\u{FE0F}' => format!("VARIATION SELECTOR-{}", number - 0xFE00 + 1),
        '\u{E0100}'..='\u{E01EF}' => format!("VARIATION SELECTOR-{}", number - 0xE0100 + 17),
        _ => return format!("U+{number:04X}"),
    };
    format!("U+{number:04X} {name}")
}

/// How much of a comment or hidden element a finding shows.
const SHOWN_CHARS: usize = 200;

/// The HTML of a markdown text that a markdown view does not show: comments, and elements
/// marked hidden. Only the HTML pulldown-cmark finds is looked at, so code spans and code
/// blocks are text; front matter is its own block.
fn html(text: &str, lines: &Lines) -> Vec<Hidden> {
    let options = Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut found = Vec::new();
    let mut in_block = false;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        let (start, end) = match event {
            // A block's HTML comes a line at a time; the block is read whole.
            Event::Start(Tag::HtmlBlock) => {
                in_block = true;
                (range.start, range.end)
            }
            Event::End(_) if in_block => {
                in_block = false;
                continue;
            }
            Event::InlineHtml(_) => (range.start, range.end),
            _ => continue,
        };
        found.extend(comments(text, start, end, lines));
        found.extend(hidden_elements(text, start, end, lines));
    }
    found
}

/// An opening tag, and attributes that hide its element.
fn patterns() -> Option<&'static (Regex, Regex)> {
    static PATTERNS: std::sync::LazyLock<Option<(Regex, Regex)>> = std::sync::LazyLock::new(|| {
        let tag = Regex::new(r"<([A-Za-z][A-Za-z0-9-]*)(\s[^<>]*)?>").ok()?;
        let hides =
            Regex::new(r#"(?i)(^|\s)hidden(\s|=|/|$)|display\s*:\s*none|visibility\s*:\s*hidden"#)
                .ok()?;
        Some((tag, hides))
    });
    PATTERNS.as_ref()
}

/// Whether `text` holds a comment or an attribute that hides an element anywhere: most
/// markdown holds neither, and is not parsed again to find them.
fn may_hide_html(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"<!--").is_some()
        || patterns().is_some_and(|(_, hides)| hides.is_match(text))
}

/// The comments in `text[start..end]`; one left open runs to `end`. A role marker (a line of
/// only `<!-- assistant -->` or `<!-- user -->`) is no finding: in a prompt it is the format's
/// own, split off before anything is served, and it is what an export writes.
fn comments(text: &str, start: usize, end: usize, lines: &Lines) -> Vec<Hidden> {
    let mut found = Vec::new();
    let mut from = start;
    while let Some(open) = text[from..end].find("<!--").map(|at| from + at) {
        let inside = open + "<!--".len();
        let (close, after) = match text[inside..end].find("-->") {
            Some(at) => (inside + at, inside + at + "-->".len()),
            None => (end, end),
        };
        from = after;
        let line_start = text[..open].rfind('\n').map_or(0, |at| at + 1);
        let line_end = text[open..].find('\n').map_or(text.len(), |at| open + at);
        if super::roles::role_marker(&text[line_start..line_end]).is_some() {
            continue;
        }
        let (line, column) = lines.position(open);
        found.push(Hidden {
            line,
            column,
            kind: Kind::HtmlComment,
            text: shortened(&text[inside..close]),
        });
    }
    found
}

/// Opening tags that hide their element, and what the element holds (up to its closing
/// tag, or `end` of a block).
fn hidden_elements(text: &str, start: usize, end: usize, lines: &Lines) -> Vec<Hidden> {
    let Some((tag, hides)) = patterns() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut captures = tag.create_captures();
    let mut from = start;
    while from < end {
        tag.search_captures(
            &regex_automata::Input::new(text).range(from..end),
            &mut captures,
        );
        let (Some(whole), Some(name)) = (captures.get_match(), captures.get_group(1)) else {
            break;
        };
        from = whole.end();
        let attributes = captures.get_group(2).map_or("", |span| &text[span.range()]);
        if !hides.is_match(attributes) {
            continue;
        }
        let closing = format!("</{}", &text[name.range()]).to_ascii_lowercase();
        let holds_end = text[whole.end()..]
            .to_ascii_lowercase()
            .find(&closing)
            .map_or(end.max(whole.end()), |at| whole.end() + at);
        let (line, column) = lines.position(whole.start());
        found.push(Hidden {
            line,
            column,
            kind: Kind::HiddenHtml,
            text: shortened(&text[whole.start()..holds_end]),
        });
    }
    found
}

/// Hidden text to show on one line: whitespace runs as one space, invisible characters
/// named, at most `SHOWN_CHARS` characters.
fn shortened(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let shown = visible(&words.join(" "));
    if shown.chars().count() <= SHOWN_CHARS {
        return shown;
    }
    let mut cut: String = shown.chars().take(SHOWN_CHARS).collect();
    cut.push_str("...");
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_one_script_or_mixed_as_writers_mix_them_are_no_lookalike() {
        for name in [
            "code-review",
            "Руководство по API",
            "日本語ガイド",
            "API仕様書",
            "한국어-문서",
            "مراجعة-الكود",
            "café-crème",
            "straße",
        ] {
            assert_eq!(lookalike(name), None, "{name}");
        }
    }

    #[test]
    fn latin_mixed_with_cyrillic_or_greek_and_ascii_lookalikes_are_found() {
        let found = lookalike("c\u{043E}de-review").expect("a Cyrillic o");
        assert_eq!((found.line, found.column), (1, 2));
        assert!(
            found.text.contains("which looks like 'o'"),
            "{}",
            found.text
        );
        // A whole word of letters that look like ASCII, beside ASCII words.
        let found = lookalike("run-\u{0435}\u{0445}\u{0435}").expect("Cyrillic exe");
        assert_eq!(found.column, 5);
        let found = lookalike("alpha\u{03BB}").expect("Latin with Greek");
        assert!(found.text.contains("mixes scripts"), "{}", found.text);
    }

    #[test]
    fn a_flag_s_tags_are_ordinary_and_tags_beyond_a_subdivision_code_are_not() {
        let scotland = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
        assert_eq!(scan(scotland, false), Vec::new());
        let smuggled: String = "\u{1F3F4}"
            .chars()
            .chain(
                "gb and more"
                    .chars()
                    .map(|c| char::from_u32(0xE0000 + c as u32).unwrap()),
            )
            .chain(['\u{E007F}'])
            .collect();
        let found = scan(&smuggled, false);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].text, "gb and more<U+007F>");
    }
}
