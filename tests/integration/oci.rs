//! Attestations attached to images in a real registry on loopback: Debian's `docker-registry`
//! (distribution 2.8.2, no referrers API, so every attachment goes through the referrers tag
//! schema), images pushed with `skopeo`, and what was attached read back with `skopeo` as an
//! independent client: the `sha256-<hex>` index and the artifact manifest, typed and annotated
//! as cosign's bundle format. Then `attestations()` finds what `attach` pushed, attaching twice
//! adds nothing, two images keep two indexes, an image with nothing attached has none,
//! credentials come from the Docker config file or the environment, and the
//! input errors (a closed port, a reference without tag or digest, a file that is no bundle of
//! a statement about the image, an unsigned `claim-check --attach`) exit 2 before anything is
//! pushed or written.

use std::process::Command;

use crate::common;

use base64::Engine as _;
use common::registry::{free_port, CuttingProxy, TestRegistry, PASSWORD, USER};
use common::{Repo, Run};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use shipmoor::oci::{Options, Reference, Registry, Via};

use common::{GOLDEN_KEY, GOLDEN_PUBLIC_KEY};
const BUNDLE: &str = ".shipmoor/claim-check.vsa.sigstore.json";
const BUNDLE_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
const VSA: &str = "https://slsa.dev/verification_summary/v1";

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// A change with one criterion a `check.pattern` decides (no test runner needed): READY.
fn tiny_repo() -> (Repo, String) {
    let r = Repo::new();
    r.git(&[
        "remote",
        "set-url",
        "origin",
        "https://example.com/shipmoor/oci.git",
    ]);
    r.write("svc/refund.txt", "refund: keep the intent\n");
    let base = r.commit("base");
    r.write("svc/refund.txt", "refund: PaymentIntent.cancel(intent)\n");
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: refund-voids-intent\n    ac: A refund voids the payment intent.\n    check:\n      pattern:\n        paths: [\"svc/**\"]\n        regex: \"PaymentIntent\\\\.cancel\"\n",
    );
    r.commit("head");
    (r, base)
}

/// A keyed bundle (the committed test key, the project's own DSSE signing) of a minimal VSA
/// statement about `name@digest`.
fn signed_bundle(name: &str, digest: &str) -> Vec<u8> {
    let statement = json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": name, "digest": {"sha256": digest.trim_start_matches("sha256:")}}],
        "predicateType": VSA,
        "predicate": {
            "verifier": {"id": "https://github.com/shipmoor/claim-check"},
            "timeVerified": "2026-11-30T10:00:00Z",
            "verificationResult": "PASSED",
        },
    });
    let pem = std::fs::read_to_string(GOLDEN_KEY).unwrap();
    let key = shipmoor::attest::keys::load_signing_key(&pem, None).unwrap();
    let envelope = shipmoor::attest::dsse::sign(
        statement.to_string().as_bytes(),
        shipmoor::attest::dsse::PAYLOAD_TYPE,
        &key,
    );
    let bundle = shipmoor::attest::keyed_bundle::to_bundle(&envelope).unwrap();
    serde_json::to_vec_pretty(&bundle).unwrap()
}

fn registry_client() -> Registry {
    Registry::new(&Options { plain_http: true }).unwrap()
}

fn attach_file(r: &Repo, reference: &str, file: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "attach",
        reference,
        "--attestation",
        file,
        "--allow-http-registry",
    ];
    args.extend(extra);
    r.shipmoor(&args)
}

/// An admission policy that admits READY VSAs of `repositories`, verified within a day, signed
/// with the committed test key: its directory (keep it alive) and its path.
fn key_policy(repositories: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(GOLDEN_PUBLIC_KEY, dir.path().join("claim-check.pub")).unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        format!("version: 1\nallowed_verdicts: [READY]\nmax_age: 1d\nrepositories: [\"{repositories}\"]\nsigners:\n  - key: claim-check.pub\n"),
    )
    .unwrap();
    (dir, policy)
}

/// `shipmoor admit --image REFERENCE` under `policy`: its exit code and decision, which matches
/// its schema (with `image`, attestations found in the registry, or none at all).
fn admit_image(r: &Repo, policy: &std::path::Path, reference: &str) -> (i32, Value) {
    let run = r.shipmoor(&[
        "admit",
        "--policy",
        policy.to_str().unwrap(),
        "--image",
        reference,
        "--allow-http-registry",
        "--format",
        "json",
    ]);
    common::assert_matches_schema("claim_check.admit.v1", &run.stdout);
    let decision = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    (run.code, decision)
}

