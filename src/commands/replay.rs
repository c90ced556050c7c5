//! `shipmoor replay` (being written).
use crate::cli::ReplayArgs;
use crate::error::{Error, InputError};

pub fn run(_args: ReplayArgs) -> Result<i32, Error> {
    Err(Error::input(InputError::new("replay is not available yet")))
}
