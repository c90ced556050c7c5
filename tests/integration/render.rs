//! The GitHub pages of a run, rendered as GitHub renders them and measured as a person sees
//! them: the job summary and `verify.md` of the bundled example run and of a 40-criterion run,
//! each turned into HTML by `cmark-gfm` (GitHub's own CommonMark renderer, with GitHub's
//! extensions, and raw HTML kept since GitHub keeps `<details>`), styled with GitHub's Markdown
//! CSS (`tests/fixtures/render/github-markdown-light.css`) in a 1,012 px content column, and
//! loaded in headless Chromium at 1,012 × 900. A page fails when anything on it is wider than
//! the column (GitHub's tables and code blocks scroll sideways inside themselves, so each is
//! measured by its content, not its box) or when its verdict is not on the first screen.
//!
//! Each page's screenshot (the first screen) is written under `target/tmp/render/`; with
//! `SHIPMOOR_UPDATE_SCREENSHOTS=1`, to `docs/screenshots/` instead, where the README shows them.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{ident, require_pytest, Repo};

/// GitHub's content column, and the test's window, in CSS pixels.
const COLUMN: u32 = 1012;
/// The first screen's height.
const SCREEN: u32 = 900;
const CSS: &str = include_str!("../fixtures/render/github-markdown-light.css");

/// Fails, naming the Debian package, when a tool the rendering needs is missing: a rendering
/// test that skips proves nothing.
fn require(program: &str, args: &[&str], package: &str) {
    let ok = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "the rendering test needs `{program}`, which is missing: install the Debian package `{package}` (apt-get install {package})"
    );
}

fn chromium() -> &'static str {
    "/usr/bin/chromium"
}

