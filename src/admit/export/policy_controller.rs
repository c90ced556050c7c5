//! The Sigstore policy-controller's ClusterImagePolicy: one authority per signer (any one
//! admits), each verifying the VSA and evaluating a Rego policy over the verified statement.
//!
//! In: the [`Rules`]. Out: the policy as a [`Node`] tree.
//!
//! The Rego is what cosign evaluates: `package sigstore`, queried as `isCompliant =
//! data.sigstore.isCompliant`, compiled as Rego v0 (so the module imports `rego.v1` for today's
//! keywords), with the whole in-toto statement as `input`. `isCompliant` is a set of one
//! `{result, error, warning}` object, the form whose `error` cosign reports: every reason
//! `shipmoor admit` would give for the checks the Rego makes, in its words and order, one a line.
//! A field that is missing denies, never admits.

use super::yaml::{map, s, Node};
use super::{Rules, Trusted, Who, CLAIM_CHECK_VERIFIER, CLOCK_SKEW_SECONDS, COMMIT_SUFFIX};
use crate::format::statement::{EXTENSION_KEY, PREDICATE_TYPE};

/// The public-good Fulcio, which issued a keyless signer's certificate.
const FULCIO_URL: &str = "https://fulcio.sigstore.dev";

/// The ClusterImagePolicy (`policy.sigstore.dev/v1beta1`).
pub(crate) fn cluster_image_policy(rules: &Rules) -> Node {
    let authorities: Vec<Node> = rules
        .signers
        .iter()
        .enumerate()
        .map(|(i, signer)| authority(rules, signer, i + 1))
        .collect();
    map([
        ("apiVersion", s("policy.sigstore.dev/v1beta1")),
        ("kind", s("ClusterImagePolicy")),
        ("metadata", map([("name", s(rules.name.clone()))])),
        (
            "spec",
            map([
                ("mode", s("enforce")),
                (
                    "images",
                    Node::Seq(
                        rules
                            .images
                            .iter()
                            .map(|g| map([("glob", s(super::pc_glob(g)))]))
                            .collect(),
                    ),
                ),
                ("authorities", Node::Seq(authorities)),
            ])
            .comment_before("authorities", "Any one of the signers."),
        ),
    ])
}

fn authority(rules: &Rules, signer: &Trusted, n: usize) -> Node {
    let attestations = Node::Seq(vec![map([
        ("name", s("claim-check-vsa")),
        ("predicateType", s(PREDICATE_TYPE)),
        (
            "policy",
            map([
                ("type", s("rego")),
                ("data", s(rego(rules, &signer.verifier_ids))),
            ]),
        ),
    ])]);
    match &signer.who {
        // Without `ctlog` a key authority skips the transparency log: a VSA signed with
        // `--sign key` has no entry there.
        Who::Key { pem, .. } => map([
            ("name", s(format!("signer-{n}"))),
            (
                "key",
                map([("hashAlgorithm", s("sha256")), ("data", s(pem.clone()))]),
            ),
            ("attestations", attestations),
        ])
        .comment_before(
            "attestations",
            "No `ctlog`: a key-signed VSA has no transparency-log entry to look up.",
        ),
        Who::Identity { identity, issuer } => map([
            ("name", s(format!("signer-{n}"))),
            (
                "keyless",
                map([
                    ("url", s(FULCIO_URL)),
                    (
                        "identities",
                        Node::Seq(vec![map([
                            ("issuer", s(issuer.clone())),
                            ("subject", s(identity.clone())),
                        ])]),
                    ),
                ]),
            ),
            ("ctlog", map([("url", s(super::kyverno::REKOR_URL))])),
            ("attestations", attestations),
        ]),
    }
}

