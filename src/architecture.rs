//! The tiers of the crate, and the test that keeps the code in them (the book's design page
//! shows the same table).
//!
//! Each top-level module sits in a named tier, and each tier lists its modules lowest first: a
//! module may use only the modules of lower tiers and those listed before it in its own tier.
//! Among the files of one module, no two use each other, directly or through others (no import
//! circle). A module may always use its own submodules and its ancestors (`use super::X` of a
//! child): those are one module's parts.
//!
//! How the test reads the code: every `.rs` file under `src/` is parsed with `syn`; every path
//! it names (in `use` items, types and expressions) that starts with `crate::`, `super::` or
//! `self::` is resolved to the deepest module of the crate it reaches; test code
//! (`#[cfg(test)]` items, `tests.rs`, `*_tests.rs` files and `tests/` directories) is left out,
//! since a test may reach anywhere.

/// The tiers, lowest first, each with its modules lowest first (see the module doc). A module
/// not listed fails the test: a new module takes its place here first.
pub const LAYERS: &[(&str, &[&str])] = &[
    // Errors, the clock, text, colour, the sandbox, processes, git, safe paths, spanned YAML.
    (
        "base",
        &[
            "error",
            "clock",
            "text",
            "digest",
            "colour",
            "sandbox",
            "process",
            "git",
            "nofollow",
            "spanned_yaml",
        ],
    ),
    // The input model, the pure fusion, the wire types every reader trusts, the floor's pure
    // rule (which replay checks against), the evidence store.
    (
        "model",
        &["acceptance", "verdict", "format", "decision", "evidence"],
    ),
    // The stages that observe, and what a person reads.
    ("stages", &["floor", "judge", "report"]),
    // Signing and verifying: the statement, replay, the registry.
    ("trust", &["attest", "replay", "oci"]),
    // Admission, the Action, the coding agents.
    ("integrations", &["admit", "action", "agent"]),
    // The command line's types, then the commands that take them.
    ("front", &["cli", "commands"]),
];

/// Layers inside a module, as [`LAYERS`] orders the crate's top-level modules: a module, then
/// its children in layers, lowest first. A child (with its subtree) uses only children of its
/// own layer or below; a child missing from its module's table fails the test. When the test
/// fails it prints each such module's graph and the tightest layers that graph allows.
pub const MODULE_LAYERS: &[(&str, &[&[&str]])] = &[
    (
        "floor",
        &[
            // What the runners build on: the harness families, progress lines, the tag scan.
            &["harness", "progress", "scan"],
            // The runners, each a folder, and their registry.
            &["runners"],
            // What the phases read and keep: bindings, the base cache, files planted at run
            // time, the observations and their recorder, the worktrees.
            &["bind", "cache", "events", "planted", "record", "workspace"],
            // The sandbox and its side effects, the decision, isolation of base builds, seeding.
            &["confine", "decide", "isolate", "seed"],
            // Listing and binding; command checks.
            &["checks", "plan"],
            // One side's runs, base's overlay, the entries decided.
            &["entries", "overlay", "side"],
            // The base cache's reuse: its key reads base's overlay and head's listing.
            &["reuse"],
        ],
    ),
    (
        "acceptance::derive",
        &[
            // Cleaning text and reading headings; the sentence tests; the line scan that uses
            // them; merging the scan's candidates; their ids.
            &["clean", "sections"],
            &["words"],
            &["scan"],
            &["merge"],
            &["ids"],
        ],
    ),
];

