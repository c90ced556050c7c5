//! What GitHub shows a person about a run: the pull request comment.
//!
//! In: a run's result document. Out: the comment's Markdown body (the Action's comment step adds
//! its hidden marker above it and posts it; see [`crate::action::comment`]).

use std::fmt::Write as _;

use crate::format::result::ResultDocument;

/// The pull request comment: the verdict as the headline, then a line per criterion.
pub fn pr_comment(doc: &ResultDocument<'_>) -> String {
    let r = &doc.result;
    let mut out = format!("## Claim Check: {}\n\n", r.verdict.as_str());
    for c in &r.criteria {
        let _ = writeln!(
            out,
            "- `{}` ({}): {} — {}",
            c.id,
            c.tag,
            c.disposition.as_str(),
            c.ac
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::result::tests::{criterion, run_result};
    use crate::format::Disposition;

    #[test]
    fn the_comment_names_the_verdict_and_every_criterion() {
        let result = run_result(vec![
            criterion(0, Disposition::Satisfied),
            criterion(1, Disposition::Unbound),
        ]);
        let packet = crate::report::fixes::packet(&result);
        let body = pr_comment(&ResultDocument::new(&result, &packet));
        assert!(body.contains(result.verdict.as_str()), "{body}");
        assert!(body.contains("`c0`") && body.contains("`c1`"), "{body}");
    }
}
