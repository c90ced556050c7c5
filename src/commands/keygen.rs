//! `shipmoor keygen`: a new ECDSA P-256 key pair for `claim-check --sign key`, as `cosign
//! generate-key-pair` writes one: `shipmoor.key` (PKCS#8 PEM, encrypted when
//! `SHIPMOOR_KEY_PASSWORD` is set, mode 0600) and `shipmoor.pub` (SPKI PEM). Existing files are
//! kept unless `--force`. Exit 0 written, 2 input error.

use std::io::Write;

use crate::attest::keys;
use crate::cli::KeygenArgs;
use crate::error::{Error, InputError};
use crate::nofollow::OutputPath;

pub const PRIVATE: &str = "shipmoor.key";
pub const PUBLIC: &str = "shipmoor.pub";

pub fn run(args: KeygenArgs) -> Result<i32, Error> {
    let dir = &args.output_dir;
    if !dir.is_dir() {
        return Err(Error::input(
            InputError::new(format!("{} is not a directory", dir.display()))
                .help("create it first, or pass another --output-dir"),
        ));
    }
    let private = dir.join(PRIVATE);
    let public = dir.join(PUBLIC);
    if !args.force {
        if let Some(existing) = [&private, &public].into_iter().find(|p| p.exists()) {
            return Err(Error::input(
                InputError::new(format!("{} exists", existing.display()))
                    .help("pass --force to replace the key pair (whoever holds the old public key can no longer verify new signatures)"),
            ));
        }
    }
    let password = std::env::var("SHIPMOOR_KEY_PASSWORD")
        .ok()
        .filter(|p| !p.is_empty());
    let (pem, key) =
        keys::generate_p256(password.as_deref().map(str::as_bytes)).map_err(Error::crash)?;
    // The private key is never readable by others, not even for a moment: created 0600, then
    // renamed into place (as every output is, through no symlink). Both are staged before
    // either is renamed.
    let private_out = OutputPath::file(&private, None);
    let public_out = OutputPath::file(&public, None);
    let staged_private = private_out
        .stage_with_mode(pem.as_bytes(), 0o600)
        .map_err(|e| cannot_write(dir, e))?;
    let staged_public = public_out
        .stage(key.verifying_key().to_pem().as_bytes())
        .map_err(|e| cannot_write(dir, e))?;
    staged_public.commit().map_err(|e| cannot_write(dir, e))?;
    staged_private.commit().map_err(|e| cannot_write(dir, e))?;
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "wrote {} ({}{}) and {}\n  key id {}\n  sign:   shipmoor claim-check --sign key --key {}\n  verify: shipmoor replay .shipmoor/claim-check.vsa.sigstore.json --key {}",
        private.display(),
        key.algorithm(),
        if password.is_some() {
            ", encrypted with SHIPMOOR_KEY_PASSWORD"
        } else {
            ", unencrypted: set SHIPMOOR_KEY_PASSWORD to encrypt it"
        },
        public.display(),
        key.keyid(),
        private.display(),
        public.display(),
    );
    Ok(0)
}

fn cannot_write(dir: &std::path::Path, e: impl std::fmt::Display) -> Error {
    Error::input(
        InputError::new(format!(
            "cannot write the key pair in {}: {e}",
            dir.display()
        ))
        .help("pass a writable --output-dir"),
    )
}
