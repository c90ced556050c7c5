//! Signing and verifying keys for DSSE envelopes: ECDSA P-256 and Ed25519, read from PEM.
//!
//! In: PEM text (and a password for an encrypted private key). Out: a [`SigningKey`] or a
//! [`VerifyingKey`], or a [`KeyError`] that says what to do about it.
//!
//! Loading a signing key:
//!
//! 1. Find the first PEM block (an `EC PARAMETERS` block before the key, as
//!    `openssl ecparam -genkey` writes, is passed over).
//! 2. By its label: `PRIVATE KEY` is PKCS#8; `ENCRYPTED PRIVATE KEY` is encrypted PKCS#8
//!    (PBES2: PBKDF2 or scrypt with AES-CBC), decrypted with the password; `EC PRIVATE KEY` is
//!    SEC1. Any other label (`RSA PRIVATE KEY`, `PUBLIC KEY`, `CERTIFICATE`, an OpenSSH key, a
//!    legacy `Proc-Type: 4,ENCRYPTED` PEM) is refused with a hint.
//! 3. By the key's algorithm identifier: ECDSA on P-256 or Ed25519; any other algorithm or curve
//!    is refused, naming it and the supported ones.
//! 4. The key bytes are checked by RustCrypto (scalar in range, an embedded public key matching
//!    the private one).
//!
//! A verifying key is an SPKI `PUBLIC KEY` PEM, checked the same way (steps 1, 3, 4).
//!
//! The key id is the standard base64 of SHA-256 over the public key's SPKI DER, as Sigstore's
//! keyed bundles (`verificationMaterial.publicKey.hint`) and cosign compute it. The SPKI DER is
//! always the canonical one (an uncompressed P-256 point), whatever encoding the PEM used.

use base64::Engine as _;
use pkcs8::der::asn1::AnyRef;
use pkcs8::der::{Decode, Tag, TagNumber, Tagged};
use pkcs8::ObjectIdentifier;
use sha2::{Digest, Sha256};

use crate::error::InputError;

/// The environment variable that holds the password of an encrypted signing key.
pub const PASSWORD_ENV: &str = "SHIPMOOR_KEY_PASSWORD";

const SUPPORTED: &str = "ECDSA P-256 (prime256v1) or Ed25519";

const OID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const OID_P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const OID_ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");

/// SPKI DER of a P-256 key without its 65-byte uncompressed point (RFC 5480):
/// SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (66 bytes) }.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];
/// SPKI DER of an Ed25519 key without its 32 bytes (RFC 8410):
/// SEQUENCE { SEQUENCE { id-Ed25519 }, BIT STRING (33 bytes) }.
const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// A private key that signs DSSE envelopes.
#[derive(Clone)]
pub enum SigningKey {
    P256(p256::ecdsa::SigningKey),
    Ed25519(ed25519_dalek::SigningKey),
}

/// A public key that verifies DSSE envelopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyingKey {
    P256(p256::ecdsa::VerifyingKey),
    Ed25519(ed25519_dalek::VerifyingKey),
}

// Never print private key material, not even in debug output.
impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SigningKey::{}({})",
            self.algorithm(),
            self.verifying_key().keyid()
        )
    }
}

impl SigningKey {
    /// The matching public key.
    pub fn verifying_key(&self) -> VerifyingKey {
        match self {
            SigningKey::P256(k) => VerifyingKey::P256(*k.verifying_key()),
            SigningKey::Ed25519(k) => VerifyingKey::Ed25519(k.verifying_key()),
        }
    }

    /// `ECDSA P-256` or `Ed25519`.
    pub fn algorithm(&self) -> &'static str {
        match self {
            SigningKey::P256(_) => "ECDSA P-256",
            SigningKey::Ed25519(_) => "Ed25519",
        }
    }

    /// The key id of the public key (see [`VerifyingKey::keyid`]).
    pub fn keyid(&self) -> String {
        self.verifying_key().keyid()
    }
}

impl VerifyingKey {
    /// The SubjectPublicKeyInfo DER (uncompressed point for P-256).
    pub fn spki_der(&self) -> Vec<u8> {
        // Built from the fixed RFC 5480 / RFC 8410 prefixes rather than with the fallible DER
        // encoder: the layout is constant for these two key types, and the tests check it
        // against both the `spki` encoder and OpenSSL.
        match self {
            VerifyingKey::P256(k) => {
                let point = k.to_encoded_point(false);
                let mut der = P256_SPKI_PREFIX.to_vec();
                der.extend_from_slice(point.as_bytes());
                der
            }
            VerifyingKey::Ed25519(k) => {
                let mut der = ED25519_SPKI_PREFIX.to_vec();
                der.extend_from_slice(k.as_bytes());
                der
            }
        }
    }