/// `shipmoor attach REFERENCE --form FORM` of the run's bundle: its JSON document, checked
/// against the strict schema.
fn attach_form(r: &Repo, reference: &str, form: &str) -> Value {
    let run = attach_file(r, reference, BUNDLE, &["--form", form, "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    common::assert_schema_is_strict("claim_check.attach.v1", &run.stdout);
    serde_json::from_str(&run.stdout).unwrap()
}

/// The tag schema index and the artifact manifest, read back with skopeo, are cosign's bundle
/// format: the index entry carries the artifact type and annotations; the manifest's subject is
/// the image, its config the empty descriptor, its one layer the bundle (by digest, the bytes
/// claim-check wrote).
fn assert_attached(
    registry: &TestRegistry,
    repo: &str,
    image: &str,
    artifact: &str,
    bundle: &[u8],
) -> Value {
    let tag = image.replacen(':', "-", 1);
    let index = registry.inspect_raw(&format!("{repo}:{tag}"));
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    let entries = index["manifests"].as_array().unwrap();
    let entry = entries
        .iter()
        .find(|m| m["digest"] == artifact)
        .unwrap_or_else(|| panic!("{artifact} not in {index}"));
    assert_eq!(entry["artifactType"], BUNDLE_TYPE);
    assert_eq!(
        entry["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        entry["annotations"]["dev.sigstore.bundle.predicateType"],
        VSA
    );
    assert_eq!(
        entry["annotations"]["dev.sigstore.bundle.content"],
        "dsse-envelope"
    );

    let manifest = registry.inspect_raw(&format!("{repo}@{artifact}"));
    assert_eq!(manifest["artifactType"], BUNDLE_TYPE);
    assert_eq!(manifest["subject"]["digest"], image);
    assert_eq!(
        manifest["subject"]["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.oci.empty.v1+json"
    );
    assert_eq!(
        manifest["config"]["digest"],
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    );
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    assert_eq!(layers[0]["mediaType"], BUNDLE_TYPE);
    assert_eq!(layers[0]["digest"], sha256(bundle));
    assert_eq!(layers[0]["size"], bundle.len());
    assert_eq!(manifest["annotations"], entry["annotations"]);
    // `created` is the statement's `timeVerified`, so the same bundle is the same artifact.
    let b: Value = serde_json::from_slice(bundle).unwrap();
    let payload = base64::engine::general_purpose::STANDARD
        .decode(b["dsseEnvelope"]["payload"].as_str().unwrap())
        .unwrap();
    let statement: Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(
        manifest["annotations"]["org.opencontainers.image.created"],
        statement["predicate"]["timeVerified"]
    );
    index
}

/// `claim-check --attach` resolves the image, names it as a subject, signs with the key and
/// pushes the bundle; skopeo reads it back; `attestations()` finds it; `shipmoor attach` of the
/// same bundle adds no second index entry.
#[test]
fn claim_check_attaches_its_signed_vsa_through_the_tag_schema() {
    let registry = TestRegistry::start();
    let image = registry.push_image("app", "v1", "one\n");
    let reference = format!("{}/app:v1", registry.host());
    let (r, base) = tiny_repo();
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--sign",
        "key",
        "--key",
        GOLDEN_KEY,
        "--attach",
        &reference,
        "--allow-http-registry",
    ]);
    assert_eq!(run.code, 0, "{run:?}\n{}", registry.log());

    // The statement names the image by its repository and manifest digest.
    let statement = r.json(".shipmoor/claim-check.vsa.json");
    let subject = statement["subject"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == format!("{}/app", registry.host()))
        .unwrap_or_else(|| panic!("no image subject in {statement}"));
    assert_eq!(
        subject["digest"]["sha256"],
        image.trim_start_matches("sha256:")
    );

    let bundle = std::fs::read(r.path().join(BUNDLE)).unwrap();
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("  bundle form: the artifact "))
        .unwrap_or_else(|| panic!("{run:?}"));
    let artifact = line
        .split_whitespace()
        .nth(4)
        .unwrap()
        .trim_end_matches(',')
        .to_string();
    assert!(
        line.contains(&format!("sha256-{}", image.trim_start_matches("sha256:"))),
        "{line}"
    );
    assert_attached(&registry, "app", &image, &artifact, &bundle);

    let client = registry_client();
    let parsed = Reference::parse(&reference).unwrap();
    let resolved = client.resolve(&parsed).unwrap();
    assert_eq!(resolved.digest, image);
    // Both forms: the bundle referrer, and the classic `.att` layer.
    let found = client.attestations(&parsed, &resolved).unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].digest, artifact);
    assert_eq!(found[0].bundle, bundle);
    assert_eq!(found[0].via, Via::TagSchema);
    assert_eq!(found[1].via, Via::ClassicTag);

    // The same bundle again, by `shipmoor attach`: the same artifact, still one entry.
    let again = attach_file(&r, &reference, BUNDLE, &["--format", "json"]);
    assert_eq!(again.code, 0, "{again:?}");
    common::assert_schema_is_strict("claim_check.attach.v1", &again.stdout);
    let out: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(out["schema"], "claim_check.attach.v1");
    assert_eq!(out["tag"], image.replacen(':', "-", 1));
    assert_eq!(out["artifact"], artifact);
    assert_eq!(out["via"], "tag-schema");
    assert_eq!(out["subject"]["digest"], image);
    assert_eq!(out["classic"]["unchanged"], true, "{out}");
    let index = assert_attached(&registry, "app", &image, &artifact, &bundle);
    assert_eq!(index["manifests"].as_array().unwrap().len(), 1, "{index}");
    assert_eq!(client.attestations(&parsed, &resolved).unwrap().len(), 2);
}

