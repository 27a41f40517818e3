//! A CSV list of prompts, the way prompt collections such as awesome-chatgpt-prompts'
//! `prompts.csv` are shared: a header row naming the columns, then one prompt a row. The
//! columns are found by their header (any case): the title (`act`, `title`), the name
//! (`name`, else the title slugged), the text (`prompt`, `content`, `body`, `text`), the
//! description (`description`) and tags (`tags`, `category`, `type`, and `for_devs` as the tag
//! `for-devs`), which join the description as a `Tags:` line. `${Name}` and `${Name:default}`
//! in the text become string arguments, required without a default, optional with it.

use std::collections::HashMap;

use super::{identifier, translate, var};
use crate::library::FileError;
use crate::library::prompt_file::validate_name;
use crate::library::roles::split_roles;
use crate::model::{Origin, Prompt, PromptArgument};

/// Header names (lower case) of each column read, in order of preference.
const NAME: &[&str] = &["name"];
const TITLE: &[&str] = &["title", "act"];
const TEXT: &[&str] = &["prompt", "content", "body", "text"];
const DESCRIPTION: &[&str] = &["description"];
const TAGS: &[&str] = &["tags", "category", "type"];
const FOR_DEVS: &[&str] = &["for_devs"];

/// What a prompt list gives: the prompts of the rows that read, the rows that do not (each at
/// its line, with the reason), and what was changed to make a row read (a name made unique).
#[derive(Debug, Default)]
pub(crate) struct PromptList {
    /// Each prompt with the line its row starts on.
    pub prompts: Vec<(Prompt, u64)>,
    pub refused: Vec<FileError>,
    pub warnings: Vec<FileError>,
}

/// The columns of a list, by index in its rows.
struct Columns {
    name: Option<usize>,
    title: Option<usize>,
    text: usize,
    description: Option<usize>,
    tags: Vec<usize>,
    for_devs: Option<usize>,
}

impl Columns {
    fn of(path: &str, header: &csv::StringRecord) -> Result<Columns, FileError> {
        let find = |names: &[&str]| {
            names.iter().find_map(|wanted| {
                header
                    .iter()
                    .position(|name| name.trim().eq_ignore_ascii_case(wanted))
            })
        };
        let missing = |what: &str, names: &[&str]| {
            FileError::new(
                path,
                Some(1),
                format!(
                    "the header row names no {what} column; name one {} (it names: {})",
                    names.join(", "),
                    header.iter().collect::<Vec<_>>().join(", ")
                ),
            )
        };
        let text = find(TEXT).ok_or_else(|| missing("prompt text", TEXT))?;
        let (name, title) = (find(NAME), find(TITLE));
        if name.is_none() && title.is_none() {
            return Err(missing("name or title", &["name", "title", "act"]));
        }
        Ok(Columns {
            name,
            title,
            text,
            description: find(DESCRIPTION),
            tags: TAGS.iter().filter_map(|tag| find(&[tag])).collect(),
            for_devs: find(FOR_DEVS),
        })
    }
}

/// Reads the CSV file at `path` (its bytes) as prompts of `origin`'s collection. An error is
/// the file as a whole (no header, or no column to take the text or names from).
pub(crate) fn prompt_list(
    path: &str,
    bytes: &[u8],
    origin: &Origin,
) -> Result<PromptList, FileError> {
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|err| FileError::new(path, Some(1), format!("the header row: {err}")))?
        .clone();
    let columns = Columns::of(path, &header)?;
    let mut list = PromptList::default();
    // Each name taken, with the line of the row that took it.
    let mut taken: HashMap<String, u64> = HashMap::new();
    for record in reader.records() {
        let record = match record {
            Ok(record) => record,
            Err(err) => {
                let line = err.position().map(|position| position.line());
                list.refused
                    .push(FileError::new(path, line, row_error(&err)));
                if matches!(err.kind(), csv::ErrorKind::Io(_)) {
                    break;
                }
                continue;
            }
        };
        let line = record.position().map_or(0, |position| position.line());
        match row(&columns, &record, line, origin) {
            Ok((mut prompt, warning)) => {
                if let Some(message) = warning {
                    list.warnings
                        .push(FileError::new(path, Some(line), message));
                }
                let wanted = prompt.name.clone();
                let mut suffix = 1;
                while taken.contains_key(&prompt.name) {
                    suffix += 1;
                    prompt.name = format!("{wanted}-{suffix}");
                }
                if let Some(first) = taken.get(&wanted).filter(|_| suffix > 1) {
                    list.warnings.push(FileError::new(
                        path,
                        Some(line),
                        format!(
                            "the name '{wanted}' is line {first}'s, so this row's prompt is \
                             '{}'; give the rows names of their own in a `name` column",
                            prompt.name
                        ),
                    ));
                }
                taken.insert(prompt.name.clone(), line);
                list.prompts.push((prompt, line));
            }
            Err(message) => list.refused.push(FileError::new(path, Some(line), message)),
        }
    }
    Ok(list)
}

