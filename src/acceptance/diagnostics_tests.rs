//! Every input error the acceptance parser, the validator and the claim loader can give, exactly
//! as the user reads it, in one snapshot: a changed message shows in review.
//!
//! Two tests keep the list whole:
//! - `every_input_error_message` feeds one small bad input per message ([`cases`]) and snapshots
//!   what the command line prints for it (the `Display` of [`Error`], as `main_entry` writes it);
//! - `every_message_site_has_a_case` reads the production sources of `src/acceptance/`, its
//!   `schema/` and the spanned YAML reader (`src/spanned_yaml/`) with `syn`, lists every place
//!   that words an input error (`Problem::new(pos, message, help)`, `self.report(pos, message,
//!   help)` or `self.v.report(..)`, `InputError::new(message)` with its `.help(...)`), turns
//!   each message and help format string into a pattern, and fails when a place has no case
//!   whose output matches it, or when a case prints a message that no place accounts for. So a
//!   new message without a case fails, and so does a case that no longer reaches its message.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;
use syn::visit::Visit;

use super::claim::{FileSource, Files};
use super::parse::{parse, parse_config};
use super::{load, locate, AcceptanceState, Located};
use crate::error::{Error, InputError};

// ---------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------

/// One bad input and the stage that reads it.
enum Input {
    /// `.shipmoor/acceptance.yaml`, through [`parse`].
    Acceptance(String),
    /// `.shipmoor/config.yaml`, through [`parse_config`].
    Settings(String),
    /// Files of a worktree (path, bytes), read strictly by [`Files::read`] as head is.
    Worktree(Vec<(&'static str, Vec<u8>)>),
    /// Files of a repository (path, bytes), the acceptance file found by [`locate`] and read by
    /// [`load`], as `shipmoor acceptance` does without `--acceptance`.
    Located(Vec<(&'static str, Vec<u8>)>),
    /// [`load`] of `.shipmoor/acceptance.yaml` when it cannot be read (here: it is a directory),
    /// as when the file goes between [`locate`] and [`load`].
    Unreadable,
    /// [`locate`] when `.shipmoor/acceptance.yaml` is there but is a directory.
    NotAFile,
}

struct Case {
    name: &'static str,
    input: Input,
}

fn acceptance(name: &'static str, text: impl Into<String>) -> Case {
    Case {
        name,
        input: Input::Acceptance(text.into()),
    }
}

/// A valid file with one criterion, then `extra`: keys of the top level, or, indented by four
/// spaces, more keys of the criterion.
fn with(extra: &str) -> String {
    format!("version: 1\ncriteria:\n  - id: a\n    ac: A holds.\n{extra}")
}

/// Every message, in the order of the stages: the spanned tree, the validator, the entry points,
/// the loader, the claim.
fn cases() -> Vec<Case> {
    let files = |list: &[(&'static str, &[u8])]| -> Vec<(&'static str, Vec<u8>)> {
        list.iter().map(|(p, b)| (*p, b.to_vec())).collect()
    };
    vec![
        // The spanned tree (spanned_yaml/tree.rs).
        acceptance("a YAML syntax error", "version: 1\ncriteria: [a, b\n"),
        acceptance("a second YAML document", with("---\nversion: 1\n")),
        acceptance(
            "an alias",
            "version: 1\ncriteria:\n  - id: a\n    ac: &text A.\n  - id: b\n    ac: *text\n",
        ),
        acceptance(
            "nesting past the cap",
            format!("version: 1\ncriteria: {}\n", "[".repeat(64)),
        ),
        acceptance(
            "an anchor",
            "version: 1\ncriteria:\n  - id: a\n    ac: &text A.\n",
        ),
        acceptance(
            "a YAML tag",
            "version: 1\ncriteria:\n  - id: a\n    ac: !!str A.\n",
        ),
        acceptance("a duplicate key", with("    ac: B.\n")),
        acceptance("a key that is not a word", with("? [x]\n: 1\n")),
        // The validator (spanned_yaml/validator.rs), in the order of its readers, and then the
        // schema (acceptance/schema/), in the order of its sections.
        acceptance(
            "an unknown key, near a known one",
            with("    requird: false\n"),
        ),
        acceptance("an unknown key, near none", with("colour: blue\n")),
        acceptance(
            "an empty string",
            "version: 1\ncriteria:\n  - id: a\n    ac: \"\"\n",
        ),
        acceptance(
            "a sequence where a string is wanted",
            "version: 1\ncriteria:\n  - id: a\n    ac: [A holds.]\n",
        ),
        acceptance("a quoted boolean", with("    required: \"true\"\n")),
        acceptance(
            "a word where a boolean is wanted",
            with("    required: yes\n"),
        ),
        acceptance(
            "a quoted integer",
            with("judge:\n  command: [j]\n  timeout: \"9\"\n"),
        ),
        acceptance(
            "a word where an integer is wanted",
            with("judge:\n  command: [j]\n  timeout: soon\n"),
        ),
        acceptance("a string where a mapping is wanted", with("judge: local\n")),
        acceptance(
            "a mapping where a sequence is wanted",
            "version: 1\ncriteria:\n  refund: x\n",
        ),
        acceptance(
            "a list item that is not a string",
            with("guard: [[tests]]\n"),
        ),
        acceptance("an empty glob", with("guard: [\"\"]\n")),
        acceptance("a bad glob", with("guard: [\"a{b\"]\n")),
        acceptance(
            "a glob outside the repository",
            with("    check:\n      pattern: { paths: [\"../../**\", \"/etc/**\"], regex: x }\n"),
        ),
        acceptance("an empty file", ""),
        acceptance("a file that is not a mapping", "- a\n- b\n"),
        Case {
            name: "an empty settings file",
            input: Input::Settings(String::new()),
        },
        Case {
            name: "a settings file that is not a mapping",
            input: Input::Settings("- judge\n".into()),
        },
        Case {
            name: "criteria in the project settings",
            input: Input::Settings("version: 1\ncriteria:\n  - id: a\n    ac: A.\n".into()),
        },
        acceptance("no version", "criteria:\n  - id: a\n    ac: A.\n"),
        acceptance("no criteria", "version: 1\n"),
        acceptance(
            "a guard beside a criterion named guard",
            "version: 1\ncriteria:\n  - id: guard\n    ac: A.\nguard: [\"tests/**\"]\n",
        ),
        acceptance("an unknown inherited policy", with("inherited: keep\n")),
        acceptance(
            "another version",
            "version: 2\ncriteria:\n  - id: a\n    ac: A.\n",
        ),
        acceptance("an empty criteria list", "version: 1\ncriteria: []\n"),
        acceptance(
            "a criterion that is not a mapping",
            "version: 1\ncriteria:\n  - the refund voids the payment\n",
        ),
        acceptance(
            "a criterion without an id",
            "version: 1\ncriteria:\n  - ac: A.\n",
        ),
        acceptance(
            "a criterion without ac",
            "version: 1\ncriteria:\n  - id: a\n",
        ),
        acceptance(
            "a check on a judgment criterion",
            with("    lane: judge\n    check:\n      test: t\n"),
        ),
        acceptance(
            "an id that is not valid",
            "version: 1\ncriteria:\n  - id: Refund_X\n    ac: A.\n",
        ),
        acceptance(
            "a duplicate id",
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n  - id: a\n    ac: B.\n",
        ),
        acceptance(
            "tags that collide",
            "version: 1\ncriteria:\n  - id: adds-numbers\n    ac: A.\n  - id: adds-numbers-25d1\n    ac: B.\n",
        ),
        acceptance(
            "an env_pass name that is not a variable name",
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\nrunners:\n  - kind: pytest\n    env_pass: [\"NPM-TOKEN\"]\n",
        ),
        acceptance("an unknown lane", with("    lane: flor\n")),
        acceptance("a check naming no check", with("    check: {}\n")),
        acceptance(
            "a check of two kinds",
            with("    check:\n      test: t\n      command: c\n"),
        ),
        acceptance(
            "a pattern over no paths",
            with("    check:\n      pattern: { paths: [], regex: x }\n"),
        ),
        acceptance(
            "a pattern without paths",
            with("    check:\n      pattern: { regex: x }\n"),
        ),
        acceptance(
            "a bad regex",
            with("    check:\n      pattern: { paths: [\"src/**\"], regex: \"a(\" }\n"),
        ),
        acceptance(
            "a pattern without regex",
            with("    check:\n      pattern: { paths: [\"src/**\"] }\n"),
        ),
        acceptance(
            "a runner that is not a mapping",
            with("runners:\n  - cargo\n"),
        ),
        acceptance(
            "an unknown runner kind",
            with("runners:\n  - kind: nextst\n"),
        ),
        acceptance("a runner without a kind", with("runners:\n  - root: web\n")),
        acceptance(
            "a command on a runner of another kind",
            with("runners:\n  - kind: pytest\n    command: make\n"),
        ),
        acceptance(
            "a junit-command runner without a command",
            with("runners:\n  - kind: junit-command\n"),
        ),
        acceptance(
            "a runner root outside the repository",
            with("runners:\n  - kind: go\n    root: ../up\n"),
        ),
        acceptance(
            "a judge with both a command and a url",
            with("judge:\n  command: [j]\n  url: https://x\n  model: m\n"),
        ),
        acceptance(
            "a judge naming no judge",
            with("judge:\n  timeout: 5\n"),
        ),
        acceptance(
            "a judge url without a model",
            with("judge:\n  url: https://x\n"),
        ),
        acceptance(
            "a model beside a judge command",
            with("judge:\n  command: [j]\n  model: m\n"),
        ),
        acceptance("an empty judge command", with("judge:\n  command: []\n")),
        acceptance(
            "a judge command without a program",
            with("judge:\n  command: [\"\", x]\n"),
        ),
        acceptance(
            "a judge url that is not http(s)",
            with("judge:\n  url: ftp://x\n  model: m\n"),
        ),
        acceptance(
            "a key where a variable name is wanted",
            with("judge:\n  url: https://x\n  model: m\n  api_key_env: sk-123\n"),
        ),
        acceptance(
            "an API key written into the file",
            with("judge:\n  url: https://x\n  model: m\n  api_key: sk-123\n"),
        ),
        acceptance(
            "a timeout of zero",
            with("judge:\n  command: [j]\n  timeout: 0\n"),
        ),
        acceptance(
            "the judge key's old name",
            with("judge:\n  command: [j]\n  timeout_seconds: 60\n"),
        ),
        acceptance(
            "a panel judge that is not a mapping",
            with("judge:\n  - python3 tools/judge.py\n"),
        ),
        acceptance(
            "a panel judge without a name",
            with("judge:\n  - command: [j]\n"),
        ),
        acceptance(
            "two panel judges of one name",
            with("judge:\n  - { name: intent, command: [j] }\n  - { name: intent, url: https://x, model: m }\n"),
        ),
        acceptance(
            "a judge name that is not valid",
            with("judge:\n  - { name: Security Lens, command: [j] }\n"),
        ),
        // Finding and reading the file (mod.rs).
        Case {
            name: "no acceptance file",
            input: Input::Located(files(&[("README.md", b"# x\n")])),
        },
        Case {
            name: "an acceptance file that is a directory",
            input: Input::NotAFile,
        },
        Case {
            name: "an acceptance file that cannot be read",
            input: Input::Unreadable,
        },
        Case {
            name: "an acceptance file that is not UTF-8",
            input: Input::Located(files(&[(".shipmoor/acceptance.yaml", b"version: 1\xff\n")])),
        },
        // Every acceptance file of a side (claim.rs).
        Case {
            name: "a change's file that is not UTF-8",
            input: Input::Worktree(files(&[(".shipmoor/changes/pr-2.yaml", b"\xfe\xff")])),
        },
        Case {
            name: "a settings file that is not UTF-8",
            input: Input::Worktree(files(&[(".shipmoor/config.yaml", b"version: 1\xff\n")])),
        },
        Case {
            name: "an acceptance file that is a symlink",
            input: Input::Worktree(files(&[
                ("elsewhere.yaml", b"version: 1\ncriteria:\n  - id: a\n    ac: A.\n"),
                (".shipmoor/changes/pr-2.yaml", b"-> ../../elsewhere.yaml"),
            ])),
        },
        Case {
            name: "an acceptance file that is a FIFO",
            input: Input::Worktree(files(&[(".shipmoor/changes/pr-2.yaml", b"| fifo")])),
        },
        Case {
            name: "an id used in two files",
            input: Input::Worktree(files(&[
                (
                    ".shipmoor/acceptance.yaml",
                    b"version: 1\ncriteria:\n  - id: a\n    ac: A.\n",
                ),
                (
                    ".shipmoor/changes/pr-2.yaml",
                    b"version: 1\ncriteria:\n  - id: b\n    ac: B.\n  - id: a\n    ac: A again.\n",
                ),
            ])),
        },
        Case {
            name: "tags that collide across files",
            input: Input::Worktree(files(&[
                (
                    ".shipmoor/acceptance.yaml",
                    b"version: 1\ncriteria:\n  - id: adds-numbers\n    ac: A.\n",
                ),
                (
                    ".shipmoor/changes/pr-2.yaml",
                    b"version: 1\ncriteria:\n  - id: adds-numbers-25d1\n    ac: B.\n",
                ),
            ])),
        },
        acceptance("a confidence above 1", with("    confidence: 1.5\n")),
    ]
}

// ---------------------------------------------------------------------------------------------
// Running a case
// ---------------------------------------------------------------------------------------------

/// The errors a case yields: structured (for matching against the sources) and as printed.
fn run(case: &Case) -> (Vec<InputError>, String) {
    let result: Result<(), Error> = match &case.input {
        Input::Acceptance(text) => parse(
            text,
            ".shipmoor/acceptance.yaml",
            AcceptanceState::Committed,
            String::new(),
        )
        .map(drop)
        .map_err(Error::Input),
        Input::Settings(text) => parse_config(text, ".shipmoor/config.yaml")
            .map(drop)
            .map_err(Error::Input),
        Input::Worktree(files) => {
            let dir = tree(files);
            Files::read(&FileSource::Worktree(dir.path()), true).map(drop)
        }
        Input::Located(files) => {
            let dir = tree(files);
            locate(dir.path(), None).and_then(|l| load(&l)).map(drop)
        }
        Input::NotAFile => {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join(".shipmoor/acceptance.yaml")).unwrap();
            locate(dir.path(), None).map(drop)
        }
        Input::Unreadable => {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(".shipmoor/acceptance.yaml");
            std::fs::create_dir_all(&path).unwrap();
            load(&Located {
                path,
                display_path: ".shipmoor/acceptance.yaml".to_string(),
                state: AcceptanceState::Committed,
            })
            .map(drop)
        }
    };
    match result {
        Ok(()) => panic!("case `{}` was accepted", case.name),
        Err(e) => {
            let printed = e.to_string();
            match e {
                Error::Input(errors) => (errors, printed),
                other => panic!("case `{}` is not an input error: {other}", case.name),
            }
        }
    }
}

/// The files in a new directory: bytes `-> TARGET` make a symlink to TARGET, `| fifo` a FIFO.
fn tree(files: &[(&str, Vec<u8>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        if let Some(target) = bytes.strip_prefix(b"-> ") {
            std::os::unix::fs::symlink(std::str::from_utf8(target).unwrap(), &path).unwrap();
            continue;
        }
        if bytes == b"| fifo" {
            nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
            continue;
        }
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

// ---------------------------------------------------------------------------------------------
// The message sites in the sources
// ---------------------------------------------------------------------------------------------

/// A message or help as written at its site.
#[derive(Debug, Clone)]
enum Wording {
    /// A string literal or the format string of `format!`.
    Format(String),
    /// Anything else (a variable, a constant, a field), described for the allow-lists below.
    Other(String),
}

#[derive(Debug)]
struct Site {
    file: String,
    line: usize,
    message: Wording,
    help: Option<Wording>,
}

impl Site {
    fn at(&self) -> String {
        format!("src/{}:{}", self.file, self.line)
    }
}

/// Sites that pass on a message worded elsewhere: each is one of the sites above it, not a
/// message of its own. (file, the forwarded expression.)
const FORWARDERS: &[(&str, &str)] = &[
    // `Validator::report` turns its arguments into a `Problem`.
    ("spanned_yaml/validator.rs", "message"),
    // `parse_as` turns each `Problem` into an `InputError`.
    ("acceptance/parse.rs", "p.message"),
];

/// Messages no input can reach, with why: they guard a promise the code keeps today.
const UNREACHABLE: &[(&str, &str)] = &[(
    "the acceptance file could not be read",
    "every path of the validator that yields no set records a problem; this one stands in \
     should a later edit break that promise",
)];

#[derive(Default)]
struct Scan {
    file: String,
    sites: Vec<Site>,
    /// `InputError::new` calls, keyed by position, and the helps chained on them.
    input_errors: Vec<((usize, usize), usize, Wording)>,
    helps: Vec<((usize, usize), Wording)>,
    /// Struct literals of `Problem` or `InputError` outside their `new`: a site the scan
    /// would not see.
    literals: Vec<usize>,
    in_fn: Vec<String>,
}

fn wording(expr: &syn::Expr) -> Wording {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Wording::Format(s.value()),
        syn::Expr::Macro(m) if m.mac.path.is_ident("format") => {
            let args = m
                .mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                )
                .expect("format! arguments parse");
            match args.first() {
                Some(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                })) => Wording::Format(s.value()),
                _ => Wording::Other("format!(..)".to_string()),
            }
        }
        other => Wording::Other(expression_name(other)),
    }
}

fn expression_name(expr: &syn::Expr) -> String {
    match expr {
        syn::Expr::Path(p) => p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("::"),
        syn::Expr::Field(f) => match &f.member {
            syn::Member::Named(name) => format!("{}.{name}", expression_name(&f.base)),
            syn::Member::Unnamed(i) => format!("{}.{}", expression_name(&f.base), i.index),
        },
        syn::Expr::MethodCall(m) => format!("{}.{}()", expression_name(&m.receiver), m.method),
        _ => "an expression".to_string(),
    }
}

fn ends_with(path: &syn::Path, names: [&str; 2]) -> bool {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    segs.len() >= 2 && segs[segs.len() - 2..] == names
}

fn start(span: proc_macro2::Span) -> (usize, usize) {
    let lc = span.start();
    (lc.line, lc.column)
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.in_fn.push(f.sig.ident.to_string());
        syn::visit::visit_item_fn(self, f);
        self.in_fn.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.in_fn.push(f.sig.ident.to_string());
        syn::visit::visit_impl_item_fn(self, f);
        self.in_fn.pop();
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func {
            let args: Vec<&syn::Expr> = call.args.iter().collect();
            let line = start(p.path.segments[0].ident.span()).0;
            if ends_with(&p.path, ["Problem", "new"]) {
                self.sites.push(Site {
                    file: self.file.clone(),
                    line,
                    message: wording(args[1]),
                    help: Some(wording(args[2])),
                });
            } else if ends_with(&p.path, ["InputError", "new"]) {
                let key = start(p.path.segments[0].ident.span());
                self.input_errors.push((key, line, wording(args[0])));
            }
        }
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        let is_self = |e: &syn::Expr| matches!(e, syn::Expr::Path(p) if p.path.is_ident("self"));
        // `self.report(..)`, or `self.v.report(..)` through a reader's validator.
        let on_self = is_self(&call.receiver)
            || matches!(&*call.receiver, syn::Expr::Field(f) if is_self(&f.base));
        if call.method == "report" && on_self {
            self.sites.push(Site {
                file: self.file.clone(),
                line: start(call.method.span()).0,
                message: wording(args[1]),
                help: Some(wording(args[2])),
            });
        }
        if call.method == "help" {
            // Down the builder chain (`.at(..)`, `.in_file(..)`) to the `InputError::new`.
            let mut receiver = &*call.receiver;
            while let syn::Expr::MethodCall(inner) = receiver {
                receiver = &inner.receiver;
            }
            if let syn::Expr::Call(c) = receiver {
                if let syn::Expr::Path(p) = &*c.func {
                    if ends_with(&p.path, ["InputError", "new"]) {
                        let key = start(p.path.segments[0].ident.span());
                        self.helps.push((key, wording(args[0])));
                    }
                }
            }
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        let name = s.path.segments.last().map(|seg| seg.ident.to_string());
        let in_new = self.in_fn.last().is_some_and(|f| f == "new");
        if matches!(name.as_deref(), Some("Problem" | "InputError")) && !in_new {
            self.literals.push(start(s.path.segments[0].ident.span()).0);
        }
        syn::visit::visit_expr_struct(self, s);
    }
}

/// The directories under `src/` whose production sources word the messages of [`cases`].
const SOURCE_DIRS: &[&str] = &["acceptance", "acceptance/schema", "spanned_yaml"];

/// The production sources of [`SOURCE_DIRS`] (every `.rs` but the tests and their support).
fn production_sources() -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: Vec<PathBuf> = SOURCE_DIRS
        .iter()
        .flat_map(|dir| std::fs::read_dir(src.join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".rs")
                && !name.ends_with("_tests.rs")
                && name != "tests.rs"
                && name != "test_support.rs"
        })
        .collect();
    out.sort();
    out
}

fn sites() -> Vec<Site> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // `self.report(`, or `self.v.report(` (the call may break after `self.v`).
    let reports = Regex::new(r"self(\s*\.[a-z_]+)?\s*\.report\(").unwrap();
    let mut all = Vec::new();
    for path in production_sources() {
        let text = std::fs::read_to_string(&path).unwrap();
        // `acceptance/schema/mod.rs`: the path under `src/`, `/` between its parts.
        let file = path
            .strip_prefix(&src)
            .unwrap()
            .iter()
            .map(|part| part.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let mut scan = Scan {
            file: file.clone(),
            ..Scan::default()
        };
        scan.visit_file(&syn::parse_file(&text).unwrap());
        assert!(
            scan.literals.is_empty(),
            "{file}: a `Problem` or `InputError` built as a struct literal on lines {:?}: \
             build it with `new` so that this test sees its message",
            scan.literals
        );
        for (key, line, message) in scan.input_errors {
            let help = scan
                .helps
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, h)| h.clone());
            scan.sites.push(Site {
                file: file.clone(),
                line,
                message,
                help,
            });
        }
        // `syn` does not look inside macro calls: a site written inside one would go unseen.
        // Counting the calls as text catches it.
        let written = text.matches("Problem::new(").count()
            + reports.find_iter(&text).count()
            + text.matches("InputError::new(").count();
        let found = scan.sites.len();
        assert_eq!(
            written, found,
            "{file}: {written} message calls in the text, {found} seen by the scan (one inside a macro?)"
        );
        all.extend(scan.sites);
    }
    all.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    all
}

