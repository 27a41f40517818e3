//! Role markers: a line `<!-- assistant -->` or `<!-- user -->` switches the role of the text
//! after it, so one body holds the messages of a conversation.

use crate::model::{MessageTemplate, Role};

/// A line holding only this switches the role of the text after it.
pub(super) fn role_marker(line: &str) -> Option<Role> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    Role::parse(inner)
}

/// Splits a body at its role markers; runs that are only white space are dropped.
pub(crate) fn split_roles(body: &str) -> Vec<MessageTemplate> {
    split_roles_at_lines(body)
        .into_iter()
        .map(|(message, _)| message)
        .collect()
}

/// `split_roles`, with the line of the body (counted from 0) each message starts on, so
/// that a problem in a message can be shown at its line of the file.
pub(super) fn split_roles_at_lines(body: &str) -> Vec<(MessageTemplate, u64)> {
    let mut messages = Vec::new();
    let mut role = Role::User;
    let mut current = String::new();
    let mut current_start = 0;
    let flush = |role: Role, text: &mut String, start: u64, messages: &mut Vec<_>| {
        let leading = text.len() - text.trim_start_matches(['\n', '\r']).len();
        let trimmed = text.trim_matches(['\n', '\r']);
        if !trimmed.trim().is_empty() {
            let skipped = text[..leading].matches('\n').count() as u64;
            messages.push((
                MessageTemplate {
                    role,
                    body: trimmed.to_string(),
                },
                start + skipped,
            ));
        }
        text.clear();
    };
    for (index, line) in body.split_inclusive('\n').enumerate() {
        match role_marker(line) {
            Some(next) => {
                flush(role, &mut current, current_start, &mut messages);
                role = next;
                current_start = index as u64 + 1;
            }
            None => current.push_str(line),
        }
    }
    flush(role, &mut current, current_start, &mut messages);
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_markers_split_messages() {
        let messages = split_roles("hello\n<!-- assistant -->\nhi\n<!-- user -->\nmore\n");
        let roles: Vec<_> = messages.iter().map(|m| (m.role, m.body.as_str())).collect();
        assert_eq!(
            roles,
            [
                (Role::User, "hello"),
                (Role::Assistant, "hi"),
                (Role::User, "more")
            ]
        );
        let lines: Vec<u64> = split_roles_at_lines("\n\nhello\n<!-- assistant -->\n\nhi\n")
            .into_iter()
            .map(|(_, line)| line)
            .collect();
        assert_eq!(lines, [2, 5]);
    }
}
