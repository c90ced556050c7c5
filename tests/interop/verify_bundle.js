// Verifies a keyed Sigstore bundle (DSSE, no transparency-log entry) with @sigstore/verify, an
// implementation independent of ours.
//
// usage: NODE_PATH=<node_modules> node verify_bundle.js BUNDLE.json PUBLIC_KEY.pem
//
// The key is looked up by the bundle's hint; the keyid is computed here, independently, as
// base64(SHA-256(SPKI DER)) of the PEM key.
//
// Exit 0: the bundle verifies (the payload bytes go to stdout). Exit 1: @sigstore/verify rejected it (VerificationError, or the
// bundle's ValidationError). Exit 2: anything else (bad usage, a missing module, a crash), so a
// test never mistakes a crash for a rejection.
'use strict';

const crypto = require('crypto');
const fs = require('fs');

function main() {
  if (process.argv.length !== 4) {
    console.error('usage: node verify_bundle.js BUNDLE.json PUBLIC_KEY.pem');
    return 2;
  }
  const [bundlePath, pemPath] = process.argv.slice(2);
  const { bundleFromJSON, ValidationError } = require('@sigstore/bundle');
  const {
    toSignedEntity,
    toTrustMaterial,
    Verifier,
    VerificationError,
  } = require('@sigstore/verify');

  const publicKey = crypto.createPublicKey(fs.readFileSync(pemPath));
  const keyid = crypto
    .createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64');
  console.error(`key: ${publicKey.asymmetricKeyType} ${keyid}`);

  const keys = { [keyid]: { publicKey, validFor: () => true } };
  const findKey = (hint) => {
    const key = keys[hint];
    if (!key) {
      throw new VerificationError({ code: 'PUBLIC_KEY_ERROR', message: `key not found: ${hint}` });
    }
    return key;
  };
  // An empty trusted root: no CA, no log, no TSA. Only the key is trusted.
  const root = { tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [] };
  const trustMaterial = toTrustMaterial(root, findKey);
  const verifier = new Verifier(trustMaterial, {
    tlogThreshold: 0,
    ctlogThreshold: 0,
    tsaThreshold: 0,
    timestampThreshold: 0,
  });

  try {
    const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(bundlePath, 'utf8')));
    verifier.verify(toSignedEntity(bundle));
    process.stdout.write(Buffer.from(bundle.content.dsseEnvelope.payload));
    return 0;
  } catch (e) {
    if (e instanceof VerificationError || e instanceof ValidationError) {
      console.error(`rejected: ${e.name} ${e.code || ''} ${e.message} ${e.fields || ''}`);
      return 1;
    }
    throw e;
  }
}

try {
  process.exitCode = main();
} catch (e) {
  console.error(e);
  process.exitCode = 2;
}
