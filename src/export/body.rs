//! A prompt's message templates read as what a host's file can hold: plain text, argument
//! placeholders, embedded and linked resources, and the template code (`{% if %}`, filters,
//! expressions) that no host evaluates. Each host format writes the pieces its own way.

use crate::model::{Prompt, Role};

#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Text that renders as it is (string literals and `{% raw %}` blocks included).
    Text(String),
    /// `{{ name }}`: an argument's value.
    Var(String),
    /// `{{ embed("uri") }}` with a literal URI.
    Embed(String),
    /// `{{ link("uri") }}` with a literal URI.
    Link(String),
    /// Any other template code, exactly as written.
    Code(String),
}

/// The whole body of `prompt` as pieces, its messages one after the other, and whether it had
/// roles a host's single message cannot keep (an assistant message, or more than one message).
pub fn prompt_pieces(prompt: &Prompt) -> (Vec<Piece>, bool) {
    let mut all = Vec::new();
    for (at, message) in prompt.messages.iter().enumerate() {
        if at > 0 {
            push_text(&mut all, "\n\n");
        }
        for piece in pieces(&message.body) {
            match piece {
                Piece::Text(text) => push_text(&mut all, &text),
                other => all.push(other),
            }
        }
    }
    let roles = prompt.messages.len() > 1 || prompt.messages.iter().any(|m| m.role != Role::User);
    (all, roles)
}

/// The text typed after the command at the end of `pieces`, as an import of a command
/// without a placeholder for it writes it: `{% if NAME %}LEAD{{ NAME }}{% endif %}`, LEAD what
/// a host puts before that text (`library::is_appended_lead`). The argument, and where those
/// pieces start.
pub(crate) fn appended(pieces: &[Piece]) -> Option<(&str, usize)> {
    let [
        ..,
        Piece::Code(open),
        Piece::Text(lead),
        Piece::Var(name),
        Piece::Code(close),
    ] = pieces
    else {
        return None;
    };
    (*open == format!("{{% if {name} %}}")
        && close == "{% endif %}"
        && crate::library::is_appended_lead(lead))
    .then_some((name.as_str(), pieces.len() - 4))
}

fn push_text(pieces: &mut Vec<Piece>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Piece::Text(last)) = pieces.last_mut() {
        last.push_str(text);
    } else {
        pieces.push(Piece::Text(text.to_string()));
    }
}

/// Splits one minijinja template into pieces. Whitespace control (`{{-`, `-%}`) trims the
/// neighbouring text as minijinja would; comments are dropped, since they never render.
pub fn pieces(template: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut rest = template;
    let mut trim_next = false;
    while !rest.is_empty() {
        let open = ["{{", "{%", "{#"]
            .iter()
            .filter_map(|tag| rest.find(tag))
            .min();
        let Some(open) = open else {
            text(&mut out, rest, &mut trim_next);
            break;
        };
        // The template text just before the tag: all that a `{{-` or `{%-` trims. What an
        // expression or a raw block gave before it is output, which minijinja never trims.
        let data = text(&mut out, &rest[..open], &mut trim_next);
        let tag = &rest[open..];
        if let Some(raw) = raw_block(tag) {
            if raw.trim_before {
                trim_last(&mut out, data);
            }
            push_text(&mut out, raw.text);
            trim_next = raw.trim_after;
            rest = raw.rest;
            continue;
        }
        let close = match &tag[..2] {
            "{{" => "}}",
            "{%" => "%}",
            _ => "#}",
        };
        let Some(length) = closing(tag, close) else {
            out.push(Piece::Code(tag.to_string()));
            break;
        };
        let whole = &tag[..length];
        let inner = &whole[2..whole.len() - 2];
        if inner.starts_with('-') {
            trim_last(&mut out, data);
        }
        // The `-` of `{#-` is the opening's own, never also the closing's: minijinja reads
        // `{#-#}` as trimming before it and not after.
        let after_opening = inner.strip_prefix(['-', '+']).unwrap_or(inner);
        trim_next = after_opening.ends_with('-');
        let expression = inner.trim_matches(['-', '+']).trim();
        rest = &tag[length..];
        match close {
            "}}" => match expression_piece(expression, whole) {
                Piece::Text(text) => push_text(&mut out, &text),
                piece => out.push(piece),
            },
            "%}" => out.push(Piece::Code(whole.to_string())),
            _ => {}
        }
    }
    out
}

/// Adds the template text `text` (its start trimmed after a `-}}` or `-%}`); returns how
/// many bytes it added.
fn text(out: &mut Vec<Piece>, text: &str, trim_next: &mut bool) -> usize {
    let text = if std::mem::take(trim_next) {
        text.trim_start()
    } else {
        text
    };
    push_text(out, text);
    text.len()
}

