//! The issues a pull request closes, for `acceptance derive --linked-issues`.
//!
//! In: the pull request's text, its repository, and the REST API ([`super::rest::Api`]).
//! Out: each issue the text closes with one of GitHub's closing keywords (`close`, `closes`,
//! `closed`, `fix`, `fixes`, `fixed`, `resolve`, `resolves`, `resolved`, any case, an optional
//! `:`), as `#N`, `owner/repo#N` or an issue's URL; then each one's title and body, read with
//! `GET /repos/{owner}/{repo}/issues/{n}`.

use std::sync::OnceLock;

use serde::Deserialize;

use super::rest::{Api, Failure};

/// An issue a pull request closes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct IssueRef {
    /// `owner/name`.
    pub repo: String,
    pub number: u64,
}

impl IssueRef {
    /// `issue #34` in the pull request's own repository, else `issue owner/name#34`.
    pub fn name(&self, home: &str) -> String {
        if self.repo.eq_ignore_ascii_case(home) {
            format!("issue #{}", self.number)
        } else {
            format!("issue {}#{}", self.repo, self.number)
        }
    }
}

fn pattern() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // The keyword as a word of its own, then the issue: `#N`, `owner/repo#N`, or its URL.
        regex::Regex::new(
            r"(?i)(?:^|[^\w])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+(?:#|([\w.-]+/[\w.-]+)#|https://github\.com/([\w.-]+/[\w.-]+)/issues/)(\d+)\b",
        )
        .expect("the closing-keyword pattern compiles")
    })
}

/// The issues `text` closes, in the order first named, each once; `#N` is in `home`.
pub fn closing_references(text: &str, home: &str) -> Vec<IssueRef> {
    let mut out: Vec<IssueRef> = Vec::new();
    for c in pattern().captures_iter(text) {
        let repo = c
            .get(1)
            .or_else(|| c.get(2))
            .map_or(home, |m| m.as_str())
            .to_string();
        let Some(number) = c.get(3).and_then(|m| m.as_str().parse::<u64>().ok()) else {
            continue;
        };
        let r = IssueRef { repo, number };
        if !out
            .iter()
            .any(|o| o.number == r.number && o.repo.eq_ignore_ascii_case(&r.repo))
        {
            out.push(r);
        }
    }
    out
}

/// An issue as the API answers (a `null` body reads as empty).
#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
}

/// Reads one issue.
pub fn fetch(api: &Api, r: &IssueRef) -> Result<Issue, Failure> {
    api.get("reading", &format!("/repos/{}/issues/{}", r.repo, r.number))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<String> {
        closing_references(text, "acme/app")
            .iter()
            .map(|r| format!("{}#{}", r.repo, r.number))
            .collect()
    }

    #[test]
    fn githubs_closing_keywords_in_any_case() {
        assert_eq!(
            refs("Fixes #1\ncloses #2, RESOLVED: #3\nfixed acme/lib#4 and Resolves https://github.com/o/r/issues/5\nclose #1"),
            ["acme/app#1", "acme/app#2", "acme/app#3", "acme/lib#4", "o/r#5"]
        );
    }

    #[test]
    fn a_mention_without_a_keyword_closes_nothing() {
        assert!(refs("See #12; related to #13; prefixes #14; the fix: see #15").is_empty());
        assert!(refs("unfixed #3, #4 closes").is_empty());
    }

    #[test]
    fn an_issue_of_another_repository_is_named_with_it() {
        let r = IssueRef {
            repo: "acme/lib".into(),
            number: 4,
        };
        assert_eq!(r.name("acme/app"), "issue acme/lib#4");
        assert_eq!(r.name("ACME/lib"), "issue #4");
    }
}
