//! The colour rules over every combination of choice, terminal and variables.

use std::ffi::OsString;

use super::{choice_from_args, clap_choice, colour, ColourEnv};
use crate::colour::ColorChoice;

fn env(no_color: Option<&str>, clicolor_force: Option<&str>, term: Option<&str>) -> ColourEnv {
    ColourEnv {
        no_color: no_color.map(OsString::from),
        clicolor_force: clicolor_force.map(OsString::from),
        term: term.map(OsString::from),
    }
}

#[test]
fn an_explicit_choice_beats_every_variable_and_the_terminal() {
    let all_on = env(None, Some("1"), Some("xterm"));
    let all_off = env(Some("1"), None, Some("dumb"));
    for e in [&all_on, &all_off, &ColourEnv::default()] {
        for tty in [true, false] {
            assert!(colour(ColorChoice::Always, tty, e), "{e:?} tty={tty}");
            assert!(!colour(ColorChoice::Never, tty, e), "{e:?} tty={tty}");
        }
    }
}

#[test]
fn auto_follows_the_terminal_when_no_variable_says_otherwise() {
    assert!(colour(ColorChoice::Auto, true, &ColourEnv::default()));
    assert!(!colour(ColorChoice::Auto, false, &ColourEnv::default()));
    assert!(colour(
        ColorChoice::Auto,
        true,
        &env(None, None, Some("xterm-256color"))
    ));
}

#[test]
fn no_color_non_empty_turns_colour_off_even_when_forced() {
    assert!(!colour(
        ColorChoice::Auto,
        true,
        &env(Some("1"), None, None)
    ));
    assert!(!colour(
        ColorChoice::Auto,
        true,
        &env(Some("1"), Some("1"), None)
    ));
    // Empty is unset, as no-color.org says.
    assert!(colour(ColorChoice::Auto, true, &env(Some(""), None, None)));
    assert!(colour(
        ColorChoice::Auto,
        false,
        &env(Some(""), Some("1"), None)
    ));
}

#[test]
fn clicolor_force_turns_colour_on_off_a_terminal_unless_empty_or_zero() {
    assert!(colour(
        ColorChoice::Auto,
        false,
        &env(None, Some("1"), None)
    ));
    assert!(colour(
        ColorChoice::Auto,
        false,
        &env(None, Some("yes"), Some("dumb"))
    ));
    assert!(!colour(
        ColorChoice::Auto,
        false,
        &env(None, Some("0"), None)
    ));
    assert!(!colour(
        ColorChoice::Auto,
        false,
        &env(None, Some(""), None)
    ));
    assert!(colour(ColorChoice::Auto, true, &env(None, Some("0"), None)));
}

#[test]
fn term_dumb_turns_colour_off_on_a_terminal() {
    assert!(!colour(
        ColorChoice::Auto,
        true,
        &env(None, None, Some("dumb"))
    ));
    assert!(!colour(
        ColorChoice::Auto,
        true,
        &env(None, Some("0"), Some("dumb"))
    ));
}

#[test]
fn clap_gets_the_same_decision() {
    let cases = [
        (
            ColorChoice::Always,
            ColourEnv::default(),
            clap::ColorChoice::Always,
        ),
        (
            ColorChoice::Never,
            ColourEnv::default(),
            clap::ColorChoice::Never,
        ),
        (
            ColorChoice::Auto,
            ColourEnv::default(),
            clap::ColorChoice::Auto,
        ),
        (
            ColorChoice::Auto,
            env(Some("1"), None, None),
            clap::ColorChoice::Never,
        ),
        (
            ColorChoice::Auto,
            env(None, Some("1"), None),
            clap::ColorChoice::Always,
        ),
        (
            ColorChoice::Auto,
            env(None, None, Some("dumb")),
            clap::ColorChoice::Never,
        ),
        (
            ColorChoice::Always,
            env(Some("1"), None, None),
            clap::ColorChoice::Always,
        ),
    ];
    for (choice, e, want) in cases {
        assert_eq!(clap_choice(choice, &e), want, "{choice:?} {e:?}");
    }
}

#[test]
fn the_choice_is_read_from_the_command_line_before_clap() {
    let read = |args: &[&str]| choice_from_args(args.iter().copied());
    assert_eq!(read(&["shipmoor", "claim-check"]), ColorChoice::Auto);
    assert_eq!(
        read(&["shipmoor", "--color", "always", "replay"]),
        ColorChoice::Always
    );
    assert_eq!(
        read(&["shipmoor", "claim-check", "--color=never"]),
        ColorChoice::Never
    );
    assert_eq!(
        read(&[
            "shipmoor",
            "--color=never",
            "claim-check",
            "--color",
            "always"
        ]),
        ColorChoice::Always
    );
    assert_eq!(read(&["shipmoor", "--color", "purple"]), ColorChoice::Auto);
    assert_eq!(
        read(&["shipmoor", "--", "--color=always"]),
        ColorChoice::Auto
    );
}

#[test]
fn every_combination_follows_the_rules() {
    let choices = [ColorChoice::Auto, ColorChoice::Always, ColorChoice::Never];
    let no_colors = [None, Some(""), Some("1")];
    let forces = [None, Some(""), Some("0"), Some("1"), Some("true")];
    let terms = [None, Some("dumb"), Some("xterm-256color")];
    let mut seen = 0;
    for choice in choices {
        for tty in [false, true] {
            for no_color in no_colors {
                for force in forces {
                    for term in terms {
                        let e = env(no_color, force, term);
                        let got = colour(choice, tty, &e);
                        let case = format!("{choice:?} tty={tty} {e:?}");
                        let no_color_set = no_color.is_some_and(|v| !v.is_empty());
                        let forced = force.is_some_and(|v| !v.is_empty() && v != "0");
                        let dumb = term == Some("dumb");
                        match choice {
                            ColorChoice::Always => assert!(got, "{case}"),
                            ColorChoice::Never => assert!(!got, "{case}"),
                            ColorChoice::Auto if no_color_set => assert!(!got, "{case}"),
                            ColorChoice::Auto if forced => assert!(got, "{case}"),
                            ColorChoice::Auto if dumb => assert!(!got, "{case}"),
                            ColorChoice::Auto => assert_eq!(got, tty, "{case}"),
                        }
                        // clap decides per stream: whatever it is told, it agrees on both.
                        let clap_colours = |is_tty: bool| match clap_choice(choice, &e) {
                            clap::ColorChoice::Always => true,
                            clap::ColorChoice::Never => false,
                            clap::ColorChoice::Auto => is_tty,
                        };
                        assert_eq!(clap_colours(tty), got, "clap: {case}");
                        seen += 1;
                    }
                }
            }
        }
    }
    assert_eq!(seen, 3 * 2 * 3 * 5 * 3);
}
