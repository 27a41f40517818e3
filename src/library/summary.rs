//! What a markdown body says about itself: its first heading and first paragraph, the
//! fallbacks for an item's title and description.

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

/// A description taken from a paragraph is for lists a host shows: a long paragraph (a
/// whole document with no blank line, say) is cut at a word, with an ellipsis.
fn summary(paragraph: &str) -> String {
    const LONGEST: usize = 300;
    if paragraph.chars().count() <= LONGEST {
        return paragraph.to_string();
    }
    let cut: String = paragraph.chars().take(LONGEST).collect();
    let at_word = cut
        .rfind(char::is_whitespace)
        .filter(|&at| at > LONGEST / 2)
        .unwrap_or(cut.len());
    format!("{}…", cut[..at_word].trim_end())
}

/// The body's first heading and first paragraph, as plain text.
pub(super) fn heading_and_paragraph(body: &str) -> (Option<String>, Option<String>) {
    let mut heading: Option<String> = None;
    let mut paragraph: Option<String> = None;
    let mut current: Option<String> = None;
    for event in Parser::new(body) {
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
                if heading.is_none() && level <= HeadingLevel::H6 && !text.trim().is_empty() {
                    heading = Some(text.trim().to_string());
                }
            }
            Event::End(TagEnd::Paragraph) => {
                let text = current.take().unwrap_or_default();
                if paragraph.is_none() && !text.trim().is_empty() {
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
}
