//! What a markdown body says about itself: its first heading and first paragraph, the
//! fallbacks for an item's title and description. A prompt's body is a template, so for a
//! prompt only plain text counts: a heading or paragraph with template code or another
//! tool's placeholders would show that code to whoever picks the prompt from a list, and a
//! section heading (`## Context`) names a part of the prompt, not the prompt.

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

/// A description taken from a paragraph is for lists a host shows: a long paragraph (a
/// whole document with no blank line, say) is cut at a word, with an ellipsis.
fn summary(paragraph: &str) -> String {
    crate::model::listed_description(paragraph).into_owned()
}

/// A document's first heading (of any level) and first paragraph, as plain text.
pub(super) fn heading_and_paragraph(body: &str) -> (Option<String>, Option<String>) {
    first_heading_and_paragraph(body, |_, _| true)
}

/// A prompt body's title and description: its first level-1 heading and first paragraph
/// that hold no template code and no placeholder (`{{`, `{%`, `{#`, `$ARGUMENTS`, `$1`,
/// `$name`, `${...}`, `` !`command` ``, an output template's `{FEATURE_NAME}`), the heading
/// not a section label in capitals (`# PLAN`, which names a part of the answer the prompt
/// asks for); None where there is none.
pub(super) fn prompt_heading_and_paragraph(body: &str) -> (Option<String>, Option<String>) {
    first_heading_and_paragraph(body, |level, text| {
        let heading_ok = match level {
            None => true,
            Some(level) => level == HeadingLevel::H1 && !is_label(text),
        };
        heading_ok && !has_template_code(text) && !has_fill_in(text)
    })
}

/// Whether a heading's letters are all capitals (two or more of them): `# PLAN`, `# OUTPUT
/// FORMAT`, the labels of an output template's parts.
fn is_label(heading: &str) -> bool {
    let letters: Vec<char> = heading.chars().filter(|c| c.is_alphabetic()).collect();
    letters.len() >= 2 && letters.iter().all(|c| c.is_uppercase())
}

/// Whether `text` holds a fill-in of an output template: a word in single braces,
/// `{FEATURE_NAME}`, `{name}`.
fn has_fill_in(text: &str) -> bool {
    text.split('{').skip(1).any(|after| {
        after.split_once('}').is_some_and(|(inside, _)| {
            !inside.is_empty()
                && inside
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        })
    })
}

/// Whether `text` holds something a host would show as code rather than words: template
/// code, or a placeholder of some host: `$1` (but not an amount, `$10`), `$name` (Claude
/// Code's named arguments, which an export writes for any prompt's arguments, and shell
/// variables), `${...}`.
fn has_template_code(text: &str) -> bool {
    ["{{", "{%", "{#", "${", "!`"]
        .iter()
        .any(|code| text.contains(code))
        || text.match_indices('$').any(|(at, _)| {
            let after = &text.as_bytes()[at + 1..];
            let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
            digits == 1
                || after
                    .first()
                    .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        })
}

/// The first heading and paragraph that `usable` accepts (the heading's level, None for a
/// paragraph, and its text as written in the source).
fn first_heading_and_paragraph(
    body: &str,
    usable: impl Fn(Option<HeadingLevel>, &str) -> bool,
) -> (Option<String>, Option<String>) {
    let mut heading: Option<String> = None;
    let mut paragraph: Option<String> = None;
    let mut current: Option<String> = None;
    for (event, range) in Parser::new(body).into_offset_iter() {
        let source = body.get(range).unwrap_or_default();
        match event {
            Event::Start(Tag::Heading { .. }) | Event::Start(Tag::Paragraph) => {
                current = Some(String::new())
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some(buffer) = current.as_mut() {
                    buffer.push_str(&text);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(buffer) = current.as_mut() {
                    buffer.push(' ');
                }
            }
            Event::End(TagEnd::Heading(level)) => {
                let text = current.take().unwrap_or_default();
                if heading.is_none() && !text.trim().is_empty() && usable(Some(level), source) {
                    heading = Some(text.trim().to_string());
                }
            }
            Event::End(TagEnd::Paragraph) => {
                let text = current.take().unwrap_or_default();
                if paragraph.is_none() && !text.trim().is_empty() && usable(None, source) {
                    paragraph = Some(summary(text.trim()));
                }
            }
            _ => {}
        }
        if heading.is_some() && paragraph.is_some() {
            break;
        }
    }
    (heading, paragraph)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_first_paragraph_becomes_a_short_description() {
        let body = format!("# Title\n\n{}\n", "word ".repeat(500));
        let (_, description) = heading_and_paragraph(&body);
        let description = description.unwrap_or_default();
        assert!(description.chars().count() <= 301, "{}", description.len());
        assert!(description.ends_with("word…"), "{description}");
    }

    #[test]
    fn a_prompt_s_title_and_description_are_plain_words() {
        let (title, description) = prompt_heading_and_paragraph(
            "## Context\n\nRun $1 now, for $ARGUMENTS.\n\n# Fix {{ x }}\n\n`{{ y }}`\n\n\
             It costs $10.\n",
        );
        assert_eq!(title, None);
        assert_eq!(description.as_deref(), Some("It costs $10."));
        let (title, _) = prompt_heading_and_paragraph("# Review\n\nText.\n");
        assert_eq!(title.as_deref(), Some("Review"));
        // A named placeholder, as a Claude Code export writes any argument, is no prose.
        let (title, description) = prompt_heading_and_paragraph(
            "# Audit $site\n\nAudit $site now.\n\n# Audit\n\nCheck $_x.\n\nCosts $10 a site.\n",
        );
        assert_eq!(title.as_deref(), Some("Audit"));
        assert_eq!(description.as_deref(), Some("Costs $10 a site."));
        // An output template's labels and fill-ins are not the prompt's title either.
        let (title, description) = prompt_heading_and_paragraph(
            "# PLAN\n\nFor {FEATURE_NAME}: steps.\n\n# {FEATURE_NAME}\n\n# Plan a feature\n\n\
             Write the plan.\n",
        );
        assert_eq!(title.as_deref(), Some("Plan a feature"));
        assert_eq!(description.as_deref(), Some("Write the plan."));
        let (title, _) = prompt_heading_and_paragraph("# Set {a, b}\n");
        assert_eq!(
            title.as_deref(),
            Some("Set {a, b}"),
            "braces of prose are prose"
        );
    }
}
