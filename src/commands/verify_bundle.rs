//! `shipmoor verify-bundle` (being written).
use crate::cli::VerifyBundleArgs;
use crate::error::{Error, InputError};

pub fn run(_args: VerifyBundleArgs) -> Result<i32, Error> {
    Err(Error::input(InputError::new(
        "verify-bundle is not available yet",
    )))
}
