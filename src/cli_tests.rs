//! The help people read: a snapshot of `--help` for every command, nested ones included, found
//! by walking clap's command tree (a command added later gets its snapshot without a new test);
//! and every argument described.

use clap::{CommandFactory, Parser};

use super::Cli;

/// Every command's path below the binary, depth first: `[]`, `["claim-check"]`,
/// `["acceptance", "lint"]`, …; hidden commands too (they are still run by someone).
fn command_paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
    out.push(prefix.to_vec());
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let mut path = prefix.to_vec();
        path.push(sub.get_name().to_string());
        command_paths(sub, &path, out);
    }
}

fn all_paths() -> Vec<Vec<String>> {
    let mut out = Vec::new();
    command_paths(&Cli::command(), &[], &mut out);
    out
}

/// `shipmoor PATH… --help` exactly as the binary prints it, at a fixed width and without colour.
fn long_help(path: &[String]) -> String {
    let mut argv = vec!["shipmoor".to_string()];
    argv.extend(path.iter().cloned());
    argv.push("--help".to_string());
    let err = Cli::command()
        .term_width(100)
        .color(clap::ColorChoice::Never)
        .try_get_matches_from(argv)
        .expect_err("--help ends parsing");
    assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp, "{path:?}");
    err.render().to_string()
}

#[test]
fn every_command_has_a_help_snapshot() {
    let paths = all_paths();
    // The walk found the nested commands, not only the top level.
    assert!(
        paths.iter().any(|p| p == &["acceptance", "lint"]),
        "{paths:?}"
    );
    assert!(paths.iter().any(|p| p == &["action", "gate"]), "{paths:?}");
    for path in paths {
        let name = if path.is_empty() {
            "shipmoor".to_string()
        } else {
            format!("shipmoor-{}", path.join("-"))
        };
        insta::assert_snapshot!(name, long_help(&path));
    }
}

#[test]
fn every_command_has_examples_and_exit_codes() {
    for path in all_paths() {
        let help = long_help(&path);
        assert!(
            help.contains("\nExit codes"),
            "{path:?} names no exit codes"
        );
        if !path.is_empty() {
            assert!(help.contains("\nExamples:\n"), "{path:?} has no examples");
            // Each example is a real invocation of this very command.
            let invocation = format!("shipmoor {}", path.join(" "));
            assert!(
                help.contains(&invocation),
                "{path:?}: no example runs `{invocation}`"
            );
        }
    }
}

#[test]
fn every_argument_of_every_command_is_described() {
    let mut root = Cli::command();
    root.build();
    let mut undescribed = Vec::new();
    fn walk(cmd: &clap::Command, path: &str, undescribed: &mut Vec<String>) {
        if cmd
            .get_about()
            .is_none_or(|a| a.to_string().trim().is_empty())
        {
            undescribed.push(format!("{path} (the command itself)"));
        }
        for arg in cmd.get_arguments() {
            let help = arg
                .get_long_help()
                .or_else(|| arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            if help.trim().is_empty() {
                let flag = arg
                    .get_long()
                    .map(|l| format!("--{l}"))
                    .unwrap_or_else(|| arg.get_id().to_string());
                undescribed.push(format!("{path} {flag}"));
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), undescribed);
        }
    }
    walk(&root, "shipmoor", &mut undescribed);
    assert!(
        undescribed.is_empty(),
        "arguments without help: {undescribed:?}"
    );
}

#[test]
fn options_of_the_main_commands_sit_under_headings() {
    let root = Cli::command();
    let headings = |name: &str| -> Vec<(String, Option<String>)> {
        let cmd = root.find_subcommand(name).expect("command");
        cmd.get_arguments()
            .filter(|a| !a.is_positional() && !a.is_hide_set())
            .map(|a| {
                (
                    a.get_id().to_string(),
                    a.get_help_heading().map(str::to_string),
                )
            })
            .collect()
    };
    for name in ["claim-check", "replay", "admit", "verify-bundle", "attach"] {
        for (id, heading) in headings(name) {
            assert!(heading.is_some(), "{name} --{id} has no heading");
        }
    }
    let heading_of = |name: &str, id: &str| {
        headings(name)
            .into_iter()
            .find(|(a, _)| a == id)
            .and_then(|(_, h)| h)
    };
    assert_eq!(
        heading_of("claim-check", "allow_http_registry").as_deref(),
        Some("Signing")
    );
    assert_eq!(heading_of("replay", "key").as_deref(), Some("Signature"));
    assert_eq!(heading_of("admit", "key").as_deref(), Some("Signature"));
}

#[test]
fn replay_takes_evidence_dir_and_still_evidence() {
    for flag in ["--evidence-dir", "--evidence"] {
        let cli = Cli::try_parse_from(["shipmoor", "replay", "a.json", flag, "ev"])
            .unwrap_or_else(|e| panic!("{flag}: {e}"));
        match cli.command {
            super::Commands::Replay(args) => {
                assert_eq!(
                    args.evidence,
                    Some(std::path::PathBuf::from("ev")),
                    "{flag}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn the_action_plumbing_is_runnable_but_not_listed() {
    let top = long_help(&[]);
    assert!(!top.contains("\n  action "), "{top}");
    assert!(Cli::try_parse_from([
        "shipmoor",
        "action",
        "gate",
        "--verdict",
        "READY",
        "--exit-code",
        "0"
    ])
    .is_ok());
}

#[test]
fn color_is_a_global_flag() {
    for argv in [
        &["shipmoor", "--color", "never", "acceptance", "lint"][..],
        &["shipmoor", "acceptance", "lint", "--color=always"][..],
    ] {
        assert!(Cli::try_parse_from(argv).is_ok(), "{argv:?}");
    }
    assert!(Cli::try_parse_from(["shipmoor", "--color", "purple", "acceptance", "lint"]).is_err());
}

/// The hook and the MCP server name only flags they have: every flag in their help, in the
/// hook's own messages and among the flags each passes on or stands an argument for is one of
/// that command's (`--help` aside, which clap adds to each).
#[test]
fn every_flag_the_hook_and_the_server_name_is_theirs() {
    use super::own_flags;
    use crate::agent::{hook, mcp};
    let flag = regex::Regex::new(r"--[a-z][a-z0-9-]*").unwrap();
    let check = |path: &[&str], text: &str| {
        let flags = own_flags(path);
        assert!(!flags.is_empty(), "{path:?} is a command");
        for m in flag.find_iter(text) {
            assert!(
                m.as_str() == "--help" || flags.iter().any(|f| f == m.as_str()),
                "{path:?} has no {}, which it names: {text}",
                m.as_str()
            );
        }
    };
    for agent in ["claude-code", "codex"] {
        let path = ["hook", agent];
        check(&path, &long_help(&path.map(String::from)));
        for payload in [&b""[..], br#"{"hook_event_name":"PreToolUse"}"#] {
            check(
                &path,
                &hook::parse_payload(payload).unwrap_err().to_string(),
            );
        }
        for passed in hook::PASSED_ON {
            assert!(own_flags(&path).iter().any(|f| f == passed), "{passed}");
            assert!(
                own_flags(&["claim-check"]).iter().any(|f| f == passed),
                "{passed}"
            );
        }
    }
    check(&["mcp"], &long_help(&["mcp".to_string()]));
    let tools = mcp::tool_words(own_flags);
    assert_eq!(tools.len(), 6);
    for (tool, words) in tools {
        for (shared, _) in &words.shared {
            assert!(words.own.iter().any(|f| f == shared), "{tool}: {shared}");
        }
    }
}