/// Two images, each with its own bundle: two indexes, each listing only its own; a second,
/// different bundle for the first image joins its index beside the first; an image with
/// nothing attached lists nothing.
#[test]
fn each_image_keeps_its_own_index() {
    let registry = TestRegistry::start();
    let one = registry.push_image("app", "v1", "one\n");
    let two = registry.push_image("app", "v2", "two\n");
    let bare = registry.push_image("other", "v1", "bare\n");
    let name = format!("{}/app", registry.host());
    let dir = tempfile::tempdir().unwrap();
    let file = |label: &str, bytes: &[u8]| {
        let p = dir.path().join(format!("{label}.sigstore.json"));
        std::fs::write(&p, bytes).unwrap();
        p.display().to_string()
    };
    let bundle_one = signed_bundle(&name, &one);
    let bundle_two = signed_bundle(&name, &two);
    let (r, _) = tiny_repo();
    let mut artifacts = Vec::new();
    for (tag, bundle) in [("v1", &bundle_one), ("v2", &bundle_two)] {
        let run = attach_file(
            &r,
            &format!("{name}:{tag}"),
            &file(tag, bundle),
            &["--format", "json"],
        );
        assert_eq!(run.code, 0, "{run:?}");
        let out: Value = serde_json::from_str(&run.stdout).unwrap();
        artifacts.push(out["artifact"].as_str().unwrap().to_string());
    }
    let index_one = assert_attached(&registry, "app", &one, &artifacts[0], &bundle_one);
    let index_two = assert_attached(&registry, "app", &two, &artifacts[1], &bundle_two);
    assert_eq!(index_one["manifests"].as_array().unwrap().len(), 1);
    assert_eq!(index_two["manifests"].as_array().unwrap().len(), 1);

    // Another VSA for the first image (a statement naming it and the second): both listed.
    let both = {
        let statement = json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [
                {"name": name, "digest": {"sha256": two.trim_start_matches("sha256:")}},
                {"name": name, "digest": {"sha256": one.trim_start_matches("sha256:")}},
            ],
            "predicateType": VSA,
            "predicate": {"timeVerified": "2026-11-30T11:00:00Z"},
        });
        let pem = std::fs::read_to_string(GOLDEN_KEY).unwrap();
        let key = shipmoor::attest::keys::load_signing_key(&pem, None).unwrap();
        let env = shipmoor::attest::dsse::sign(
            statement.to_string().as_bytes(),
            shipmoor::attest::dsse::PAYLOAD_TYPE,
            &key,
        );
        serde_json::to_vec(&shipmoor::attest::keyed_bundle::to_bundle(&env).unwrap()).unwrap()
    };
    let run = attach_file(&r, &format!("{name}@{one}"), &file("both", &both), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("referrers tag schema"), "{run:?}");

    let client = registry_client();
    let reference = Reference::parse(&format!("{name}:v1")).unwrap();
    let subject = client.resolve(&reference).unwrap();
    let found = client.attestations(&reference, &subject).unwrap();
    let bundles: Vec<&[u8]> = found
        .iter()
        .filter(|a| a.via != Via::ClassicTag)
        .map(|a| a.bundle.as_slice())
        .collect();
    assert_eq!(bundles, vec![bundle_one.as_slice(), both.as_slice()]);
    // The classic form keeps one VSA per image: the later replaced the earlier, as cosign's
    // `--replace` does (Kyverno requires every attestation of a type to pass).
    let classic: Vec<&shipmoor::oci::Attachment> =
        found.iter().filter(|a| a.via == Via::ClassicTag).collect();
    assert_eq!(classic.len(), 1, "{found:?}");
    let layer = shipmoor::oci::classic::layer_of_bundle(&both, VSA).unwrap();
    assert_eq!(classic[0].bundle, layer.envelope);

    let reference = Reference::parse(&format!("{name}:v2")).unwrap();
    let subject = client.resolve(&reference).unwrap();
    let found = client.attestations(&reference, &subject).unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].bundle, bundle_two);
    assert_eq!(found[1].via, Via::ClassicTag);

    let reference = Reference::parse(&format!("{}/other:v1", registry.host())).unwrap();
    let subject = client.resolve(&reference).unwrap();
    assert_eq!(subject.digest, bare);
    assert_eq!(client.attestations(&reference, &subject).unwrap(), vec![]);
}

