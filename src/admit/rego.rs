//! Rego for what the YAML rules do not say: `data.shipmoor.admit.deny`, a set of messages, as
//! Gatekeeper and conftest users write it, evaluated in-process with `regorus`.

/// A compiled Rego module.
pub struct RegoPolicy {
    /// The module's path as the policy names it (relative to the policy's directory).
    pub file: String,
    engine: regorus::Engine,
}

impl std::fmt::Debug for RegoPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegoPolicy").field("file", &self.file).finish()
    }
}
