//! Whether output is coloured: one decision, for the terminal report and for clap's own help
//! and errors.
//!
//! An explicit `--color always|never` wins over the environment. With `--color auto` (the
//! default), in this order: a non-empty `NO_COLOR` turns colour off (<https://no-color.org>); a
//! non-empty `CLICOLOR_FORCE` other than `0` turns it on; `TERM=dumb` turns it off; otherwise
//! colour follows whether the stream is a terminal. This is the order clap's `anstream` applies,
//! so the help and the report never disagree.

use std::ffi::OsString;

/// When output is coloured (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour a terminal, as NO_COLOR, CLICOLOR_FORCE and TERM say
    Auto,
    /// Always colour, even when piped
    Always,
    /// Never colour
    Never,
}

/// The environment variables the decision reads, captured once so [`colour`] stays pure.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColourEnv {
    pub no_color: Option<OsString>,
    pub clicolor_force: Option<OsString>,
    pub term: Option<OsString>,
}

impl ColourEnv {
    pub fn from_process() -> ColourEnv {
        ColourEnv {
            no_color: std::env::var_os("NO_COLOR"),
            clicolor_force: std::env::var_os("CLICOLOR_FORCE"),
            term: std::env::var_os("TERM"),
        }
    }
}

/// Whether to colour a stream, given the `--color` choice and whether the stream is a terminal.
pub fn colour(choice: ColorChoice, is_tty: bool, env: &ColourEnv) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if env.no_color.as_ref().is_some_and(|v| !v.is_empty()) {
                false
            } else if env
                .clicolor_force
                .as_ref()
                .is_some_and(|v| !v.is_empty() && v != "0")
            {
                true
            } else if env.term.as_ref().is_some_and(|v| v == "dumb") {
                false
            } else {
                is_tty
            }
        }
    }
}

/// The same decision for clap, which checks each stream (help on stdout, errors on stderr)
/// itself: forced on or off when the rules settle it whatever the stream, else clap's `Auto`,
/// which then only asks whether the stream is a terminal.
pub fn clap_choice(choice: ColorChoice, env: &ColourEnv) -> clap::ColorChoice {
    match (colour(choice, false, env), colour(choice, true, env)) {
        (true, _) => clap::ColorChoice::Always,
        (false, false) => clap::ColorChoice::Never,
        (false, true) => clap::ColorChoice::Auto,
    }
}

/// The `--color` choice as written on the command line, read before clap parses it so that
/// clap's own help and errors follow it too; the last occurrence wins, as clap's does. A value
/// that is not a choice is left for clap to reject.
pub fn choice_from_args<I, S>(args: I) -> ColorChoice
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let mut choice = ColorChoice::Auto;
    let mut args = args.into_iter().map(Into::into);
    while let Some(arg) = args.next() {
        let value = if arg == "--" {
            break;
        } else if arg == "--color" {
            args.next()
        } else {
            arg.to_str()
                .and_then(|a| a.strip_prefix("--color="))
                .map(OsString::from)
        };
        if let Some(parsed) = value
            .as_ref()
            .and_then(|v| v.to_str())
            .and_then(|v| <ColorChoice as clap::ValueEnum>::from_str(v, false).ok())
        {
            choice = parsed;
        }
    }
    choice
}

#[cfg(test)]
mod tests;