    /// The SPKI as a `PUBLIC KEY` PEM with LF line endings, as `openssl pkey -pubout` writes it.
    pub fn to_pem(&self) -> String {
        let b64 = base64::engine::general_purpose::STANDARD.encode(self.spki_der());
        let mut pem = String::from("-----BEGIN PUBLIC KEY-----\n");
        // Base64 is ASCII, so splitting the bytes into 64-byte lines splits characters.
        for line in b64.as_bytes().chunks(64) {
            pem.push_str(&String::from_utf8_lossy(line));
            pem.push('\n');
        }
        pem.push_str("-----END PUBLIC KEY-----\n");
        pem
    }

    /// Standard base64 of SHA-256 over [`VerifyingKey::spki_der`].
    pub fn keyid(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(self.spki_der()))
    }

    /// `ECDSA P-256` or `Ed25519`.
    pub fn algorithm(&self) -> &'static str {
        match self {
            VerifyingKey::P256(_) => "ECDSA P-256",
            VerifyingKey::Ed25519(_) => "Ed25519",
        }
    }
}

/// Why a key could not be loaded. [`KeyError::help`] says what the user can do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No `-----BEGIN …-----` block at all.
    #[error("no PEM block found: expected a `-----BEGIN {expected}-----` block")]
    NotPem { expected: &'static str },
    /// A PEM block that does not decode (bad base64, a missing END line, headers).
    #[error("the `{label}` PEM block is malformed: {reason}")]
    MalformedPem { label: String, reason: String },
    /// A traditional OpenSSL PEM encrypted with `Proc-Type: 4,ENCRYPTED` headers.
    #[error("the `{label}` PEM is encrypted in OpenSSL's legacy format (`Proc-Type: 4,ENCRYPTED`), which is not supported")]
    LegacyEncryptedPem { label: String },
    /// A PEM block of another kind than the one wanted (a public key where a private key is
    /// needed, a certificate, an OpenSSH key, …).
    #[error("a `{found}` PEM block is not {wanted}")]
    WrongKind { found: String, wanted: &'static str },
    /// A key algorithm other than ECDSA and Ed25519 (RSA, DSA, Ed448, …).
    #[error("{algorithm} keys are not supported: the key must be {SUPPORTED}")]
    UnsupportedAlgorithm { algorithm: String },
    /// An ECDSA key on another curve than P-256.
    #[error("ECDSA keys on the {curve} curve are not supported: the key must be {SUPPORTED}")]
    UnsupportedCurve { curve: String },
    /// An encrypted private key and no password.
    #[error("the signing key is encrypted and no password was given: set `{PASSWORD_ENV}`")]
    PasswordRequired,
    /// The password does not decrypt the key.
    #[error("the password does not decrypt the signing key (wrong `{PASSWORD_ENV}`?)")]
    WrongPassword,
    /// An encryption scheme the PKCS#5 implementation does not do (PBES1, 3DES, SHA-1 PRF, …).
    #[error("the signing key's encryption is not supported ({reason})")]
    UnsupportedEncryption { reason: String },
    /// The DER inside the PEM is not a valid key of the kind its label says.
    #[error("the {what} is malformed: {reason}")]
    Malformed { what: &'static str, reason: String },
}

impl KeyError {
    /// What the user can run or change.
    pub fn help(&self) -> String {
        let convert =
            "convert it with `openssl pkcs8 -topk8 -v2 aes-256-cbc -in OLD.pem -out key.pem` \
                       (or `-nocrypt` for an unencrypted key)";
        match self {
            KeyError::NotPem { .. } | KeyError::MalformedPem { .. } => {
                "generate a key with `openssl genpkey -algorithm ed25519 -out key.pem` or \
                 `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out key.pem`, \
                 and its public key with `openssl pkey -in key.pem -pubout -out key.pub`"
                    .to_string()
            }
            KeyError::LegacyEncryptedPem { .. } => convert.to_string(),
            KeyError::WrongKind { found, wanted } => match found.as_str() {
                "PUBLIC KEY" => {
                    "signing needs the private key; a `PUBLIC KEY` verifies".to_string()
                }
                "CERTIFICATE" => {
                    "extract the public key with `openssl x509 -in CERT.pem -pubkey -noout`"
                        .to_string()
                }
                l if wanted.starts_with("a public key") && l.contains("PRIVATE KEY") => {
                    "verification needs the public key: `openssl pkey -in KEY.pem -pubout`"
                        .to_string()
                }
                "OPENSSH PRIVATE KEY" => "convert an ECDSA key to PKCS#8 with \
                     `ssh-keygen -p -m PKCS8 -f KEY` (this rewrites the file in place), or \
                     generate one with `openssl genpkey`"
                    .to_string(),
                _ => convert.to_string(),
            },
            KeyError::UnsupportedAlgorithm { .. } | KeyError::UnsupportedCurve { .. } => {
                "generate a supported key with `openssl genpkey -algorithm ed25519 -out key.pem` \
                 or `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out key.pem`"
                    .to_string()
            }
            KeyError::PasswordRequired | KeyError::WrongPassword => {
                format!("export {PASSWORD_ENV}=… with the password the key was encrypted with")
            }
            KeyError::UnsupportedEncryption { .. } => convert.to_string(),
            KeyError::Malformed { .. } => {
                "pass a PEM key as `shipmoor keygen` or `openssl genpkey` writes it (PKCS#8 or \
                 SubjectPublicKeyInfo, P-256 or Ed25519)"
                    .to_string()
            }
        }
    }

    /// The error as a user-facing [`InputError`] about `file`.
    pub fn to_input_error(&self, file: impl Into<String>) -> InputError {
        InputError::new(self.to_string())
            .in_file(file)
            .help(self.help())
    }
}

/// A `--key` given to verify with must be the signer's public key. Passing the private key
/// file is the common slip (it is the one `--sign key --key` took), and it is a usage error
/// rather than a failed signature: nothing about the attestation has been checked. `Ok` when
/// the file is no private key, or cannot be read (the verification then says why).
pub fn refuse_private_key(path: &std::path::Path) -> Result<(), InputError> {
    let Ok(pem) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let label = match first_pem_block(&pem, "PUBLIC KEY") {
        Ok((label, _)) => label,
        Err(KeyError::LegacyEncryptedPem { label } | KeyError::MalformedPem { label, .. }) => label,
        Err(_) => return Ok(()),
    };
    if !label.contains("PRIVATE KEY") {
        return Ok(());
    }
    let key = path.display().to_string();
    // openssl does not read OpenSSH's own format; ssh-keygen exports its public half as SPKI.
    let help = if label == "OPENSSH PRIVATE KEY" {
        format!("pass the public key: `ssh-keygen -e -m PKCS8 -f {key} > {key}.pub`, then `--key {key}.pub`")
    } else {
        format!("pass the public key: `openssl pkey -in {key} -pubout -out {key}.pub`, then `--key {key}.pub`")
    };
    Err(InputError::new(format!(
        "--key is a private key (`{label}`): verification needs the signer's public key"
    ))
    .in_file(key)
    .help(help))
}

/// Loads a signing key from PEM: PKCS#8 (`PRIVATE KEY`), encrypted PKCS#8
/// (`ENCRYPTED PRIVATE KEY`, decrypted with `password`) or SEC1 (`EC PRIVATE KEY`, P-256 only).
pub fn load_signing_key(pem: &str, password: Option<&[u8]>) -> Result<SigningKey, KeyError> {
    // 1. The first PEM block.
    let (label, der) = first_pem_block(pem, "PRIVATE KEY")?;
    // 2. By its label.
    match label.as_str() {
        "PRIVATE KEY" => signing_key_from_pkcs8(&der, "private key"),
        "ENCRYPTED PRIVATE KEY" => {
            let password = password.ok_or(KeyError::PasswordRequired)?;
            let encrypted =
                pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice()).map_err(|e| {
                    KeyError::UnsupportedEncryption {
                        reason: format!("not a PKCS#8 PBES2 structure: {e}"),
                    }
                })?;
            let decrypted = encrypted.decrypt(password).map_err(|e| match e {
                // pkcs5 0.7 reports a bad CBC padding on decryption as `EncryptFailed`.
                pkcs8::Error::EncryptedPrivateKey(
                    pkcs8::pkcs5::Error::DecryptFailed | pkcs8::pkcs5::Error::EncryptFailed,
                ) => KeyError::WrongPassword,
                // A wrong password passes the CBC padding check about once in 256 tries; the
                // garbage it yields then fails `decrypt`'s own DER check of the plaintext.
                pkcs8::Error::Asn1(_) => KeyError::WrongPassword,
                other => KeyError::UnsupportedEncryption {
                    reason: other.to_string(),
                },
            })?;
            // Garbage that is still well-formed DER is not a PrivateKeyInfo either.
            if pkcs8::PrivateKeyInfo::try_from(decrypted.as_bytes()).is_err() {
                return Err(KeyError::WrongPassword);
            }
            signing_key_from_pkcs8(decrypted.as_bytes(), "decrypted private key")
        }
        "EC PRIVATE KEY" => {
            // 3. The curve, named when it is not P-256.
            if let Some(curve) = sec1_curve(&der) {
                if curve != OID_P256 {
                    return Err(KeyError::UnsupportedCurve {
                        curve: curve_name(&curve),
                    });
                }
            }
            // 4. The key itself.
            let secret = p256::SecretKey::from_sec1_der(&der).map_err(|e| KeyError::Malformed {
                what: "SEC1 EC private key",
                reason: e.to_string(),
            })?;
            Ok(SigningKey::P256(p256::ecdsa::SigningKey::from(&secret)))
        }
        "RSA PRIVATE KEY" => Err(KeyError::UnsupportedAlgorithm {
            algorithm: "RSA".to_string(),
        }),
        "DSA PRIVATE KEY" => Err(KeyError::UnsupportedAlgorithm {
            algorithm: "DSA".to_string(),
        }),
        _ => Err(KeyError::WrongKind {
            found: label,
            wanted: "a private key (`PRIVATE KEY`, `ENCRYPTED PRIVATE KEY` or `EC PRIVATE KEY`)",
        }),
    }
}

/// Loads a verifying key from an SPKI `PUBLIC KEY` PEM.
pub fn load_verifying_key(pem: &str) -> Result<VerifyingKey, KeyError> {
    // 1. The first PEM block, which must be a public key.
    let (label, der) = first_pem_block(pem, "PUBLIC KEY")?;
    if label != "PUBLIC KEY" {
        return Err(KeyError::WrongKind {
            found: label,
            wanted: "a public key (`PUBLIC KEY`)",
        });
    }
    let malformed = |e: &dyn std::fmt::Display| KeyError::Malformed {
        what: "public key",
        reason: e.to_string(),
    };
    let spki =
        spki::SubjectPublicKeyInfoRef::try_from(der.as_slice()).map_err(|e| malformed(&e))?;
    // 3. The algorithm and curve.
    let oid = spki.algorithm.oid;
    if oid == OID_EC_PUBLIC_KEY {
        let curve = spki
            .algorithm
            .parameters_oid()
            .map_err(|e| malformed(&format!("ECDSA key without a named curve ({e})")))?;
        if curve != OID_P256 {
            return Err(KeyError::UnsupportedCurve {
                curve: curve_name(&curve),
            });
        }
        // 4. The point must be on the curve.
        let bytes = spki
            .subject_public_key
            .as_bytes()
            .ok_or_else(|| malformed(&"the key's BIT STRING has unused bits"))?;
        let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(bytes).map_err(|e| malformed(&e))?;
        Ok(VerifyingKey::P256(key))
    } else if oid == OID_ED25519 {
        let bytes: [u8; 32] = spki
            .subject_public_key
            .as_bytes()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| malformed(&"an Ed25519 public key is 32 bytes"))?;
        let key = ed25519_dalek::VerifyingKey::from_bytes(&bytes).map_err(|e| malformed(&e))?;
        Ok(VerifyingKey::Ed25519(key))
    } else {
        Err(KeyError::UnsupportedAlgorithm {
            algorithm: algorithm_name(&oid),
        })
    }
}

