//! A draft acceptance set from derived criteria ([`super::derive`]): the ids settled, the
//! criteria as claim-check reads them, and the `.draft` file's text.
//!
//! In: the derived criteria, the criteria of the draft already there (whose ids a criterion with
//! the same text keeps, so its tag stays), and the ids other acceptance files hold. Out: the
//! criteria with their final ids; [`criteria`] for a claim read from text; [`yaml`] for the file
//! `acceptance derive` writes.
//!
//! `claim-check` (a draft claim derived from a pull request) and `acceptance derive` (the same
//! text, written as a file) settle ids the same way, so the tags the job summary prints are the
//! tags of the file the author then commits.

use std::collections::{BTreeMap, BTreeSet};

use super::derive::Derived;
use super::{tag_for, Confidence, Criterion, Lane};

/// The text of a criterion as compared between drafts: its words, spaced once.
fn words(ac: &str) -> String {
    ac.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Settles the ids of `derived`: a criterion whose text `previous` (the existing draft) has
/// keeps that id; any other id that `taken` (other files' ids) holds gets `-draft`; then each id
/// is made unique with `-2`, `-3`, ….
pub fn settle_ids(derived: &mut [Derived], previous: &[Criterion], taken: &BTreeSet<String>) {
    let mut before: BTreeMap<String, &str> = BTreeMap::new();
    for c in previous {
        before.entry(words(&c.ac)).or_insert(c.id.as_str());
    }
    let mut used: BTreeSet<String> = taken.clone();
    let mut kept = vec![false; derived.len()];
    for (i, d) in derived.iter_mut().enumerate() {
        if let Some(id) = before.get(&words(&d.ac)) {
            if !used.contains(*id) {
                d.id = (*id).to_string();
                used.insert(d.id.clone());
                kept[i] = true;
            }
        }
    }
    for (i, d) in derived.iter_mut().enumerate() {
        if kept[i] {
            continue;
        }
        let base = if taken.contains(&d.id) {
            format!("{}-draft", d.id)
        } else {
            d.id.clone()
        };
        let mut unique = base.clone();
        let mut n = 2;
        while used.contains(&unique) {
            unique = format!("{base}-{n}");
            n += 1;
        }
        used.insert(unique.clone());
        d.id = unique;
    }
}

/// `pull request #12, line 7`: where a criterion was read, as drafts and reports write it.
pub fn source_pointer(d: &Derived) -> String {
    format!("{}, line {}", d.source.text, d.source.line)
}

/// The criteria of a draft claim, as claim-check checks them.
pub fn criteria(derived: &[Derived]) -> Vec<Criterion> {
    derived
        .iter()
        .map(|d| Criterion {
            tag: tag_for(&d.id),
            id: d.id.clone(),
            ac: d.ac.clone(),
            required: d.required,
            lane: Lane::Floor,
            check: None,
            line: 0,
            confidence: Confidence::new(d.confidence.clamp(0.0, 1.0)),
            source: Some(source_pointer(d)),
        })
        .collect()
}

/// The draft file `acceptance derive` writes at `rel`: each criterion with `required`, its
/// `confidence` (the reason beside it, as a comment) and its `source`.
pub fn yaml(derived: &[Derived], rel: &str) -> Result<String, serde_json::Error> {
    let mut yaml = format!(
        "# Drafted by `shipmoor acceptance derive`: nobody has agreed to it yet.\n\
         # Review it, then `shipmoor acceptance commit` makes it {}.\n\
         version: 1\ncriteria:\n",
        rel.trim_end_matches(".draft")
    );
    for d in derived {
        // JSON strings are YAML double-quoted scalars: any text, quoted safely.
        let ac = serde_json::to_string(&d.ac)?;
        let source = serde_json::to_string(&source_pointer(d))?;
        let reason = d.reason.replace(['\n', '\r'], " ");
        yaml.push_str(&format!(
            "  - id: {}\n    ac: {ac}\n    required: {}\n    confidence: {:.2}  # {reason}\n    source: {source}\n",
            d.id,
            d.required,
            d.confidence.clamp(0.0, 1.0),
        ));
    }
    Ok(yaml)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::derive::Origin;

    fn derived(id: &str, ac: &str) -> Derived {
        Derived {
            id: id.into(),
            ac: ac.into(),
            required: true,
            confidence: 0.9,
            reason: "checklist item".into(),
            source: Origin {
                text: "pull request #2".into(),
                line: 3,
            },
        }
    }

    fn previous(id: &str, ac: &str) -> Criterion {
        criteria(&[derived(id, ac)]).remove(0)
    }

    #[test]
    fn a_criterion_whose_text_is_unchanged_keeps_its_id() {
        let mut d = vec![
            derived("the-limit-is-ten", "The limit is ten."),
            derived("the-limit-is-eleven", "The limit is  eleven."),
        ];
        let before = [
            previous("limit-ten", "The limit is ten."),
            previous("eleven", "The limit is eleven."),
        ];
        settle_ids(&mut d, &before, &BTreeSet::new());
        assert_eq!(d[0].id, "limit-ten");
        assert_eq!(d[1].id, "eleven", "spacing is no change of text");
    }

    #[test]
    fn ids_other_files_hold_are_not_taken() {
        let mut d = vec![
            derived("limit", "A."),
            derived("limit-draft", "B."),
            derived("other", "C."),
        ];
        let taken: BTreeSet<String> = ["limit".to_string()].into();
        // A kept id that another criterion now holds is not kept twice.
        let before = [previous("other", "A.")];
        settle_ids(&mut d, &before, &taken);
        let ids: Vec<&str> = d.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["other", "limit-draft", "other-2"]);
    }

    #[test]
    fn the_draft_file_validates_and_says_where_each_criterion_came_from() {
        let mut d = derived("quote", "Say \"hi\": twice\nplease");
        d.required = false;
        d.confidence = 0.555;
        let text = yaml(&[d], ".shipmoor/changes/x.yaml.draft").unwrap();
        assert!(
            text.contains("    required: false\n    confidence: 0.56  # checklist item\n    source: \"pull request #2, line 3\"\n"),
            "{text}"
        );
        let set = crate::acceptance::parse::parse(
            &text,
            "x.yaml.draft",
            crate::acceptance::AcceptanceState::Draft,
            String::new(),
        )
        .unwrap();
        let c = &set.criteria[0];
        assert_eq!(c.ac, "Say \"hi\": twice\nplease");
        assert!(!c.required);
        assert_eq!(c.confidence.map(|c| c.value()), Some(0.56));
        assert_eq!(c.source.as_deref(), Some("pull request #2, line 3"));
    }
}
