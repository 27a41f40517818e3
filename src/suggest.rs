//! "Did you mean": the known names nearest to one that is not there, for every error about an
//! unknown name (a prompt, a resource's URI, a collection, a completion table, a host), so
//! that each suggests alike. A typo is the usual cause, so the nearest names by edit distance
//! come first; only when none is near does the error list some of the names there are.

/// How many near names an error suggests at most.
const SUGGESTED: usize = 3;

/// How many known names an error lists when none is near.
const LISTED: usize = 5;

/// The known names near `asked`, nearest first (ties by name), at most three. A name is near
/// when it is a few edits away (an edit is a character added, removed, changed, or two next
/// to each other swapped; about one per three characters, at most three, ignoring case), or,
/// for three characters or more, holds what was asked (`review` in `code-review`) or a word
/// a few edits from it (`reveiw` for `code-review`).
fn nearest<'a>(asked: &str, known: &'a [String]) -> Vec<&'a str> {
    let asked = asked.to_lowercase();
    let long_enough = asked.chars().count() >= 3;
    let allowed = (asked.chars().count() / 3).clamp(1, 3);
    // Lengths further apart than `allowed` cannot be within it: most names are passed over
    // without a distance, which matters for a server asked for many unknown names.
    let within = |text: &str| {
        asked.chars().count().abs_diff(text.chars().count()) <= allowed
            && strsim::osa_distance(&asked, text) <= allowed
    };
    let mut near: Vec<(usize, &str)> = known
        .iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let in_it = || {
                lower.contains(&asked) || lower.split(|c: char| !c.is_alphanumeric()).any(&within)
            };
            (within(&lower) || long_enough && in_it())
                .then(|| (strsim::osa_distance(&asked, &lower), name.as_str()))
        })
        .collect();
    near.sort_unstable();
    near.into_iter()
        .take(SUGGESTED)
        .map(|(_, name)| name)
        .collect()
}

/// `did you mean 'a' or 'b'?` when some known names are near `asked`, for an error that says
/// something else when none is.
pub(crate) fn did_you_mean(asked: &str, known: &[String]) -> Option<String> {
    let near = nearest(asked, known);
    (!near.is_empty()).then(|| format!("did you mean {}?", either(&near)))
}

/// What an error says after naming the unknown `asked`: `did you mean 'a' or 'b'?` when some
/// known names are near it, else `known PLURAL: a, b, c, d, e and 4 more`, or `the library
/// has no PLURAL`.
pub(crate) fn advice(asked: &str, known: &[String], plural: &str) -> String {
    if let Some(suggestion) = did_you_mean(asked, known) {
        return suggestion;
    }
    if known.is_empty() {
        return format!("the library has no {plural}");
    }
    let shown = known[..known.len().min(LISTED)].join(", ");
    match known.len().saturating_sub(LISTED) {
        0 => format!("known {plural}: {shown}"),
        more => format!("known {plural}: {shown} and {more} more"),
    }
}

/// `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`.
fn either(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("'{name}'")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn a_typo_suggests_the_name_it_missed() {
        let known = names(&["code-review", "commit-message", "summarize"]);
        for (asked, meant) in [
            ("code-reveiw", "code-review"),
            ("Commit-Mesage", "commit-message"),
            ("review", "code-review"),
            ("reveiw", "code-review"),
        ] {
            let expected = format!("did you mean '{meant}'?");
            assert_eq!(advice(asked, &known, "prompts"), expected, "{asked}");
        }
    }

    #[test]
    fn the_nearest_come_first_and_at_most_three() {
        let known = names(&["tests", "test", "testing", "tester", "toast"]);
        assert_eq!(nearest("test", &known), ["test", "tests", "tester"]);
    }

    #[test]
    fn nothing_near_lists_a_few_names() {
        let known = names(&["a1", "b2", "c3", "d4", "e5", "f6", "g7"]);
        assert_eq!(
            advice("zzzzzz", &known, "tables"),
            "known tables: a1, b2, c3, d4, e5 and 2 more"
        );
        assert_eq!(advice("x", &[], "tables"), "the library has no tables");
    }

    #[test]
    fn a_long_uri_is_not_near_every_uri_of_its_folder() {
        let known = names(&[
            "shelf://library/guides/api-design.md",
            "shelf://library/guides/code-review-checklist.md",
            "shelf://library/guides/testing.md",
        ]);
        assert_eq!(
            nearest("shelf://library/guides/code-reveiw-checklist.md", &known),
            ["shelf://library/guides/code-review-checklist.md"]
        );
        assert!(nearest("shelf://library/guides/foo.md", &known).is_empty());
    }
}
