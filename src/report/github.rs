//! The GitHub pages of a run: the job summary the Action writes to `GITHUB_STEP_SUMMARY`, and
//! the part of it a pull request comment shows ([`pr_comment`]).
//!
//! In: the result document the Action reads back (`--result-out`). Out: GitHub-flavoured
//! Markdown that reads at a glance in GitHub's content column (about 1,012 px): the verdict as
//! the first line, one narrow row per criterion, the tags still to write, then the signing state
//! with its fix, then the details (the deciding rule, each open criterion's reason, command logs
//! folded under the tests they ran). The whole `verify.md` stays in the artifact; this page
//! points there rather than repeating it.

use std::fmt::Write as _;

use super::{criteria_count, CriterionResult, Disposition, ResultDocument, RunResult};
use crate::format::SigningState;
use crate::verdict::{JudgeResult, Verdict};

/// A test id in a table cell, in characters: about 270 px of GitHub's code font, so that the
/// status, criterion, tag and test columns fit the content column together.
const TEST_CELL_CHARS: usize = 34;
/// Lines of a failing command's output shown in its fold (the runner's tail, where the
/// assertion is).
const LOG_LINES: usize = 20;
/// Command logs folded into the summary; the rest are in `verify.md` and the evidence.
const MAX_LOGS: usize = 10;

/// The verdict's icon: the same one wherever a verdict is shown.
/// GitHub's limit for one step's summary.
pub const SUMMARY_LIMIT: usize = 1024 * 1024;
/// A job summary cut at a line boundary to fit GitHub's limit.
pub fn summary(markdown: &str) -> String {
    if markdown.len() <= SUMMARY_LIMIT {
        return markdown.to_string();
    }
    let note = "\n\n_The report was cut to fit GitHub's 1 MiB job summary; the whole `verify.md` is in the uploaded artifact._\n";
    let mut cut = SUMMARY_LIMIT - note.len();
    while !markdown.is_char_boundary(cut) {
        cut -= 1;
    }
    let end = markdown[..cut].rfind('\n').unwrap_or(cut);
    format!("{}{note}", &markdown[..end])
}

pub fn verdict_icon(v: Verdict) -> &'static str {
    match v {
        Verdict::Ready => "✅",
        Verdict::ReadyWithGaps => "⚠️",
        Verdict::Inconclusive => "❓",
        Verdict::Blocked => "❌",
    }
}

/// A criterion's status icon: met, failed (by the floor or a judge's block), left open for a
/// person (undecided, abstained, not judged), or bound to no test yet.
pub fn disposition_icon(d: Disposition) -> &'static str {
    match d {
        Disposition::Satisfied => "✅",
        Disposition::Unsatisfied | Disposition::Blocked => "❌",
        Disposition::Undecided | Disposition::Abstained | Disposition::NotJudged => "❓",
        Disposition::Unbound => "∅",
    }
}

/// The disposition in a person's words, for the status column.
fn disposition_words(d: Disposition) -> &'static str {
    match d {
        Disposition::NotJudged => "not judged",
        other => other.as_str(),
    }
}

/// `## ❌ BLOCKED — 1 of 3 required criteria met`, with the optional criteria when there are any.
pub fn headline(r: &RunResult) -> String {
    let met = |required: bool| {
        let of: Vec<&CriterionResult> = r
            .criteria
            .iter()
            .filter(|c| c.required == required)
            .collect();
        let n = of
            .iter()
            .filter(|c| c.disposition == Disposition::Satisfied)
            .count();
        (n, of.len())
    };
    let (rn, rt) = met(true);
    let (on, ot) = met(false);
    let mut h = format!("## {} {} — ", verdict_icon(r.verdict), r.verdict.as_str());
    if rt == 0 {
        h.push_str("no required criteria");
    } else {
        let _ = write!(
            h,
            "{rn} of {rt} required {} met",
            if rt == 1 { "criterion" } else { "criteria" }
        );
    }
    if ot > 0 {
        let _ = write!(h, ", {on} of {ot} optional");
    }
    h
}

