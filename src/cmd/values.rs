//! `promptshelf values`: list, add, import and remove the values of completion tables.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::common::{self, Table};
use crate::cli::ValuesCommand;
use crate::library;
use crate::model::CompletionValue;
use crate::store::{self, Store, ValuesMode};

pub(super) fn run(store: &Store, command: ValuesCommand) -> Result<()> {
    match command {
        ValuesCommand::List { table, json } => match table {
            None => list_tables(store, json),
            Some(table) => list_values(store, &table, json),
        },
        ValuesCommand::Add {
            table,
            values,
            weight,
            context,
            json,
        } => add(store, &table, &values, weight, context.as_deref(), json),
        ValuesCommand::Import {
            table,
            file,
            replace,
            json,
        } => import(store, &table, &file, replace, json),
        ValuesCommand::Rm { table, value, json } => remove(store, &table, value.as_deref(), json),
    }
}

#[derive(Serialize)]
struct TableView<'a> {
    name: &'a str,
    description: Option<&'a str>,
    values: u64,
}

#[derive(Serialize)]
struct ValueView<'a> {
    value: &'a str,
    weight: f64,
    context: Option<ContextView<'a>>,
}

/// Offered only when `argument` has `value`.
#[derive(Serialize)]
struct ContextView<'a> {
    argument: &'a str,
    value: &'a str,
}

fn list_tables(store: &Store, json: bool) -> Result<()> {
    let tables = store::read::tables(&*store.conn()?)?;
    if json {
        let views: Vec<TableView> = tables
            .iter()
            .map(|table| TableView {
                name: &table.name,
                description: table.description.as_deref(),
                values: table.values,
            })
            .collect();
        return common::print_json(&views);
    }
    // No command sets a table's description, so the listing has no column for it.
    let mut out = Table::new(&["TABLE", "VALUES"]);
    for table in &tables {
        out.row(vec![table.name.clone(), table.values.to_string()]);
    }
    out.print("no completion tables (add one with `promptshelf values add TABLE VALUE...`)")
}

fn unknown_table(store: &Store, table: &str) -> Result<anyhow::Error> {
    let known = common::table_names(store)?;
    Ok(common::unknown(
        "completion table",
        "completion tables",
        table,
        &known,
        "values list",
    ))
}

fn list_values(store: &Store, table: &str, json: bool) -> Result<()> {
    let Some(values) = store::read::table_values(&*store.conn()?, table)? else {
        return Err(unknown_table(store, table)?);
    };
    if json {
        let views: Vec<ValueView> = values
            .iter()
            .map(|value| ValueView {
                value: &value.value,
                weight: value.weight,
                context: value
                    .context
                    .as_ref()
                    .map(|(argument, value)| ContextView { argument, value }),
            })
            .collect();
        return common::print_json(&views);
    }
    let mut out = Table::new(&["VALUE", "WEIGHT", "CONTEXT"]);
    for value in &values {
        out.row(vec![
            value.value.clone(),
            value.weight.to_string(),
            value
                .context
                .as_ref()
                .map(|(argument, value)| format!("{argument}={value}"))
                .unwrap_or_default(),
        ]);
    }
    out.print(&format!("table {table} has no values"))
}

/// A table name becomes a file name on export (`_values/<table>.csv`), so it must be one.
fn check_table_name(table: &str) -> Result<()> {
    if table.trim().is_empty() {
        return Err(anyhow!("the table name is empty; name it, e.g. languages"));
    }
    if table.starts_with('.')
        || table
            .chars()
            .any(|c| c.is_control() || c == '/' || c == '\\')
    {
        return Err(anyhow!(
            "table name '{}' must not start with '.' or hold '/', '\\' or control characters \
             (e.g. languages)",
            common::one_line(table)
        ));
    }
    Ok(())
}

/// What `--json` prints for `values add`, `import` and `rm`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ValuesReport<'a> {
    table: &'a str,
    /// `created`, `added`, `unchanged`, `replaced` or `removed`.
    action: &'static str,
    /// Values added or given a new weight; for a replacement, the values it now holds;
    /// for a removal, the values removed.
    changed: u64,
    /// The values the table holds afterwards.
    total: u64,
}

