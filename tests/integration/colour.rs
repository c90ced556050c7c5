//! `--color` through the binary: the claim-check report is coloured when asked even when piped,
//! never under `NO_COLOR` unless `--color always` says so, and reads the same either way; clap's
//! own help follows the same choice.

use crate::common;

use common::Repo;

/// A change whose one criterion a `check.command` decides: READY in about a second, no runner.
fn ready_change() -> (Repo, String) {
    let r = Repo::new();
    r.write("README", "base\n");
    let base = r.commit("base");
    r.write("marker", "");
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: marker-exists\n    ac: The marker file exists.\n    check:\n      command: \"test -f marker\"\n",
    );
    r.commit("head");
    (r, base)
}

const ESC: char = '\u{1b}';

/// The text without ANSI SGR sequences (`ESC [ … m`), the only escapes the report writes.
fn strip_sgr(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == ESC {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn color_always_colours_the_piped_report_over_no_color_and_the_text_is_the_same() {
    let (r, base) = ready_change();
    // The helper sets NO_COLOR=1 and stdout is a pipe: auto means no colour.
    let plain = r.shipmoor(&["claim-check", "--base", &base, "--quiet"]);
    assert_eq!(plain.code, 0, "{plain:?}");
    assert!(plain.stdout.contains("READY"), "{plain:?}");
    assert!(!plain.stdout.contains(ESC), "{plain:?}");

    let coloured = r.shipmoor(&[
        "--color",
        "always",
        "claim-check",
        "--base",
        &base,
        "--quiet",
    ]);
    assert_eq!(coloured.code, 0, "{coloured:?}");
    assert!(
        coloured.stdout.contains("\u{1b}[1;32mREADY\u{1b}[0m"),
        "{coloured:?}"
    );
    assert_eq!(strip_sgr(&coloured.stdout), plain.stdout);
}

#[test]
fn clicolor_force_colours_a_pipe_and_color_never_beats_it() {
    let (r, base) = ready_change();
    let forced = r.shipmoor_env(
        &["claim-check", "--base", &base, "--quiet"],
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")],
    );
    assert_eq!(forced.code, 0, "{forced:?}");
    assert!(forced.stdout.contains(ESC), "{forced:?}");

    let never = r.shipmoor_env(
        &["claim-check", "--base", &base, "--quiet", "--color=never"],
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")],
    );
    assert_eq!(never.code, 0, "{never:?}");
    assert!(!never.stdout.contains(ESC), "{never:?}");
}

#[test]
fn the_help_follows_the_same_choice() {
    let r = Repo::new();
    let plain = r.shipmoor(&["claim-check", "--help"]);
    assert_eq!(plain.code, 0, "{plain:?}");
    assert!(!plain.stdout.contains(ESC), "{plain:?}");
    assert!(plain.stdout.contains("\nExamples:\n"), "{plain:?}");

    let coloured = r.shipmoor(&["--color", "always", "claim-check", "--help"]);
    assert_eq!(coloured.code, 0, "{coloured:?}");
    assert!(coloured.stdout.contains(ESC), "{coloured:?}");

    let forced = r.shipmoor_env(
        &["claim-check", "--help"],
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")],
    );
    assert!(forced.stdout.contains(ESC), "{forced:?}");
    let never = r.shipmoor_env(
        &["--color=never", "claim-check", "--help"],
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")],
    );
    assert!(!never.stdout.contains(ESC), "{never:?}");
}

#[test]
fn a_color_that_is_no_choice_is_a_usage_error() {
    let r = Repo::new();
    let run = r.shipmoor(&["--color", "purple", "claim-check"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("auto, always, never"), "{run:?}");
}