/// Steps 3 and 4 for a (decrypted) PKCS#8 PrivateKeyInfo.
fn signing_key_from_pkcs8(der: &[u8], what: &'static str) -> Result<SigningKey, KeyError> {
    let info = pkcs8::PrivateKeyInfo::try_from(der).map_err(|e| KeyError::Malformed {
        what,
        reason: e.to_string(),
    })?;
    let oid = info.algorithm.oid;
    if oid == OID_EC_PUBLIC_KEY {
        let curve = info
            .algorithm
            .parameters_oid()
            .map_err(|e| KeyError::Malformed {
                what,
                reason: format!("ECDSA key without a named curve ({e})"),
            })?;
        if curve != OID_P256 {
            return Err(KeyError::UnsupportedCurve {
                curve: curve_name(&curve),
            });
        }
        let secret = p256::SecretKey::try_from(info).map_err(|e| KeyError::Malformed {
            what,
            reason: e.to_string(),
        })?;
        Ok(SigningKey::P256(p256::ecdsa::SigningKey::from(&secret)))
    } else if oid == OID_ED25519 {
        let key = ed25519_dalek::SigningKey::try_from(info).map_err(|e| KeyError::Malformed {
            what,
            reason: e.to_string(),
        })?;
        Ok(SigningKey::Ed25519(key))
    } else {
        Err(KeyError::UnsupportedAlgorithm {
            algorithm: algorithm_name(&oid),
        })
    }
}