fn add(
    store: &Store,
    table: &str,
    values: &[String],
    weight: f64,
    context: Option<&str>,
    json: bool,
) -> Result<()> {
    check_table_name(table)?;
    if !weight.is_finite() {
        return Err(anyhow!(
            "--weight {weight} is not a finite number; use e.g. --weight 10"
        ));
    }
    let context = context
        .map(|text| {
            library::parse_context(text).ok_or_else(|| {
                anyhow!(
                    "--context '{text}' must be ARGUMENT=VALUE (e.g. --context language=python)"
                )
            })
        })
        .transpose()?;
    let mut rows = Vec::with_capacity(values.len());
    for value in values {
        let value = value.trim();
        if value.is_empty() {
            return Err(anyhow!("an empty value cannot be completed; leave it out"));
        }
        rows.push(CompletionValue {
            value: value.to_string(),
            weight,
            context: context.clone(),
        });
    }
    let written =
        store.write(|tx| store::write::put_values(tx, table, None, &rows, ValuesMode::Append))?;
    let report = ValuesReport {
        table,
        action: match (written.created, written.changed) {
            (true, _) => "created",
            (false, 0) => "unchanged",
            (false, _) => "added",
        },
        changed: written.changed,
        total: written.total,
    };
    let table = common::one_line(table);
    let total = written.total;
    let given = rows.len() as u64;
    let line = if written.created {
        format!(
            "created table {table} with {}",
            values_count(written.changed)
        )
    } else if written.changed == 0 {
        match values {
            [one] => format!(
                "{} is already in {table} with that weight; unchanged ({total} now)",
                common::one_line(one.trim())
            ),
            _ => format!(
                "all {given} values are already in {table} with those weights; unchanged ({total} now)"
            ),
        }
    } else if written.changed < given {
        format!(
            "added or reweighted {} in {table} ({total} now); {} already there",
            values_count(written.changed),
            given - written.changed
        )
    } else {
        format!(
            "added {} to {table} ({total} now)",
            values_count(written.changed)
        )
    };
    common::report(json, &line, &report)
}

fn values_count(n: u64) -> String {
    common::count(n, "value", "values")
}

/// The header that marks a CSV file whatever its name.
const CSV_HEADER: &str = "value,weight,context";

fn import(store: &Store, table: &str, file: &Path, replace: bool, json: bool) -> Result<()> {
    check_table_name(table)?;
    let bytes = common::read_file(file)?;
    let shown = file.display().to_string();
    let is_csv = file
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("csv"))
        || first_line_is_header(&bytes);
    let parsed = if is_csv {
        library::parse_values_csv(&shown, &bytes)
    } else {
        library::parse_values_lines(&shown, &bytes)
    };
    let values = parsed.map_err(|err| anyhow!(err))?;
    let progress = if std::io::stderr().is_terminal() {
        let style = ProgressStyle::with_template(
            "{msg} [{bar:30}] {human_pos}/{human_len} values, {eta} left",
        )
        .map(|style| style.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        ProgressBar::new(values.len() as u64)
            .with_style(style)
            .with_message(format!("importing into {table}"))
    } else {
        ProgressBar::hidden()
    };
    let mode = if replace {
        ValuesMode::Replace
    } else {
        ValuesMode::Append
    };
    let written = store.write(|tx| {
        store::write::put_values_with_progress(tx, table, None, &values, mode, |done| {
            progress.set_position(done)
        })
    })?;
    progress.finish_and_clear();
    let report = ValuesReport {
        table,
        action: match (replace, written.changed) {
            (_, 0) => "unchanged",
            (true, _) => "replaced",
            (false, _) => "added",
        },
        changed: written.changed,
        total: written.total,
    };
    let table = common::one_line(table);
    let read = values_count(values.len() as u64);
    let total = written.total;
    let line = match (replace, written.changed) {
        (true, 0) => format!("the values of {table} are already the {read} of {shown}; unchanged"),
        (true, _) => format!("replaced the values of {table} with {read} from {shown}"),
        (false, 0) => format!(
            "{table} already holds the {read} of {shown} with those weights; unchanged ({total} now)"
        ),
        (false, _) => format!("imported {read} from {shown} into {table} ({total} now)"),
    };
    common::report(json, &line, &report)
}

/// Whether the file starts (after a BOM and blank lines) with the `value,weight,context`
/// header.
fn first_line_is_header(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .is_some_and(|line| line.split(',').map(str::trim).eq(CSV_HEADER.split(',')))
}

fn remove(store: &Store, table: &str, value: Option<&str>, json: bool) -> Result<()> {
    let removed = store.write(|tx| {
        let summary = store::read::tables(tx)?
            .into_iter()
            .find(|t| t.name == table);
        match summary {
            None => Ok(None),
            Some(summary) => {
                let removed = store::write::remove_values(tx, table, value)?;
                let left = store::read::tables(tx)?
                    .into_iter()
                    .find(|t| t.name == table)
                    .map_or(0, |t| t.values);
                Ok(Some((summary.values, left, removed)))
            }
        }
    })?;
    let shown = common::one_line(table);
    let removal = |changed: u64, total: u64| ValuesReport {
        table,
        action: "removed",
        changed,
        total,
    };
    match (removed, value) {
        (None, _) => Err(unknown_table(store, table)?),
        (Some((count, _, _)), None) => common::report(
            json,
            &format!("removed table {shown} ({})", values_count(count)),
            &removal(count, 0),
        ),
        (Some((count, left, true)), Some(value)) => common::report(
            json,
            &format!("removed {} from {shown}", common::one_line(value)),
            &removal(count - left, left),
        ),
        (Some((_, _, false)), Some(value)) => Err(anyhow!(
            "table {shown} has no value '{}' (see `promptshelf values list {shown}`)",
            common::one_line(value)
        )),
    }
}
