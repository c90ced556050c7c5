//! The claim: what base..head adds or changes, the settings in force, and which file names are
//! acceptance files.

use super::{compare, is_acceptance_file, parse, Files, ParsedFile, CONFIG, LEGACY};
use crate::acceptance::AcceptanceState;

fn files(list: &[(&str, &str)]) -> Files {
    let mut out = Files::default();
    for (path, text) in list {
        let state = if path.ends_with(".draft") {
            AcceptanceState::Draft
        } else {
            AcceptanceState::Committed
        };
        let set = if *path == CONFIG {
            parse::parse_config(text, path).unwrap()
        } else {
            parse::parse(text, path, state, String::new()).unwrap()
        };
        let f = ParsedFile {
            path: path.to_string(),
            set,
            text: text.to_string(),
        };
        if *path == CONFIG {
            out.config = Some(f);
        } else {
            out.files.push(f);
        }
    }
    out
}

const A: &str = "version: 1\ncriteria:\n  - id: a\n    ac: A holds.\n  - id: b\n    ac: B holds.\n";

#[test]
fn only_added_or_changed_criteria_are_claimed() {
    let base = files(&[(LEGACY, A)]);
    let head = files(&[
            (LEGACY, "version: 1\ncriteria:\n  - id: a\n    ac: A holds.\n  - id: b\n    ac: B holds, now optional.\n"),
            (".shipmoor/changes/pr-2.yaml", "version: 1\ncriteria:\n  - id: c\n    ac: C.\n"),
        ]);
    let claim = compare(&head, Some(&base));
    let ids: Vec<&str> = claim.set.criteria.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["b", "c"]);
    assert_eq!(claim.set.inherited_criteria.len(), 1);
    assert_eq!(claim.set.inherited_criteria[0].id, "a");
    assert_eq!(claim.set.origin["c"], ".shipmoor/changes/pr-2.yaml");
    assert_eq!(claim.files[0].criteria[0].id, "a");
    assert!(!claim.files[0].criteria[0].claimed);
    assert!(claim.files[0].criteria[1].claimed);
    // Moving a criterion to another file unchanged keeps it inherited.
    let moved = files(&[(".shipmoor/changes/x.yaml", A)]);
    assert!(compare(&moved, Some(&base)).set.criteria.is_empty());
    // `required` and `check` count as changes too.
    for edit in [
        "    required: false\n",
        "    check:\n      test: t::x\n",
        "    lane: judge\n",
    ] {
        let h = files(&[(LEGACY, &format!("{A}{edit}"))]);
        let c = compare(&h, Some(&base));
        assert_eq!(c.set.criteria.len(), 1, "{edit}");
        assert_eq!(c.set.criteria[0].id, "b");
    }
}

#[test]
fn a_claimed_draft_criterion_makes_the_claim_a_draft() {
    let base = files(&[(LEGACY, A)]);
    let head = files(&[
        (LEGACY, A),
        (
            ".shipmoor/changes/pr-2.yaml.draft",
            "version: 1\ncriteria:\n  - id: c\n    ac: C.\n",
        ),
    ]);
    assert_eq!(
        compare(&head, Some(&base)).set.state,
        AcceptanceState::Draft
    );
    // An inherited draft does not gate a change that claims from a committed file.
    let base = files(&[(".shipmoor/changes/old.yaml.draft", A)]);
    let head = files(&[
        (".shipmoor/changes/old.yaml.draft", A),
        (
            ".shipmoor/changes/new.yaml",
            "version: 1\ncriteria:\n  - id: c\n    ac: C.\n",
        ),
    ]);
    assert_eq!(
        compare(&head, Some(&base)).set.state,
        AcceptanceState::Committed
    );
}

#[test]
fn settings_come_from_config_then_the_shared_file_then_the_changes_own() {
    let config = "version: 1\nrunners:\n  - kind: pytest\ninherited: guard\n";
    let old = "version: 1\ncriteria:\n  - id: a\n    ac: A.\nrunners:\n  - kind: go\n";
    let mine = "version: 1\ncriteria:\n  - id: c\n    ac: C.\nguard: [\"tests/**\"]\n";
    let base = files(&[(CONFIG, config), (".shipmoor/changes/old.yaml", old)]);
    let head = files(&[
        (CONFIG, config),
        (".shipmoor/changes/old.yaml", old),
        (".shipmoor/changes/mine.yaml", mine),
    ]);
    let claim = compare(&head, Some(&base));
    // The inherited file's runners are its own change's, not this one's.
    assert_eq!(
        claim.set.runners[0].kind,
        crate::acceptance::RunnerKind::Pytest
    );
    assert_eq!(claim.set.guard, ["tests/**"]);
    assert_eq!(
        claim.set.inherited,
        crate::acceptance::InheritedPolicy::Guard
    );
    assert!(claim.set.settings_edits.is_empty());
    assert_eq!(claim.set.guarded_criteria().len(), 1);
}