/// GitHub-flavoured Markdown to HTML, as GitHub renders it.
fn cmark_gfm(markdown: &str) -> String {
    use std::io::Write as _;
    let mut child = Command::new("cmark-gfm")
        .args([
            "--unsafe",
            "-e",
            "table",
            "-e",
            "strikethrough",
            "-e",
            "autolink",
            "-e",
            "tagfilter",
            "-e",
            "tasklist",
            "-t",
            "html",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cmark-gfm runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(markdown.as_bytes())
        .expect("cmark-gfm reads the page");
    let out = child.wait_with_output().expect("cmark-gfm ends");
    assert!(out.status.success(), "cmark-gfm failed");
    String::from_utf8(out.stdout).expect("utf-8 html")
}

/// The page: the rendered Markdown in GitHub's `markdown-body` at the column's width, and a
/// script that writes what the test measures into the DOM for `--dump-dom` to carry out.
fn page(body: &str, verdict: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>render</title>
<style>{CSS}</style>
<style>
html, body {{ margin: 0; background: #ffffff; }}
.markdown-body {{ box-sizing: content-box; width: {COLUMN}px; padding: 16px 0 0 0; }}
</style></head>
<body data-verdict="{verdict}"><article class="markdown-body">
{body}
</article>
<script>
(function () {{
  var art = document.querySelector('.markdown-body');
  // Only a code block may scroll: a log's long lines scroll inside it on GitHub as in every
  // code block there, but a table that scrolls (GitHub's CSS lets it) is one nobody reads.
  var scrolls = function (e) {{
    var ox = getComputedStyle(e).overflowX;
    return e.tagName === 'PRE' && (ox === 'auto' || ox === 'scroll');
  }};
  var width = document.documentElement.scrollWidth;
  var widest = 'the page';
  var all = art.querySelectorAll('*');
  for (var i = 0; i < all.length; i++) {{
    var el = all[i];
    var r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue; // folded away in a closed <details>
    // A code block that scrolls keeps the page its width whatever it holds: its own box
    // counts, and what is inside it does not.
    var inside = false;
    for (var p = el.parentElement; p && p !== art; p = p.parentElement) {{
      if (scrolls(p)) {{ inside = true; break; }}
    }}
    if (inside) continue;
    var w = Math.ceil(r.left + (scrolls(el) ? r.width : Math.max(el.scrollWidth, r.width)));
    if (w > width) {{ width = w; widest = el.tagName.toLowerCase() + ': ' + el.textContent.slice(0, 80); }}
  }}
  var verdict = document.body.dataset.verdict;
  var heads = art.querySelectorAll('h1, h2, h3');
  var top = -1;
  for (var j = 0; j < heads.length; j++) {{
    if (heads[j].textContent.indexOf(verdict) >= 0) {{ top = heads[j].getBoundingClientRect().top; break; }}
  }}
  var out = document.createElement('pre');
  out.id = 'measure';
  out.textContent = 'MEASURE width=' + width + ' top=' + Math.round(top) + ' widest=' + widest.replace(/\s+/g, ' ') + ' END';
  document.body.appendChild(out);
}})();
</script>
</body></html>
"#
    )
}

fn chromium_args(dir: &Path) -> Vec<String> {
    vec![
        "--headless".into(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--hide-scrollbars".into(),
        "--no-first-run".into(),
        "--disable-dev-shm-usage".into(),
        format!("--user-data-dir={}", dir.join("chromium-profile").display()),
        format!("--window-size={COLUMN},{SCREEN}"),
        "--virtual-time-budget=3000".into(),
    ]
}

/// What a page measured: its widest content, where its verdict heading starts (`-1`: none).
#[derive(Debug)]
struct Measure {
    name: String,
    width: u32,
    top: i64,
    widest: String,
}

/// Renders `markdown` as GitHub does, loads it in Chromium, screenshots its first screen and
/// measures it.
fn render(name: &str, markdown: &str, verdict: &str, dir: &Path) -> Measure {
    let body = cmark_gfm(markdown);
    // CommonMark joins consecutive lines into one paragraph: `key: value` lines must be list
    // items (or table rows) to read as lines.
    let joined = regex::Regex::new(r"<p>[a-z_]+: [^<]*\n[a-z_]+: ").expect("regex");
    assert!(
        !joined.is_match(&body),
        "{name}: key/value lines run together into one paragraph: {}",
        joined.find(&body).map(|m| m.as_str()).unwrap_or_default()
    );
    // Kept beside the screenshots under target/ to open in a browser.
    let pages = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render");
    std::fs::create_dir_all(&pages).expect("render dir");
    let html = pages.join(format!("{name}.html"));
    std::fs::write(&html, page(&body, verdict)).expect("page written");
    let url = format!("file://{}", html.display());
    let out = Command::new(chromium())
        .args(chromium_args(dir))
        .arg("--dump-dom")
        .arg(&url)
        .stderr(Stdio::null())
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    // The script's own text holds the same words: read the element it wrote.
    let m = dom
        .split("<pre id=\"measure\">MEASURE ")
        .nth(1)
        .and_then(|s| s.split(" END</pre>").next())
        .unwrap_or_else(|| panic!("chromium did not run the page's script ({name}): {dom}"));
    let field = |k: &str| -> String {
        m.split(' ')
            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
            .unwrap_or_default()
            .to_string()
    };
    let shot = screenshot_path(name);
    std::fs::create_dir_all(shot.parent().expect("parent")).expect("screenshot dir");
    let status = Command::new(chromium())
        .args(chromium_args(dir))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("chromium runs");
    assert!(
        status.success() && shot.is_file(),
        "no screenshot of {name}"
    );
    Measure {
        name: name.to_string(),
        width: field("width").parse().expect("width"),
        top: field("top").parse().expect("top"),
        widest: m.split("widest=").nth(1).unwrap_or_default().to_string(),
    }
}

fn screenshot_path(name: &str) -> PathBuf {
    if std::env::var_os("SHIPMOOR_UPDATE_SCREENSHOTS").is_some_and(|v| v == "1") {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs/screenshots")
            .join(format!("{name}.png"))
    } else {
        Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("render")
            .join(format!("{name}.png"))
    }
}

/// The run's job summary (what `shipmoor action report` writes to `GITHUB_STEP_SUMMARY`) and
/// its `verify.md`.
fn pages(r: &Repo, code: i32) -> (String, String) {
    let summary = r.tmp.path().join("step-summary.md");
    let run = r.shipmoor_env(
        &[
            "action",
            "report",
            "--result",
            ".shipmoor/claim-check.result.json",
            "--exit-code",
            &code.to_string(),
        ],
        &[
            ("GITHUB_STEP_SUMMARY", summary.to_str().expect("utf-8")),
            ("GITHUB_OUTPUT", "/dev/null"),
            ("GITHUB_JOB", "claim-check"),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    (
        std::fs::read_to_string(summary).expect("summary"),
        r.read(".shipmoor/verify.md"),
    )
}

/// Renders both pages of a run and fails, with every page's measurements, when one is too wide
/// or opens without its verdict.
fn check(run_name: &str, r: &Repo, code: i32, verdict: &str) {
    require("cmark-gfm", &["--version"], "cmark-gfm");
    require(chromium(), &["--version"], "chromium");
    let (summary, verify_md) = pages(r, code);
    let dir = tempfile::tempdir().expect("temp dir");
    let measures = [
        render(
            &format!("{run_name}-job-summary"),
            &summary,
            verdict,
            dir.path(),
        ),
        render(
            &format!("{run_name}-verify-md"),
            &verify_md,
            verdict,
            dir.path(),
        ),
    ];
    let report: Vec<String> = measures
        .iter()
        .map(|m| {
            format!(
                "{}: {} px wide (widest: {}), verdict at {} px",
                m.name, m.width, m.widest, m.top
            )
        })
        .collect();
    // Shown with `--no-capture`: the numbers a change to the pages moves.
    println!("{}", report.join("\n"));
    for m in &measures {
        assert!(
            m.width <= COLUMN,
            "{} is wider than GitHub's {COLUMN} px column:\n{}",
            m.name,
            report.join("\n")
        );
        assert!(
            (0..i64::from(SCREEN)).contains(&m.top),
            "{}: the verdict {verdict} is not on the first screen ({SCREEN} px):\n{}",
            m.name,
            report.join("\n")
        );
    }
}

/// The bundled example, as `examples/run.sh` sets it up: BLOCKED, one criterion met, one failing
/// at head, one required and one optional without a test.
#[test]
fn the_example_runs_pages_fit_githubs_column() {
    require_pytest();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/refund");
    let r = Repo::new();
    common::copy_dir(&example.join("base"), r.path());
    let base = r.commit("Refund service before the change");
    common::copy_dir(&example.join("head"), r.path());
    r.write(
        ".shipmoor/acceptance.yaml",
        &std::fs::read_to_string(example.join("acceptance.yaml")).expect("acceptance"),
    );
    r.commit("Add refunds");
    check_blocked_run("example", &r, &base);
}

/// Runs claim-check on `r` from `base` as GitHub Actions does, expects BLOCKED and checks its
/// pages as `name`.
fn check_blocked_run(name: &str, r: &Repo, base: &str) {
    // With CI set, pytest leaves its long lines whole, and the logs in the pages are as wide as
    // they get there.
    let run = r.shipmoor_env(
        &[
            "claim-check",
            "--base",
            base,
            "--result-out",
            ".shipmoor/claim-check.result.json",
        ],
        &[("CI", "true")],
    );
    assert_eq!(run.code, 1, "{run:?}");
    check(name, r, run.code, "BLOCKED");
}

/// What each of the 40 criteria gets: most are met, some fail at head, some have no test, some
/// are optional and fail (a gap, not a block), some are judgment criteria nobody judged.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Met,
    Fails,
    NoTest,
    OptionalFails,
    Judgment,
}

fn kind(i: usize) -> Kind {
    match i % 10 {
        0..=5 => Kind::Met,
        6 => Kind::Fails,
        7 => Kind::NoTest,
        8 => Kind::OptionalFails,
        _ => Kind::Judgment,
    }
}

/// A pytest repository whose change claims 40 criteria, ten tests to a file.
#[test]
fn a_forty_criterion_runs_pages_fit_githubs_column() {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    r.write("rollout/__init__.py", "");
    r.write("rollout/flags.py", "FLAGS = set()\n");
    let base = r.commit("base");
    let mut acceptance = String::from("version: 1\ncriteria:\n");
    let mut flags = Vec::new();
    let mut files = vec![String::from("from rollout.flags import FLAGS\n"); 4];
    for i in 0..40 {
        let id = format!("rollout-step-{i:02}");
        let k = kind(i);
        acceptance.push_str(&format!(
            "  - id: {id}\n    ac: Rollout step {i:02} enables its feature flag for the pilot cohort and records the change in the audit log.\n"
        ));
        match k {
            Kind::OptionalFails => acceptance.push_str("    required: false\n"),
            Kind::Judgment => acceptance.push_str("    lane: judge\n"),
            _ => {}
        }
        if k == Kind::Met {
            flags.push(format!("\"step-{i:02}\""));
        }
        if matches!(k, Kind::Met | Kind::Fails | Kind::OptionalFails) {
            files[i / 10].push_str(&format!(
                "\n\ndef test_flag_is_enabled_for_the_pilot_cohort_{}():\n    assert \"step-{i:02}\" in FLAGS, \"flag step-{i:02} is not enabled\"\n",
                ident(&id)
            ));
        }
    }
    r.write(
        "rollout/flags.py",
        &format!("FLAGS = {{{}}}\n", flags.join(", ")),
    );
    for (n, body) in files.iter().enumerate() {
        r.write(&format!("tests/test_rollout_group_{n}.py"), body);
    }
    r.write(".shipmoor/acceptance.yaml", &acceptance);
    r.commit("head");
    check_blocked_run("forty", &r, &base);
}
