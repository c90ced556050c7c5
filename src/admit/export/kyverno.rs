//! Kyverno's two policies for images: a ClusterPolicy whose `verifyImages` rule checks the
//! VSA's signature and then conditions in JMESPath over its predicate, and an
//! ImageValidatingPolicy whose validations are CEL over the verified statement.
//!
//! In: the [`Rules`]. Out: the policy as a [`Node`] tree, or an input error for a value Kyverno
//! would read as a variable (`{{`, `}}`).
//!
//! Every comparison is exact: Kyverno's `Equals`, `AnyIn` and `AllIn` operators match
//! wildcards in both directions, so a signed `"*"` would match any required value. Each
//! condition is a JMESPath (or CEL) expression that yields a boolean, compared with `true`; a
//! field that is missing makes it false (or an error, which denies), never true.

use super::yaml::{map, s, strs, Node};
use super::{go_duration, Rules, Who, CLAIM_CHECK_VERIFIER, CLOCK_SKEW_SECONDS, COMMIT_SUFFIX};
use crate::error::InputError;
use crate::format::statement::{EXTENSION_KEY, PREDICATE_TYPE};

/// The public-good Rekor, which keyless signing records the certificate in.
pub(crate) const REKOR_URL: &str = "https://rekor.sigstore.dev";

/// One condition: the check it stands for, a boolean expression, and the message on failure.
pub(crate) struct Condition {
    pub check: &'static str,
    pub expression: String,
    pub message: String,
    /// `Some(duration)`: the expression yields a duration that must be at most this long
    /// (Kyverno's `DurationLessThanOrEquals`), rather than `true`.
    pub at_most: Option<String>,
}

/// The ClusterPolicy.
pub(crate) fn cluster_policy(rules: &Rules) -> Result<Node, InputError> {
    let attestors: Vec<Node> = rules
        .signers
        .iter()
        .map(|s| attestor_entry(&s.who))
        .collect();
    let conditions: Vec<Node> = conditions(rules)?
        .into_iter()
        .map(|c| {
            let (operator, value) = match &c.at_most {
                Some(d) => ("DurationLessThanOrEquals", s(d.clone())),
                None => ("Equals", Node::Bool(true)),
            };
            map([
                ("key", s(format!("{{{{ {} }}}}", c.expression))),
                ("operator", s(operator)),
                ("value", value),
                ("message", s(format!("{}: {}", c.check, c.message))),
            ])
        })
        .collect();
    let attestation = map([
        ("type", s(PREDICATE_TYPE)),
        (
            "attestors",
            Node::Seq(vec![map([
                ("count", Node::Int(1)),
                ("entries", Node::Seq(attestors)),
            ])]),
        ),
        (
            "conditions",
            Node::Seq(vec![map([("all", Node::Seq(conditions))])]),
        ),
    ])
    .comment_before("attestors", "Any one of the signers (`count: 1`).")
    .comment_before(
        "conditions",
        "Over the predicate, which is the root here (`verifier.id`, not `predicate.verifier.id`).",
    );
    let verify = map([
        ("imageReferences", strs(&rules.images)),
        ("failureAction", s("Enforce")),
        ("mutateDigest", Node::Bool(true)),
        ("verifyDigest", Node::Bool(true)),
        ("required", Node::Bool(true)),
        ("attestations", Node::Seq(vec![attestation])),
    ]);
    let rule = map([
        ("name", s("claim-check-vsa")),
        (
            "match",
            map([(
                "any",
                Node::Seq(vec![map([("resources", map([("kinds", strs(&["Pod"]))]))])]),
            )]),
        ),
        ("verifyImages", Node::Seq(vec![verify])),
    ]);
    Ok(map([
        ("apiVersion", s("kyverno.io/v1")),
        ("kind", s("ClusterPolicy")),
        ("metadata", map([("name", s(rules.name.clone()))])),
        (
            "spec",
            map([
                ("background", Node::Bool(false)),
                (
                    "webhookConfiguration",
                    map([
                        ("failurePolicy", s("Fail")),
                        ("timeoutSeconds", Node::Int(30)),
                    ]),
                ),
                ("rules", Node::Seq(vec![rule])),
            ]),
        ),
    ]))
}

