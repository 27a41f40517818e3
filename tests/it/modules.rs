//! No module cycles: the crate's source read with `syn`, each module's `crate::`, `super::`
//! and `self::` paths (in `use` items and in code, outside `#[cfg(test)]` items) taken as
//! dependencies between modules, and every level checked for a cycle: the top-level modules
//! under `src/`, and the submodules of every module that has any (`store/`, `cmd/`,
//! `library/`, `library/dialect/`, `server/http/`, ...). A parent's own file (`mod.rs`)
//! holds what its submodules share and is not one of them. Paths inside macro calls are not
//! seen.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

/// The modules whose submodules must not use each other in a cycle: the crate's root
/// (`[]`) and every module that has submodules.
fn levels(modules: &BTreeSet<ModPath>) -> BTreeSet<ModPath> {
    modules
        .iter()
        .filter_map(|module| module.split_last().map(|(_, parent)| parent.to_vec()))
        .collect()
}

/// A module's path from the crate root: `src/store/write.rs` is `["store", "write"]`.
type ModPath = Vec<String>;

/// One use of a module by another: where, and the path as written.
#[derive(Debug, Clone)]
struct Evidence {
    file: String,
    path: String,
}

#[derive(Default)]
struct Uses {
    /// Every module path named, with where it was named from.
    found: Vec<(ModPath, ModPath, Evidence)>,
}

struct Collector<'a> {
    file: String,
    module: ModPath,
    uses: &'a mut Uses,
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && matches!(&attr.meta, syn::Meta::List(list) if list.tokens.to_string() == "test")
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(item) => &item.attrs,
        syn::Item::Enum(item) => &item.attrs,
        syn::Item::Fn(item) => &item.attrs,
        syn::Item::Impl(item) => &item.attrs,
        syn::Item::Macro(item) => &item.attrs,
        syn::Item::Mod(item) => &item.attrs,
        syn::Item::Static(item) => &item.attrs,
        syn::Item::Struct(item) => &item.attrs,
        syn::Item::Trait(item) => &item.attrs,
        syn::Item::Type(item) => &item.attrs,
        syn::Item::Union(item) => &item.attrs,
        syn::Item::Use(item) => &item.attrs,
        _ => &[],
    }
}

impl Collector<'_> {
    /// Records the path `segments` (starting with `crate`, `super` or `self`) as used here.
    fn record(&mut self, segments: &[String]) {
        let mut target = match segments.first().map(String::as_str) {
            Some("crate") => Vec::new(),
            Some("super" | "self") => self.module.clone(),
            _ => return,
        };
        let mut rest = segments;
        if rest[0] == "crate" || rest[0] == "self" {
            rest = &rest[1..];
        }
        while rest.first().map(String::as_str) == Some("super") {
            target.pop();
            rest = &rest[1..];
        }
        target.extend(rest.iter().filter(|segment| *segment != "self").cloned());
        self.uses.found.push((
            self.module.clone(),
            target,
            Evidence {
                file: self.file.clone(),
                path: segments.join("::"),
            },
        ));
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                prefix.push(name.ident.to_string());
                self.record(prefix);
                prefix.pop();
            }
            syn::UseTree::Rename(rename) => {
                prefix.push(rename.ident.to_string());
                self.record(prefix);
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.record(prefix),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test_only(item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !is_test_only(&item.attrs) {
            visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.module.push(item.ident.to_string());
        visit::visit_item_mod(self, item);
        self.module.pop();
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            let segments: Vec<String> = path
                .segments
                .iter()
                .map(|segment| segment.ident.to_string())
                .collect();
            self.record(&segments);
        }
        visit::visit_path(self, path);
    }
}

/// The module a file is: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`.
fn module_of(src: &Path, file: &Path) -> ModPath {
    let relative = file.strip_prefix(src).expect("a file under src/");
    let mut parts: ModPath = relative
        .with_extension("")
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if parts.last().map(String::as_str) == Some("mod") {
        parts.pop();
    }
    parts
}

