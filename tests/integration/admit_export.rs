//! `shipmoor admit --export`: the engines' policies it writes are valid against the engines' own
//! CRD schemas, the checked-in examples are what it writes, and the policies decide as
//! `shipmoor admit` does on statements that `claim-check` really signed: the policy-controller's
//! Rego evaluated by regorus (as cosign evaluates it), Kyverno's conditions by the JMESPath
//! project's Rust implementation with Kyverno's functions.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use serde_json::{json, Value};

use super::admit::{admit, signed_run, write_policy, ENVELOPE};
use crate::common::{self, Repo};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const IMAGES: &str = "registry.example.com/example/shop*";

/// The checked-in examples: the engine, the file.
const EXAMPLES: [(&str, &str); 3] = [
    ("kyverno", "examples/admit/kyverno-policy.yaml"),
    (
        "kyverno-ivp",
        "examples/admit/kyverno-image-validating-policy.yaml",
    ),
    (
        "policy-controller",
        "examples/admit/cluster-image-policy.yaml",
    ),
];

/// `shipmoor ARGS` in `dir`.
fn shipmoor_in(dir: &Path, args: &[&str]) -> common::Run {
    Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("shipmoor runs")
        .into()
}

fn export_in(dir: &Path, policy: &str, engine: &str, images: &[&str]) -> common::Run {
    let mut args = vec!["admit", "--policy", policy, "--export", engine];
    for i in images {
        args.extend(["--image", i]);
    }
    shipmoor_in(dir, &args)
}

