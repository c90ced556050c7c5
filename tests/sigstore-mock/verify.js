// An independent verifier for tests: @sigstore/verify, offline, against a given trusted root.
//
// Usage: node verify.js TRUSTED_ROOT BUNDLE IDENTITY ISSUER SHA256_HEX
//   1. Parses the trusted root and the bundle.
//   2. Verifies the bundle (certificate chain, SCT, transparency log entry, signature) and the
//      signer's identity (certificate SAN) and issuer.
//   3. @sigstore/verify does not match DSSE subjects, so checks here that the in-toto statement
//      has a subject with this `sha256` digest.
// Exit 0 and "verified" on stdout when all hold; exit 1 and the reason on stderr otherwise.
'use strict';

const fs = require('fs');
const { bundleFromJSON } = require('@sigstore/bundle');
const { TrustedRoot } = require('@sigstore/protobuf-specs');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');

function main() {
  const [rootPath, bundlePath, identity, issuer, sha256] = process.argv.slice(2);
  if (!sha256) {
    throw new Error('usage: node verify.js TRUSTED_ROOT BUNDLE IDENTITY ISSUER SHA256_HEX');
  }

  // 1. Inputs.
  const trustedRoot = TrustedRoot.fromJSON(JSON.parse(fs.readFileSync(rootPath, 'utf8')));
  const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(bundlePath, 'utf8')));

  // 2. The signature, its evidence and the signer.
  const verifier = new Verifier(toTrustMaterial(trustedRoot), {
    tlogThreshold: 1,
    ctlogThreshold: 1,
    timestampThreshold: 1,
  });
  verifier.verify(toSignedEntity(bundle), {
    subjectAlternativeName: identity,
    extensions: { issuer },
  });

  // 3. The statement's subject.
  if (bundle.content.$case !== 'dsseEnvelope') {
    throw new Error('the bundle holds no DSSE envelope');
  }
  const statement = JSON.parse(Buffer.from(bundle.content.dsseEnvelope.payload).toString('utf8'));
  const subjects = statement.subject || [];
  if (!subjects.some((s) => s.digest && s.digest.sha256 === sha256)) {
    throw new Error(`no subject of the statement has the sha256 digest ${sha256}`);
  }
  process.stdout.write('verified\n');
}

try {
  main();
} catch (e) {
  process.stderr.write(`@sigstore/verify: ${e && (e.code ? `${e.code}: ` : '')}${e && e.message}\n`);
  process.exit(1);
}