/// The line under the headline: what was compared, and what the claim inherits.
fn context_line(r: &RunResult) -> String {
    let mut s = format!(
        "{} from `{}` · base `{}` · head `{}` · {} mode",
        criteria_count(r.criteria.len()),
        r.acceptance.path,
        r.base.short(),
        r.head.short(),
        r.mode
    );
    if let Some(line) = r.acceptance.inherited_line() {
        let _ = write!(s, " · {line}");
    }
    s
}

/// Table cells: no pipes or newlines.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A code span's text: a backtick would end it early.
fn code(s: &str) -> String {
    format!("`{}`", s.replace('`', "'"))
}

/// A test id short enough for its column: the test's own name (after the last `::`, which the
/// file usually repeats), cut in the middle when it is still long, since both ends tell tests
/// apart (a descriptive start, a tag's hash at the end).
pub fn short_test(id: &str) -> String {
    let name = id.rsplit("::").next().unwrap_or(id);
    let name = if name.is_empty() { id } else { name };
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= TEST_CELL_CHARS {
        return name.to_string();
    }
    let keep = TEST_CELL_CHARS - 1;
    let head = keep / 2 + keep % 2;
    let tail = keep / 2;
    let mut s: String = chars[..head].iter().collect();
    // A word joiner after the ellipsis: a browser may break a line after `…`, and half a name
    // on each line reads as two tests.
    s.push_str("…\u{2060}");
    s.extend(&chars[chars.len() - tail..]);
    s
}

/// What decided a criterion, for its row: the judge whose block stands, else the bound test
/// (the one that failed, when one did), the command or the pattern; `—` when nothing is bound.
fn deciding(r: &RunResult, c: &CriterionResult) -> String {
    if c.judge.result == JudgeResult::Block {
        return match r
            .findings_for(&c.id)
            .find(|f| f.result == JudgeResult::Block)
        {
            Some(f) => format!("judge {}", code(&f.judge)),
            None => "a judge".to_string(),
        };
    }
    let f = &c.floor;
    match f.binding.as_str() {
        "judge_lane" => return "a person, or the judge".to_string(),
        "check.command" => {
            return match f.reproduce.as_deref() {
                Some(cmd) if cmd.chars().count() <= TEST_CELL_CHARS => code(cmd),
                _ => "its command".to_string(),
            }
        }
        "check.pattern" => return "its pattern".to_string(),
        _ => {}
    }
    let failed = f.tests.iter().find(|t| {
        c.disposition != Disposition::Satisfied && t.head != crate::format::SideOutcome::Pass
    });
    match failed.or(f.tests.first()) {
        None => "—".to_string(),
        Some(t) => {
            let more = f.tests.len() - 1;
            let mut s = code(&short_test(&t.id));
            if more > 0 {
                let _ = write!(s, " +{more}");
            }
            s
        }
    }
}

/// One row per criterion: status, the criterion's text with its tag under it, and what decided
/// it. Three columns, so that none is squeezed below its words in GitHub's column: a tag in a
/// column of its own wraps at its hyphens once the criterion's text takes the room.
fn table(r: &RunResult) -> String {
    let mut s = String::from("| status | criterion | deciding test |\n|---|---|---|\n");
    for c in &r.criteria {
        let optional = if c.required { "" } else { " _(optional)_" };
        // A no-break space holds the icon to its word: the status column stays one line.
        let _ = writeln!(
            s,
            "| {}\u{a0}{} | {}{optional}<br>{} | {} |",
            disposition_icon(c.disposition),
            disposition_words(c.disposition).replace(' ', "\u{a0}"),
            cell(&c.ac),
            code(&c.tag),
            deciding(r, c)
        );
    }
    s
}

/// The tags still to write, each with its criterion: what the author does next.
fn author_checks(doc: &ResultDocument<'_>) -> String {
    let checks = &doc.fixes.author_checks;
    if checks.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "**Author checks — {} to write.** Give a test the tag in its id or file name; it must fail at the base commit and pass at the head commit.\n\n",
        if checks.len() == 1 {
            "1 tag".to_string()
        } else {
            format!("{} tags", checks.len())
        }
    );
    for a in checks {
        let _ = writeln!(s, "- {} — {}", code(&a.tag), a.ac.replace('\n', " "));
    }
    s
}