/// Trims the template text before a `{%-` or `{{-`: the last `data` bytes of the last text
/// piece, and no more (what came before them is not the tag's neighbour); a piece left empty
/// goes, so that no piece is empty.
fn trim_last(out: &mut Vec<Piece>, data: usize) {
    if let Some(Piece::Text(last)) = out.last_mut() {
        let start = last.len().saturating_sub(data);
        let kept = start + last[start..].trim_end().len();
        last.truncate(kept);
        if kept == 0 {
            out.pop();
        }
    }
}

/// The length of the tag at the start of `tag` up to and including `close`, skipping quoted
/// strings inside it.
fn closing(tag: &str, close: &str) -> Option<usize> {
    let bytes = tag.as_bytes();
    let mut at = 2;
    let mut quote: Option<u8> = None;
    while at < bytes.len() {
        let b = bytes[at];
        match quote {
            Some(_) if b == b'\\' => at += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if close != "#}" && (b == b'"' || b == b'\'') => quote = Some(b),
            // Bytes, not `str` slices: `at` may fall inside a character of the text.
            None if bytes[at..].starts_with(close.as_bytes()) => return Some(at + 2),
            None => {}
        }
        at += 1;
    }
    None
}

/// A `{% raw %}` block: its text, and whether whitespace control trims the text before and
/// after it.
struct Raw<'a> {
    trim_before: bool,
    text: &'a str,
    trim_after: bool,
    rest: &'a str,
}

/// The `{% raw %}` block at the start of `tag`, read as minijinja's lexer reads one: only
/// ASCII whitespace around `raw` and `endraw`, `-` trimming inside and outside the block, up
/// to the first `{% endraw %}`; None for any other tag, or a block never closed.
fn raw_block(tag: &str) -> Option<Raw<'_>> {
    let after = tag.strip_prefix("{%")?;
    let (trim_before, after) = whitespace_control(after);
    let (length, trim_start) = basic_tag(after, "raw")?;
    let body = &after[length..];
    let mut search = 0;
    while let Some(found) = body[search..].find("{%") {
        let start = search + found;
        let (trim_end, end_tag) = whitespace_control(&body[start + 2..]);
        if let Some((length, trim_after)) = basic_tag(end_tag, "endraw") {
            let mut text = &body[..start];
            if trim_start {
                text = text.trim_start();
            }
            if trim_end {
                text = text.trim_end();
            }
            return Some(Raw {
                trim_before,
                text,
                trim_after,
                rest: &end_tag[length..],
            });
        }
        search = start + 2;
    }
    None
}

/// Whether `text` starts with `-` (whitespace control that trims), and what follows the `-`
/// or `+` there is.
fn whitespace_control(text: &str) -> (bool, &str) {
    match text.strip_prefix(['-', '+']) {
        Some(rest) => (text.starts_with('-'), rest),
        None => (false, text),
    }
}

/// `name %}` at the start of `text`, ASCII whitespace around the name: its length, and
/// whether a `-` before the `%}` trims what follows.
fn basic_tag(text: &str, name: &str) -> Option<(usize, bool)> {
    let rest = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let rest = rest
        .strip_prefix(name)?
        .trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (trim_after, rest) = whitespace_control(rest);
    let rest = rest.strip_prefix("%}")?;
    Some((text.len() - rest.len(), trim_after))
}

fn expression_piece(expression: &str, whole: &str) -> Piece {
    if is_identifier(expression) {
        return Piece::Var(expression.to_string());
    }
    // `{{ name or "$2" }}`: an argument that, with no value, prints its Claude Code
    // placeholder as written, as Claude Code does and as an import of a Claude Code command
    // writes it. To every host it is the argument's placeholder.
    if let Some((name, written)) = expression.split_once(" or ")
        && is_identifier(name.trim())
        && string_literal(written.trim()).is_some_and(|text| text.starts_with('$'))
    {
        return Piece::Var(name.trim().to_string());
    }
    if let Some(text) = string_literal(expression) {
        return Piece::Text(text);
    }
    for (function, piece) in [
        ("embed", Piece::Embed as fn(String) -> Piece),
        ("link", Piece::Link),
    ] {
        if let Some(argument) = expression
            .strip_prefix(function)
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix('('))
            .and_then(|rest| rest.trim_end().strip_suffix(')'))
            && let Some(uri) = string_literal(argument.trim())
        {
            return piece(uri);
        }
    }
    Piece::Code(whole.to_string())
}

fn is_identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(text, "true" | "false" | "none" | "True" | "False" | "None")
}

