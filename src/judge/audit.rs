//! The citation audit (DESIGN 6), pure: a citation resolves when its path is a file at head
//! inside the repository and its quote, whitespace normalised, occurs within 3 lines of the
//! cited line. The head tree is read through a function, so the same audit runs over a
//! worktree, over `git show`, and in `replay` over a repository at hand.

use super::CitationCheck;
use crate::format::judge::Citation;

/// How far from the cited line the quote may be.
pub const LINE_SLACK: u64 = 3;

/// Checks one citation. `read` gives a file's text at head by its repository-relative path,
/// or `None` when there is no such file.
pub fn check_citation(c: &Citation, read: &dyn Fn(&str) -> Option<String>) -> CitationCheck {
    let Some(path) = inside_repository(&c.path) else {
        return CitationCheck::NoSuchFile;
    };
    let Some(text) = read(&path) else {
        return CitationCheck::NoSuchFile;
    };
    let quote = normalise(&c.quote);
    if quote.is_empty() || c.line == 0 {
        return CitationCheck::QuoteNotFound;
    }
    let lines: Vec<&str> = text.lines().collect();
    let first = c.line.saturating_sub(LINE_SLACK).max(1);
    let last = c.line.saturating_add(LINE_SLACK);
    // The quote may span lines: search the window's lines joined, each normalised.
    let window: Vec<String> = (first..=last)
        .filter_map(|n| lines.get((n - 1) as usize))
        .map(|l| normalise(l))
        .collect();
    if window.join(" ").contains(&quote) {
        CitationCheck::Resolved
    } else {
        CitationCheck::QuoteNotFound
    }
}

/// The path as a clean repository-relative path, or `None` when it is absolute or climbs out.
pub fn inside_repository(path: &str) -> Option<String> {
    let p = path.trim().trim_start_matches("./");
    if p.is_empty() || p.starts_with('/') || p.contains('\\') || p.contains('\0') {
        return None;
    }
    let mut parts = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            _ => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Runs of whitespace become one space; leading and trailing whitespace goes.
pub fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str) -> Option<String> {
        (path == "src/refund.py").then(|| {
            "def refund(order):\n    if order.paid:\n        return   order\n    audit.write(order)\n"
                .to_string()
        })
    }

    fn cite(path: &str, line: u64, quote: &str) -> Citation {
        Citation {
            path: path.into(),
            line,
            quote: quote.into(),
        }
    }

    #[test]
    fn a_quote_near_its_line_resolves_with_whitespace_normalised() {
        assert_eq!(
            check_citation(&cite("src/refund.py", 3, "return order"), &read),
            CitationCheck::Resolved
        );
        // Within three lines either way.
        assert_eq!(
            check_citation(&cite("./src/refund.py", 6, "return order"), &read),
            CitationCheck::Resolved
        );
        assert_eq!(
            check_citation(&cite("src/refund.py", 7, "return order"), &read),
            CitationCheck::QuoteNotFound
        );
        assert_eq!(
            check_citation(
                &cite("src/refund.py", 2, "if order.paid: return order"),
                &read
            ),
            CitationCheck::Resolved
        );
    }

    #[test]
    fn paths_outside_the_repository_or_missing_never_resolve() {
        for p in [
            "/etc/passwd",
            "../src/refund.py",
            "src/../../x",
            "src/nope.py",
            "",
        ] {
            assert_eq!(
                check_citation(&cite(p, 1, "def refund"), &read),
                CitationCheck::NoSuchFile,
                "{p}"
            );
        }
        assert_eq!(
            check_citation(&cite("src/refund.py", 1, "   "), &read),
            CitationCheck::QuoteNotFound
        );
        assert_eq!(
            check_citation(&cite("src/refund.py", 0, "def refund"), &read),
            CitationCheck::QuoteNotFound
        );
    }
}