/// Why a row the CSV reader could not read is refused, and how to fix it.
fn row_error(err: &csv::Error) -> String {
    match err.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "the row has {len} fields where the header has {expected_len}; quote a field that \
             holds a comma or a line break (\"...\", a quote inside doubled as \"\")"
        ),
        csv::ErrorKind::Utf8 { .. } => {
            "the row is not UTF-8 text; save the file as UTF-8".to_string()
        }
        _ => format!("the row does not read as CSV: {err}"),
    }
}

/// One row as a prompt, with a warning when its name had to be made from something else
/// than it says; or why the row cannot be a prompt.
fn row(
    columns: &Columns,
    record: &csv::StringRecord,
    line: u64,
    origin: &Origin,
) -> Result<(Prompt, Option<String>), String> {
    let field = |at: Option<usize>| {
        at.and_then(|at| record.get(at))
            .map(str::trim)
            .filter(|value| !value.is_empty())
    };
    let text = record.get(columns.text).unwrap_or_default();
    if text.trim().is_empty() {
        return Err("the row's prompt text is empty; write the prompt, or remove the row".into());
    }
    let title = field(columns.title);
    let (name, warning) = match (field(columns.name), title) {
        (Some(name), _) if validate_name(name).is_ok() => (name.to_string(), None),
        (Some(given), _) | (None, Some(given)) => {
            let from_title = field(columns.name).is_none();
            match slug(given) {
                // A title is slugged as a matter of course.
                Some(slug) if from_title => (slug, None),
                Some(slug) => (slug.clone(), Some(renamed(given, &slug))),
                None => {
                    let name = format!("prompt-{line}");
                    (name.clone(), Some(renamed(given, &name)))
                }
            }
        }
        (None, None) => {
            return Err("the row has no name or title; fill in its name or title column".into());
        }
    };
    let mut tags: Vec<String> = columns
        .tags
        .iter()
        .filter_map(|&at| field(Some(at)))
        .flat_map(|value| value.split(','))
        .map(|tag| tag.trim().to_lowercase())
        .filter(|tag| !tag.is_empty())
        .collect();
    if field(columns.for_devs).is_some_and(|value| value.eq_ignore_ascii_case("true")) {
        tags.push("for-devs".to_string());
    }
    let tags = (!tags.is_empty()).then(|| format!("Tags: {}", tags.join(", ")));
    let description = match (field(columns.description), tags) {
        (Some(description), Some(tags)) => Some(format!("{description}\n{tags}")),
        (description, tags) => description.map(str::to_string).or(tags),
    };
    let arguments = placeholders(text);
    let template = translate(text, |rest| {
        placeholder(rest).and_then(|(found, length)| {
            let name = identifier(found.name)?;
            Some((var(&name), length))
        })
    });
    Ok((
        Prompt {
            meta: Default::default(),
            name,
            title: title.map(str::to_string),
            description,
            icons: Vec::new(),
            arguments,
            messages: split_roles(&template),
            origin: origin.clone(),
        },
        warning,
    ))
}

/// The warning for a row whose name or title `given` could not name its prompt.
fn renamed(given: &str, name: &str) -> String {
    format!(
        "'{given}' cannot be a prompt name (a-z, 0-9, '-', '_', '.', '/'), so the prompt is \
         '{name}'; give the row a `name` column value to choose another"
    )
}

/// A title as a prompt name: lower-case letters and digits, anything else one `-`; None when
/// nothing is left.
fn slug(title: &str) -> Option<String> {
    let mut slug = String::with_capacity(title.len());
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    (!slug.is_empty()).then(|| slug.to_string())
}