/// Each input error exits 2 with its message, and pushes nothing: the bundle of another
/// image's statement, a file that is no bundle, a reference without tag or digest, an unknown
/// tag, an unknown repository, HTTPS to a plain HTTP registry (the hint names the flag), a
/// closed port.
#[test]
fn attach_refuses_what_cannot_be_attached() {
    let registry = TestRegistry::start();
    let one = registry.push_image("app", "v1", "one\n");
    let two = registry.push_image("app", "v2", "two\n");
    let name = format!("{}/app", registry.host());
    let (r, _) = tiny_repo();
    let dir = tempfile::tempdir().unwrap();
    let for_two = dir.path().join("two.sigstore.json");
    std::fs::write(&for_two, signed_bundle(&name, &two)).unwrap();
    let for_two = for_two.display().to_string();
    let statement = dir.path().join("statement.json");
    std::fs::write(
        &statement,
        r#"{"_type": "https://in-toto.io/Statement/v1"}"#,
    )
    .unwrap();
    let statement = statement.display().to_string();
    let closed = format!("127.0.0.1:{}/app:v1", free_port());
    let nothing = format!("{}/nothing:v1", registry.host());
    let (v1, v2, v9) = (
        format!("{name}:v1"),
        format!("{name}:v2"),
        format!("{name}:v9"),
    );

    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "attach",
                &v1,
                "--attestation",
                &for_two,
                "--allow-http-registry",
            ],
            "does not name the image",
        ),
        (
            vec![
                "attach",
                &v1,
                "--attestation",
                &statement,
                "--allow-http-registry",
            ],
            "not a Sigstore bundle v0.3",
        ),
        (
            vec![
                "attach",
                &name,
                "--attestation",
                &for_two,
                "--allow-http-registry",
            ],
            "names neither a tag nor a digest",
        ),
        (
            vec![
                "attach",
                &v9,
                "--attestation",
                &for_two,
                "--allow-http-registry",
            ],
            "has no tag `v9` in the repository `app`",
        ),
        (
            vec![
                "attach",
                &nothing,
                "--attestation",
                &for_two,
                "--allow-http-registry",
            ],
            "has no tag `v1` in the repository `nothing`",
        ),
        (
            vec!["attach", &v2, "--attestation", &for_two],
            "pass --allow-http-registry",
        ),
        (
            vec![
                "attach",
                &closed,
                "--attestation",
                &for_two,
                "--allow-http-registry",
            ],
            "cannot reach the registry 127.0.0.1:",
        ),
    ];
    for (args, expected) in cases {
        let run = r.shipmoor(&args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stderr.contains(expected), "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
    }
    // Nothing was attached to either image.
    let client = registry_client();
    for digest in [&one, &two] {
        let reference = Reference::parse(&format!("{name}@{digest}")).unwrap();
        let subject = client.resolve(&reference).unwrap();
        assert_eq!(client.attestations(&reference, &subject).unwrap(), vec![]);
    }
}

