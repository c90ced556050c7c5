use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};

use super::yaml::{self, Item, Node};
use super::*;
use crate::admit::policy::{self, Policy};

const IDENTITY: &str = "https://github.com/acme/shop/.github/workflows/ci.yml@refs/heads/main";
const ISSUER: &str = "https://token.actions.githubusercontent.com";

fn policy(text: &str) -> Policy {
    policy::parse(
        text,
        "admission/policy.yaml",
        Path::new("."),
        "00".repeat(32),
    )
    .map_err(|e| format!("{e:?}"))
    .unwrap()
}

fn identity_policy(rules: &str) -> Policy {
    policy(&format!(
        "version: 1\nrepositories: [\"git+https://github.com/acme/*\"]\nsigners:\n  - identity: \"{IDENTITY}\"\n    issuer: \"{ISSUER}\"\n{rules}"
    ))
}

fn export_for(p: &Policy, engine: Engine) -> Result<Export, InputError> {
    export(&Request {
        policy: p,
        engine,
        images: &["registry.example.com/acme/*".to_string()],
        cli_signer: None,
        trusted_root: None,
    })
}

// ---- the YAML writer

fn to_json(node: &Node) -> Value {
    match node {
        Node::Str(s) => Value::from(s.as_str()),
        Node::Bool(b) => Value::from(*b),
        Node::Int(n) => Value::from(*n),
        Node::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
        Node::Map(items) => Value::Object(
            items
                .iter()
                .filter_map(|i| match i {
                    Item::Entry(k, v) => Some((k.clone(), to_json(v))),
                    Item::Comment(_) => None,
                })
                .collect(),
        ),
    }
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        // Words YAML could take for something else, and indicators.
        prop::sample::select(vec![
            "yes", "No", "on", "off", "null", "~", "true", "1", "0x1f", "1e3", "-", "- a", "a: b",
            "a #b", "#", "&a", "*a", "!t", "|", ">", "%", "@", "`", "'", "\"", "{}", "[]", "",
            " lead", "trail ", "\tx", "ü ✓",
        ])
        .prop_map(String::from),
        "[ -~\t\n]{0,24}",
        // Multi-line text as the exports hold: Rego, PEM, CEL.
        prop::collection::vec("[ -~\t]{0,12}", 1..5).prop_map(|l| l.join("\n")),
        prop::collection::vec("[ -~\t]{0,12}", 1..5).prop_map(|l| l.join("\n") + "\n"),
        prop::collection::vec("[ -~\t]{0,12}", 1..4).prop_map(|l| l.join("\n") + "\n\n"),
    ]
}

fn tree() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        text().prop_map(Node::Str),
        any::<bool>().prop_map(Node::Bool),
        any::<u32>().prop_map(|n| Node::Int(u64::from(n))),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Node::Seq),
            prop::collection::vec(("[a-zA-Z_ :#-]{1,8}", inner, any::<bool>()), 0..5).prop_map(
                |entries| {
                    let mut seen = std::collections::BTreeSet::new();
                    let mut items = Vec::new();
                    for (k, v, commented) in entries {
                        if seen.insert(k.clone()) {
                            if commented {
                                items.push(Item::Comment(format!("about {k}")));
                            }
                            items.push(Item::Entry(k, v));
                        }
                    }
                    Node::Map(items)
                }
            ),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever the tree, libyaml's reader reads the written YAML back as the same tree.
    #[test]
    fn the_yaml_reads_back_as_the_tree_it_was_written_from(
        root in tree(),
        header in prop::collection::vec("[ -~]{0,20}", 0..3),
    ) {
        let doc = yaml::document(&header, &root);
        let back: Value = yaml_serde::from_str(&doc)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{doc}")))?;
        prop_assert_eq!(back, to_json(&root), "{}", doc);
    }

    /// A repository glob's regular expression matches exactly what `shipmoor admit`'s glob
    /// matches, over `resourceUri`-like text.
    #[test]
    fn a_repository_glob_and_its_regular_expression_match_alike(
        glob in "[ab/@.+*?|()$-]{0,8}",
        uri in "[ab/@.+|()$-]{0,10}",
    ) {
        if let Some(regex) = glob_regex(&glob) {
            let re = regex::Regex::new(&format!("^(?:{regex})$")).unwrap();
            prop_assert_eq!(
                re.is_match(&uri),
                crate::admit::glob_matches(&glob, &uri),
                "glob {:?} regex {:?}", glob, regex
            );
        }
    }

    /// The commit suffix removed as `shipmoor admit` removes it.
    #[test]
    fn the_commit_suffix_is_removed_as_admission_removes_it(uri in "[ab/@:.]{0,12}") {
        let re = regex::Regex::new(COMMIT_SUFFIX).unwrap();
        prop_assert_eq!(
            re.replace(&uri, "").to_string(),
            crate::admit::resource_repository(&uri).to_string()
        );
    }
}