/// The value of one quoted string literal that is the whole of `text`, as minijinja reads it
/// (its escapes `\n`, `\u00e9`, `\x41`, and a `\` before anything else kept): the literal is
/// checked to be one, then evaluated by minijinja itself, so the text written is the text
/// a render gives.
fn string_literal(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    // No quote of its kind inside but an escaped one: `"a" ~ "b"` is no one literal.
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next()?;
            }
            c if c == quote => return None,
            _ => {}
        }
    }
    let value = minijinja::Environment::new()
        .compile_expression(text)
        .ok()?
        .eval(())
        .ok()?;
    value.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dash_trims_the_template_text_before_it_and_never_what_an_expression_gave() {
        // Found by the fuzz target `export_pieces`: minijinja renders `a}e y`.
        assert_eq!(
            pieces("a {{- \"}e \" }} {{- \"y\" }}"),
            [Piece::Text("a}e y".into())]
        );
        assert_eq!(
            pieces("{% raw %}x {% endraw %} {{- \"y\" }}"),
            [Piece::Text("x y".into())]
        );
        assert_eq!(
            pieces("a {{ \"x\" }}  {{- b }}"),
            [Piece::Text("a x".into()), Piece::Var("b".into())]
        );
        // As minijinja itself renders them.
        let env = minijinja::Environment::new();
        for (template, rendered) in [
            ("a {{- \"}e \" }} {{- \"y\" }}", "a}e y"),
            ("{% raw %}x {% endraw %} {{- \"y\" }}", "x y"),
        ] {
            assert_eq!(env.render_str(template, ()).ok().as_deref(), Some(rendered));
        }
    }

    #[test]
    fn the_text_after_a_command_is_found_at_the_end_only_as_an_import_writes_it() {
        let tail = "Do it{% if args %}\n\n/git:commit {{ args }}{% endif %}";
        assert_eq!(appended(&pieces(tail)), Some(("args", 1)));
        let claude = "a {{ b }}{% if arguments %}\n\nARGUMENTS: {{ arguments }}{% endif %}";
        assert_eq!(appended(&pieces(claude)), Some(("arguments", 2)));
        for other in [
            "a{% if x %}\n\nNote: {{ x }}{% endif %}",
            "a{% if x %}\n\n{{ y }}{% endif %}",
            "a{% if x %}\n\n{{ x }}{% endif %} b",
        ] {
            assert_eq!(appended(&pieces(other)), None, "{other}");
        }
    }

    #[test]
    fn templates_split_into_what_hosts_can_hold() {
        use Piece::{Code, Embed, Link, Text, Var};
        let cases: [(&str, Vec<Piece>); 10] = [
            // A Claude Code placeholder kept as written when unfilled is the argument's; any
            // other fallback is template code.
            (
                "{{ file or \"$1\" }} {{ x or \"none\" }}",
                vec![
                    Var("file".into()),
                    Text(" ".into()),
                    Code("{{ x or \"none\" }}".into()),
                ],
            ),
            (
                "Hi {{ who }}, {{ \"{{\" }} x {% raw %}{{ y }}{% endraw %}{# c #}!",
                vec![
                    Text("Hi ".into()),
                    Var("who".into()),
                    Text(", {{ x {{ y }}!".into()),
                ],
            ),
            (
                "a {{ embed(\"shelf://l/x.md\") }} {{ link('s://y') }}",
                vec![
                    Text("a ".into()),
                    Embed("shelf://l/x.md".into()),
                    Text(" ".into()),
                    Link("s://y".into()),
                ],
            ),
            (
                "x {%- if a %}{{ a | upper }}{% endif -%}\n y",
                vec![
                    Text("x".into()),
                    Code("{%- if a %}".into()),
                    Code("{{ a | upper }}".into()),
                    Code("{% endif -%}".into()),
                    Text("y".into()),
                ],
            ),
            (
                "{{ \"}}\" }} {{ open",
                vec![Text("}} ".into()), Code("{{ open".into())],
            ),
            // String literals mean what they mean to minijinja.
            (
                r#"{{ "caf\u00e9 \] \x41\n" }}{{ 'it\'s' }}"#,
                vec![Text("café \\] A\nit's".into())],
            ),
            // A raw block as minijinja reads one: `-` trims inside and out, and its end is
            // `endraw` between ASCII whitespace only.
            (
                "a {%- raw -%}  {{ x }} {%- endraw -%}  b {% raw %}c{% endraw\u{b}%}{% endraw %}",
                vec![Text("a{{ x }}b c{% endraw\u{b}%}".into())],
            ),
            // Text that a `{%-` trims away leaves no piece behind.
            (
                "{{ a }}  {%- if b %}",
                vec![Var("a".into()), Code("{%- if b %}".into())],
            ),
            // Characters of several bytes inside tags and comments are stepped over whole.
            (
                "a {# café #} b {% if é %}ü{% endif %} {{ \"née\" }}",
                vec![
                    Text("a  b ".into()),
                    Code("{% if é %}".into()),
                    Text("ü".into()),
                    Code("{% endif %}".into()),
                    Text(" née".into()),
                ],
            ),
            // The `-` of `{#-#}` opens the comment and does not close it too: the text
            // before is trimmed, the text after is not; `{#--#}` trims both.
            ("a {#-#} b {#--#} c", vec![Text("a bc".into())]),
        ];
        for (template, expected) in cases {
            assert_eq!(pieces(template), expected, "{template}");
        }
    }
}
