"""DSSE with securesystemslib, an implementation independent of ours.

usage:
  python3 dsse_securesystemslib.py verify ENVELOPE.json PUBLIC_KEY.pem KEYID
      Exit 0: the envelope verifies (the payload bytes go to stdout). Exit 1: securesystemslib
      rejected it (VerificationError).
  python3 dsse_securesystemslib.py sign PRIVATE_KEY.pem KEYID PAYLOAD_TYPE PAYLOAD_FILE OUT.json
      Signs PAYLOAD_FILE and writes the envelope JSON. Exit 0.

Exit 2 in every other case (bad usage, a missing module, an unexpected exception), so a test
never mistakes a crash for a rejection.

securesystemslib only verifies a signature whose keyid equals the key's, and computes its own
keyid by default: KEYID is ours, base64(SHA-256(SPKI DER)).
"""

import json
import sys


def public_key(pem_public_key, keyid):
    from securesystemslib.signer import SSlibKey

    if hasattr(SSlibKey, "from_crypto"):  # securesystemslib >= 1.0
        return SSlibKey.from_crypto(pem_public_key, keyid=keyid)
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    pem = pem_public_key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    return SSlibKey.from_pem(pem, keyid=keyid)  # 0.x


def verify(envelope_path, pem_path, keyid):
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import VerificationError

    with open(pem_path, "rb") as f:
        key = public_key(load_pem_public_key(f.read()), keyid)
    print(f"key: {key.keytype} {key.scheme} {key.keyid}", file=sys.stderr)
    with open(envelope_path, "rb") as f:
        envelope = Envelope.from_dict(json.load(f))
    try:
        accepted = envelope.verify([key], 1)
    except VerificationError as e:
        print(f"rejected: {e}", file=sys.stderr)
        return 1
    if keyid not in accepted:
        print(f"accepted {sorted(accepted)}, not {keyid}", file=sys.stderr)
        return 2
    sys.stdout.buffer.write(envelope.payload)
    return 0


def sign(pem_path, keyid, payload_type, payload_path, out_path):
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner

    with open(pem_path, "rb") as f:
        private_key = load_pem_private_key(f.read(), password=None)
    signer = CryptoSigner(private_key, public_key(private_key.public_key(), keyid))
    with open(payload_path, "rb") as f:
        payload = f.read()
    envelope = Envelope(payload, payload_type, {})
    envelope.sign(signer)
    with open(out_path, "w") as f:
        json.dump(envelope.to_dict(), f)
    return 0


def main():
    args = sys.argv[1:]
    if args[:1] == ["verify"] and len(args) == 4:
        return verify(*args[1:])
    if args[:1] == ["sign"] and len(args) == 6:
        return sign(*args[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException as e:  # a crash is never a rejection
        import traceback

        traceback.print_exc()
        print(f"crashed: {e!r}", file=sys.stderr)
        sys.exit(2)