#[test]
fn a_literal_block_keeps_its_lines_and_its_last_line_breaks() {
    let root = yaml::map([
        ("rego", yaml::s("package sigstore\n\nimport rego.v1\n")),
        ("pem", yaml::s("  indented first\nsecond")),
        ("kept", yaml::s("a\n\n")),
    ]);
    let doc = yaml::document(&[], &root);
    assert_eq!(
        doc,
        "rego: |\n  package sigstore\n\n  import rego.v1\npem: |2-\n    indented first\n  second\nkept: |+\n  a\n\n"
    );
}

// ---- the globs and names

#[test]
fn a_glob_without_an_exact_regular_expression_is_none() {
    for glob in ["a/**", "a[bc]", "a{b,c}", "a\\*", "^a"] {
        assert_eq!(glob_regex(glob), None, "{glob}");
    }
    assert_eq!(
        glob_regex("git+https://github.com/acme/*").as_deref(),
        Some("git[+]https://github[.]com/acme/.*")
    );
}

#[test]
fn the_policy_controller_reads_a_run_of_stars_as_any_characters() {
    assert_eq!(
        pc_glob("registry.example.com/acme/*"),
        "registry.example.com/acme/**"
    );
    assert_eq!(pc_glob("r.io/**/app:*"), "r.io/**/app:**");
    assert_eq!(pc_glob("r.io/app@sha256:1"), "r.io/app@sha256:1");
}

#[test]
fn an_image_glob_is_refused_with_the_characters_that_are_read_alike() {
    let p = identity_policy("");
    for (images, says) in [
        (vec![], "needs the images"),
        (vec!["*".to_string()], "names no registry"),
        (vec!["r.io/app?".to_string()], "holds `?`"),
        (vec!["r.io/{a,b}".to_string()], "holds `{`"),
    ] {
        let err = export(&Request {
            policy: &p,
            engine: Engine::Kyverno,
            images: &images,
            cli_signer: None,
            trusted_root: None,
        })
        .unwrap_err();
        assert!(err.message.contains(says), "{images:?}: {err:?}");
        assert!(err.help.is_some(), "{err:?}");
    }
}

#[test]
fn the_policy_is_named_after_its_file() {
    assert_eq!(
        policy_name("admission/policy.yaml"),
        "shipmoor-admit-policy"
    );
    assert_eq!(
        policy_name("x/Prod_Images.v2.yml"),
        "shipmoor-admit-prod-images-v2"
    );
    assert_eq!(go_duration(604_800), "168h");
    assert_eq!(go_duration(90), "90s");
    assert_eq!(go_duration(300), "5m");
}

// ---- what the export leaves to `shipmoor admit`

#[test]
fn every_gap_names_a_check_and_the_document_and_the_list_agree() {
    let p = policy(&format!(
        "version: 1\nmin_policy_version: v3\nrepositories: [\"git+https://x/**\"]\nsigners:\n  - identity: \"{IDENTITY}\"\n    issuer: \"{ISSUER}\"\n"
    ));
    for engine in [
        Engine::Kyverno,
        Engine::KyvernoIvp,
        Engine::PolicyController,
    ] {
        let out = export_for(&p, engine).unwrap();
        let checks: Vec<&str> = out.gaps.iter().map(|g| g.check).collect();
        assert_eq!(
            checks,
            [
                "statement",
                "resource_uri",
                "verified_levels",
                "fusion",
                "policy_version"
            ],
            "{engine:?}"
        );
        for g in &out.gaps {
            assert!(crate::admit::CHECKS.contains(&g.check));
            let first_words: String = g.why.split(' ').take(4).collect::<Vec<_>>().join(" ");
            assert!(
                out.document
                    .contains(&format!("# - {}: {first_words}", g.check)),
                "{engine:?}: {}\n{}",
                g.check,
                out.document
            );
        }
        // Without an exact expression the engine's policy has no repository rule at all.
        let body: String = out
            .document
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect();
        assert!(!body.contains("resourceUri"), "{}", out.document);
    }
}

