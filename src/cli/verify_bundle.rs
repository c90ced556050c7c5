//! `shipmoor verify-bundle`'s flags, as clap types only.

use std::path::PathBuf;

use clap::Args;

use super::SignatureArgs;

pub(super) const VERIFY_BUNDLE_AFTER_HELP: &str = "\
Examples:
  shipmoor verify-bundle --bundle app.sigstore.json --key cosign.pub app.tar
  shipmoor verify-bundle --bundle .shipmoor/claim-check.vsa.sigstore.json \\
    --key shipmoor.pub --offline-key sha256:HEX
  shipmoor verify-bundle --bundle app.sigstore.json \\
    --certificate-identity me@example.com \\
    --certificate-oidc-issuer https://accounts.google.com sha256:HEX

A bundle signed with a key and holding no transparency log entry (as
`claim-check --sign key` writes it) is refused unless --offline-key is given:
its signature and the artifact are then checked against the key alone, and
no log entry is checked (as with cosign's --insecure-ignore-tlog).

Exit codes:
  0  the bundle is valid (one `verified` line on stderr)
  1  the bundle is not valid (the failed check on stderr)
  2  usage error (the trust flags, an unreadable file)
  3  engine crash";

#[derive(Debug, Args)]
pub struct VerifyBundleArgs {
    /// The Sigstore bundle
    #[arg(long, value_name = "PATH", help_heading = "Inputs")]
    pub bundle: PathBuf,
    #[command(flatten)]
    pub signature: SignatureArgs,
    /// Accept a keyed bundle that has no transparency log entry, checking its signature and
    /// the artifact against --key alone (no log entry is checked)
    #[arg(long, requires = "key", help_heading = "Signature")]
    pub offline_key: bool,
    /// Accepted for the conformance protocol; verification is always offline
    #[arg(long, hide = true)]
    pub staging: bool,
    /// The artifact, as a file or as `sha256:HEX`
    #[arg(value_name = "FILE_OR_DIGEST")]
    pub artifact: String,
}
