//! `cargo test` adapter (to be written).
use super::*;
pub struct CargoTest {
    config: RunnerConfig,
}
impl CargoTest {
    pub fn new(config: RunnerConfig) -> Self {
        CargoTest { config }
    }
}
impl Runner for CargoTest {
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