/// `claim-check --attach`'s input errors are found before the floor runs and write nothing:
/// an unsigned run, a reference without a tag, a closed port, an unknown tag.
#[test]
fn claim_check_attach_checks_its_image_before_any_work() {
    let registry = TestRegistry::start();
    registry.push_image("app", "v1", "one\n");
    let (r, base) = tiny_repo();
    let closed = format!("127.0.0.1:{}/app:v1", free_port());
    let app = format!("{}/app", registry.host());
    let unknown = format!("{app}:v9");
    let tagged = format!("{app}:v1");
    let signed = [
        "--sign",
        "key",
        "--key",
        GOLDEN_KEY,
        "--allow-http-registry",
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--attach", &tagged, "--allow-http-registry"],
            "--attach pushes the signed VSA",
        ),
        (
            [&["--attach", app.as_str()][..], &signed].concat(),
            "names neither a tag nor a digest",
        ),
        (
            [&["--attach", closed.as_str()][..], &signed].concat(),
            "cannot reach the registry",
        ),
        (
            [&["--attach", unknown.as_str()][..], &signed].concat(),
            "has no tag `v9`",
        ),
        (vec!["--allow-http-registry"], "is used only with --attach"),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["claim-check", "--base", &base];
        args.extend(extra.iter().copied());
        let run = r.shipmoor(&args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stderr.contains(expected), "{args:?}: {run:?}");
        assert!(
            !r.exists(".shipmoor/claim-check.vsa.json"),
            "{args:?}: wrote the VSA"
        );
        // The floor's first progress line, which a run past its input checks prints.
        assert!(
            !run.stderr.contains("criteria from"),
            "{args:?}: the floor ran: {run:?}"
        );
    }
}

/// A registry that takes basic authentication: anonymous is refused with a hint at
/// `docker login`; the Docker config file's `auths.<host>.auth` works, and so do the
/// environment variables (which win over the file); a wrong password is refused.
#[test]
fn credentials_from_the_docker_config_file_or_the_environment() {
    let registry = TestRegistry::start_with_basic_auth();
    let image = registry.push_image("app", "v1", "one\n");
    let name = format!("{}/app", registry.host());
    let reference = format!("{name}:v1");
    let (r, _) = tiny_repo();
    let home = tempfile::tempdir().unwrap();
    let docker = tempfile::tempdir().unwrap();
    let file = home.path().join("vsa.sigstore.json");
    std::fs::write(&file, signed_bundle(&name, &image)).unwrap();
    let file = file.display().to_string();
    let args = [
        "attach",
        reference.as_str(),
        "--attestation",
        file.as_str(),
        "--allow-http-registry",
        "--format",
        "json",
    ];
    let home_env = home.path().to_str().unwrap();
    let docker_env = docker.path().to_str().unwrap();
    let anonymous = r.shipmoor_env(&args, &[("HOME", home_env), ("DOCKER_CONFIG", docker_env)]);
    assert_eq!(anonymous.code, 2, "{anonymous:?}");
    assert!(
        anonymous.stderr.contains("refused the credentials")
            && anonymous
                .stderr
                .contains(&format!("docker login {}", registry.host())),
        "{anonymous:?}"
    );

    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    std::fs::write(
        docker.path().join("config.json"),
        json!({"auths": {registry.host(): {"auth": auth}}}).to_string(),
    )
    .unwrap();
    let from_file = r.shipmoor_env(&args, &[("HOME", home_env), ("DOCKER_CONFIG", docker_env)]);
    assert_eq!(from_file.code, 0, "{from_file:?}\n{}", registry.log());
    let out: Value = serde_json::from_str(&from_file.stdout).unwrap();
    let artifact = out["artifact"].as_str().unwrap().to_string();
    let bundle = std::fs::read(&file).unwrap();
    assert_attached(&registry, "app", &image, &artifact, &bundle);

    let from_env = r.shipmoor_env(
        &args,
        &[
            ("HOME", home_env),
            ("DOCKER_CONFIG", home_env),
            ("SHIPMOOR_REGISTRY_USERNAME", USER),
            ("SHIPMOOR_REGISTRY_PASSWORD", PASSWORD),
        ],
    );
    assert_eq!(from_env.code, 0, "{from_env:?}");
    let wrong = r.shipmoor_env(
        &args,
        &[
            ("HOME", home_env),
            ("DOCKER_CONFIG", docker_env),
            ("SHIPMOOR_REGISTRY_USERNAME", USER),
            ("SHIPMOOR_REGISTRY_PASSWORD", "not-the-password"),
        ],
    );
    assert_eq!(wrong.code, 2, "{wrong:?}");
    assert!(
        wrong.stderr.contains("refused the credentials"),
        "{wrong:?}"
    );
}