/// The label and DER of the first PEM block that is not `EC PARAMETERS`.
fn first_pem_block(text: &str, expected: &'static str) -> Result<(String, Vec<u8>), KeyError> {
    let mut rest = text;
    loop {
        let start = rest
            .find("-----BEGIN ")
            .ok_or(KeyError::NotPem { expected })?;
        let block = &rest[start..];
        let label_end = block["-----BEGIN ".len()..]
            .find("-----")
            .map(|i| i + "-----BEGIN ".len())
            .ok_or(KeyError::NotPem { expected })?;
        let label = block["-----BEGIN ".len()..label_end].to_string();
        let end_marker = format!("-----END {label}-----");
        let Some(end) = block.find(&end_marker) else {
            return Err(KeyError::MalformedPem {
                label: label.clone(),
                reason: format!("no `{end_marker}` line"),
            });
        };
        let block_text = &block[..end + end_marker.len()];
        if label == "EC PARAMETERS" {
            rest = &block[end + end_marker.len()..];
            continue;
        }
        if block_text.contains("Proc-Type:") {
            return Err(KeyError::LegacyEncryptedPem { label });
        }
        // RFC 7468's strict form first (constant-time base64, 64-column lines); then, for keys
        // rewrapped at other widths or flattened onto one line by a secret store, the body
        // with all whitespace removed.
        let der = match pkcs8::der::pem::decode_vec(block_text.trim_end().as_bytes()) {
            Ok((_, der)) => der,
            Err(strict) => {
                let body: String = block[label_end + "-----".len()..end]
                    .chars()
                    .filter(|c| !c.is_ascii_whitespace())
                    .collect();
                base64::engine::general_purpose::STANDARD
                    .decode(body)
                    .map_err(|_| KeyError::MalformedPem {
                        label: label.clone(),
                        reason: strict.to_string(),
                    })?
            }
        };
        return Ok((label, der));
    }
}