fn rust_files(folder: &Path, files: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(folder).expect("read a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// Each module of the library crate (not `main.rs`, the binary's own crate) and the paths it
/// names.
fn crate_uses() -> (BTreeSet<ModPath>, Uses) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut modules = BTreeSet::new();
    let mut uses = Uses::default();
    for file in files {
        let module = module_of(&src, &file);
        if module == ["main"] || module == ["lib"] {
            continue;
        }
        let text = fs::read_to_string(&file).expect("read a source file");
        let parsed = syn::parse_file(&text)
            .unwrap_or_else(|err| panic!("{} does not parse: {err}", file.display()));
        let mut collector = Collector {
            file: file
                .strip_prefix(src.parent().expect("the crate's folder"))
                .expect("under the crate")
                .display()
                .to_string(),
            module: module.clone(),
            uses: &mut uses,
        };
        collector.visit_file(&parsed);
        modules.insert(module);
    }
    (modules, uses)
}

/// The uses between the submodules of `level`, each edge with the first place it is made.
fn edges_at(
    level: &[&str],
    modules: &BTreeSet<ModPath>,
    uses: &Uses,
) -> BTreeMap<String, BTreeMap<String, Evidence>> {
    let depth = level.len();
    let under = |path: &ModPath| path.len() > depth && path[..depth] == *level;
    let name = |child: &str| {
        let mut path: Vec<&str> = level.to_vec();
        path.push(child);
        path.join("::")
    };
    let children: BTreeSet<&str> = modules
        .iter()
        .filter(|module| under(module))
        .map(|module| module[depth].as_str())
        .collect();
    let mut edges: BTreeMap<String, BTreeMap<String, Evidence>> = BTreeMap::new();
    for (from, to, evidence) in &uses.found {
        if !under(from) || !under(to) || from[depth] == to[depth] {
            continue;
        }
        if !children.contains(to[depth].as_str()) {
            continue;
        }
        edges
            .entry(name(&from[depth]))
            .or_default()
            .entry(name(&to[depth]))
            .or_insert_with(|| evidence.clone());
    }
    edges
}

/// One cycle through `start`, if any: the modules in order, `start` first.
fn cycle_through(
    start: &str,
    edges: &BTreeMap<String, BTreeMap<String, Evidence>>,
) -> Option<Vec<String>> {
    fn walk(
        at: &str,
        start: &str,
        edges: &BTreeMap<String, BTreeMap<String, Evidence>>,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in edges.get(at).into_iter().flat_map(BTreeMap::keys) {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(next, start, edges, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(start, start, edges, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn modules_do_not_use_each_other_in_a_cycle() {
    let (modules, uses) = crate_uses();
    assert!(
        modules.contains(&vec!["store".to_string(), "write".to_string()]),
        "the source was read: {modules:?}"
    );
    let levels = levels(&modules);
    assert!(
        levels.contains(&Vec::new())
            && levels.contains(&vec!["library".to_string(), "dialect".to_string()]),
        "the root and every folder are levels: {levels:?}"
    );
    let mut problems = Vec::new();
    for level in levels {
        let level: Vec<&str> = level.iter().map(String::as_str).collect();
        let edges = edges_at(&level, &modules, &uses);
        let mut reported = BTreeSet::new();
        for start in edges.keys() {
            if reported.contains(start) {
                continue;
            }
            let Some(cycle) = cycle_through(start, &edges) else {
                continue;
            };
            let steps: Vec<String> = cycle
                .iter()
                .zip(cycle.iter().cycle().skip(1))
                .map(|(from, to)| {
                    let evidence = &edges[from][to];
                    format!("{from} -> {to} ({}: {})", evidence.file, evidence.path)
                })
                .collect();
            problems.push(format!("a module cycle: {}", steps.join(", ")));
            reported.extend(cycle);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check itself: a cycle between two submodules is found, a submodule that only uses
/// one of them is in none, and the parent's own file is none of its submodules.
#[test]
fn a_cycle_among_submodules_is_found_and_the_parent_is_left_out() {
    let module = |path: &str| -> ModPath { path.split("::").map(str::to_string).collect() };
    let modules: BTreeSet<ModPath> = ["store", "store::a", "store::b", "store::c"]
        .into_iter()
        .map(module)
        .collect();
    let mut uses = Uses::default();
    for (from, to) in [
        ("store::a", "store::b::f"),
        ("store::b", "store::a::g"),
        ("store::c", "store::a::g"),
        ("store", "store::c::h"),
        ("store::c", "store::Result"),
    ] {
        uses.found.push((
            module(from),
            module(to),
            Evidence {
                file: format!("{from}.rs"),
                path: to.to_string(),
            },
        ));
    }
    let edges = edges_at(&["store"], &modules, &uses);
    assert_eq!(
        edges.keys().collect::<Vec<_>>(),
        ["store::a", "store::b", "store::c"],
        "the parent's own uses are none of its submodules'"
    );
    assert_eq!(
        cycle_through("store::a", &edges),
        Some(vec!["store::a".to_string(), "store::b".to_string()])
    );
    assert_eq!(cycle_through("store::c", &edges), None);
}
