//! Deriving draft criteria from a change's own words (a pull request, an issue, a task file,
//! commit messages).
//!
//! In: named texts ([`Text`]). Out: the criteria found in them ([`Derived`]), each with a
//! stable id, whether it is required, how sure the derivation is (`confidence`, 0 to 1, with
//! its `reason`) and where it came from (`source`: which text, which line).
//!
//! This body reads the Markdown checklist items only (see
//! `derive_criteria` in `commands/acceptance.rs`); the prose extraction replaces it.

use serde::Serialize;

/// One text to derive from, with the name a source pointer shows ("pull request #12",
/// "issue #34", "--from task.md", "commit abc1234").
pub struct Text<'a> {
    pub name: &'a str,
    pub body: &'a str,
}

/// Where a derived criterion was read: the text's name and the 1-based line in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    pub text: String,
    pub line: usize,
}

/// A criterion derived from text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Derived {
    pub id: String,
    pub ac: String,
    pub required: bool,
    pub confidence: f64,
    pub reason: String,
    pub source: Source,
}

/// The criteria of every text, in order; ids unique across the texts.
pub fn derive(texts: &[Text<'_>]) -> Vec<Derived> {
    let mut out: Vec<Derived> = Vec::new();
    for text in texts {
        for (id, ac) in crate::commands::acceptance::derive_criteria(text.body) {
            let line = text
                .body
                .lines()
                .position(|l| l.contains(ac.as_str()))
                .map_or(1, |i| i + 1);
            let mut unique = id.clone();
            let mut n = 2;
            while out.iter().any(|d| d.id == unique) {
                unique = format!("{id}-{n}");
                n += 1;
            }
            out.push(Derived {
                id: unique,
                ac,
                required: true,
                confidence: 0.9,
                reason: "checklist item".to_string(),
                source: Source {
                    text: text.name.to_string(),
                    line,
                },
            });
        }
    }
    out
}