/// A format string as a pattern: its text exactly, each `{...}` any text.
fn pattern(format: &str) -> Regex {
    let mut out = String::from("^");
    let mut chars = format.chars().peekable();
    let mut literal = String::new();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '{' => {
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
                out.push_str(&regex::escape(&literal));
                literal.clear();
                out.push_str("(?s:.*?)");
            }
            c => literal.push(c),
        }
    }
    out.push_str(&regex::escape(&literal));
    out.push('$');
    Regex::new(&out).unwrap()
}

/// Whether `error` is worded at `site`: its message fits the site's message and its help the
/// site's help. A help held in a constant or a variable (`SKELETON`, `help`) fits any help: the
/// message alone then tells the site.
fn worded_at(site: &Site, error: &InputError) -> bool {
    let fits = |w: &Wording, text: &str| match w {
        Wording::Format(f) => pattern(f).is_match(text),
        Wording::Other(_) => true,
    };
    let Wording::Format(_) = &site.message else {
        return false;
    };
    fits(&site.message, &error.message)
        && match (&site.help, &error.help) {
            (None, None) => true,
            (Some(w), Some(h)) => fits(w, h),
            _ => false,
        }
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

/// A case's input as the snapshot shows it: each file with numbered lines.
fn shown(input: &Input) -> String {
    let numbered = |path: &str, bytes: &[u8]| {
        let mut out = format!("{path}:\n");
        match std::str::from_utf8(bytes) {
            Ok("") => out.push_str("     (empty)\n"),
            Ok(text) => {
                for (i, line) in text.lines().enumerate() {
                    out.push_str(&format!("  {:>3} | {line}\n", i + 1));
                }
            }
            Err(_) => {
                out.push_str("     (not UTF-8; bytes escaped)\n");
                for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
                    if !line.is_empty() {
                        out.push_str(&format!("  {:>3} | {}\n", i + 1, line.escape_ascii()));
                    }
                }
            }
        }
        out
    };
    match input {
        Input::Acceptance(text) => numbered(".shipmoor/acceptance.yaml", text.as_bytes()),
        Input::Settings(text) => numbered(".shipmoor/config.yaml", text.as_bytes()),
        Input::Worktree(files) | Input::Located(files) => files
            .iter()
            .map(|(path, bytes)| numbered(path, bytes))
            .collect(),
        Input::Unreadable | Input::NotAFile => {
            ".shipmoor/acceptance.yaml: a directory\n".to_string()
        }
    }
}