#[cfg(test)]
mod ratchet_tests;

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    use syn::visit::Visit;

    use super::{LAYERS, MODULE_LAYERS};

    /// A module path inside the crate (`["floor", "runners", "cargo"]`; empty for the root).
    pub(super) type ModPath = Vec<String>;

    /// Every non-test source file with its module path.
    pub(super) fn modules(src: &Path) -> BTreeMap<ModPath, PathBuf> {
        let mut out = BTreeMap::new();
        let mut stack = vec![src.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    if p.file_name()
                        .is_some_and(|n| n != "tests" && n != "snapshots")
                    {
                        stack.push(p);
                    }
                    continue;
                }
                let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                if !name.ends_with(".rs") || name == "tests.rs" || name.ends_with("_tests.rs") {
                    continue;
                }
                let rel = p.strip_prefix(src).unwrap_or(&p);
                let mut parts: Vec<String> = rel
                    .iter()
                    .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
                    .collect();
                if matches!(
                    parts.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    parts.pop();
                }
                if name == "main.rs" && rel.parent() == Some(Path::new("")) {
                    continue;
                }
                out.insert(parts, p);
            }
        }
        out
    }

    /// The paths a file names that start with `crate`, `super` or `self`, outside test code.
    #[derive(Default)]
    struct Paths(Vec<Vec<String>>);

    /// Each path a `use` tree imports, and whether it is a glob (`use a::b::*` gives `a::b`):
    /// `use a::{self, b as c}` gives `a` and `a::b`.
    pub(super) fn use_paths(tree: &syn::UseTree) -> Vec<(Vec<String>, bool)> {
        fn walk(t: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, bool)>) {
            match t {
                syn::UseTree::Path(p) => {
                    prefix.push(p.ident.to_string());
                    walk(&p.tree, prefix, out);
                    prefix.pop();
                }
                syn::UseTree::Name(n) => {
                    let mut v = prefix.clone();
                    if n.ident != "self" {
                        v.push(n.ident.to_string());
                    }
                    out.push((v, false));
                }
                syn::UseTree::Rename(r) => {
                    let mut v = prefix.clone();
                    v.push(r.ident.to_string());
                    out.push((v, false));
                }
                syn::UseTree::Glob(_) => out.push((prefix.clone(), true)),
                syn::UseTree::Group(g) => {
                    for t in &g.items {
                        walk(t, prefix, out);
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(tree, &mut Vec::new(), &mut out);
        out
    }

    pub(super) fn is_test_attr(attrs: &[syn::Attribute]) -> bool {
        attrs.iter().any(|a| {
            a.path().is_ident("cfg")
                && a.meta.require_list().is_ok_and(|l| {
                    l.tokens
                        .to_string()
                        .split(|c: char| !c.is_alphanumeric())
                        .any(|w| w == "test")
                })
                || a.path().is_ident("test")
        })
    }

    impl<'ast> Visit<'ast> for Paths {
        fn visit_item(&mut self, i: &'ast syn::Item) {
            let attrs = match i {
                syn::Item::Mod(m) => &m.attrs,
                syn::Item::Fn(f) => &f.attrs,
                syn::Item::Impl(im) => &im.attrs,
                syn::Item::Use(u) => &u.attrs,
                _ => &Vec::new(),
            };
            if !is_test_attr(attrs) {
                syn::visit::visit_item(self, i);
            }
        }

        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            self.0
                .extend(use_paths(&u.tree).into_iter().map(|(path, _)| path));
        }

        fn visit_path(&mut self, p: &'ast syn::Path) {
            let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            if segs
                .first()
                .is_some_and(|s| matches!(s.as_str(), "crate" | "super" | "self"))
            {
                self.0.push(segs);
            }
            syn::visit::visit_path(self, p);
        }

        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            // `format!("{}", crate::x::y())` and the like: the tokens of a macro call that
            // parse as expressions.
            if let Ok(args) = m.parse_body_with(
                syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
            ) {
                for a in &args {
                    self.visit_expr(a);
                }
            }
            syn::visit::visit_macro(self, m);
        }
    }

    /// The deepest known module a path reaches from module `at`.
    fn resolve(path: &[String], at: &ModPath, known: &BTreeSet<ModPath>) -> Option<ModPath> {
        let mut base: ModPath = match path.first()?.as_str() {
            "crate" => Vec::new(),
            "self" => at.clone(),
            "super" => {
                let mut b = at.clone();
                b.pop();
                b
            }
            _ => return None,
        };
        let mut rest = &path[1..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        let mut best = base.clone();
        for s in rest {
            base.push(s.clone());
            if known.contains(&base) {
                best = base.clone();
            } else {
                break;
            }
        }
        Some(best)
    }

    /// Every edge `from → to` between modules that are not one another's ancestors.
    fn edges(src: &Path) -> BTreeSet<(ModPath, ModPath)> {
        let mods = modules(src);
        let known: BTreeSet<ModPath> = mods.keys().cloned().collect();
        let mut out = BTreeSet::new();
        for (at, file) in &mods {
            let text = std::fs::read_to_string(file).expect("source file");
            let Ok(parsed) = syn::parse_file(&text) else {
                panic!("{} does not parse", file.display());
            };
            let mut paths = Paths::default();
            paths.visit_file(&parsed);
            for p in paths.0 {
                let Some(to) = resolve(&p, at, &known) else {
                    continue;
                };
                let related = to.starts_with(at) || at.starts_with(&to);
                if !related {
                    out.insert((at.clone(), to));
                }
            }
        }
        out
    }

    /// A top-level module's place: its tier, then its position in the tier.
    fn layer_of(top: &str) -> Option<(usize, usize)> {
        LAYERS
            .iter()
            .enumerate()
            .find_map(|(t, (_, l))| Some((t, l.iter().position(|m| *m == top)?)))
    }

    /// The problems of a graph (see the module doc): imports up a tier or up a tier's order,
    /// modules missing from the table, and import circles among siblings' subtrees.
    fn problems(
        edges: &BTreeSet<(ModPath, ModPath)>,
        module_layers: &[(&str, &[&[&str]])],
    ) -> Vec<String> {
        let mut out = Vec::new();
        let name = |m: &ModPath| {
            if m.is_empty() {
                "crate".to_string()
            } else {
                m.join("::")
            }
        };
        for (from, to) in edges {
            let (Some(a), Some(b)) = (from.first(), to.first()) else {
                continue;
            };
            match (layer_of(a), layer_of(b)) {
                (None, _) => out.push(format!("`{a}` is in no tier of `LAYERS`")),
                (_, None) => out.push(format!("`{b}` is in no tier of `LAYERS`")),
                (Some((ta, _)), Some((tb, _))) if tb > ta => out.push(format!(
                    "`{}` (tier {}) uses `{}` (tier {}): an import up a tier",
                    name(from),
                    LAYERS[ta].0,
                    name(to),
                    LAYERS[tb].0
                )),
                (Some((ta, pa)), Some((tb, pb))) if ta == tb && pb > pa => out.push(format!(
                    "`{}` uses `{}`, listed after it in tier {}: an import up the tier",
                    name(from),
                    name(to),
                    LAYERS[ta].0
                )),
                _ => {}
            }
        }
        // Layers inside a module: between two of its children, each standing for its subtree.
        for (module, layers) in module_layers {
            let parent: ModPath = module.split("::").map(str::to_string).collect();
            let n = parent.len();
            let layer = |child: &str| layers.iter().position(|l| l.contains(&child));
            for (from, to) in edges {
                if !(from.starts_with(&parent) && to.starts_with(&parent))
                    || from.len() <= n
                    || to.len() <= n
                    || from[n] == to[n]
                {
                    continue;
                }
                match (layer(&from[n]), layer(&to[n])) {
                    (None, _) => out.push(format!(
                        "`{}` is in no layer of `MODULE_LAYERS` for `{module}`",
                        name(&from[..=n].to_vec())
                    )),
                    (_, None) => out.push(format!(
                        "`{}` is in no layer of `MODULE_LAYERS` for `{module}`",
                        name(&to[..=n].to_vec())
                    )),
                    (Some(la), Some(lb)) if lb > la => out.push(format!(
                        "`{}` ({module} layer {la}) uses `{}` ({module} layer {lb}): an import \
                         up a layer",
                        name(from),
                        name(to)
                    )),
                    _ => {}
                }
            }
        }
        // Circles: between the children of one parent, each standing for its whole subtree.
        let mut graph: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (from, to) in edges {
            let common = from
                .iter()
                .zip(to.iter())
                .take_while(|(a, b)| a == b)
                .count();
            // Neither is the other's ancestor, so both go on past what they share.
            let (a, b) = (from[..=common].to_vec(), to[..=common].to_vec());
            if a != b {
                graph.entry(a).or_default().insert(b);
            }
        }
        let reach = |start: &ModPath| -> BTreeSet<ModPath> {
            let mut seen = BTreeSet::new();
            let mut todo = vec![start.clone()];
            while let Some(n) = todo.pop() {
                for m in graph.get(&n).into_iter().flatten() {
                    if seen.insert(m.clone()) {
                        todo.push(m.clone());
                    }
                }
            }
            seen
        };
        let mut reported = BTreeSet::new();
        for a in graph.keys() {
            if reach(a).contains(a) {
                let circle: BTreeSet<ModPath> = reach(a)
                    .into_iter()
                    .filter(|m| reach(m).contains(a))
                    .collect();
                let names: Vec<String> = circle.iter().map(name).collect();
                if reported.insert(names.clone()) {
                    out.push(format!("an import circle: {}", names.join(" → ")));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    #[test]
    fn every_import_runs_down_the_layers_and_no_two_modules_use_each_other() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let edges = edges(&src);
        let known: BTreeSet<ModPath> = modules(&src).into_keys().collect();
        let mut found = problems(&edges, MODULE_LAYERS);
        found.extend(layer_table_problems(&known));
        found.sort();
        found.dedup();
        let graphs: Vec<String> = MODULE_LAYERS
            .iter()
            .map(|(module, _)| graph_inside(&edges, &known, module))
            .collect();
        assert!(
            found.is_empty(),
            "the crate's layers are broken (see src/architecture.rs):\n{}\n\n{}",
            found.join("\n"),
            graphs.join("\n")
        );
    }

    /// The children of a module: the modules one level below it.
    fn children(known: &BTreeSet<ModPath>, parent: &ModPath) -> BTreeSet<String> {
        known
            .iter()
            .filter(|m| m.len() == parent.len() + 1 && m.starts_with(parent))
            .map(|m| m[parent.len()].clone())
            .collect()
    }

    /// The tables of [`MODULE_LAYERS`] against the modules: every child of a listed module in
    /// one layer of its table, and every name in a table a child.
    fn layer_table_problems(known: &BTreeSet<ModPath>) -> Vec<String> {
        let mut out = Vec::new();
        for (module, layers) in MODULE_LAYERS {
            let parent: ModPath = module.split("::").map(str::to_string).collect();
            let children = children(known, &parent);
            let listed: Vec<&str> = layers.iter().flat_map(|l| l.iter().copied()).collect();
            for c in &children {
                if !listed.contains(&c.as_str()) {
                    out.push(format!(
                        "`{module}::{c}` is in no layer of `MODULE_LAYERS` for `{module}`"
                    ));
                }
            }
            for (i, l) in listed.iter().enumerate() {
                if !children.contains(*l) {
                    out.push(format!(
                        "`MODULE_LAYERS` lists `{module}::{l}`, which is no module"
                    ));
                } else if listed[..i].contains(l) {
                    out.push(format!("`MODULE_LAYERS` lists `{module}::{l}` twice"));
                }
            }
        }
        out
    }

    /// What the children of `module` use of one another (each child standing for its subtree),
    /// and the tightest layers that allows: each child one layer above the highest it uses
    /// (none, if the children use each other in a circle).
    fn graph_inside(
        edges: &BTreeSet<(ModPath, ModPath)>,
        known: &BTreeSet<ModPath>,
        module: &str,
    ) -> String {
        let parent: ModPath = module.split("::").map(str::to_string).collect();
        let n = parent.len();
        let mut uses: BTreeMap<String, BTreeSet<String>> = children(known, &parent)
            .into_iter()
            .map(|c| (c, BTreeSet::new()))
            .collect();
        for (from, to) in edges {
            if from.starts_with(&parent)
                && to.starts_with(&parent)
                && from.len() > n
                && to.len() > n
                && from[n] != to[n]
            {
                uses.entry(from[n].clone())
                    .or_default()
                    .insert(to[n].clone());
            }
        }
        let mut out = format!("what the children of `{module}` use of one another:\n");
        for (c, used) in &uses {
            let used: Vec<&str> = used.iter().map(String::as_str).collect();
            out.push_str(&format!("  {c} → {}\n", used.join(", ")));
        }
        let mut layer: BTreeMap<&str, usize> = BTreeMap::new();
        // Each round places the children whose uses are all placed.
        while layer.len() < uses.len() {
            let ready: Vec<(&str, usize)> = uses
                .iter()
                .filter(|(c, _)| !layer.contains_key(c.as_str()))
                .filter_map(|(c, used)| {
                    let below: Option<Vec<usize>> = used
                        .iter()
                        .map(|u| layer.get(u.as_str()).copied())
                        .collect();
                    Some((
                        c.as_str(),
                        below?.into_iter().map(|l| l + 1).max().unwrap_or(0),
                    ))
                })
                .collect();
            if ready.is_empty() {
                out.push_str("  (a circle: no layers)\n");
                return out;
            }
            layer.extend(ready);
        }
        let top = layer.values().copied().max().unwrap_or(0);
        out.push_str("the tightest layers, lowest first:\n");
        for l in 0..=top {
            let names: Vec<String> = layer
                .iter()
                .filter(|(_, x)| **x == l)
                .map(|(c, _)| format!("{c:?}"))
                .collect();
            out.push_str(&format!("  &[{}],\n", names.join(", ")));
        }
        out
    }

    /// git is spoken to through `src/git.rs` alone: `Git::run` is private to it, no other file
    /// starts a `git` process, and its plumbing commands are spelled nowhere else (a comment
    /// may name one).
    #[test]
    fn git_plumbing_is_spelled_only_in_the_git_wrapper() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        for (m, file) in modules(&src) {
            // The git module is src/git.rs and its parts under src/git/.
            if m.first().is_some_and(|first| first == "git") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("source file");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in code.lines().enumerate() {
                let line = line.split("//").next().unwrap_or_default();
                if line.contains("Command::new(\"git\")") {
                    found.push(format!("{}:{}: a `git` process", file.display(), n + 1));
                }
                for cmd in [
                    "ls-tree",
                    "ls-files",
                    "cat-file",
                    "rev-parse",
                    "worktree",
                    "merge-base",
                    "symbolic-ref",
                ] {
                    if line.contains(&format!("\"{cmd}\"")) {
                        found.push(format!("{}:{}: `{cmd}`", file.display(), n + 1));
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "git plumbing outside the git module (src/git.rs, src/git/):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn the_check_finds_an_import_up_a_layer_and_a_circle() {
        let m = |s: &str| -> ModPath { s.split("::").map(str::to_string).collect() };
        let edges: BTreeSet<(ModPath, ModPath)> = [
            ("format::result", "floor"),
            ("floor::runners::cargo", "floor::runners::kit"),
            ("floor::runners::kit", "floor::runners::cargo"),
            ("floor::decide", "verdict"),
            ("verdict", "evidence::store"),
            ("nowhere", "error"),
            ("floor::attribute", "floor::plan::Plan"),
            ("floor::confine", "floor::side"),
            ("floor::side", "floor::confine::runner_path"),
            ("floor::bind", "floor::runners::kit"),
            ("floor::bind", "floor::elsewhere"),
        ]
        .iter()
        .map(|(a, b)| (m(a), m(b)))
        .collect();
        let floor: &[&[&str]] = &[
            &["attribute", "runners"],
            &["bind", "side"],
            &["confine", "plan"],
        ];
        let found = problems(&edges, &[("floor", floor)]);
        assert_eq!(
            found,
            [
                "`floor::attribute` (floor layer 0) uses `floor::plan::Plan` (floor layer 2): an \
                 import up a layer",
                "`floor::elsewhere` is in no layer of `MODULE_LAYERS` for `floor`",
                "`floor::side` (floor layer 1) uses `floor::confine::runner_path` (floor layer 2): \
                 an import up a layer",
                "`format::result` (tier model) uses `floor` (tier stages): an import up a tier",
                "`nowhere` is in no tier of `LAYERS`",
                "`verdict` uses `evidence::store`, listed after it in tier model: an import up \
                 the tier",
                "an import circle: floor::confine → floor::side",
                "an import circle: floor::runners::cargo → floor::runners::kit",
            ],
            "{found:#?}"
        );
        let known: BTreeSet<ModPath> = [m("floor"), m("floor::runners"), m("floor::runners::kit")]
            .into_iter()
            .collect();
        assert_eq!(
            resolve(&m("super::kit::exec"), &m("floor::runners::cargo"), &known),
            Some(m("floor::runners::kit"))
        );
        assert_eq!(
            resolve(&m("crate::floor::runners::Outcome"), &m("format"), &known),
            Some(m("floor::runners"))
        );
    }

    /// Code comments cite the book's pages (`book: floor/attribution.md`, with or without an
    /// `#anchor`) and messages its published URL, never a document outside the repository:
    /// every cited page exists.
    #[test]
    fn every_book_page_a_comment_cites_exists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let book = root.join("docs/src");
        let cite = regex::Regex::new(r"book: ([a-z0-9/-]+\.md)").expect("pattern");
        // The published book, as messages name it: `…/claim-check/book/admission.html#…`.
        let url = regex::Regex::new(r"claim-check/book/([a-z0-9/-]+)\.html").expect("pattern");
        let mut found = Vec::new();
        let mut cited = 0;
        // The code, the published JSON Schemas and the manifest's comments.
        let mut stack = vec![
            root.join("src"),
            root.join("tests"),
            root.join("bench"),
            root.join("schemas"),
            root.join("Cargo.toml"),
        ];
        while let Some(p) = stack.pop() {
            if p.is_dir() {
                let Ok(entries) = std::fs::read_dir(&p) else {
                    continue;
                };
                stack.extend(entries.flatten().map(|e| e.path()));
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            for (n, line) in text.lines().enumerate() {
                if line.contains("DESIGN ") && !line.contains("DESIGN.md") {
                    found.push(format!("{}:{}: cites DESIGN", p.display(), n + 1));
                }
                for c in cite.captures_iter(line).chain(url.captures_iter(line)) {
                    cited += 1;
                    let page = c[1].trim_end_matches(".md").to_string() + ".md";
                    if !book.join(&page).is_file() {
                        found.push(format!("{}:{}: no page {}", p.display(), n + 1, &c[1]));
                    }
                }
            }
        }
        assert!(cited > 20, "the check found only {cited} citations");
        assert!(found.is_empty(), "{}", found.join("\n"));
    }

    /// The book's design page shows the same table as [`LAYERS`], tier by tier.
    #[test]
    fn the_design_page_shows_the_layer_table() {
        let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/design.md");
        let text = std::fs::read_to_string(&page).expect("docs/src/design.md");
        let section = text
            .split("\n## Layers\n")
            .nth(1)
            .expect("a `## Layers` section in docs/src/design.md");
        let name = regex::Regex::new(r"`([a-z_]+)`").expect("pattern");
        let rows: Vec<(String, Vec<String>)> = section
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .map(|row| {
                let tier = row.split('|').nth(1).unwrap_or_default().trim();
                let modules = row.split('|').nth(2).unwrap_or_default();
                (
                    tier.to_string(),
                    name.captures_iter(modules)
                        .map(|c| c[1].to_string())
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            table(),
            "docs/src/design.md's layer table differs from LAYERS"
        );
    }

    /// [`LAYERS`] as owned names, tier by tier.
    fn table() -> Vec<(String, Vec<String>)> {
        LAYERS
            .iter()
            .map(|(tier, l)| (tier.to_string(), l.iter().map(|m| m.to_string()).collect()))
            .collect()
    }

    /// The crate's doc (`src/lib.rs`) lists the tiers of [`LAYERS`] in order, each with its
    /// modules in order: one numbered item per tier, `N. tier: ` and the modules' names in
    /// backticks, each followed by what it holds in parentheses.
    #[test]
    fn the_crate_doc_lists_the_layer_table() {
        let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
        let text = std::fs::read_to_string(&lib).expect("src/lib.rs");
        let item = regex::Regex::new(r"^[0-9]+\. ([a-z]+): (.*)").expect("pattern");
        let name = regex::Regex::new(r"`([a-z_]+)`").expect("pattern");
        let mut tiers: Vec<(String, String)> = Vec::new();
        for line in text.lines().map_while(|l| l.strip_prefix("//!")) {
            let line = line.trim_start();
            if let Some(c) = item.captures(line) {
                tiers.push((c[1].to_string(), c[2].to_string()));
            } else if line.is_empty() {
                if !tiers.is_empty() {
                    break;
                }
            } else if let Some((_, text)) = tiers.last_mut() {
                text.push(' ');
                text.push_str(line);
            }
        }
        let found: Vec<(String, Vec<String>)> = tiers
            .into_iter()
            .map(|(tier, text)| {
                // What a module holds is in parentheses: only the names outside them count.
                let mut depth = 0usize;
                let outside: String = text
                    .chars()
                    .filter(|c| {
                        match c {
                            '(' => depth += 1,
                            ')' => depth = depth.saturating_sub(1),
                            _ => return depth == 0,
                        }
                        false
                    })
                    .collect();
                let names = name
                    .captures_iter(&outside)
                    .map(|c| c[1].to_string())
                    .collect();
                (tier, names)
            })
            .collect();
        assert_eq!(
            found,
            table(),
            "src/lib.rs's list of modules differs from LAYERS"
        );
    }
}