/// The named curve of a SEC1 `ECPrivateKey` (its `[0] parameters`), when it has one.
fn sec1_curve(der: &[u8]) -> Option<ObjectIdentifier> {
    let fields: Vec<AnyRef<'_>> = Vec::from_der(der).ok()?;
    let params = fields.iter().find(|f| {
        f.tag()
            == Tag::ContextSpecific {
                constructed: true,
                number: TagNumber::N0,
            }
    })?;
    ObjectIdentifier::from_der(params.value()).ok()
}

fn curve_name(oid: &ObjectIdentifier) -> String {
    let name = match oid.to_string().as_str() {
        "1.2.840.10045.3.1.7" => "P-256",
        "1.3.132.0.34" => "P-384",
        "1.3.132.0.35" => "P-521",
        "1.3.132.0.10" => "secp256k1",
        "1.2.840.10045.3.1.1" => "P-192",
        "1.3.132.0.33" => "P-224",
        "1.3.36.3.3.2.8.1.1.7" => "brainpoolP256r1",
        "1.3.36.3.3.2.8.1.1.11" => "brainpoolP384r1",
        "1.3.36.3.3.2.8.1.1.13" => "brainpoolP512r1",
        other => return format!("unknown ({other})"),
    };
    format!("{name} ({oid})")
}