/// A `${Name}` or `${Name:default}` placeholder at the start of some text.
struct Placeholder<'a> {
    name: &'a str,
    default: Option<&'a str>,
}

/// The placeholder `rest` starts with, and its length. A name is a letter or `_`, then
/// letters, digits, `_` and spaces (trimmed); anything else (`${a.b}`, `${i + 1}`, as code in
/// a prompt writes) is text.
fn placeholder(rest: &str) -> Option<(Placeholder<'_>, usize)> {
    let inner = rest.strip_prefix("${")?;
    let end = inner.find('}')?;
    let inside = &inner[..end];
    let (name, default) = match inside.split_once(':') {
        Some((name, default)) => (name, Some(default.trim())),
        None => (inside, None),
    };
    let plain = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ');
    plain.then(|| {
        let found = Placeholder {
            name: name.trim(),
            default,
        };
        (found, end + 3)
    })
}

/// The arguments of a text's placeholders, in order of first use: each a string, optional
/// with the first default given for it.
fn placeholders(text: &str) -> Vec<PromptArgument> {
    let mut arguments: Vec<PromptArgument> = Vec::new();
    for (at, _) in text.match_indices("${") {
        let Some((found, _)) = placeholder(&text[at..]) else {
            continue;
        };
        let Some(name) = identifier(found.name) else {
            continue;
        };
        let default = found.default.map(str::to_string);
        match arguments.iter_mut().find(|argument| argument.name == name) {
            Some(argument) => {
                if argument.default.is_none() && default.is_some() {
                    argument.default = default;
                    argument.required = false;
                }
            }
            None => arguments.push(PromptArgument {
                title: (found.name != name).then(|| found.name.to_string()),
                required: default.is_none(),
                name,
                default,
                ..PromptArgument::default()
            }),
        }
    }
    arguments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(csv: &str) -> PromptList {
        prompt_list("prompts.csv", csv.as_bytes(), &Origin::default()).expect("the list reads")
    }

    #[test]
    fn placeholders_become_arguments_and_code_stays_text() {
        let list = read(
            "act,prompt\n\"Job Interviewer\",\"Interview me for ${Position:Software Developer} \
             in ${Mother Language}; keep ${response.status} and ${i + 1}\"\n",
        );
        let (prompt, line) = &list.prompts[0];
        assert_eq!((prompt.name.as_str(), *line), ("job-interviewer", 2));
        let arguments: Vec<_> = prompt
            .arguments
            .iter()
            .map(|a| (a.name.as_str(), a.required, a.default.as_deref()))
            .collect();
        assert_eq!(
            arguments,
            [
                ("Position", false, Some("Software Developer")),
                ("Mother_Language", true, None)
            ]
        );
        assert_eq!(
            prompt.messages[0].body,
            "Interview me for {{ Position }} in {{ Mother_Language }}; keep ${response.status} \
             and ${i + 1}"
        );
    }

    #[test]
    fn names_are_made_unique_and_bad_rows_refused_at_their_line() {
        let list = read(
            "Act,Prompt,for_devs,type\nAstrologer,Read the stars,TRUE,TEXT\n\
             Astrologer,Read them again,FALSE,\n\"\",Nameless,FALSE,TEXT\nEmpty,,FALSE,TEXT\n",
        );
        let names: Vec<&str> = list.prompts.iter().map(|(p, _)| p.name.as_str()).collect();
        assert_eq!(names, ["astrologer", "astrologer-2"]);
        assert_eq!(
            list.prompts[0].0.description.as_deref(),
            Some("Tags: text, for-devs")
        );
        assert_eq!(list.warnings[0].line, Some(3), "{:?}", list.warnings);
        let refused: Vec<Option<u64>> = list.refused.iter().map(|r| r.line).collect();
        assert_eq!(refused, [Some(4), Some(5)], "{:?}", list.refused);
    }

    #[test]
    fn a_header_without_text_or_names_is_refused() {
        let err = prompt_list("p.csv", b"act,notes\na,b\n", &Origin::default()).unwrap_err();
        assert!(err.message.contains("prompt text"), "{err}");
        let err = prompt_list("p.csv", b"prompt\nhello\n", &Origin::default()).unwrap_err();
        assert!(err.message.contains("name or title"), "{err}");
    }
}