/// A draft claim's criteria, each with how sure its derivation was and its tag, and the one
/// line that commits the draft: nobody has agreed to it yet, so the verdict waits for a person.
fn draft(r: &RunResult) -> String {
    let Some(d) = &r.acceptance.draft else {
        return String::new();
    };
    let mut s = format!(
        "**Draft criteria — {}, agreed to by nobody yet.** Until the draft is committed the verdict is INCONCLUSIVE at best.\n\n",
        criteria_count(d.criteria.len())
    );
    for c in &d.criteria {
        let confidence = c
            .confidence
            .map(|k| format!("{k:.2}"))
            .unwrap_or_else(|| "—".to_string());
        let _ = write!(
            s,
            "- {confidence} {} — {}{}",
            code(&c.tag),
            c.ac.replace('\n', " "),
            if c.required { "" } else { " _(optional)_" }
        );
        if let Some(source) = &c.source {
            let _ = write!(s, " _({})_", source.replace('\n', " "));
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "\n**Commit this draft:** {} on the branch, then commit the file it writes with the change.",
        code(&d.commit)
    );
    s
}

/// The signing state after the verdict, with the one line that fixes an unsigned run.
fn signing(r: &RunResult) -> String {
    match r.signing.state {
        SigningState::Unsigned => format!(
            "🔓 **Unsigned:** {}. To sign keyless, add `permissions: id-token: write` to the job.",
            r.signing.note.trim_end_matches('.')
        ),
        SigningState::Key => format!(
            "🔏 **Signed with a key:** {}.",
            r.signing.note.trim_end_matches('.')
        ),
        SigningState::Keyless => format!(
            "🔏 **Signed keyless:** {}.",
            r.signing.note.trim_end_matches('.')
        ),
    }
}

/// When the floor's commands ran without the kernel sandbox: the line that says so, with its
/// fix (a sandboxed run, the Action's default, says nothing here: `verify.md` records it).
fn unsandboxed(r: &RunResult) -> Option<String> {
    let sandbox = r.sandbox.as_ref().filter(|s| !s.enforced)?;
    Some(format!(
        "⚠️ **Not sandboxed:** {}. Run with `sandbox: require` on a Linux runner (see the security page).",
        sandbox.line()
    ))
}

/// The tests a command ran, as its fold names them: the bound tests whose file it names.
fn tests_of_command<'a>(r: &'a RunResult, command: &str) -> Vec<&'a str> {
    let mut ids: Vec<&str> = Vec::new();
    for t in r.criteria.iter().flat_map(|c| &c.floor.tests) {
        let named = t
            .file
            .as_deref()
            .map(|f| command.contains(f))
            .unwrap_or(false)
            || command.contains(t.id.as_str());
        if named && !ids.contains(&t.id.as_str()) {
            ids.push(&t.id);
        }
    }
    ids
}

/// The details under the page's first screen: the rule, why each criterion that is not met is
/// not, and each failing command's log folded under the tests it ran.
fn details(r: &RunResult) -> String {
    let mut s = String::from("### Details\n\n");
    let _ = writeln!(s, "**Rule {}:** {}.\n", r.rule, r.rule_reason);
    let open: Vec<&CriterionResult> = r
        .criteria
        .iter()
        .filter(|c| c.disposition != Disposition::Satisfied)
        .collect();
    for c in &open {
        let _ = writeln!(
            s,
            "- {} **{}** — {}",
            disposition_icon(c.disposition),
            c.ac.replace('\n', " "),
            c.reason().replace('\n', " ")
        );
    }
    if !open.is_empty() {
        s.push('\n');
    }
    for note in &r.judge_notes {
        let _ = writeln!(s, "Note: {}\n", note.replace('\n', " "));
    }
    let logs: Vec<_> = r
        .runtime
        .iter()
        .filter_map(|row| row.excerpt.as_ref().map(|ex| (row, ex)))
        .collect();
    for (row, excerpt) in logs.iter().take(MAX_LOGS) {
        let tests = tests_of_command(r, &row.command);
        let named = match tests.as_slice() {
            [] => row.command.chars().take(80).collect::<String>(),
            [one] => (*one).to_string(),
            [first, rest @ ..] => format!("{first} and {} more", rest.len()),
        };
        let _ = writeln!(s, "<details>");
        let _ = writeln!(
            s,
            "<summary>{}: {} ({})</summary>\n",
            html(&row.side),
            html(&named),
            html(&row.result)
        );
        let lines: Vec<&str> = excerpt.lines().collect();
        let start = lines.len().saturating_sub(LOG_LINES);
        s.push_str("```\n");
        for l in &lines[start..] {
            let _ = writeln!(s, "{}", l.replace("```", "'''"));
        }
        s.push_str("```\n</details>\n\n");
    }
    if logs.len() > MAX_LOGS {
        let _ = writeln!(
            s,
            "{} more command logs are in `verify.md` and the evidence.\n",
            logs.len() - MAX_LOGS
        );
    }
    s
}