fn yaml(text: &str) -> Value {
    yaml_serde::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn the_examples_are_what_the_command_writes() {
    for (engine, file) in EXAMPLES {
        let run = export_in(
            Path::new(ROOT),
            "examples/admit/policy.yaml",
            engine,
            &[IMAGES],
        );
        assert_eq!(run.code, 0, "{engine}: {run:?}");
        let checked_in = std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap();
        assert!(
            run.stdout == checked_in,
            "{file} is not what `shipmoor admit --policy examples/admit/policy.yaml --export \
             {engine} --image '{IMAGES}'` writes: write it again with that command\n{}",
            run.stdout
        );
        // What the engine cannot check is on stderr, and at the top of the document: the
        // fusion re-run and the example's Rego module among them.
        for gap in [
            "fusion",
            "rego",
            "policy_version",
            "statement",
            "verified_levels",
        ] {
            assert!(
                run.stderr.contains(&format!("  - {gap}: ")),
                "{engine}: {}",
                run.stderr
            );
            assert!(run.stdout.contains(&format!("# - {gap}: ")), "{engine}");
        }
    }
}

// ---- the engines' CRD schemas

/// A served version's `openAPIV3Schema` as draft-7 JSON Schema, read as strictly as
/// `kubectl --validate=strict`: an object with properties takes no others, unless it keeps
/// unknown fields; `int-or-string` is either; `nullable` admits null. `format` is left out (the
/// API server checks few of them, and JSON Schema's `duration` is not Go's).
fn to_json_schema(node: &Value) -> Value {
    let Value::Object(n) = node else {
        return node.clone();
    };
    let mut out = serde_json::Map::new();
    for (k, v) in n {
        match k.as_str() {
            "properties" | "patternProperties" => {
                let props = v
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(pk, pv)| (pk.clone(), to_json_schema(pv)))
                    .collect();
                out.insert(k.clone(), Value::Object(props));
            }
            "items" | "additionalProperties" | "not" => {
                out.insert(k.clone(), to_json_schema(v));
            }
            "allOf" | "anyOf" | "oneOf" => {
                let all = v.as_array().unwrap().iter().map(to_json_schema).collect();
                out.insert(k.clone(), Value::Array(all));
            }
            "nullable" | "description" | "example" | "externalDocs" | "format" => {}
            _ if k.starts_with("x-kubernetes-") => {}
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if n.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        out.remove("type");
        out.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
    }
    if n.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        out.entry("additionalProperties")
            .or_insert(Value::Bool(true));
    } else if out.contains_key("properties") && !out.contains_key("additionalProperties") {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    if n.get("nullable") == Some(&Value::Bool(true)) {
        if let Some(t) = out.get("type").cloned() {
            out.insert("type".into(), json!([t, "null"]));
        }
    }
    Value::Object(out)
}

/// The CRD's group, kind, and a validator per served version.
struct Crd {
    group: String,
    kind: String,
    versions: Vec<(String, jsonschema::Validator)>,
}

fn crd(file: &str) -> Crd {
    let path = Path::new(ROOT)
        .join("tests/fixtures/admission-crds")
        .join(file);
    let doc = yaml(&std::fs::read_to_string(&path).unwrap());
    let spec = &doc["spec"];
    let versions = spec["versions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["served"] == true)
        .map(|v| {
            let mut schema = to_json_schema(&v["schema"]["openAPIV3Schema"]);
            let props = schema["properties"].as_object_mut().unwrap();
            // The API server supplies these to every object.
            props
                .entry("apiVersion")
                .or_insert(json!({"type": "string"}));
            props.entry("kind").or_insert(json!({"type": "string"}));
            props.entry("metadata").or_insert(json!({"type": "object"}));
            schema["$schema"] = "http://json-schema.org/draft-07/schema#".into();
            let validator = jsonschema::draft7::new(&schema)
                .unwrap_or_else(|e| panic!("{file} {}: {e}", v["name"]));
            (v["name"].as_str().unwrap().to_string(), validator)
        })
        .collect();
    Crd {
        group: spec["group"].as_str().unwrap().to_string(),
        kind: spec["names"]["kind"].as_str().unwrap().to_string(),
        versions,
    }
}

/// Every error of `doc` against the CRD (empty: valid), its apiVersion one the CRD serves.
fn crd_errors(crd: &Crd, doc: &Value) -> Vec<String> {
    let api = doc["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api.rsplit_once('/').unwrap_or(("", api));
    if group != crd.group || doc["kind"] != crd.kind.as_str() {
        return vec![format!(
            "{api} {} is not {}/{}",
            doc["kind"], crd.group, crd.kind
        )];
    }
    match crd.versions.iter().find(|(v, _)| v == version) {
        None => vec![format!("{api} is not a version the CRD serves")],
        Some((_, validator)) => validator
            .iter_errors(doc)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect(),
    }
}

fn crd_of(engine: &str) -> Crd {
    crd(match engine {
        "kyverno" => "kyverno-kyverno.io_clusterpolicies.yaml",
        "kyverno-ivp" => "kyverno-policies.kyverno.io_imagevalidatingpolicies.yaml",
        _ => "policy-controller-300-clusterimagepolicy.yaml",
    })
}

#[test]
fn every_policy_it_writes_is_valid_against_the_engines_crd() {
    // A policy with every rule: a key and an identity signer (the key kept out of the
    // ImageValidatingPolicy), its own verifier ids, every YAML rule, and a Rego module.
    let r = Repo::new();
    std::fs::create_dir_all(r.path().join("admission")).unwrap();
    std::fs::copy(
        common::GOLDEN_PUBLIC_KEY,
        r.path().join("admission/claim-check.pub"),
    )
    .unwrap();
    r.write(
        "admission/extra.rego",
        "package shipmoor.admit\n\nimport rego.v1\n\ndeny contains \"never\" if false\n",
    );
    r.write("admission/trusted_root.json", "{}");
    r.write(
        "admission/every-rule.yaml",
        "version: 1\nverifier_ids: [\"https://github.com/shipmoor/claim-check\", \"https://example.com/o'brien\"]\n\
         allowed_verdicts: [READY, INCONCLUSIVE]\nfloor_required: [a-b, c.d]\nmin_policy_version: v3\n\
         require_sandbox: true\nrequire_isolated_signer: true\nmax_age: 90m\n\
         repositories: [\"git+https://github.com/acme/*\", \"git+https://gitlab.com/x/y?z\"]\n\
         verified_levels: [SHIPMOOR_CLAIM_CHECK_READY]\n\
         signers:\n  - key: claim-check.pub\n  - identity: \"https://github.com/acme/shop/.github/workflows/ci.yml@refs/heads/main\"\n    issuer: \"https://token.actions.githubusercontent.com\"\n\
         trusted_root: trusted_root.json\nrego: extra.rego\n",
    );
    let cases = [
        (Path::new(ROOT), "examples/admit/policy.yaml"),
        (r.path(), "admission/every-rule.yaml"),
    ];
    for (dir, policy) in cases {
        for (engine, _) in EXAMPLES {
            let run = export_in(dir, policy, engine, &[IMAGES, "ghcr.io/acme/*:v*"]);
            assert_eq!(run.code, 0, "{policy} {engine}: {run:?}");
            let doc = yaml(&run.stdout);
            let crd = crd_of(engine);
            let errors = crd_errors(&crd, &doc);
            assert!(
                errors.is_empty(),
                "{policy} {engine}: {errors:#?}\n{}",
                run.stdout
            );
            // The check can fail: a field the CRD does not know, a value out of its enum or
            // of the wrong type.
            let mut unknown = doc.clone();
            unknown["spec"]["imageReference"] = json!("x");
            assert!(!crd_errors(&crd, &unknown).is_empty(), "{engine}");
            let mut wrong = doc.clone();
            match engine {
                "kyverno" => {
                    wrong["spec"]["rules"][0]["verifyImages"][0]["failureAction"] = "Block".into()
                }
                "kyverno-ivp" => wrong["spec"]["failurePolicy"] = "Deny".into(),
                // The CRD leaves `mode`'s values to the webhook: a wrong type instead.
                _ => wrong["spec"]["images"][0]["glob"] = json!(["x"]),
            }
            assert!(!crd_errors(&crd, &wrong).is_empty(), "{engine}");
        }
    }
    // The every-rule policy's gaps: its trusted root, its levels, and for the
    // ImageValidatingPolicy its key signer.
    let run = export_in(
        r.path(),
        "admission/every-rule.yaml",
        "kyverno-ivp",
        &[IMAGES],
    );
    assert!(
        run.stderr
            .contains("  - signature: the key signer `claim-check.pub` is left out"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("trusted root `"), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "  - verified_levels: that `verifiedLevels` holds SHIPMOOR_CLAIM_CHECK_READY"
        ),
        "{}",
        run.stderr
    );
    // `?` has an exact regular expression: the repositories are checked, not a gap.
    assert!(!run.stderr.contains("  - resource_uri"), "{}", run.stderr);
}

// ---- deciding on real statements

/// The statement a DSSE envelope signs: what both engines read once its signature verified.
fn statement(r: &Repo) -> Value {
    let envelope = r.json(ENVELOPE);
    let payload = base64::engine::general_purpose::STANDARD
        .decode(envelope["payload"].as_str().unwrap())
        .unwrap();
    serde_json::from_slice(&payload).unwrap()
}

/// `shipmoor admit`'s reasons on the run's envelope under the policy.
fn admit_reasons(r: &Repo, policy: &str) -> Vec<String> {
    let run = admit(r, policy, ENVELOPE, &["--format", "json"]);
    assert!(run.code == 0 || run.code == 1, "{run:?}");
    let d: Value = serde_json::from_str(&run.stdout).unwrap();
    d["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

fn exported(r: &Repo, policy: &str, engine: &str) -> Value {
    let run = export_in(r.path(), policy, engine, &["registry.example.com/acme/*"]);
    assert_eq!(run.code, 0, "{run:?}");
    yaml(&run.stdout)
}

/// The policy-controller's verdict on `statement`, evaluated as cosign does: Rego v0 with
/// builtin errors not strict, `isCompliant` a set of `{result, error, warning}`.
fn rego_decides(doc: &Value, statement: &Value) -> (bool, Vec<String>) {
    let rego = doc["spec"]["authorities"][0]["attestations"][0]["policy"]["data"]
        .as_str()
        .unwrap();
    let mut engine = regorus::Engine::new();
    engine.set_rego_v0(true);
    engine.set_strict_builtin_errors(false);
    engine
        .add_policy("sigstore.rego".to_string(), rego.to_string())
        .unwrap();
    engine.set_input(regorus::Value::from_json_str(&statement.to_string()).unwrap());
    let set = engine
        .eval_rule("data.sigstore.isCompliant".to_string())
        .unwrap();
    let set: Value = serde_json::from_str(&set.to_json_str().unwrap()).unwrap();
    let results = set.as_array().unwrap();
    assert_eq!(results.len(), 1, "{set}");
    let reasons = results[0]["error"]
        .as_str()
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    (results.iter().any(|r| r["result"] == true), reasons)
}

/// The checks named by `reasons` (`check: why`), in order, once each.
fn checks_of(reasons: &[String]) -> Vec<String> {
    let mut checks: Vec<String> = reasons
        .iter()
        .map(|r| r.split(':').next().unwrap().to_string())
        .collect();
    checks.dedup();
    checks
}

/// The policy-controller's and Kyverno's policies on the run's statement agree with
/// `shipmoor admit` under `policy`: the Rego gives its reasons word for word (`age`'s too,
/// read between two admissions, as its clock moves on), the conditions fail for its checks.
fn assert_engines_agree(r: &Repo, policy: &str, allowed: bool) -> Vec<String> {
    let st = statement(r);
    let before = admit_reasons(r, policy);
    let (rego_allowed, rego_reasons) = rego_decides(&exported(r, policy, "policy-controller"), &st);
    let after = admit_reasons(r, policy);
    assert_eq!(before.is_empty(), allowed, "{before:?}");
    assert_eq!(rego_allowed, allowed, "{rego_reasons:?}");
    assert!(
        rego_reasons == before || rego_reasons == after,
        "the Rego's reasons {rego_reasons:#?}\nare not shipmoor admit's {before:#?}"
    );
    let failed = kyverno_failed_checks(&exported(r, policy, "kyverno"), &st);
    assert_eq!(failed, checks_of(&before), "Kyverno's failed conditions");
    before
}

#[test]
fn the_engines_admit_a_ready_statement_and_deny_a_blocked_one_as_shipmoor_admit_does() {
    let ready = signed_run(true, None);
    let policy = write_policy(&ready, "");
    assert_engines_agree(&ready, &policy, true);

    let blocked = signed_run(false, None);
    let policy = write_policy(&blocked, "");
    let reasons = assert_engines_agree(&blocked, &policy, false);
    assert_eq!(
        checks_of(&reasons),
        ["verification_result", "verdict", "floor_required"]
    );
}

#[test]
fn the_engines_deny_a_wrong_verifier_a_missing_criterion_and_a_stale_statement_as_shipmoor_admit_does(
) {
    let r = signed_run(true, None);
    // A verifier the signer is not trusted for.
    let policy = write_policy(
        &r,
        "verifier_ids: [\"https://example.com/other-verifier\"]\n",
    );
    let reasons = assert_engines_agree(&r, &policy, false);
    assert_eq!(
        reasons,
        ["verifier: verifier.id `https://github.com/shipmoor/claim-check` is not one this signer is trusted for (https://example.com/other-verifier)"]
    );
    // A criterion the statement does not have.
    let text = std::fs::read_to_string(r.path().join(&policy))
        .unwrap()
        .replace(
            "verifier_ids: [\"https://example.com/other-verifier\"]\n",
            "",
        )
        .replace(
            "floor_required: [limit-is-ten]",
            "floor_required: [limit-is-ten, refunds-void]",
        );
    std::fs::write(r.path().join(&policy), text).unwrap();
    let reasons = assert_engines_agree(&r, &policy, false);
    assert_eq!(
        reasons,
        ["floor_required: `refunds-void` is not among the attestation's criteria"]
    );

    // Verified long ago: older than the policy's day.
    let stale = signed_run(true, Some("1700000000"));
    let policy = write_policy(&stale, "");
    let reasons = assert_engines_agree(&stale, &policy, false);
    assert_eq!(checks_of(&reasons), ["age"]);
}

// ---- Kyverno's conditions, evaluated

/// Kyverno's JMESPath functions the conditions call, as `pkg/engine/jmespath` defines them:
/// times are RFC 3339, durations Go's (`time_since` answers in seconds here, which Go's
/// parser reads too).
fn kyverno_runtime() -> jmespath::Runtime {
    use jmespath::functions::{ArgumentType as A, CustomFunction, Signature};
    use jmespath::{Rcvar, Variable};
    use time::format_description::well_known::Rfc3339;
    use time::OffsetDateTime;

    fn text(v: &Rcvar) -> String {
        v.as_string().cloned().unwrap_or_default()
    }
    fn when(v: &Rcvar) -> Result<OffsetDateTime, jmespath::JmespathError> {
        OffsetDateTime::parse(&text(v), &Rfc3339).map_err(|e| {
            jmespath::JmespathError::new("", 0, jmespath::ErrorReason::Parse(e.to_string()))
        })
    }
    fn out(v: Variable) -> Rcvar {
        Rcvar::new(v)
    }
    let mut rt = jmespath::Runtime::new();
    rt.register_builtin_functions();
    type Body =
        dyn Fn(&[Rcvar], &mut jmespath::Context<'_>) -> jmespath::SearchResult + Sync + Send;
    let f = |args: Vec<A>, body: Box<Body>| {
        Box::new(CustomFunction::new(Signature::new(args, None), body))
    };
    rt.register_function(
        "time_since",
        f(
            vec![A::String, A::String, A::String],
            Box::new(|a, _| {
                let start = when(&a[1])?;
                let end = if text(&a[2]).is_empty() {
                    OffsetDateTime::now_utc()
                } else {
                    when(&a[2])?
                };
                Ok(out(Variable::String(format!(
                    "{}s",
                    (end - start).whole_seconds()
                ))))
            }),
        ),
    );
    rt.register_function(
        "time_now_utc",
        f(
            vec![],
            Box::new(|_, _| {
                Ok(out(Variable::String(
                    OffsetDateTime::now_utc().format(&Rfc3339).unwrap(),
                )))
            }),
        ),
    );
    rt.register_function(
        "time_add",
        f(
            vec![A::String, A::String],
            Box::new(|a, _| {
                let t = when(&a[0])? + time::Duration::seconds(go_seconds(&text(&a[1])));
                Ok(out(Variable::String(t.format(&Rfc3339).unwrap())))
            }),
        ),
    );
    rt.register_function(
        "time_before",
        f(
            vec![A::String, A::String],
            Box::new(|a, _| Ok(out(Variable::Bool(when(&a[0])? < when(&a[1])?)))),
        ),
    );
    rt.register_function(
        "regex_match",
        f(
            vec![A::String, A::String],
            Box::new(|a, _| {
                let re = regex::Regex::new(&text(&a[0])).unwrap();
                Ok(out(Variable::Bool(re.is_match(&text(&a[1])))))
            }),
        ),
    );
    rt.register_function(
        "regex_replace_all",
        f(
            vec![A::String, A::String, A::String],
            Box::new(|a, _| {
                let re = regex::Regex::new(&text(&a[0])).unwrap();
                Ok(out(Variable::String(
                    re.replace_all(&text(&a[1]), text(&a[2]).as_str())
                        .into_owned(),
                )))
            }),
        ),
    );
    rt
}

/// A Go duration of whole hours, minutes and seconds (`168h`, `5m`, `-90s`), in seconds.
fn go_seconds(d: &str) -> i64 {
    let (sign, d) = d.strip_prefix('-').map_or((1, d), |d| (-1, d));
    let mut total = 0;
    let mut n = String::new();
    for c in d.chars() {
        match c {
            '0'..='9' => n.push(c),
            'h' | 'm' | 's' => {
                let v: i64 = n.parse().unwrap();
                total += v * match c {
                    'h' => 3600,
                    'm' => 60,
                    _ => 1,
                };
                n.clear();
            }
            _ => panic!("not a duration this test reads: {d}"),
        }
    }
    sign * total
}

/// The checks whose conditions fail on `statement` (the message's `check:`), in order, once
/// each. The predicate is the root, as Kyverno evaluates attestation conditions; a condition
/// whose expression is null fails, as Kyverno's variable substitution does.
fn kyverno_failed_checks(doc: &Value, statement: &Value) -> Vec<String> {
    let attestation = &doc["spec"]["rules"][0]["verifyImages"][0]["attestations"][0];
    assert_eq!(attestation["type"], statement["predicateType"]);
    let rt = kyverno_runtime();
    let mut failed = Vec::new();
    for c in attestation["conditions"][0]["all"].as_array().unwrap() {
        let key = c["key"].as_str().unwrap();
        let expression = key
            .strip_prefix("{{")
            .and_then(|k| k.strip_suffix("}}"))
            .unwrap_or_else(|| panic!("not one variable: {key}"));
        let value = rt
            .compile(expression.trim())
            .unwrap_or_else(|e| panic!("{key}: {e}"))
            .search(&statement["predicate"])
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        let holds = match c["operator"].as_str().unwrap() {
            "Equals" => {
                assert_eq!(c["value"], true, "{c}");
                value.as_boolean() == Some(true)
            }
            "DurationLessThanOrEquals" => value
                .as_string()
                .is_some_and(|d| go_seconds(d) <= go_seconds(c["value"].as_str().unwrap())),
            other => panic!("an operator this test does not read: {other}"),
        };
        if !holds {
            let check = c["message"].as_str().unwrap().split(':').next().unwrap();
            failed.push(check.to_string());
        }
    }
    failed.dedup();
    failed
}

// ---- bad input

#[test]
fn an_export_it_cannot_write_is_an_input_error_with_the_fix() {
    let r = signed_run(true, None);
    let policy = write_policy(&r, "");
    let run = export_in(r.path(), &policy, "kyverno", &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("--export kyverno needs the images"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);

    let run = export_in(
        r.path(),
        &policy,
        "kyverno",
        &["registry.example.com/{a,b}"],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("holds `{`"), "{}", run.stderr);

    // The ImageValidatingPolicy cannot verify a key-signed VSA; the policy file is named.
    let run = export_in(r.path(), &policy, "kyverno-ivp", &["r.example.com/*"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("admission/policy.yaml"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("kyverno/kyverno#17109"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);

    // Exporting decides nothing: an attestation with it is a usage error.
    let run = r.shipmoor(&[
        "admit",
        "--policy",
        &policy,
        "--export",
        "kyverno",
        "--image",
        "r.example.com/*",
        "--attestation",
        ENVELOPE,
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    // Deciding takes one image.
    let run = r.shipmoor(&[
        "admit",
        "--policy",
        &policy,
        "--image",
        "r.example.com/a:1",
        "--image",
        "r.example.com/b:1",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("--image names one image to decide on"),
        "{}",
        run.stderr
    );
}