#[test]
fn the_image_validating_policy_leaves_a_key_signer_out_and_refuses_only_keys() {
    let dir = tempfile::tempdir().unwrap();
    let key = crate::attest::keys::generate_p256(None).unwrap().1;
    std::fs::write(dir.path().join("k.pub"), key.verifying_key().to_pem()).unwrap();
    let with_both = format!(
        "version: 1\nrepositories: [\"*\"]\nsigners:\n  - key: k.pub\n  - identity: \"{IDENTITY}\"\n    issuer: \"{ISSUER}\"\n"
    );
    let p = policy::parse(&with_both, "p.yaml", dir.path(), String::new()).unwrap();
    let out = export_for(&p, Engine::KyvernoIvp).unwrap();
    assert_eq!(out.gaps[0].check, "signature");
    assert!(
        out.gaps[0].why.contains("`k.pub` is left out"),
        "{:?}",
        out.gaps
    );
    assert!(
        !out.document.contains("BEGIN PUBLIC KEY"),
        "{}",
        out.document
    );
    // The ClusterPolicy keeps the key, without a transparency-log lookup.
    let cpol = export_for(&p, Engine::Kyverno).unwrap().document;
    assert!(
        cpol.contains("BEGIN PUBLIC KEY") && cpol.contains("ignoreTlog: true"),
        "{cpol}"
    );

    let keys_only = "version: 1\nrepositories: [\"*\"]\nsigners:\n  - key: k.pub\n";
    let p = policy::parse(keys_only, "p.yaml", dir.path(), String::new()).unwrap();
    let err = export_for(&p, Engine::KyvernoIvp).unwrap_err();
    assert!(err.message.contains("kyverno/kyverno#17109"), "{err:?}");
    assert_eq!(err.file.as_deref(), Some("p.yaml"));
}