/// A Rego string literal.
fn lit(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

fn lit_list<S: AsRef<str>>(items: &[S]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|i| lit(i.as_ref()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The index of a check in `shipmoor admit`'s order, which orders the reasons.
fn order(check: &str) -> usize {
    super::super::CHECKS
        .iter()
        .position(|c| *c == check)
        .unwrap_or(super::super::CHECKS.len())
}

/// The Rego module for a signer trusted for `verifier_ids`.
pub(crate) fn rego(rules: &Rules, verifier_ids: &[String]) -> String {
    let mut r = String::new();
    r.push_str(
        "# What `shipmoor admit` checks of the verified statement (`input`). Each failed check adds\n\
         # a reason `check: why`, as `shipmoor admit` words it; cosign reports the `error`.\n\
         package sigstore\n\nimport rego.v1\n\n",
    );
    r.push_str(&format!(
        "claim_check_verifier := {}\n\ntrusted_verifier_ids := {}\n\n",
        lit(CLAIM_CHECK_VERIFIER),
        lit_list(verifier_ids)
    ));
    if let Some(regex) = &rules.repository_regex {
        r.push_str(&format!(
            "repositories := {}\n\n# The repositories' globs as one regular expression.\nrepository_pattern := {}\n\n",
            lit_list(&rules.repositories),
            lit(regex)
        ));
    }
    r.push_str(&format!(
        "allowed_verdicts := {}\n\nfloor_required := {}\n\n",
        lit_list(&rules.allowed_verdicts),
        lit_list(&rules.floor_required)
    ));
    r.push_str(&format!(
        "predicate := input.predicate\n\nclaim := predicate[{}]\n\n",
        lit(EXTENSION_KEY)
    ));
    r.push_str(
        "default verifier_id := null\n\nverifier_id := predicate.verifier.id\n\n\
         default verification_result := null\n\nverification_result := predicate.verificationResult\n\n\
         default verdict := null\n\nverdict := claim.verdict\n\n",
    );
    // verifier: replay's check, then the signer's trust, each a reason of its own.
    let v = order("verifier");
    r.push_str(&format!(
        "failed contains [{v}, sprintf(\"verifier: `verifier.id` is %s and not `%s`\", [json.marshal(verifier_id), claim_check_verifier])] if {{\n\
         \tverifier_id != claim_check_verifier\n}}\n\n\
         failed contains [{v}, sprintf(\"verifier: verifier.id `%v` is not one this signer is trusted for (%s)\", [verifier_id, concat(\", \", trusted_verifier_ids)])] if {{\n\
         \tnot verifier_id in trusted_verifier_ids\n}}\n\n"
    ));
    if rules.repository_regex.is_some() {
        let o = order("resource_uri");
        r.push_str(&format!(
            "default resource_uri := \"\"\n\nresource_uri := predicate.resourceUri\n\n\
             # `resourceUri` without its `@<commit>`.\nrepository := regex.replace(resource_uri, {suffix}, \"\")\n\n\
             repository_admitted if regex.match(repository_pattern, repository)\n\n\
             failed contains [{o}, sprintf(\"resource_uri: %v: the repository is not one the policy admits (%s)\", [resource_uri, concat(\", \", repositories)])] if {{\n\
             \tnot repository_admitted\n}}\n\n",
            suffix = lit(COMMIT_SUFFIX)
        ));
    }
    let o = order("verification_result");
    r.push_str(&format!(
        "failed contains [{o}, sprintf(\"verification_result: verificationResult is %v, not PASSED\", [verification_result])] if {{\n\
         \tverification_result != \"PASSED\"\n}}\n\n"
    ));
    let o = order("verdict");
    r.push_str(&format!(
        "failed contains [{o}, sprintf(\"verdict: the verdict is %v; the policy admits %s\", [verdict, concat(\", \", allowed_verdicts)])] if {{\n\
         \tnot verdict in allowed_verdicts\n}}\n\n"
    ));
    if !rules.floor_required.is_empty() {
        let o = order("floor_required");
        r.push_str(&format!(
            "criteria := [c | some c in claim.dispositions]\n\n\
             # The first criterion of that id, as `shipmoor admit` reads it.\n\
             criterion(id) := [c | some c in criteria; c.id == id][0]\n\n\
             floor_miss contains [i, sprintf(\"`%s` is not among the attestation's criteria\", [id])] if {{\n\
             \tsome i, id in floor_required\n\tnot criterion(id)\n}}\n\n\
             floor_miss contains [i, sprintf(\"`%s` is %v (floor: %v), not satisfied by the floor\", [id, disposition, result])] if {{\n\
             \tsome i, id in floor_required\n\tc := criterion(id)\n\
             \tdisposition := object.get(c, \"disposition\", null)\n\
             \tresult := object.get(object.get(c, \"floor\", {{}}), \"result\", null)\n\
             \tnot [disposition, result] == [\"satisfied\", \"satisfied\"]\n}}\n\n\
             failed contains [{o}, concat(\"\", [\"floor_required: \", concat(\"; \", [m[1] | some m in sort(floor_miss)])])] if {{\n\
             \tcount(floor_miss) > 0\n}}\n\n"
        ));
    }
    if rules.require_sandbox {
        let o = order("sandbox");
        r.push_str(&format!(
            "failed contains [{o}, \"sandbox: the statement records no sandbox (a release before the sandbox made it); the policy requires one\"] if {{\n\
             \tnot claim.sandbox\n}}\n\n\
             failed contains [{o}, \"sandbox: the floor did not run sandboxed (its `sandbox.enforced` is not true); the policy requires it\"] if {{\n\
             \tclaim.sandbox\n\tnot claim.sandbox.enforced == true\n}}\n\n"
        ));
    }
    if rules.require_isolated_signer {
        let o = order("isolated_signer");
        r.push_str(&format!(
            "failed contains [{o}, \"isolated_signer: the statement records no observation (a release before it recorded one); the policy requires an isolated signer\"] if {{\n\
             \tnot claim.observation\n}}\n\n\
             failed contains [{o}, \"isolated_signer: the signer ran where the change's code ran (its `observation.isolated` is not true); the policy requires a signer that ran none of the change's code (the reusable workflow's sign job)\"] if {{\n\
             \tclaim.observation\n\tnot claim.observation.isolated == true\n}}\n\n"
        ));
    }
    let o = order("age");
    let ns = 1_000_000_000u64;
    r.push_str(&format!(
        "verified_ns := time.parse_rfc3339_ns(predicate.timeVerified)\n\n\
         # Nanoseconds since `timeVerified`; `shipmoor admit` counts whole seconds.\n\
         age_ns := time.now_ns() - verified_ns\n\n\
         failed contains [{o}, sprintf(\"age: timeVerified `%v` is not RFC 3339\", [object.get(predicate, \"timeVerified\", null)])] if {{\n\
         \tnot verified_ns\n}}\n\n\
         failed contains [{o}, sprintf(\"age: timeVerified %v is %ds in the future\", [predicate.timeVerified, floor((0 - age_ns) / {ns})])] if {{\n\
         \tage_ns <= {future}\n}}\n\n",
        future = -(((CLOCK_SKEW_SECONDS + 1) * ns) as i128),
    ));
    if let Some(max) = rules.max_age_seconds {
        r.push_str(&format!(
            "max_age_ns := {max_ns}\n\n\
             failed contains [{o}, sprintf(\"age: verified %s ago, older than the policy's {text}\", [duration_text(floor(age_ns / {ns}))])] if {{\n\
             \tage_ns >= max_age_ns\n}}\n\n\
             # `3d 4h`, `12m`, `40s`: how `shipmoor admit` writes a duration.\n\
             duration_text(t) := text if {{\n\
             \td := floor(t / 86400)\n\th := floor((t - d * 86400) / 3600)\n\
             \tm := floor((t - d * 86400 - h * 3600) / 60)\n\
             \ttext := duration_parts(d, h, m, t - d * 86400 - h * 3600 - m * 60)\n}}\n\n\
             duration_parts(d, h, m, s) := sprintf(\"%ds\", [s]) if {{ d == 0; h == 0; m == 0 }}\n\n\
             duration_parts(d, h, m, _) := sprintf(\"%dm\", [m]) if {{ d == 0; h == 0; m > 0 }}\n\n\
             duration_parts(d, h, m, _) := sprintf(\"%dh\", [h]) if {{ d == 0; h > 0; m == 0 }}\n\n\
             duration_parts(d, h, m, _) := sprintf(\"%dh %dm\", [h, m]) if {{ d == 0; h > 0; m > 0 }}\n\n\
             duration_parts(d, h, _, _) := sprintf(\"%dd\", [d]) if {{ d > 0; h == 0 }}\n\n\
             duration_parts(d, h, _, _) := sprintf(\"%dd %dh\", [d, h]) if {{ d > 0; h > 0 }}\n\n",
            // Older than the policy when the whole seconds exceed it.
            max_ns = (max + 1) * ns,
            text = super::super::human_duration(max),
        ));
    }
    r.push_str(
        "reasons := [r[1] | some r in sort(failed)]\n\n\
         isCompliant contains {\"result\": count(reasons) == 0, \"error\": concat(\"\\n\", reasons), \"warning\": \"\"}\n",
    );
    r
}