/// Admission by image reference, end to end: a READY change's VSA attached by
/// `claim-check --attach` admits its image; a BLOCKED change's VSA attached to another image
/// denies that one with its reasons; an image with nothing attached is denied with that reason;
/// the image's own digest is the subject, so the READY VSA attached to the wrong image (by
/// `shipmoor attach`, which refuses it) cannot admit it.
#[test]
fn admit_by_image_reference_reads_what_claim_check_attached() {
    let registry = TestRegistry::start();
    let host = registry.host();
    let ready_image = registry.push_image("shop", "ready", "ready\n");
    let blocked_image = registry.push_image("shop", "blocked", "blocked\n");
    let bare_image = registry.push_image("shop", "bare", "bare\n");
    let now = common::now_epoch();

    let claim_check = |r: &Repo, base: &str, tag: &str| {
        r.shipmoor_env(
            &[
                "claim-check",
                "--base",
                base,
                "--sign",
                "key",
                "--key",
                GOLDEN_KEY,
                "--attach",
                &format!("{host}/shop:{tag}"),
                "--allow-http-registry",
            ],
            &[("SOURCE_DATE_EPOCH", &now)],
        )
    };
    let (ready, base) = tiny_repo();
    let run = claim_check(&ready, &base, "ready");
    assert_eq!(run.code, 0, "{run:?}\n{}", registry.log());
    // The BLOCKED change: the pattern its criterion needs is not at head.
    let (blocked, base) = tiny_repo();
    blocked.write("svc/refund.txt", "refund: keep the intent, still\n");
    blocked.commit("head, without the fix");
    let run = claim_check(&blocked, &base, "blocked");
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("claim-check: attached "), "{run:?}");

    // Read back with skopeo: the BLOCKED VSA is attached to its own image only.
    let bundle = std::fs::read(blocked.path().join(BUNDLE)).unwrap();
    let index = registry.inspect_raw(&format!("shop:{}", blocked_image.replacen(':', "-", 1)));
    let artifact = index["manifests"][0]["digest"]
        .as_str()
        .unwrap()
        .to_string();
    assert_attached(&registry, "shop", &blocked_image, &artifact, &bundle);

    let (_dir, policy) = key_policy("git+https://example.com/shipmoor/*");
    let admit = |tag: &str| admit_image(&ready, &policy, &format!("{host}/shop:{tag}"));

    let (code, d) = admit("ready");
    assert_eq!(code, 0, "{d:#}");
    assert_eq!(d["decision"], "allow");
    assert_eq!(d["subject"], ready_image);
    assert_eq!(d["image"], format!("{host}/shop@{ready_image}"));
    // Both forms, each verified on its own.
    assert_eq!(d["attestations"].as_array().unwrap().len(), 2);
    assert_eq!(d["attestations"][0]["verdict"], "READY");
    assert_eq!(d["attestations"][1]["verdict"], "READY");
    assert!(
        d["attestations"][1]["source"]
            .as_str()
            .unwrap()
            .ends_with("(classic-tag)"),
        "{d:#}"
    );
    assert!(
        d["attestations"][0]["source"]
            .as_str()
            .unwrap()
            .ends_with("(tag-schema)"),
        "{d:#}"
    );

    let (code, d) = admit("blocked");
    assert_eq!(code, 1, "{d:#}");
    assert_eq!(d["subject"], blocked_image);
    // Each form denied on its own, for the same reasons.
    let reasons: Vec<&str> = d["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(reasons.len(), 4, "{d:#}");
    for (i, why) in [
        "verification_result: verificationResult is FAILED, not PASSED",
        "verdict: the verdict is BLOCKED; the policy admits READY",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            reasons[i].contains("(tag-schema): ") && reasons[i].ends_with(why),
            "{d:#}"
        );
        assert!(
            reasons[i + 2].contains("(classic-tag): ") && reasons[i + 2].ends_with(why),
            "{d:#}"
        );
    }

    let (code, d) = admit("bare");
    assert_eq!(code, 1, "{d:#}");
    assert_eq!(
        d["reasons"],
        json!([format!(
            "no Claim Check VSA is attached to {host}/shop@{bare_image}"
        )])
    );

    // The READY bundle is about the ready image: `attach` will not put it on the bare one.
    let wrong = attach_file(&ready, &format!("{host}/shop:bare"), BUNDLE, &[]);
    assert_eq!(wrong.code, 2, "{wrong:?}");
    assert_eq!(admit("bare").0, 1);

    // A human reads the same decision.
    let human = ready.shipmoor(&[
        "admit",
        "--policy",
        policy.to_str().unwrap(),
        "--image",
        &format!("{host}/shop:blocked"),
        "--allow-http-registry",
    ]);
    assert_eq!(human.code, 1, "{human:?}");
    assert!(
        human.stdout.starts_with(&format!(
            "Admit  DENY  ·  {host}/shop@{}…  ·  policy ",
            &blocked_image[..19]
        )),
        "{}",
        human.stdout
    );
}

