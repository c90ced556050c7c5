//! The `harness` section: the harness files (`conftest.py`, test settings, …) a change may edit
//! without the criteria whose tests they govern reading `undecided`, as globs in
//! `allow_changes` (book: floor/harness.md).

use super::Reader;
use crate::acceptance::HarnessConfig;
use crate::spanned_yaml::Entry;

const HARNESS_KEYS: &[&str] = &["allow_changes"];

impl Reader {
    pub(super) fn harness(&mut self, e: &Entry) -> Option<HarnessConfig> {
        let entries = self
            .v
            .mapping(e, "harness: { allow_changes: [\"conftest.py\"] }")?;
        let f = self.v.fields(entries, HARNESS_KEYS, "`harness`");
        let allow_changes = match f.get("allow_changes") {
            Some(a) => self.v.globs(a, "allow_changes: [\"conftest.py\"]")?,
            None => Vec::new(),
        };
        Some(HarnessConfig { allow_changes })
    }
}
