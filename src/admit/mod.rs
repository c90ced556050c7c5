//! Admission (DESIGN 10): a VSA for an artifact, checked in the SLSA verification order and then
//! against a written policy, gives allow or deny with every reason.

pub mod policy;
pub mod rego;