fn algorithm_name(oid: &ObjectIdentifier) -> String {
    let name = match oid.to_string().as_str() {
        "1.2.840.113549.1.1.1" => "RSA",
        "1.2.840.113549.1.1.10" => "RSA-PSS",
        "1.2.840.10040.4.1" => "DSA",
        "1.3.101.113" => "Ed448",
        "1.3.101.110" => "X25519",
        "1.3.101.111" => "X448",
        "1.2.156.10197.1.301" => "SM2",
        other => return format!("Unknown-algorithm ({other})"),
    };
    format!("{name} ({oid})")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// Only a private key is refused as a key to verify with: a public key, a certificate, a
    /// file that is no PEM or cannot be read are left to the verification, which says why.
    #[test]
    fn refuse_private_key_refuses_private_keys_alone() {
        let dir = tempfile::tempdir().unwrap();
        let pem = |name: &str, label: &str| {
            let path = dir.path().join(name);
            std::fs::write(
                &path,
                format!("-----BEGIN {label}-----\nAAAA\n-----END {label}-----\n"),
            )
            .unwrap();
            path
        };
        for label in [
            "PRIVATE KEY",
            "EC PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "RSA PRIVATE KEY",
        ] {
            let path = pem("k.pem", label);
            let e = refuse_private_key(&path).expect_err(label);
            assert!(e.message.contains(&format!("(`{label}`)")), "{e}");
            let help = e.help.unwrap();
            let tool = if label == "OPENSSH PRIVATE KEY" {
                "ssh-keygen -e -m PKCS8"
            } else {
                "openssl pkey -in"
            };
            assert!(help.contains(tool), "{label}: {help}");
            assert!(help.contains(&format!("{}.pub", path.display())), "{help}");
        }
        assert!(refuse_private_key(&pem("p.pub", "PUBLIC KEY")).is_ok());
        assert!(refuse_private_key(&pem("c.pem", "CERTIFICATE")).is_ok());
        let text = dir.path().join("t.txt");
        std::fs::write(&text, "not a key").unwrap();
        assert!(refuse_private_key(&text).is_ok());
        assert!(refuse_private_key(&dir.path().join("absent.pem")).is_ok());
    }

    /// Runs `openssl ARGS` in `dir`; panics naming openssl when it is missing or fails.
    pub(crate) fn openssl(dir: &Path, args: &[&str]) -> Vec<u8> {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| {
                panic!("`openssl` does not run ({e}): these tests need OpenSSL 3 on PATH")
            });
        assert!(
            out.status.success(),
            "`openssl {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// A temporary directory with keys made by openssl.
    pub(crate) struct Keys {
        pub dir: tempfile::TempDir,
    }

    impl Keys {
        pub(crate) fn new() -> Keys {
            let dir = tempfile::Builder::new().prefix("keys-").tempdir().unwrap();
            let d = dir.path();
            openssl(
                d,
                &["genpkey", "-algorithm", "ed25519", "-out", "ed25519.pem"],
            );
            openssl(
                d,
                &[
                    "genpkey",
                    "-algorithm",
                    "EC",
                    "-pkeyopt",
                    "ec_paramgen_curve:P-256",
                    "-out",
                    "p256.pem",
                ],
            );
            for name in ["ed25519", "p256"] {
                openssl(
                    d,
                    &[
                        "pkey",
                        "-in",
                        &format!("{name}.pem"),
                        "-pubout",
                        "-out",
                        &format!("{name}.pub"),
                    ],
                );
            }
            Keys { dir }
        }

        pub(crate) fn path(&self, name: &str) -> PathBuf {
            self.dir.path().join(name)
        }

        pub(crate) fn read(&self, name: &str) -> String {
            std::fs::read_to_string(self.path(name)).unwrap()
        }

        pub(crate) fn signing(&self, name: &str) -> SigningKey {
            load_signing_key(&self.read(&format!("{name}.pem")), None).unwrap()
        }

        pub(crate) fn verifying(&self, name: &str) -> VerifyingKey {
            load_verifying_key(&self.read(&format!("{name}.pub"))).unwrap()
        }
    }

    #[test]
    fn openssl_keys_load_and_match_their_public_keys() {
        let keys = Keys::new();
        for (name, alg) in [("ed25519", "Ed25519"), ("p256", "ECDSA P-256")] {
            let sk = keys.signing(name);
            assert_eq!(sk.algorithm(), alg);
            let vk = keys.verifying(name);
            assert_eq!(sk.verifying_key(), vk);
            // Our PEM and SPKI DER are byte for byte OpenSSL's.
            assert_eq!(vk.to_pem(), keys.read(&format!("{name}.pub")));
            let der = openssl(
                keys.dir.path(),
                &[
                    "pkey",
                    "-pubin",
                    "-in",
                    &format!("{name}.pub"),
                    "-outform",
                    "DER",
                ],
            );
            assert_eq!(vk.spki_der(), der);
            // And the encoder of the `spki` crate agrees with the fixed prefixes.
            let encoded = match &vk {
                VerifyingKey::P256(k) => spki::EncodePublicKey::to_public_key_der(k),
                VerifyingKey::Ed25519(k) => spki::EncodePublicKey::to_public_key_der(k),
            }
            .unwrap();
            assert_eq!(vk.spki_der(), encoded.as_bytes());
            // keyid = base64(SHA-256(SPKI DER)), computed here by openssl.
            std::fs::write(keys.path("spki.der"), &der).unwrap();
            let digest = openssl(keys.dir.path(), &["dgst", "-sha256", "-binary", "spki.der"]);
            assert_eq!(
                vk.keyid(),
                base64::engine::general_purpose::STANDARD.encode(digest)
            );
            assert_eq!(sk.keyid(), vk.keyid());
            // Debug output names the key, never its secret.
            assert!(format!("{sk:?}").contains(&vk.keyid()));
        }
    }

    #[test]
    fn sec1_keys_load_with_or_without_a_parameters_block() {
        let keys = Keys::new();
        let d = keys.dir.path();
        openssl(d, &["ec", "-in", "p256.pem", "-out", "sec1.pem"]);
        assert!(keys.read("sec1.pem").contains("BEGIN EC PRIVATE KEY"));
        assert_eq!(
            load_signing_key(&keys.read("sec1.pem"), None)
                .unwrap()
                .verifying_key(),
            keys.verifying("p256")
        );
        openssl(
            d,
            &[
                "ecparam",
                "-name",
                "prime256v1",
                "-genkey",
                "-out",
                "ecparam.pem",
            ],
        );
        assert!(keys.read("ecparam.pem").contains("BEGIN EC PARAMETERS"));
        let k = load_signing_key(&keys.read("ecparam.pem"), None).unwrap();
        assert_eq!(k.algorithm(), "ECDSA P-256");
        // CRLF line endings are fine too.
        let crlf = keys.read("p256.pem").replace('\n', "\r\n");
        assert!(load_signing_key(&crlf, None).is_ok());
        // Base64 wrapped at 76 columns or not at all, and text around the block.
        let pem = keys.read("p256.pem");
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        for width in [76, body.len()] {
            let lines: Vec<String> = body
                .as_bytes()
                .chunks(width)
                .map(|c| String::from_utf8(c.to_vec()).unwrap())
                .collect();
            let rewrapped = format!(
                "key for CI\n-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\ntrailer\n",
                lines.join("\n")
            );
            assert_eq!(
                load_signing_key(&rewrapped, None).unwrap().verifying_key(),
                keys.verifying("p256"),
                "wrapped at {width}"
            );
        }
        // Flattened onto one line, as an environment variable may hold it.
        let flat = pem.replace('\n', " ");
        assert_eq!(
            load_signing_key(&flat, None).unwrap().verifying_key(),
            keys.verifying("p256")
        );
    }

    #[test]
    fn encrypted_pkcs8_keys_need_the_right_password() {
        let keys = Keys::new();
        let d = keys.dir.path();
        for (name, src) in [("ed25519-enc", "ed25519"), ("p256-enc", "p256")] {
            openssl(
                d,
                &[
                    "pkcs8",
                    "-topk8",
                    "-v2",
                    "aes-256-cbc",
                    "-passout",
                    "pass:secret",
                    "-in",
                    &format!("{src}.pem"),
                    "-out",
                    &format!("{name}.pem"),
                ],
            );
            let pem = keys.read(&format!("{name}.pem"));
            assert!(pem.contains("BEGIN ENCRYPTED PRIVATE KEY"));
            let k = load_signing_key(&pem, Some(b"secret")).unwrap();
            assert_eq!(k.verifying_key(), keys.verifying(src));

            let e = load_signing_key(&pem, None).unwrap_err();
            assert_eq!(e, KeyError::PasswordRequired);
            assert!(e.to_string().contains("SHIPMOOR_KEY_PASSWORD"), "{e}");
            for wrong in [&b"Secret"[..], b"", b"secret\n"] {
                assert_eq!(
                    load_signing_key(&pem, Some(wrong)).unwrap_err(),
                    KeyError::WrongPassword
                );
            }
        }
        // About one wrong password in 256 gets past the CBC padding check: over 2,000 of them,
        // some do, and every one must still read as the wrong password. One PBKDF2 iteration
        // keeps the 2,000 tries quick.
        openssl(
            d,
            &[
                "pkcs8",
                "-topk8",
                "-v2",
                "aes-256-cbc",
                "-iter",
                "1",
                "-passout",
                "pass:secret",
                "-in",
                "p256.pem",
                "-out",
                "iter1.pem",
            ],
        );
        let pem = keys.read("iter1.pem");
        assert!(load_signing_key(&pem, Some(b"secret")).is_ok());
        for i in 0..2000 {
            let wrong = format!("wrong-{i}");
            assert_eq!(
                load_signing_key(&pem, Some(wrong.as_bytes())).unwrap_err(),
                KeyError::WrongPassword,
                "{wrong}"
            );
        }
        // scrypt, as `openssl pkcs8 -topk8 -scrypt` writes it.
        openssl(
            d,
            &[
                "pkcs8",
                "-topk8",
                "-scrypt",
                "-passout",
                "pass:secret",
                "-in",
                "p256.pem",
                "-out",
                "scrypt.pem",
            ],
        );
        let k = load_signing_key(&keys.read("scrypt.pem"), Some(b"secret")).unwrap();
        assert_eq!(k.verifying_key(), keys.verifying("p256"));
        // PBES1 (PKCS#12 3DES) is refused with a way out.
        openssl(
            d,
            &[
                "pkcs8",
                "-topk8",
                "-v1",
                "PBE-SHA1-3DES",
                "-passout",
                "pass:secret",
                "-in",
                "p256.pem",
                "-out",
                "pbes1.pem",
            ],
        );
        let e = load_signing_key(&keys.read("pbes1.pem"), Some(b"secret")).unwrap_err();
        assert!(matches!(e, KeyError::UnsupportedEncryption { .. }), "{e:?}");
        assert!(e.help().contains("-v2 aes-256-cbc"));
        // Legacy `Proc-Type` encryption is refused with a way out.
        openssl(
            d,
            &[
                "ec",
                "-in",
                "p256.pem",
                "-aes256",
                "-passout",
                "pass:secret",
                "-out",
                "legacy.pem",
            ],
        );
        let e = load_signing_key(&keys.read("legacy.pem"), Some(b"secret")).unwrap_err();
        assert!(matches!(e, KeyError::LegacyEncryptedPem { .. }), "{e:?}");
        assert!(e.help().contains("openssl pkcs8 -topk8"));
    }

    #[test]
    fn other_key_types_are_refused_naming_the_supported_ones() {
        let keys = Keys::new();
        let d = keys.dir.path();
        openssl(
            d,
            &[
                "genpkey",
                "-algorithm",
                "EC",
                "-pkeyopt",
                "ec_paramgen_curve:P-384",
                "-out",
                "p384.pem",
            ],
        );
        openssl(
            d,
            &["pkey", "-in", "p384.pem", "-pubout", "-out", "p384.pub"],
        );
        openssl(d, &["ec", "-in", "p384.pem", "-out", "p384-sec1.pem"]);
        openssl(
            d,
            &[
                "genpkey",
                "-algorithm",
                "RSA",
                "-pkeyopt",
                "rsa_keygen_bits:1024",
                "-out",
                "rsa.pem",
            ],
        );
        openssl(d, &["pkey", "-in", "rsa.pem", "-pubout", "-out", "rsa.pub"]);
        openssl(
            d,
            &[
                "rsa",
                "-in",
                "rsa.pem",
                "-traditional",
                "-out",
                "rsa-trad.pem",
            ],
        );
        openssl(d, &["genpkey", "-algorithm", "ed448", "-out", "ed448.pem"]);

        for file in ["p384.pem", "p384-sec1.pem"] {
            let e = load_signing_key(&keys.read(file), None).unwrap_err();
            assert!(
                matches!(e, KeyError::UnsupportedCurve { .. }),
                "{file}: {e:?}"
            );
            let msg = e.to_string();
            assert!(msg.contains("P-384") && msg.contains("P-256") && msg.contains("Ed25519"));
            assert!(e.help().contains("genpkey"));
        }
        let e = load_verifying_key(&keys.read("p384.pub")).unwrap_err();
        assert!(matches!(e, KeyError::UnsupportedCurve { .. }), "{e:?}");

        for file in ["rsa.pem", "rsa-trad.pem"] {
            let e = load_signing_key(&keys.read(file), None).unwrap_err();
            assert!(matches!(e, KeyError::UnsupportedAlgorithm { .. }), "{e:?}");
            assert!(e.to_string().starts_with("RSA"), "{e}");
            assert!(e.to_string().contains("P-256"), "{e}");
        }
        let e = load_verifying_key(&keys.read("rsa.pub")).unwrap_err();
        assert!(e.to_string().starts_with("RSA"), "{e}");
        let e = load_signing_key(&keys.read("ed448.pem"), None).unwrap_err();
        assert!(e.to_string().starts_with("Ed448"), "{e}");
    }

    #[test]
    fn the_wrong_kind_of_pem_says_what_to_give_instead() {
        let keys = Keys::new();
        let e = load_signing_key(&keys.read("p256.pub"), None).unwrap_err();
        assert!(matches!(e, KeyError::WrongKind { .. }), "{e:?}");
        assert!(e.help().contains("private key"));
        let e = load_verifying_key(&keys.read("p256.pem")).unwrap_err();
        assert!(matches!(e, KeyError::WrongKind { .. }), "{e:?}");
        assert!(e.help().contains("-pubout"));

        let e = load_signing_key("not a key", None).unwrap_err();
        assert!(matches!(e, KeyError::NotPem { .. }));
        assert!(load_verifying_key("").is_err());
        let e = load_signing_key("-----BEGIN PRIVATE KEY-----\nAAAA\n", None).unwrap_err();
        assert!(matches!(e, KeyError::MalformedPem { .. }), "{e:?}");
        let e = load_signing_key(
            "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n",
            None,
        )
        .unwrap_err();
        assert!(matches!(e, KeyError::MalformedPem { .. }), "{e:?}");
        let e = load_signing_key(
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            None,
        )
        .unwrap_err();
        assert!(matches!(e, KeyError::Malformed { .. }), "{e:?}");
        let e = load_signing_key(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
            None,
        )
        .unwrap_err();
        assert!(e.help().contains("ssh-keygen"), "{e:?}");

        // As a user-facing error: file, message and help.
        let ie = KeyError::PasswordRequired.to_input_error("key.pem");
        assert_eq!(ie.file.as_deref(), Some("key.pem"));
        assert!(ie.help.is_some());
    }

    #[test]
    fn a_truncated_or_corrupted_key_is_an_error_not_a_panic() {
        let keys = Keys::new();
        for name in ["ed25519", "p256"] {
            let der = openssl(
                keys.dir.path(),
                &["pkey", "-in", &format!("{name}.pem"), "-outform", "DER"],
            );
            let pem_of = |der: &[u8]| {
                format!(
                    "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
                    base64::engine::general_purpose::STANDARD.encode(der)
                )
            };
            for cut in 0..der.len() {
                assert!(load_signing_key(&pem_of(&der[..cut]), None).is_err());
            }
            for i in 0..der.len() {
                let mut bad = der.clone();
                bad[i] ^= 0xff;
                // A flipped byte may still be a valid (different) key; it must never panic.
                let _ = load_signing_key(&pem_of(&bad), None);
            }
        }
    }
}

/// Why a new key pair could not be written as PEM.
#[derive(Debug, thiserror::Error)]
pub enum KeyGenError {
    #[error("cannot encrypt the private key: {0}")]
    Encrypt(pkcs8::Error),
    #[error("cannot encode the private key: {0}")]
    Encode(pkcs8::Error),
}

/// A new ECDSA P-256 key pair for `--sign key`, from the operating system's randomness: the
/// private key as PKCS#8 PEM (encrypted with `password` when one is given, as
/// `load_signing_key` reads it back), and the key.
pub fn generate_p256(password: Option<&[u8]>) -> Result<(String, SigningKey), KeyGenError> {
    use pkcs8::EncodePrivateKey;
    let key = p256::ecdsa::SigningKey::random(&mut rand_core::OsRng);
    let pem = match password {
        Some(pw) => key
            .to_pkcs8_encrypted_pem(&mut rand_core::OsRng, pw, pkcs8::LineEnding::LF)
            .map_err(KeyGenError::Encrypt)?,
        None => key
            .to_pkcs8_pem(pkcs8::LineEnding::LF)
            .map_err(KeyGenError::Encode)?,
    };
    Ok((pem.to_string(), SigningKey::P256(key)))
}

#[cfg(test)]
mod generate_tests {
    use super::*;

    #[test]
    fn a_generated_key_reads_back_and_signs_as_itself() {
        for password in [None, Some(&b"correct horse"[..])] {
            let (pem, key) = generate_p256(password).unwrap();
            assert_eq!(pem.contains("ENCRYPTED"), password.is_some(), "{pem}");
            let again = load_signing_key(&pem, password).unwrap();
            assert_eq!(again.keyid(), key.keyid());
            assert_eq!(key.algorithm(), "ECDSA P-256");
        }
        let (_, a) = generate_p256(None).unwrap();
        let (_, b) = generate_p256(None).unwrap();
        assert_ne!(a.keyid(), b.keyid(), "two keys, two key ids");
    }
}