#[test]
fn every_input_error_message() {
    let mut out = String::new();
    for (i, case) in cases().iter().enumerate() {
        let (_, printed) = run(case);
        out.push_str(&format!(
            "── {}. {} ──\n{}\n{printed}\n\n",
            i + 1,
            case.name,
            shown(&case.input)
        ));
    }
    insta::assert_snapshot!("acceptance_errors", out);
}

#[test]
fn every_message_site_has_a_case() {
    let sites = sites();
    let scanned: BTreeSet<&str> = sites.iter().map(|s| s.file.as_str()).collect();
    for file in [
        "acceptance/claim.rs",
        "acceptance/mod.rs",
        "acceptance/parse.rs",
        "acceptance/schema/mod.rs",
        "acceptance/schema/criteria.rs",
        "acceptance/schema/runners.rs",
        "acceptance/schema/judges.rs",
        "spanned_yaml/tree.rs",
        "spanned_yaml/validator.rs",
    ] {
        assert!(scanned.contains(file), "no message site found in {file}");
    }
    let errors: Vec<(&'static str, InputError)> = cases()
        .iter()
        .flat_map(|case| run(case).0.into_iter().map(|e| (case.name, e)))
        .collect();

    let placeholders_only = Regex::new(r"^(\{[^{}]*\}|\s)*$").unwrap();
    let mut missing = Vec::new();
    let mut forwarders_seen = BTreeSet::new();
    let mut unreachable_seen = BTreeSet::new();
    for site in &sites {
        match &site.message {
            Wording::Other(expr) => {
                let known = FORWARDERS.contains(&(site.file.as_str(), expr.as_str()));
                assert!(
                    known,
                    "{}: the message `{expr}` is not a literal or `format!`: word it at its \
                     site, or list the site in FORWARDERS if it passes on a message worded elsewhere",
                    site.at()
                );
                forwarders_seen.insert((site.file.as_str(), expr.as_str()));
            }
            Wording::Format(message) => {
                // A format string of placeholders alone would match any output, and so count
                // as covered whatever the cases print.
                assert!(
                    !placeholders_only.is_match(message),
                    "{}: the message `{message}` has no words of its own",
                    site.at()
                );
                if let Some((m, why)) = UNREACHABLE.iter().find(|(m, _)| m == message) {
                    unreachable_seen.insert(*m);
                    assert!(
                        !errors.iter().any(|(_, e)| worded_at(site, e)),
                        "{}: `{message}` is listed as unreachable ({why}) but a case reaches it",
                        site.at()
                    );
                } else if !errors.iter().any(|(_, e)| worded_at(site, e)) {
                    missing.push(format!("{}: `{message}`", site.at()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "message sites with no case in `cases()` (add one bad input for each):\n{}",
        missing.join("\n")
    );
    // The allow-lists name only sites that exist, so that neither hides a new message.
    assert_eq!(
        forwarders_seen.len(),
        FORWARDERS.len(),
        "a FORWARDERS entry names no site"
    );
    assert_eq!(
        unreachable_seen.len(),
        UNREACHABLE.len(),
        "an UNREACHABLE entry names no site"
    );

    // And every message a case prints comes from a site the scan saw: else the scan is blind.
    for (case, e) in &errors {
        assert!(
            sites.iter().any(|s| worded_at(s, e)),
            "case `{case}` prints `{}` (help: {:?}), which no message site accounts for",
            e.message,
            e.help
        );
    }
}
