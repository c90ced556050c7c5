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

impl RegoPolicy {
    /// `data.shipmoor.admit.deny` for `input`: the messages, sorted.
    pub fn deny(&self, input: &serde_json::Value) -> Result<Vec<String>, String> {
        let mut engine = self.engine.clone();
        engine.set_input(regorus::Value::from_json_str(&input.to_string()).map_err(|e| e.to_string())?);
        let v = engine
            .eval_rule("data.shipmoor.admit.deny".to_string())
            .map_err(|e| e.to_string())?;
        let mut out: Vec<String> = match v.as_set() {
            Ok(set) => set
                .iter()
                .map(|m| m.as_string().map(|s| s.to_string()).unwrap_or_else(|_| m.to_string()))
                .collect(),
            Err(_) => Vec::new(),
        };
        out.sort();
        out.dedup();
        Ok(out)
    }
}