/// `admit --image` input errors: exit 2, and a message that says what to fix.
#[test]
fn admit_image_input_errors() {
    let registry = TestRegistry::start();
    let host = registry.host();
    let image = registry.push_image("shop", "v1", "v1\n");
    let (r, _) = tiny_repo();
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, "version: 1\nrepositories: [\"*\"]\n").unwrap();
    let key = GOLDEN_PUBLIC_KEY;
    let admit = |image: &str, extra: &[&str]| {
        let mut args = vec![
            "admit",
            "--policy",
            policy.to_str().unwrap(),
            "--key",
            key,
            "--image",
            image,
        ];
        args.extend(extra);
        r.shipmoor(&args)
    };
    let closed = format!("127.0.0.1:{}/shop:v1", free_port());
    for (image, extra, says) in [
        (
            format!("{host}/shop"),
            vec!["--allow-http-registry"],
            "add `:tag` or `@sha256:",
        ),
        (closed.clone(), vec!["--allow-http-registry"], "127.0.0.1:"),
        (format!("{host}/shop:v1"), vec![], "--allow-http-registry"),
        (
            format!("{host}/shop:v9"),
            vec!["--allow-http-registry"],
            "v9",
        ),
        (
            format!("{host}/shop:v1"),
            vec![
                "--allow-http-registry",
                "--subject",
                &format!("sha256:{}", "0".repeat(64)),
            ],
            "is not the image",
        ),
    ] {
        let run = admit(&image, &extra);
        assert_eq!(run.code, 2, "{image} {extra:?}: {run:?}");
        assert!(
            run.stderr.contains(says),
            "{image} {extra:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{run:?}");
    }
    // The right --subject is accepted beside --image.
    let run = admit(
        &format!("{host}/shop:v1"),
        &["--allow-http-registry", "--subject", &image],
    );
    assert_eq!(run.code, 1, "nothing attached: {run:?}");
}