#[test]
fn editing_settings_base_had_is_the_changes_own_harness() {
    let config = "version: 1\nharness:\n  allow_changes: []\n";
    let base = files(&[(CONFIG, config), (LEGACY, A)]);
    let wider = "version: 1\nharness:\n  allow_changes: [\"**\"]\n";
    let head = files(&[(CONFIG, wider), (LEGACY, A)]);
    assert_eq!(compare(&head, Some(&base)).set.settings_edits, [CONFIG]);
    // The change's own file overriding a shared setting edits it too.
    let mine =
        "version: 1\ncriteria:\n  - id: c\n    ac: C.\nharness:\n  allow_changes: [\"**\"]\n";
    let head = files(&[
        (CONFIG, config),
        (LEGACY, A),
        (".shipmoor/changes/m.yaml", mine),
    ]);
    assert_eq!(
        compare(&head, Some(&base)).set.settings_edits,
        [".shipmoor/changes/m.yaml"]
    );
    // Settings new with this change are not an edit (as a first acceptance file is not).
    let head = files(&[
        (CONFIG, config),
        (LEGACY, A),
        (
            ".shipmoor/changes/m.yaml",
            "version: 1\ncriteria:\n  - id: c\n    ac: C.\nguard: [\"t*\"]\n",
        ),
    ]);
    assert!(compare(&head, Some(&base)).set.settings_edits.is_empty());
}

#[test]
fn the_digest_covers_the_claim_and_the_settings_only() {
    let base = files(&[(LEGACY, A)]);
    let head = files(&[
        (LEGACY, A),
        (
            ".shipmoor/changes/c.yaml",
            "version: 1\ncriteria:\n  - id: c\n    ac: C.\n",
        ),
    ]);
    let one = compare(&head, Some(&base)).set.sha256;
    // An inherited criterion's wording is not part of what decided this run.
    let base2 = files(&[(LEGACY, &A.replace("A holds", "A still holds"))]);
    let head2 = files(&[
        (LEGACY, &A.replace("A holds", "A still holds")),
        (
            ".shipmoor/changes/c.yaml",
            "version: 1\ncriteria:\n  - id: c\n    ac: C.\n",
        ),
    ]);
    assert_eq!(compare(&head2, Some(&base2)).set.sha256, one);
    let head3 = files(&[
        (LEGACY, A),
        (
            ".shipmoor/changes/c.yaml",
            "version: 1\ncriteria:\n  - id: c\n    ac: C.\nguard: [\"x\"]\n",
        ),
    ]);
    assert_ne!(compare(&head3, Some(&base)).set.sha256, one);
}

#[test]
fn acceptance_file_names() {
    for ok in [
        LEGACY,
        ".shipmoor/acceptance.yaml.draft",
        ".shipmoor/changes/pr-2.yaml",
        ".shipmoor/changes/x.yaml.draft",
    ] {
        assert!(is_acceptance_file(ok), "{ok}");
    }
    for no in [
        CONFIG,
        ".shipmoor/changes/.yaml",
        ".shipmoor/changes/a/b.yaml",
        ".shipmoor/changes/x.yml",
        "acceptance.yaml",
        ".shipmoor/claim-check.vsa.json",
    ] {
        assert!(!is_acceptance_file(no), "{no}");
    }
}

#[test]
fn the_judge_setting_in_the_digest() {
    let with = |judge: &str| {
        let head = files(&[(LEGACY, &format!("{A}{judge}"))]);
        compare(&head, None).set
    };
    // No judge reads as `null`, as it did before panels: the digest of such a set is unchanged.
    let none = with("");
    assert_eq!(
        super::document(&none)["settings"]["judge"],
        serde_json::Value::Null
    );
    let one = with("judge:\n  command: [python3, tools/judge.py]\n");
    assert_eq!(
        super::document(&one)["settings"]["judge"],
        serde_json::json!([{
            "name": "judge", "command": ["python3", "tools/judge.py"], "url": null,
            "model": null, "api_key_env": null, "timeout": 120, "concurrency": 4,
            "max_diff_bytes": 200000, "exclude": crate::judge::DEFAULT_EXCLUDE,
        }])
    );
    // Where the judge is written is not part of it; what it is, is.
    let moved = with("\njudge:\n  command: [python3, tools/judge.py]\n");
    assert_eq!(moved.sha256, one.sha256);
    let slower = with("judge:\n  command: [python3, tools/judge.py]\n  timeout: 300\n");
    assert_ne!(slower.sha256, one.sha256);
    assert_ne!(none.sha256, one.sha256);
}
