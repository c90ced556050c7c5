//! Every input error the product words carries a help line: the fix the user can apply. The
//! test reads the production sources with `syn` and, function by function, finds each
//! `InputError::new(..)` and what gives it its help:
//! - a `.help(..)` in the method chain that starts at it (`InputError::new(m).at(..).help(h)`),
//! - or, when it is bound first (`let e = InputError::new(m)`, or a closure that makes one,
//!   `let at = |x| InputError::new(..)`), a `.help(..)` chained on that name in the same function
//!   (`e.help(h)`, `at(x).help(h)`).
//!
//! A new error without a help line fails here, at its file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The production sources: every `.rs` under `src/` but test files, cut at `#[cfg(test)]`.
fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let path = e.path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if name != "tests" {
                    walk(&path, out);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out
}

fn is_input_error_new(e: &syn::Expr) -> bool {
    let syn::Expr::Call(call) = e else {
        return false;
    };
    let syn::Expr::Path(p) = &*call.func else {
        return false;
    };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    segs.len() >= 2 && segs[segs.len() - 2..] == ["InputError", "new"]
}

fn line(e: &syn::Expr) -> usize {
    use syn::spanned::Spanned;
    e.span().start().line
}

/// The root of a method chain (`a.b().c()` → `a`), through parentheses and references.
fn root(mut e: &syn::Expr) -> &syn::Expr {
    loop {
        e = match e {
            syn::Expr::MethodCall(m) => &m.receiver,
            syn::Expr::Paren(p) => &p.expr,
            syn::Expr::Reference(r) => &r.expr,
            _ => return e,
        };
    }
}

/// The single-ident name an expression is (`e`) or calls (`at(x)`).
fn name_of(e: &syn::Expr) -> Option<String> {
    match e {
        syn::Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        syn::Expr::Call(c) => match &*c.func {
            syn::Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// One function's findings.
#[derive(Default)]
struct Function {
    /// Every `InputError::new` by line.
    news: BTreeSet<usize>,
    /// Those a chain gives a help.
    helped: BTreeSet<usize>,
    /// Those bound to a name (directly or inside a closure), by the name.
    bound: BTreeMap<usize, String>,
    /// Names a `.help(..)` is chained on.
    helped_names: BTreeSet<String>,
}

/// Every `InputError::new` inside an expression.
#[derive(Default)]
struct News(Vec<usize>);

impl<'ast> Visit<'ast> for News {
    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        if is_input_error_new(e) {
            self.0.push(line(e));
        }
        syn::visit::visit_expr(self, e);
    }
}

#[derive(Default)]
struct Scan {
    stack: Vec<Function>,
    missing: Vec<usize>,
}

impl Scan {
    fn enter(&mut self) {
        self.stack.push(Function::default());
    }

    fn leave(&mut self) {
        let f = self.stack.pop().unwrap();
        for n in &f.news {
            let ok = f.helped.contains(n)
                || f.bound
                    .get(n)
                    .is_some_and(|name| f.helped_names.contains(name));
            if !ok {
                self.missing.push(*n);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.enter();
        syn::visit::visit_item_fn(self, f);
        self.leave();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.enter();
        syn::visit::visit_impl_item_fn(self, f);
        self.leave();
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let test = m.attrs.iter().any(|a| {
            a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
        });
        if !test {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        if let Some(f) = self.stack.last_mut() {
            if is_input_error_new(e) {
                f.news.insert(line(e));
            }
            if let syn::Expr::MethodCall(m) = e {
                if m.method == "help" {
                    let r = root(e);
                    if is_input_error_new(r) {
                        f.helped.insert(line(r));
                    } else if let Some(name) = name_of(r) {
                        f.helped_names.insert(name);
                    }
                }
            }
        }
        syn::visit::visit_expr(self, e);
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let (Some(f), syn::Pat::Ident(p), Some(init)) = (self.stack.last_mut(), &l.pat, &l.init)
        {
            let mut news = News::default();
            news.visit_expr(&init.expr);
            for n in news.0 {
                f.bound.entry(n).or_insert_with(|| p.ident.to_string());
            }
        }
        syn::visit::visit_local(self, l);
    }
}

#[test]
fn every_input_error_has_a_help_line() {
    let mut missing = Vec::new();
    let mut seen = 0;
    for (path, text) in sources() {
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut scan = Scan::default();
        scan.visit_file(&file);
        seen += text.matches("InputError::new(").count();
        let rel = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap()
            .display()
            .to_string();
        missing.extend(scan.missing.into_iter().map(|l| format!("{rel}:{l}")));
    }
    // The scan sees the errors: the crate words well over a hundred.
    assert!(
        seen > 100,
        "only {seen} `InputError::new` found: the scan is blind"
    );
    assert!(
        missing.is_empty(),
        "input errors with no help line (chain `.help(\"the fix\")` on each):\n{}",
        missing.join("\n")
    );
}