#[test]
fn kyverno_refuses_signers_trusted_for_different_verifier_ids() {
    let p = policy(&format!(
        "version: 1\nrepositories: [\"*\"]\nsigners:\n  - identity: a\n    issuer: \"{ISSUER}\"\n    verifier_ids: [x]\n  - identity: b\n    issuer: \"{ISSUER}\"\n"
    ));
    for engine in [Engine::Kyverno, Engine::KyvernoIvp] {
        let err = export_for(&p, engine).unwrap_err();
        assert!(err.message.contains("different `verifier_ids`"), "{err:?}");
    }
    // The policy-controller gives each signer an authority with its own Rego.
    let doc = export_for(&p, Engine::PolicyController).unwrap().document;
    assert!(doc.contains(r#"trusted_verifier_ids := ["x"]"#), "{doc}");
    assert!(
        doc.contains(r#"trusted_verifier_ids := ["https://github.com/shipmoor/claim-check"]"#),
        "{doc}"
    );
}

// ---- the policy-controller's Rego over statements with fields missing or wrong

fn rego_reasons(rego: &str, statement: &Value) -> (bool, Vec<String>) {
    let mut engine = regorus::Engine::new();
    // As cosign compiles it: Rego v0 (with `import rego.v1`), builtin errors not strict.
    engine.set_rego_v0(true);
    engine.set_strict_builtin_errors(false);
    engine
        .add_policy("sigstore.rego".to_string(), rego.to_string())
        .unwrap();
    engine.set_input(regorus::Value::from_json_str(&statement.to_string()).unwrap());
    let result = engine
        .eval_rule("data.sigstore.isCompliant".to_string())
        .unwrap();
    let set: Value = serde_json::from_str(&result.to_json_str().unwrap()).unwrap();
    let one = &set.as_array().unwrap()[0];
    let error = one["error"].as_str().unwrap();
    (
        one["result"] == true,
        error
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
    )
}

fn rules_of(p: &Policy) -> Rules {
    Rules {
        name: "t".into(),
        images: vec!["r.io/*".into()],
        signers: Vec::new(),
        repositories: p.repositories.clone(),
        repository_regex: repository_regex(&p.repositories).0,
        allowed_verdicts: p.allowed_verdicts.iter().map(|v| v.as_str()).collect(),
        floor_required: p.floor_required.clone(),
        require_sandbox: p.require_sandbox,
        require_isolated_signer: p.require_isolated_signer,
        max_age_seconds: p.max_age_seconds,
    }
}

fn good_statement() -> Value {
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    json!({
        "_type": "https://in-toto.io/Statement/v1",
        "predicateType": "https://slsa.dev/verification_summary/v1",
        "predicate": {
            "verifier": {"id": "https://github.com/shipmoor/claim-check"},
            "timeVerified": now,
            "resourceUri": "git+https://github.com/acme/shop@0123abc",
            "verificationResult": "PASSED",
            "https://shipmoor.dev/claim-check/v1": {
                "verdict": "READY",
                "dispositions": [{"id": "c1", "disposition": "satisfied", "floor": {"result": "satisfied"}}],
                "sandbox": {"enforced": true},
                "observation": {"isolated": true}
            }
        }
    })
}

#[test]
fn the_rego_admits_a_good_statement_and_denies_each_missing_or_wrong_field() {
    let p = identity_policy(
        "floor_required: [c1]\nrequire_sandbox: true\nrequire_isolated_signer: true\nmax_age: 1h\n",
    );
    let rules = rules_of(&p);
    let rego = policy_controller::rego(&rules, &p.verifier_ids);
    assert_eq!(rego_reasons(&rego, &good_statement()), (true, vec![]));
    let ext = "/predicate/https:~1~1shipmoor.dev~1claim-check~1v1";
    let cases: [(&str, Value, &str); 10] = [
        ("/predicate/verifier", json!({}), "verifier: `verifier.id` is null and not"),
        ("/predicate/resourceUri", json!("git+https://github.com/evil/x@1"), "resource_uri: git+https://github.com/evil/x@1: the repository is not one the policy admits (git+https://github.com/acme/*)"),
        ("/predicate/verificationResult", json!("FAILED"), "verification_result: verificationResult is FAILED, not PASSED"),
        (ext, json!({}), "verdict: the verdict is null; the policy admits READY, READY WITH GAPS"),
        (&format!("{ext}/dispositions/0/floor"), json!({}), "floor_required: `c1` is satisfied (floor: null), not satisfied by the floor"),
        (&format!("{ext}/dispositions"), json!([]), "floor_required: `c1` is not among the attestation's criteria"),
        (&format!("{ext}/sandbox"), json!({"enforced": "true"}), "sandbox: the floor did not run sandboxed"),
        (&format!("{ext}/observation"), json!({}), "isolated_signer: the signer ran where"),
        ("/predicate/timeVerified", json!("yesterday"), "age: timeVerified `yesterday` is not RFC 3339"),
        ("/predicate/timeVerified", json!("2000-01-01T00:00:00Z"), "age: verified "),
    ];
    for (pointer, value, reason) in cases {
        let mut st = good_statement();
        *st.pointer_mut(pointer).unwrap() = value;
        let (allowed, reasons) = rego_reasons(&rego, &st);
        assert!(!allowed, "{pointer}: {reasons:?}");
        assert!(
            reasons.iter().any(|r| r.starts_with(reason)),
            "{pointer}: {reasons:?}"
        );
    }
    // Removed fields deny as well as wrong ones.
    for pointer in [
        "/predicate/verificationResult",
        "/predicate/timeVerified",
        ext,
    ] {
        let mut st = good_statement();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let key = key.replace("~1", "/");
        st.pointer_mut(parent)
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove(&key);
        let (allowed, reasons) = rego_reasons(&rego, &st);
        assert!(!allowed && !reasons.is_empty(), "{pointer}: {reasons:?}");
    }
    // A timestamp ten minutes ahead is in the future; one minute ahead is clock skew.
    for (ahead, denied) in [(600, true), (60, false)] {
        let mut st = good_statement();
        let t = (time::OffsetDateTime::now_utc() + time::Duration::seconds(ahead))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        st["predicate"]["timeVerified"] = t.into();
        let (allowed, reasons) = rego_reasons(&rego, &st);
        assert_eq!(!allowed, denied, "{ahead}: {reasons:?}");
    }
}

#[test]
fn the_rego_writes_an_age_as_admission_does() {
    let rules = Rules {
        max_age_seconds: Some(60),
        ..rules_of(&identity_policy(""))
    };
    let rego = policy_controller::rego(&rules, &[CLAIM_CHECK_VERIFIER.to_string()]);
    for seconds in [
        61,
        3_600,
        3_660,
        86_400 * 3,
        86_400 * 3 + 7_200,
        86_400 * 400 + 60,
    ] {
        let mut st = good_statement();
        let t = (time::OffsetDateTime::now_utc() - time::Duration::seconds(seconds))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        st["predicate"]["timeVerified"] = t.into();
        let (_, reasons) = rego_reasons(&rego, &st);
        let expected = format!(
            "age: verified {} ago, older than the policy's 1m",
            crate::admit::human_duration(seconds as u64)
        );
        assert_eq!(reasons, [expected], "{seconds}s");
    }
}
