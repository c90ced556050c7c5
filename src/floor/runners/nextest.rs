//! `cargo nextest` adapter (to be written).
use super::*;
pub struct Nextest {
    config: RunnerConfig,
}
impl Nextest {
    pub fn new(config: RunnerConfig) -> Self {
        Nextest { config }
    }
}
impl Runner for Nextest {
    fn config(&self) -> &RunnerConfig {
        &self.config
    }
    fn check_tool(&self) -> Result<(), InputError> {
        Ok(())
    }
    fn is_test_file(&self, _rel_path: &str) -> bool {
        false
    }
    fn list(&self, _ctx: &RunCtx) -> ListReport {
        ListReport::default()
    }
    fn run(&self, _ctx: &RunCtx, _ids: &[String]) -> RunReport {
        RunReport::default()
    }
}
