//! The deterministic floor.
pub mod process;
pub mod runners;