/// Text inside an HTML element (`<summary>`): Markdown does not escape it there.
fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The headline, then (in the job summary) `context`, then the author checks and the table.
fn top(doc: &ResultDocument, context: Option<String>) -> String {
    let r = &doc.result;
    let mut s = headline(r);
    s.push_str("\n\n");
    if let Some(line) = context {
        let _ = writeln!(s, "{line}\n");
    }
    let checks = author_checks(doc);
    if !checks.is_empty() {
        s.push_str(&checks);
        s.push('\n');
    }
    s.push_str(&table(r));
    s
}

/// The headline, the author checks and the per-criterion table, nothing else: what a pull
/// request comment shows (the sticky comment is built around exactly this).
pub fn pr_comment(doc: &ResultDocument) -> String {
    crate::text::visible(&top(doc, None))
}

/// The job summary: the headline with what was compared under it, the author checks and the
/// table, then the signing state with its fix, the details, and where the full `verify.md` is
/// (`artifact`, the uploaded artifact's name). Cut to GitHub's 1 MiB by
/// [`summary`].
pub fn job_summary(doc: &ResultDocument, artifact: &str) -> String {
    let r = &doc.result;
    let mut s = top(doc, Some(context_line(r)));
    s.push('\n');
    let draft = draft(r);
    if !draft.is_empty() {
        let _ = writeln!(s, "{draft}");
    }
    let _ = writeln!(s, "{}\n", signing(r));
    if let Some(line) = unsandboxed(r) {
        let _ = writeln!(s, "{line}\n");
    }
    s.push_str(&details(r));
    let _ = writeln!(
        s,
        "The full report, a claim record per criterion, is `{}` in the artifact `{artifact}`.",
        r.outputs.report
    );
    summary(&crate::text::visible(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_disposition() -> RunResult {
        crate::format::result::tests::every_disposition()
    }

    #[test]
    fn every_disposition_has_its_icon() {
        let icons: Vec<&str> = Disposition::ALL
            .iter()
            .map(|d| disposition_icon(*d))
            .collect();
        assert_eq!(icons, ["✅", "❌", "∅", "❓", "❌", "❓", "❓"]);
        let verdicts = [
            Verdict::Ready,
            Verdict::ReadyWithGaps,
            Verdict::Inconclusive,
            Verdict::Blocked,
        ];
        let icons: Vec<&str> = verdicts.iter().map(|v| verdict_icon(*v)).collect();
        assert_eq!(icons, ["✅", "⚠️", "❓", "❌"]);
    }

    #[test]
    fn a_draft_lists_its_criteria_with_their_confidence_and_how_to_commit_it() {
        let mut r = every_disposition();
        let doc_of = |r: &RunResult| {
            let fixes = crate::report::fixes::packet(r);
            job_summary(&ResultDocument::new(r, &fixes), "claim-check")
        };
        assert!(!doc_of(&r).contains("Draft criteria"));
        r.acceptance.draft = Some(crate::report::DraftInfo {
            commit: "shipmoor acceptance derive --from task.md && shipmoor acceptance commit"
                .into(),
            criteria: vec![
                crate::report::DraftCriterion {
                    id: "limit".into(),
                    tag: "AC-LIMIT-1234".into(),
                    ac: "The limit is ten.".into(),
                    required: true,
                    confidence: Some(0.9),
                    source: Some("pull request #2, line 3".into()),
                },
                crate::report::DraftCriterion {
                    id: "hand".into(),
                    tag: "AC-HAND-5678".into(),
                    ac: "Written by hand.".into(),
                    required: false,
                    confidence: None,
                    source: None,
                },
            ],
        });
        let s = doc_of(&r);
        assert!(
            s.contains("**Draft criteria — 2 criteria, agreed to by nobody yet.**"),
            "{s}"
        );
        assert!(
            s.contains("- 0.90 `AC-LIMIT-1234` — The limit is ten. _(pull request #2, line 3)_\n- — `AC-HAND-5678` — Written by hand. _(optional)_\n"),
            "{s}"
        );
        assert!(s.contains("**Commit this draft:** `shipmoor acceptance derive --from task.md && shipmoor acceptance commit` on the branch"), "{s}");
        // Before the signing state, after the table.
        let (at, table, sign) = (
            s.find("Draft criteria").unwrap(),
            s.find("| status |").unwrap(),
            s.find("Unsigned").unwrap(),
        );
        assert!(table < at && at < sign, "{s}");
        // The pull request comment stays the headline, the author checks and the table.
        let fixes = crate::report::fixes::packet(&r);
        assert!(!pr_comment(&ResultDocument::new(&r, &fixes)).contains("Draft criteria"));
    }

    #[test]
    fn the_headline_counts_required_and_optional_criteria() {
        let mut r = every_disposition();
        assert_eq!(headline(&r), "## ❌ BLOCKED — 1 of 7 required criteria met");
        r.criteria[1].required = false;
        r.criteria[2].required = false;
        assert_eq!(
            headline(&r),
            "## ❌ BLOCKED — 1 of 5 required criteria met, 0 of 2 optional"
        );
        r.criteria.truncate(1);
        r.verdict = Verdict::Ready;
        assert_eq!(headline(&r), "## ✅ READY — 1 of 1 required criterion met");
        r.criteria[0].required = false;
        assert_eq!(
            headline(&r),
            "## ✅ READY — no required criteria, 1 of 1 optional"
        );
    }

    #[test]
    fn long_test_ids_are_cut_to_their_column() {
        assert_eq!(
            short_test("tests/test_refund.py::test_marks_refunded"),
            "test_marks_refunded"
        );
        let long =
            "tests/test_stripe_void.py::test_void_called_ac_refund_voids_payment_intent_737b";
        let s = short_test(long);
        assert_eq!(s.chars().count(), TEST_CELL_CHARS + 1, "{s}");
        assert!(s.contains("…\u{2060}"), "{s}");
        assert!(
            s.starts_with("test_void_called_") && s.ends_with("intent_737b"),
            "{s}"
        );
        assert!(s.contains('…'), "{s}");
        assert_eq!(short_test("plain_name"), "plain_name");
        assert_eq!(short_test("a.py::"), "a.py::");
    }

    #[test]
    fn the_comment_is_headline_author_checks_and_table() {
        let r = every_disposition();
        let packet = crate::report::fixes::packet(&r);
        let doc = ResultDocument::new(&r, &packet);
        let c = pr_comment(&doc);
        insta::assert_snapshot!("pr_comment_every_disposition", c);
        assert!(c.starts_with("## ❌ BLOCKED"), "{c}");
        let checks = c.find("**Author checks — 1 tag to write.**").unwrap();
        let table = c.find("| status | criterion | deciding test |").unwrap();
        assert!(checks < table, "{c}");
        assert!(c.contains("- `AC-C2-0000` — Criterion 2 holds."), "{c}");
        assert!(
            !c.contains("Unsigned"),
            "the comment leaves signing to the summary: {c}"
        );
        assert!(!c.contains("<details>"), "{c}");
    }

    #[test]
    fn the_summary_signs_after_the_verdict_and_folds_logs_under_their_tests() {
        let mut r = every_disposition();
        r.runtime[0].command = "python3 -m pytest -q tests/test_c1.py".into();
        r.runtime[0].excerpt = Some("E   assert 1 == 2\n1 failed".into());
        let packet = crate::report::fixes::packet(&r);
        let doc = ResultDocument::new(&r, &packet);
        let s = job_summary(&doc, "claim-check-1-abc");
        insta::assert_snapshot!("job_summary_every_disposition", s);
        let headline = s.find("## ❌ BLOCKED").unwrap();
        let unsigned = s.find("🔓 **Unsigned:**").unwrap();
        assert_eq!(headline, 0);
        assert!(unsigned > s.find("| status | criterion |").unwrap(), "{s}");
        assert!(
            s.contains("add `permissions: id-token: write` to the job"),
            "{s}"
        );
        assert!(
            s.contains("<summary>head: tests/test_c1.py::test_c1 (1 failed)</summary>"),
            "{s}"
        );
        assert!(s.contains("**Rule 1:** a required criterion fails"), "{s}");
        assert!(s.contains("in the artifact `claim-check-1-abc`"), "{s}");
        // The comment is the summary's top without the line of what was compared.
        let comment = pr_comment(&doc);
        assert!(!comment.contains("7 criteria from"), "{comment}");
        assert!(s.starts_with("## ❌ BLOCKED — 1 of 7 required criteria met\n\n7 criteria from `.shipmoor/acceptance.yaml`"), "{s}");
        assert!(s.contains(comment.split_once("\n\n").unwrap().1), "{s}");
    }

    #[test]
    fn a_judge_block_names_its_judge_and_signed_runs_say_how() {
        let mut r = every_disposition();
        r.findings.push(crate::judge::Finding {
            criterion: "c4".into(),
            judge: "security".into(),
            identity: crate::judge::Identity::Chat {
                url: "http://127.0.0.1:1/v1/chat/completions".into(),
                model: "m".into(),
            },
            result: JudgeResult::Block,
            rationale: "the judge blocks c4".into(),
            pointer: None,
            citations: vec![],
            downgraded: None,
            request_evidence: format!("sha256:{}", "a".repeat(64)),
            response_evidence: None,
            usage: None,
        });
        r.signing.state = SigningState::Keyless;
        r.signing.note = "signed keyless by https://github.com/o/r".into();
        let packet = crate::report::fixes::packet(&r);
        let s = job_summary(&ResultDocument::new(&r, &packet), "a");
        assert!(s.contains("<br>`AC-C4-0000` | judge `security` |"), "{s}");
        assert!(
            s.contains("🔏 **Signed keyless:** signed keyless by https://github.com/o/r."),
            "{s}"
        );
        assert!(!s.contains("id-token"), "{s}");
    }

    #[test]
    fn an_unsandboxed_run_says_so_with_its_fix_and_a_sandboxed_one_says_nothing() {
        let mut r = every_disposition();
        r.sandbox = Some(crate::format::sandbox::SandboxRecord::example());
        let packet = crate::report::fixes::packet(&r);
        let s = job_summary(&ResultDocument::new(&r, &packet), "a");
        assert!(!s.contains("sandbox"), "{s}");
        r.sandbox = Some(crate::format::sandbox::SandboxRecord::of(
            &crate::sandbox::Sandbox::off(),
        ));
        let s = job_summary(&ResultDocument::new(&r, &packet), "a");
        assert!(
            s.contains("⚠️ **Not sandboxed:** sandbox off: nothing enforced, so the change's code ran with all the reach of this run's user (everything: --sandbox off). Run with"),
            "{s}"
        );
        assert!(s.contains("`sandbox: require`"), "{s}");
    }

    #[test]
    fn a_huge_summary_is_cut_to_one_mebibyte() {
        let mut r = every_disposition();
        r.criteria[1].ac = "x ".repeat(600_000);
        let packet = crate::report::fixes::packet(&r);
        let s = job_summary(&ResultDocument::new(&r, &packet), "a");
        assert!(s.len() <= SUMMARY_LIMIT);
        assert!(s.starts_with("## ❌ BLOCKED"));
        assert!(s.contains("was cut"), "{}", &s[s.len() - 200..]);
    }
}