/// One attestor entry of the ClusterPolicy.
fn attestor_entry(who: &Who) -> Node {
    match who {
        // A VSA signed with `--sign key` has no transparency-log entry and no certificate.
        Who::Key { pem, .. } => map([(
            "keys",
            map([
                ("publicKeys", s(pem.clone())),
                ("rekor", map([("ignoreTlog", Node::Bool(true))])),
                ("ctlog", map([("ignoreSCT", Node::Bool(true))])),
            ])
            .comment_before(
                "rekor",
                "A key-signed VSA has no transparency-log entry to look up.",
            ),
        )]),
        Who::Identity { identity, issuer } => map([(
            "keyless",
            map([
                ("subject", s(identity.clone())),
                ("issuer", s(issuer.clone())),
                ("rekor", map([("url", s(REKOR_URL))])),
            ]),
        )]),
    }
}

/// The conditions over the predicate, in the order `shipmoor admit` checks them.
pub(crate) fn conditions(rules: &Rules) -> Result<Vec<Condition>, InputError> {
    let ext = format!("{}", serde_json::Value::from(EXTENSION_KEY));
    let mut out = Vec::new();
    let mut push = |check, expression: String, message: String, at_most: Option<String>| {
        out.push(Condition {
            check,
            expression,
            message,
            at_most,
        })
    };
    push(
        "verifier",
        format!("verifier.id == {}", raw(CLAIM_CHECK_VERIFIER)?),
        format!("`verifier.id` is not `{CLAIM_CHECK_VERIFIER}`"),
        None,
    );
    let ids = rules.shared_verifier_ids().unwrap_or_default();
    if ids != [CLAIM_CHECK_VERIFIER] {
        push(
            "verifier",
            any_of("verifier.id", ids)?,
            format!(
                "`verifier.id` is not one the signers are trusted for ({})",
                ids.join(", ")
            ),
            None,
        );
    }
    if let Some(regex) = &rules.repository_regex {
        push(
            "resource_uri",
            format!(
                "regex_match({}, regex_replace_all({}, resourceUri, ''))",
                raw(regex)?,
                raw(COMMIT_SUFFIX)?
            ),
            format!(
                "the repository of `resourceUri` is not one the policy admits ({})",
                rules.repositories.join(", ")
            ),
            None,
        );
    }
    push(
        "verification_result",
        "verificationResult == 'PASSED'".to_string(),
        "`verificationResult` is not PASSED".to_string(),
        None,
    );
    push(
        "verdict",
        any_of(&format!("{ext}.verdict"), &rules.allowed_verdicts)?,
        format!(
            "the verdict is not one the policy admits ({})",
            rules.allowed_verdicts.join(", ")
        ),
        None,
    );
    for id in &rules.floor_required {
        push(
            "floor_required",
            format!(
                "length({ext}.dispositions[?id == {} && disposition == 'satisfied' && floor.result == 'satisfied'] || `[]`) > `0`",
                raw(id)?
            ),
            format!("`{id}` is not satisfied by the floor"),
            None,
        );
    }
    if rules.require_sandbox {
        push(
            "sandbox",
            format!("{ext}.sandbox.enforced == `true`"),
            "the floor did not run sandboxed; the policy requires it".to_string(),
            None,
        );
    }
    if rules.require_isolated_signer {
        push(
            "isolated_signer",
            format!("{ext}.observation.isolated == `true`"),
            "the signer is not one that ran none of the change's code; the policy requires it"
                .to_string(),
            None,
        );
    }
    if let Some(max) = rules.max_age_seconds {
        push(
            "age",
            "time_since('', timeVerified, '')".to_string(),
            format!(
                "verified longer ago than the policy's {}",
                super::super::human_duration(max)
            ),
            Some(go_duration(max)),
        );
    }
    push(
        "age",
        format!(
            "time_before(timeVerified, time_add(time_now_utc(), '{}'))",
            go_duration(CLOCK_SKEW_SECONDS)
        ),
        format!(
            "`timeVerified` is more than {} in the future",
            super::super::human_duration(CLOCK_SKEW_SECONDS)
        ),
        None,
    );
    Ok(out)
}

