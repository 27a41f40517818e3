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
pub fn split_roles(body: &str) -> Vec<MessageTemplate> {
    let mut messages = Vec::new();
    let mut role = Role::User;
    let mut current = String::new();
    let flush = |role: Role, text: &mut String, messages: &mut Vec<MessageTemplate>| {
        let trimmed = text.trim_matches(['\n', '\r']);
        if !trimmed.trim().is_empty() {
            messages.push(MessageTemplate {
                role,
                body: trimmed.to_string(),
            });
        }
        text.clear();
    };
    for line in body.split_inclusive('\n') {
        match role_marker(line) {
            Some(next) => {
                flush(role, &mut current, &mut messages);
                role = next;
            }
            None => current.push_str(line),
        }
    }
    flush(role, &mut current, &mut messages);
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
    }
}