/// A registry that drops the connection mid-answer (the manifest's headers and half its body):
/// admission is an input error naming the registry, at once, with nothing on stdout and no
/// panic; the same image through an honest connection is read as before.
#[test]
fn a_registry_that_drops_the_connection_mid_answer() {
    let registry = TestRegistry::start();
    registry.push_image("shop", "v1", "v1\n");
    let (r, _) = tiny_repo();
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, "version: 1\nrepositories: [\"*\"]\n").unwrap();
    let admit = |port: u16| {
        let image = format!("127.0.0.1:{port}/shop:v1");
        let args = [
            "admit",
            "--policy",
            policy.to_str().unwrap(),
            "--key",
            GOLDEN_PUBLIC_KEY,
            "--image",
            &image,
            "--allow-http-registry",
        ];
        r.shipmoor_within(&args, 60)
            .unwrap_or_else(|| panic!("{args:?} did not finish"))
    };
    let cutting = CuttingProxy::start(registry.port, |line| {
        line.starts_with("GET ") && line.contains("/manifests/")
    });
    let run = admit(cutting.port);
    assert!(
        !cutting.cut.lock().unwrap().is_empty(),
        "nothing was cut: {run:?}"
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(
        run.stderr.contains(&format!("127.0.0.1:{}", cutting.port)),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("help: the connection to the registry broke off"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    // Through an honest relay: nothing attached, so no attestation admits it.
    let honest = CuttingProxy::start(registry.port, |_| false);
    assert_eq!(admit(honest.port).code, 1);
}

/// `attach --form classic` writes cosign's classic form and nothing else, read back with skopeo
/// against the layout in cosign's source (sigstore/cosign d6d86c224e5899b54f56cbb063b79dc43abc11c2:
/// `pkg/oci/remote/remote.go` `AttestationTag`, `pkg/oci/static/signature.go`,
/// `pkg/oci/mutate/signatures.go`, `pkg/oci/empty/empty.go`; the config as go-containerregistry
/// `pkg/v1/config.go` serializes it): the tag, the manifest and config media types, the layer's
/// media type and annotations, the envelope; `admit --image` admits from that form alone, and
/// from the bundle form alone.
#[test]
fn the_classic_form_is_cosigns_and_admit_reads_either_form_alone() {
    let registry = TestRegistry::start();
    let host = registry.host();
    let classic_image = registry.push_image("shop", "classic", "classic\n");
    let bundle_image = registry.push_image("shop", "bundle", "bundle\n");
    let (r, base) = tiny_repo();
    let now = common::now_epoch();
    let run = r.shipmoor_env(
        &[
            "claim-check",
            "--base",
            &base,
            "--sign",
            "key",
            "--key",
            GOLDEN_KEY,
            "--subject",
            &format!("{host}/shop={classic_image}"),
            "--subject",
            &format!("{host}/shop={bundle_image}"),
        ],
        &[("SOURCE_DATE_EPOCH", &now)],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let bundle = std::fs::read(r.path().join(BUNDLE)).unwrap();

    let out = attach_form(&r, &format!("{host}/shop:classic"), "classic");
    assert!(
        out.get("artifact").is_none() && out.get("via").is_none(),
        "{out}"
    );
    let tag = format!("sha256-{}.att", classic_image.trim_start_matches("sha256:"));
    assert_eq!(out["classic"]["tag"], tag);
    // No bundle referrer was written: the tag schema's index does not exist.
    let index = Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false"])
        .arg(format!(
            "docker://{host}/shop:{}",
            classic_image.replacen(':', "-", 1)
        ))
        .output()
        .unwrap();
    assert!(!index.status.success(), "an index was written");

    let manifest = registry.inspect_raw(&format!("shop:{tag}"));
    assert_eq!(manifest["schemaVersion"], 2);
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert!(
        manifest.get("annotations").is_none() && manifest.get("subject").is_none(),
        "{manifest}"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.oci.image.config.v1+json"
    );
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    let layer = &layers[0];
    assert_eq!(layer["mediaType"], "application/vnd.dsse.envelope.v1+json");
    assert_eq!(
        layer["annotations"],
        json!({"dev.cosignproject.cosign/signature": "", "predicateType": VSA}),
        "a keyed attestation carries the two annotations cosign writes without a log entry"
    );
    assert_eq!(out["classic"]["layer"], layer["digest"]);
    // The blobs, copied out by skopeo: the config's bytes and the envelope's.
    let copy = tempfile::tempdir().unwrap();
    common::registry::skopeo(&[
        "copy",
        "--quiet",
        "--src-tls-verify=false",
        &format!("docker://{host}/shop:{tag}"),
        &format!("dir:{}", copy.path().display()),
    ]);
    let blob = |digest: &Value| {
        std::fs::read(
            copy.path()
                .join(digest.as_str().unwrap().trim_start_matches("sha256:")),
        )
        .unwrap()
    };
    let config = String::from_utf8(blob(&manifest["config"]["digest"])).unwrap();
    let l = layer["digest"].as_str().unwrap();
    assert_eq!(
        config,
        format!(
            r#"{{"architecture":"","created":"0001-01-01T00:00:00Z","history":[{{"created":"0001-01-01T00:00:00Z"}}],"os":"","rootfs":{{"type":"layers","diff_ids":["{l}"]}},"config":{{}}}}"#
        )
    );
    let envelope: Value = serde_json::from_slice(&blob(&layer["digest"])).unwrap();
    let b: Value = serde_json::from_slice(&bundle).unwrap();
    assert_eq!(envelope["payloadType"], "application/vnd.in-toto+json");
    assert_eq!(envelope["payload"], b["dsseEnvelope"]["payload"]);
    assert_eq!(
        envelope["signatures"],
        json!([{"keyid": "", "sig": b["dsseEnvelope"]["signatures"][0]["sig"]}])
    );
    // The envelope verifies with the key, as `cosign verify-attestation --key --insecure-ignore-tlog` checks it.
    let verified = r.shipmoor(&[
        "replay",
        &copy
            .path()
            .join(l.trim_start_matches("sha256:"))
            .display()
            .to_string(),
        "--key",
        GOLDEN_PUBLIC_KEY,
        "--evidence",
        ".shipmoor/evidence",
    ]);
    assert_eq!(verified.code, 0, "{verified:?}");

    let out = attach_form(&r, &format!("{host}/shop:bundle"), "bundle");
    assert!(out.get("classic").is_none(), "{out}");

    let (_dir, policy) = key_policy("git+https://example.com/shipmoor/oci");
    for (tag, via) in [("classic", "(classic-tag)"), ("bundle", "(tag-schema)")] {
        let (code, d) = admit_image(&r, &policy, &format!("{host}/shop:{tag}"));
        assert_eq!(code, 0, "{tag}: {d:#}");
        let found = d["attestations"].as_array().unwrap();
        assert_eq!(found.len(), 1, "{tag}: {d:#}");
        assert!(found[0]["source"].as_str().unwrap().ends_with(via), "{d:#}");
    }
}
