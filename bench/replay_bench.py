"""Helpers of bench/replay.sh: the Python verifiers, the per-process timer and the table.

usage:
  replay_bench.py jwt ISSUER SUBJECT
      An unsigned (alg none) identity token, valid ten minutes, for the local mock Fulcio.
  replay_bench.py trust-config TRUSTED_ROOT.json BASE_URL OUT.json
      A sigstore-python ClientTrustConfig wrapping the mock's trusted root (signing config
      pointing at the mock; verification reads only the trusted root).
  replay_bench.py rekor-proxy UPSTREAM_URL URL_FILE
      A Rekor (API v1) front for the mock on 127.0.0.1: writes its URL to URL_FILE, forwards
      every request to UPSTREAM_URL, and first canonicalizes a proposed `dsse` entry's verifiers
      the way Rekor does (the certificate re-encoded as PEM with LF line endings). Serves until
      its stdin closes.
  replay_bench.py sslib-once ENVELOPE PUBLIC_KEY.pem KEYID
      securesystemslib verifies the DSSE envelope once (a whole process: import, key, verify).
  replay_bench.py sslib-inprocess N ENVELOPE PUBLIC_KEY.pem KEYID OUT.json
      securesystemslib in one process: N timed verifications (JSON parse + Envelope.from_dict +
      Envelope.verify; the key loaded once).
  replay_bench.py sigstore-inprocess N BUNDLE TRUST_CONFIG IDENTITY ISSUER SHA256 OUT.json
      sigstore-python in one process: N timed verifications (Bundle.from_json +
      Verifier.verify_dsse + the statement's subject matching SHA256; the Verifier and its
      trusted root built once), as `sigstore verify identity --offline` does.
  replay_bench.py sigstore-once BUNDLE TRUST_CONFIG IDENTITY ISSUER SHA256
      sigstore-python verifies the keyless bundle once (a whole process), as above.
  replay_bench.py per-process N LABEL FORM WHAT OUT.json [--expect-stderr TEXT] -- COMMAND...
      Runs COMMAND N times (after one untimed run), each must exit 0 (or, with --expect-stderr,
      fail saying TEXT); wall time per run.
  replay_bench.py table RESULTS.json...
      The comparison table.

Every measurement is written as JSON rows {verifier, form, what, mode, n, mean_ms, median_ms,
min_ms}.
"""

import base64
import json
import os
import statistics
import subprocess
import sys
import time


def stats(ms):
    ms = sorted(ms)
    return {
        "n": len(ms),
        "mean_ms": statistics.fmean(ms),
        "median_ms": statistics.median(ms),
        "min_ms": ms[0],
    }


