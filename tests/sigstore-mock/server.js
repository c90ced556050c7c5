// A local Sigstore for tests: Fulcio (POST /api/v2/signingCert) and Rekor API v1
// (POST /api/v1/log/entries) from @sigstore/mock's handlers, served on 127.0.0.1.
//
// Usage: node server.js OUT_DIR
//   1. Generates P-256 keys for the CA, the CT log and the transparency log.
//   2. Listens on 127.0.0.1, on a port the system chooses.
//   3. Writes OUT_DIR/trusted_root.json (protobuf-specs JSON) naming the mock's CA root, Rekor key
//      and CT key, valid from a minute ago.
//   4. Prints its base URL on stdout (one line), then serves until stdin closes or it is killed.
//
// The mock Fulcio accepts any JWT, signed or not (`alg: none`), puts the `sub` claim in the
// certificate's URI SAN and the `iss` claim in the issuer extensions.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const path = require('path');
const {
  initializeCA,
  initializeCTLog,
  initializeTLog,
  fulcioHandler,
  rekorHandler,
} = require('@sigstore/mock');

const b64 = (bytes) => Buffer.from(bytes).toString('base64');
const p256 = () => crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const spki = (keyPair) => keyPair.publicKey.export({ format: 'der', type: 'spki' });

async function main() {
  const outDir = process.argv[2];
  if (!outDir) {
    throw new Error('usage: node server.js OUT_DIR');
  }

  // 1. Keys, and 2. the listening socket (its URL is the transparency log's origin).
  const server = http.createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const base = `http://127.0.0.1:${server.address().port}`;
  const ctKeys = p256();
  const caKeys = p256();
  const tlogKeys = p256();
  const ctlog = await initializeCTLog(ctKeys);
  const ca = await initializeCA(caKeys, ctlog);
  const tlog = await initializeTLog(base, tlogKeys);
  const rekor = rekorHandler(tlog);
  const handlers = [
    fulcioHandler(ca),
    { path: rekor.path, fn: (body) => canonicalDsse(body).then(rekor.fn, rejected) },
  ];

  server.on('request', (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const handler = handlers.find((h) => h.path === req.url.split('?')[0]);
      if (req.method !== 'POST' || !handler) {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end(`no mock for ${req.method} ${req.url}\n`);
        return;
      }
      try {
        const { statusCode, response, contentType } = await handler.fn(
          Buffer.concat(chunks).toString('utf8'),
        );
        res.writeHead(statusCode, { 'Content-Type': contentType || 'text/plain' });
        res.end(response);
      } catch (e) {
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(`mock failed: ${e && e.stack}\n`);
      }
    });
  });

  // 3. The trusted root for these keys.
  const since = new Date(Date.now() - 60 * 1000).toISOString();
  const logKey = (der) => ({
    rawBytes: b64(der),
    keyDetails: 'PKIX_ECDSA_P256_SHA_256',
    validFor: { start: since },
  });
  const tlogKey = spki(tlogKeys);
  const trustedRoot = {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [
      {
        baseUrl: base,
        hashAlgorithm: 'SHA2_256',
        publicKey: logKey(tlogKey),
        logId: { keyId: b64(crypto.createHash('sha256').update(tlogKey).digest()) },
      },
    ],
    certificateAuthorities: [
      {
        subject: { organization: 'sigstore.mock', commonName: 'sigstore' },
        uri: base,
        certChain: { certificates: [{ rawBytes: b64(ca.rootCertificate) }] },
        validFor: { start: since },
      },
    ],
    ctlogs: [
      {
        baseUrl: base,
        hashAlgorithm: 'SHA2_256',
        publicKey: logKey(ctlog.publicKey),
        logId: { keyId: b64(ctlog.logID) },
      },
    ],
    timestampAuthorities: [],
  };
  fs.writeFileSync(
    path.join(outDir, 'trusted_root.json'),
    JSON.stringify(trustedRoot, null, 2) + '\n',
  );

  // 4. Ready. Stop when the test closes our stdin (or dies and the pipe closes).
  process.stdout.write(`${base}\n`);
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}

// Rekor stores a `dsse` entry in canonical form (envelopeHash, payloadHash, signatures), after
// checking the envelope's signature with the proposed verifier; the mock logs whatever it gets.
// Verifiers (sigstore-rust, @sigstore/verify) check the canonical form, so do what Rekor does
// (rekor/pkg/types/dsse/v0.0.1) before handing the entry to the mock. Other kinds pass as is.
async function canonicalDsse(body) {
  const entry = JSON.parse(body);
  const proposed = entry.kind === 'dsse' && entry.spec && entry.spec.proposedContent;
  if (!proposed) {
    return body;
  }
  const sha256 = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');
  const envelope = JSON.parse(proposed.envelope);
  const payload = Buffer.from(envelope.payload, 'base64');
  const pae = Buffer.concat([
    Buffer.from(
      `DSSEv1 ${Buffer.byteLength(envelope.payloadType)} ${envelope.payloadType} ${payload.length} `,
    ),
    payload,
  ]);
  const signatures = [];
  for (const sig of envelope.signatures || []) {
    const verifier = (proposed.verifiers || []).find((v) => {
      const cert = new crypto.X509Certificate(Buffer.from(v, 'base64'));
      return crypto.verify('sha256', pae, cert.publicKey, Buffer.from(sig.sig, 'base64'));
    });
    if (!verifier) {
      throw new Error('dsse: a signature does not verify with any proposed verifier');
    }
    // Rekor stores the verifier re-encoded as PEM with LF line endings, whatever the client
    // sent; verifiers (sigstore-python) compare those bytes exactly.
    const pem = new crypto.X509Certificate(Buffer.from(verifier, 'base64')).toString();
    signatures.push({ signature: sig.sig, verifier: Buffer.from(pem).toString('base64') });
  }
  return JSON.stringify({
    apiVersion: entry.apiVersion,
    kind: 'dsse',
    spec: {
      envelopeHash: { algorithm: 'sha256', value: sha256(Buffer.from(proposed.envelope)) },
      payloadHash: { algorithm: 'sha256', value: sha256(payload) },
      signatures,
    },
  });
}

function rejected(e) {
  return { statusCode: 400, response: `${e && e.message}\n`, contentType: 'text/plain' };
}

main().catch((e) => {
  process.stderr.write(`sigstore mock: ${e && e.stack}\n`);
  process.exit(1);
});