/// `field == 'a' || field == 'b'`: exact, where `contains` over a literal list would need JSON
/// inside backticks.
fn any_of<S: AsRef<str>>(field: &str, values: &[S]) -> Result<String, InputError> {
    let parts = values
        .iter()
        .map(|v| raw(v.as_ref()).map(|r| format!("{field} == {r}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(match parts.len() {
        1 => parts.join(""),
        _ => format!("({})", parts.join(" || ")),
    })
}

/// `value` as a JMESPath raw string (`'…'`, `'` escaped), refused when it holds a brace, which
/// Kyverno would take for the edge of a variable, or a backslash, which JMESPath
/// implementations unescape differently.
fn raw(value: &str) -> Result<String, InputError> {
    if let Some(c) = value.chars().find(|c| matches!(c, '{' | '}' | '\\')) {
        return Err(InputError::new(format!(
            "`{value}` holds `{c}`, which a Kyverno condition cannot hold exactly (a brace \
             edges a variable; JMESPath readers unescape a backslash differently)"
        ))
        .help("use values without `{`, `}` or `\\` in the policy, or export `policy-controller`"));
    }
    Ok(format!("'{}'", value.replace('\'', "\\'")))
}

/// `value` as a CEL single-quoted string.
fn cel(value: &str) -> String {
    format!(
        "'{}'",
        value
            .replace('\\', "\\\\")
            .replace('\'', "\\'")
            .replace('\n', "\\n")
    )
}

/// The ImageValidatingPolicy (`policies.kyverno.io/v1`).
pub(crate) fn image_validating_policy(rules: &Rules) -> Result<Node, InputError> {
    let (attestors, names) = attestors(rules);
    let validations = checks(rules, &names);
    let images = "(images.containers + images.initContainers + images.ephemeralContainers)";
    let validations: Vec<Node> = validations
        .into_iter()
        .map(|(check, expression, message)| {
            map([
                (
                    "expression",
                    s(format!("{images}.all(image,\n  {expression})")),
                ),
                ("message", s(format!("{check}: {message}"))),
            ])
        })
        .collect();
    Ok(map([
        ("apiVersion", s("policies.kyverno.io/v1")),
        ("kind", s("ImageValidatingPolicy")),
        ("metadata", map([("name", s(rules.name.clone()))])),
        (
            "spec",
            map([
                ("validationActions", strs(&["Deny"])),
                ("failurePolicy", s("Fail")),
                (
                    "webhookConfiguration",
                    map([("timeoutSeconds", Node::Int(30))]),
                ),
                (
                    "evaluation",
                    map([("background", map([("enabled", Node::Bool(false))]))]),
                ),
                (
                    "matchConstraints",
                    map([(
                        "resourceRules",
                        Node::Seq(vec![map([
                            ("apiGroups", strs(&[""])),
                            ("apiVersions", strs(&["v1"])),
                            ("operations", strs(&["CREATE", "UPDATE"])),
                            ("resources", strs(&["pods"])),
                        ])]),
                    )]),
                ),
                (
                    "matchImageReferences",
                    Node::Seq(
                        rules
                            .images
                            .iter()
                            .map(|g| map([("glob", s(g.clone()))]))
                            .collect(),
                    ),
                ),
                (
                    "validationConfigurations",
                    map([
                        ("mutateDigest", Node::Bool(true)),
                        ("verifyDigest", Node::Bool(true)),
                        ("required", Node::Bool(true)),
                    ]),
                ),
                ("attestors", Node::Seq(attestors)),
                (
                    "attestations",
                    Node::Seq(vec![map([
                        ("name", s("vsa")),
                        ("intoto", map([("type", s(PREDICATE_TYPE))])),
                    ])]),
                ),
                ("validations", Node::Seq(validations)),
            ])
            .comment_before(
                "validations",
                "In order: a payload is read only after its signature verified.",
            ),
        ),
    ]))
}

/// The policy's attestors, one per signer identity, and their names as the validations refer to
/// them (`attestors.signer1`).
fn attestors(rules: &Rules) -> (Vec<Node>, Vec<String>) {
    let mut attestors = Vec::new();
    let mut names = Vec::new();
    for (i, signer) in rules.signers.iter().enumerate() {
        // Keys are left out before this (see `export`): only identities reach here.
        let Who::Identity { identity, issuer } = &signer.who else {
            continue;
        };
        let name = format!("signer{}", i + 1);
        names.push(format!("attestors.{name}"));
        attestors.push(map([
            ("name", s(name)),
            (
                "cosign",
                map([
                    (
                        "keyless",
                        map([(
                            "identities",
                            Node::Seq(vec![map([
                                ("issuer", s(issuer.clone())),
                                ("subject", s(identity.clone())),
                            ])]),
                        )]),
                    ),
                    ("ctlog", map([("url", s(REKOR_URL))])),
                ]),
            ),
        ]));
    }
    (attestors, names)
}

/// The policy's checks, in order: each a name, its CEL expression over one image, and the
/// message that follows the name when it fails.
fn checks(rules: &Rules, names: &[String]) -> Vec<(&'static str, String, String)> {
    let payload = "extractPayload(image, attestations.vsa)";
    let pred = format!("{payload}.predicate");
    let ext = format!("{pred}[?{}]", cel(EXTENSION_KEY));
    let mut validations = vec![(
        "signature",
        format!(
            "verifyAttestationSignatures(image, attestations.vsa, [{}]) > 0",
            names.join(", ")
        ),
        "no Claim Check VSA signed by a signer the policy trusts".to_string(),
    )];
    let verifier = format!("{pred}.?verifier.?id.orValue('')");
    validations.push((
        "verifier",
        format!("{verifier} == {}", cel(CLAIM_CHECK_VERIFIER)),
        format!("`verifier.id` is not `{CLAIM_CHECK_VERIFIER}`"),
    ));
    let ids = rules.shared_verifier_ids().unwrap_or_default();
    if ids != [CLAIM_CHECK_VERIFIER] {
        validations.push((
            "verifier",
            format!("{verifier} in {}", cel_list(ids)),
            format!(
                "`verifier.id` is not one the signers are trusted for ({})",
                ids.join(", ")
            ),
        ));
    }
    if let Some(regex) = &rules.repository_regex {
        let uri = format!("{pred}.?resourceUri.orValue('')");
        // Without a regular-expression replace in CEL: the repository is what precedes a
        // trailing `@<commit>` when there is one, else the whole URI.
        let with_commit = format!("{}{}", regex.trim_end_matches('$'), COMMIT_SUFFIX);
        validations.push((
            "resource_uri",
            format!(
                "{uri}.matches({}) || (!{uri}.matches({}) && {uri}.matches({}))",
                cel(&with_commit),
                cel(COMMIT_SUFFIX),
                cel(regex)
            ),
            format!(
                "the repository of `resourceUri` is not one the policy admits ({})",
                rules.repositories.join(", ")
            ),
        ));
    }
    validations.push((
        "verification_result",
        format!("{pred}.?verificationResult.orValue('') == 'PASSED'"),
        "`verificationResult` is not PASSED".to_string(),
    ));
    validations.push((
        "verdict",
        format!(
            "{ext}.?verdict.orValue('') in {}",
            cel_list(&rules.allowed_verdicts)
        ),
        format!(
            "the verdict is not one the policy admits ({})",
            rules.allowed_verdicts.join(", ")
        ),
    ));
    if !rules.floor_required.is_empty() {
        validations.push((
            "floor_required",
            format!(
                "{}.all(req, {ext}.?dispositions.orValue([]).exists(c, c.?id.orValue('') == req && c.?disposition.orValue('') == 'satisfied' && c.?floor.?result.orValue('') == 'satisfied'))",
                cel_list(&rules.floor_required)
            ),
            format!(
                "a criterion the policy requires ({}) is not satisfied by the floor",
                rules.floor_required.join(", ")
            ),
        ));
    }
    if rules.require_sandbox {
        validations.push((
            "sandbox",
            format!("{ext}.?sandbox.?enforced.orValue(false) == true"),
            "the floor did not run sandboxed; the policy requires it".to_string(),
        ));
    }
    if rules.require_isolated_signer {
        validations.push((
            "isolated_signer",
            format!("{ext}.?observation.?isolated.orValue(false) == true"),
            "the signer is not one that ran none of the change's code; the policy requires it"
                .to_string(),
        ));
    }
    validations.push(age(rules, &pred));
    validations
}

/// The `age` check over the predicate `pred`: `timeVerified` not in the future (beyond the
/// clock skew), nor older than the policy's maximum age when it has one.
fn age(rules: &Rules, pred: &str) -> (&'static str, String, String) {
    let verified = format!("timestamp({pred}.timeVerified)");
    let mut age = format!(
        "{verified} - time.now() <= duration('{}')",
        go_duration(CLOCK_SKEW_SECONDS)
    );
    let mut age_message = format!(
        "`timeVerified` is more than {} in the future",
        super::super::human_duration(CLOCK_SKEW_SECONDS)
    );
    if let Some(max) = rules.max_age_seconds {
        age = format!(
            "time.now() - {verified} <= duration('{}') && {age}",
            go_duration(max)
        );
        age_message = format!(
            "verified longer ago than the policy's {}, or {age_message}",
            super::super::human_duration(max)
        );
    }
    ("age", age, age_message)
}

/// `['a', 'b']` in CEL.
fn cel_list<S: AsRef<str>>(values: &[S]) -> String {
    format!(
        "[{}]",
        values
            .iter()
            .map(|v| cel(v.as_ref()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