def measure(n, f):
    for _ in range(max(1, min(10, n // 10))):
        f()
    ms = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ms.append((time.perf_counter() - t) * 1e3)
    return stats(ms)


def write_rows(path, rows):
    with open(path, "w") as f:
        json.dump(rows, f, indent=2)
        f.write("\n")


def show(row):
    print(
        f"  {row['verifier']:<19} {row['form']:<20} {row['what']:<46} "
        f"mean {row['mean_ms']:>8.3f} ms  median {row['median_ms']:>8.3f} ms  "
        f"min {row['min_ms']:>8.3f} ms  (n={row['n']})"
    )


# --------------------------------------------------------------------------------------------
# Inputs


def jwt(issuer, subject):
    now = int(time.time())
    part = lambda v: base64.urlsafe_b64encode(json.dumps(v).encode()).rstrip(b"=").decode()
    claims = {
        "iss": issuer,
        "sub": subject,
        "aud": "sigstore",
        "email": "ci@shipmoor.test",
        "email_verified": True,
        "iat": now,
        "exp": now + 600,
    }
    print(f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.")
    return 0


def trust_config(root_path, base_url, out_path):
    with open(root_path) as f:
        root = json.load(f)
    since = root["certificateAuthorities"][0]["validFor"]["start"]

    def service(version):
        return {
            "url": base_url,
            "majorApiVersion": version,
            "validFor": {"start": since},
            "operator": "shipmoor-bench-mock",
        }

    config = {
        "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
        "trustedRoot": root,
        "signingConfig": {
            "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
            "caUrls": [service(1)],
            "oidcUrls": [],
            "rekorTlogUrls": [service(1)],
            "rekorTlogConfig": {"selector": "ANY"},
            "tsaUrls": [],
            "tsaConfig": {"selector": "ANY"},
        },
    }
    with open(out_path, "w") as f:
        json.dump(config, f, indent=2)
    # Fail here, not in the timed runs, if sigstore-python refuses it.
    from sigstore.models import ClientTrustConfig

    ClientTrustConfig.from_json(json.dumps(config)).trusted_root
    return 0


# --------------------------------------------------------------------------------------------
# The Rekor front


def canonical_verifiers(body):
    """Rekor stores a dsse entry's verifier as `key.CanonicalValue()`: the certificate parsed and
    written again as PEM (LF line endings). The mock stores the verifier as proposed (the Rust
    signer proposes CRLF PEM), and sigstore-python compares the logged verifier with the
    bundle's certificate as LF PEM byte for byte, so without this it refuses the bundle."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    entry = json.loads(body)
    proposed = entry.get("kind") == "dsse" and (entry.get("spec") or {}).get("proposedContent")
    if not proposed:
        return body
    canonical = []
    for v in proposed.get("verifiers") or []:
        cert = x509.load_pem_x509_certificate(base64.b64decode(v))
        canonical.append(base64.b64encode(cert.public_bytes(Encoding.PEM)).decode())
    proposed["verifiers"] = canonical
    return json.dumps(entry).encode()


def rekor_proxy(upstream, url_file):
    import http.client
    import threading
    import urllib.parse
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    up = urllib.parse.urlsplit(upstream)
    if up.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"the upstream must be on loopback, not {upstream}")

    class Handler(BaseHTTPRequestHandler):
        def forward(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.command == "POST" and self.path.split("?")[0] == "/api/v1/log/entries":
                body = canonical_verifiers(body)
            conn = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
            headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
            conn.request(self.command, self.path, body=body or None, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            conn.close()

        do_GET = do_POST = forward

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(url_file + ".tmp", "w") as f:
        f.write(f"http://127.0.0.1:{server.server_address[1]}\n")
    os.replace(url_file + ".tmp", url_file)
    sys.stdin.read()  # until the script closes our stdin (or dies)
    server.shutdown()
    return 0


# --------------------------------------------------------------------------------------------
# securesystemslib


def sslib_key(pem_path, keyid):
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from securesystemslib.signer import SSlibKey

    with open(pem_path, "rb") as f:
        # Our keyid (base64 of SHA-256 over the SPKI DER): securesystemslib only tries a
        # signature whose keyid is the key's.
        return SSlibKey.from_crypto(load_pem_public_key(f.read()), keyid=keyid)


def sslib_verify(envelope_bytes, key):
    from securesystemslib.dsse import Envelope

    envelope = Envelope.from_dict(json.loads(envelope_bytes))
    accepted = envelope.verify([key], 1)
    if key.keyid not in accepted:
        raise SystemExit(f"securesystemslib accepted {sorted(accepted)}, not {key.keyid}")
    return envelope.payload


def sslib_once(envelope_path, pem_path, keyid):
    with open(envelope_path, "rb") as f:
        sslib_verify(f.read(), sslib_key(pem_path, keyid))
    return 0


def sslib_inprocess(n, envelope_path, pem_path, keyid, out_path):
    key = sslib_key(pem_path, keyid)
    with open(envelope_path, "rb") as f:
        data = f.read()
    row = {
        "verifier": "securesystemslib",
        "form": "DSSE envelope (key)",
        "what": "Envelope.from_dict + Envelope.verify",
        "mode": "in-process",
        **measure(int(n), lambda: sslib_verify(data, key)),
    }
    show(row)
    write_rows(out_path, [row])
    return 0


# --------------------------------------------------------------------------------------------
# sigstore-python


def sigstore_verifier(trust_path, identity, issuer, sha256):
    """What `sigstore verify identity --offline --bundle B sha256:HEX` does for a DSSE bundle,
    as a function of the bundle's bytes (the trust config loaded once).

    One difference: the CLI then parses the payload with sigstore-python's strict in-toto model,
    whose subject digests may only be SHA-2/SHA-3 names, so it refuses a statement with a
    `gitCommit` digest (every Claim Check VSA has one: the in-toto DigestSet allows it) after
    the signature checks have passed. Here the subject is matched on the parsed JSON instead."""
    from sigstore.dsse import Envelope
    from sigstore.models import Bundle, ClientTrustConfig
    from sigstore.verify import Verifier, policy

    with open(trust_path) as f:
        trust = ClientTrustConfig.from_json(f.read())
    verifier = Verifier(trusted_root=trust.trusted_root)
    policy_ = policy.Identity(identity=identity, issuer=issuer)

    def verify(data):
        bundle = Bundle.from_json(data)
        type_, payload = verifier.verify_dsse(bundle=bundle, policy=policy_)
        if type_ != Envelope._TYPE:
            raise SystemExit(f"unexpected DSSE payload type {type_}")
        subjects = json.loads(payload)["subject"]
        if not any(s.get("digest", {}).get("sha256") == sha256 for s in subjects):
            raise SystemExit(f"the statement has no subject with sha256 {sha256}")
        return payload

    return verify


def sigstore_once(bundle_path, trust_path, identity, issuer, sha256):
    verify = sigstore_verifier(trust_path, identity, issuer, sha256)
    with open(bundle_path, "rb") as f:
        verify(f.read())
    return 0


def sigstore_inprocess(n, bundle_path, trust_path, identity, issuer, sha256, out_path):
    verify = sigstore_verifier(trust_path, identity, issuer, sha256)
    with open(bundle_path, "rb") as f:
        data = f.read()
    row = {
        "verifier": "sigstore-python",
        "form": "keyless bundle",
        "what": "Bundle.from_json + Verifier.verify_dsse",
        "mode": "in-process",
        **measure(int(n), lambda: verify(data)),
    }
    show(row)
    write_rows(out_path, [row])
    return 0


# --------------------------------------------------------------------------------------------
# Per process


def per_process(n, label, form, what, out_path, command, expect_stderr=None):
    def once():
        r = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = r.stderr.decode(errors="replace")
        if expect_stderr is None and r.returncode == 0:
            return
        # Compared without whitespace: rich wraps the CLI's log lines.
        squeeze = lambda t: "".join(t.split())
        if expect_stderr is not None and r.returncode != 0 and squeeze(expect_stderr) in squeeze(err):
            return
        sys.stderr.write(r.stdout.decode(errors="replace") + err)
        want = "exit 0" if expect_stderr is None else f"a failure saying {expect_stderr!r}"
        raise SystemExit(f"exit {r.returncode}, not {want}: {' '.join(command)}")

    once()  # untimed: page cache, Python bytecode cache
    ms = []
    for _ in range(int(n)):
        t = time.perf_counter()
        once()
        ms.append((time.perf_counter() - t) * 1e3)
    row = {"verifier": label, "form": form, "what": what, "mode": "per-process", **stats(ms)}
    show(row)
    write_rows(out_path, [row])
    return 0


# --------------------------------------------------------------------------------------------
# The table


def table(paths):
    rows = [r for p in paths for r in json.load(open(p))]

    def find(verifier, form, mode, what_prefix=""):
        for r in rows:
            if (
                r["verifier"] == verifier
                and r["form"] == form
                and r["mode"] == mode
                and r["what"].startswith(what_prefix)
            ):
                return r
        return None

    def ms(r):
        return f"{r['mean_ms']:.3f} / {r['median_ms']:.3f}" if r else "-"

    lines = [
        ("verifier", "form", "what is timed", "in-process ms", "per-process ms"),
    ]
    plan = [
        ("shipmoor", "DSSE envelope (key)", "replay", "shipmoor replay (6 steps)"),
        ("shipmoor", "DSSE envelope (key)", "signature only", "shipmoor signature step alone"),
        ("securesystemslib", "DSSE envelope (key)", "", "securesystemslib Envelope.verify"),
        ("shipmoor", "keyed bundle", "replay", "shipmoor replay (6 steps)"),
        ("shipmoor", "keyed bundle", "signature only", "shipmoor signature step alone"),
        ("shipmoor", "keyless bundle", "replay", "shipmoor replay (6 steps)"),
        (
            "shipmoor",
            "keyless bundle",
            "signature only: attest",
            "shipmoor signature step alone (reads root)",
        ),
        (
            "shipmoor",
            "keyless bundle",
            "signature only: sigstore-verify",
            "sigstore-verify alone, root loaded once",
        ),
        ("sigstore-python", "keyless bundle", "", "sigstore-python Verifier.verify_dsse"),
        ("sigstore-python CLI", "keyless bundle", "", "python -m sigstore verify identity (*)"),
    ]
    for verifier, form, prefix, what in plan:
        inproc = find(verifier, form, "in-process", prefix)
        perproc = find(verifier, form, "per-process", prefix) if "alone" not in what else None
        if inproc or perproc:
            lines.append((verifier, form, what, ms(inproc), ms(perproc)))
    widths = [max(len(l[i]) for l in lines) for i in range(5)]
    print("Time per attestation, milliseconds: mean / median")
    for i, l in enumerate(lines):
        print("  " + "  ".join(c.ljust(widths[j]) for j, c in enumerate(l)).rstrip())
        if i == 0:
            print("  " + "  ".join("-" * w for w in widths))

    def ratio(a, b):
        if not a or not b:
            return "-"
        return f"{a['mean_ms'] / b['mean_ms']:.2f}x (median {a['median_ms'] / b['median_ms']:.2f}x)"

    print()
    print("Ratios, shipmoor time / Python verifier time (below 1: shipmoor is faster):")
    pairs = [
        ("DSSE envelope (key)", "securesystemslib"),
        ("keyless bundle", "sigstore-python"),
    ]
    for form, other in pairs:
        o_in = find(other, form, "in-process")
        o_pp = find(other, form, "per-process")
        full_in = find("shipmoor", form, "in-process", "replay")
        full_pp = find("shipmoor", form, "per-process", "replay")
        sig_in = find("shipmoor", form, "in-process", "signature only")
        print(f"  {form} vs {other}:")
        print(f"    {'replay, in process:':<48}{ratio(full_in, o_in)}")
        print(f"    {'replay, per process:':<48}{ratio(full_pp, o_pp)}")
        print(f"    {'signature step alone, in process:':<48}{ratio(sig_in, o_in)}")
        if form == "keyless bundle":
            pre = find("shipmoor", form, "in-process", "signature only: sigstore-verify")
            cli = find("sigstore-python CLI", form, "per-process")
            print(f"    {'sigstore-verify alone, root loaded once:':<48}{ratio(pre, o_in)}")
            print(f"    {'replay, per process, vs the sigstore CLI (*):':<48}{ratio(full_pp, cli)}")
    if find("sigstore-python CLI", "keyless bundle", "per-process"):
        print()
        print(
            "(*) `python -m sigstore verify identity --offline` checks the whole bundle, then refuses\n"
            "    the statement: sigstore-python's in-toto model allows only SHA-2/SHA-3 subject\n"
            "    digests, and a Claim Check VSA names its commit with `gitCommit` (which the in-toto\n"
            "    DigestSet allows). It is timed to that failure; the sigstore-python rows above run\n"
            "    the same calls with the subject matched on the JSON."
        )
    return 0


def main():
    a = sys.argv[1:]
    if not a:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, rest = a[0], a[1:]
    if cmd == "jwt" and len(rest) == 2:
        return jwt(*rest)
    if cmd == "trust-config" and len(rest) == 3:
        return trust_config(*rest)
    if cmd == "rekor-proxy" and len(rest) == 2:
        return rekor_proxy(*rest)
    if cmd == "sslib-once" and len(rest) == 3:
        return sslib_once(*rest)
    if cmd == "sslib-inprocess" and len(rest) == 5:
        return sslib_inprocess(*rest)
    if cmd == "sigstore-inprocess" and len(rest) == 7:
        return sigstore_inprocess(*rest)
    if cmd == "sigstore-once" and len(rest) == 5:
        return sigstore_once(*rest)
    if cmd == "per-process" and len(rest) >= 7 and rest[5] == "--":
        return per_process(*rest[:5], rest[6:])
    if cmd == "per-process" and len(rest) >= 9 and rest[5] == "--expect-stderr" and rest[7] == "--":
        return per_process(*rest[:5], rest[8:], expect_stderr=rest[6])
    if cmd == "table" and rest:
        return table(rest)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
