//! The files that decide how pytest runs a test: its configuration, its conftest hooks, and
//! what Python runs at start-up.

use crate::floor::harness::{section, Family, HarnessFile, HarnessHit};

/// The harness guard's rule for Python: conftest and pytest configuration govern their
/// directory, a start-up or path hook the whole repository.
pub fn harness(f: &HarnessFile<'_>) -> Option<HarnessHit> {
    let hit = |what, scope: &str| {
        Some(HarnessHit {
            what,
            family: Family::Python,
            scope: scope.to_string(),
        })
    };
    match f.name {
        "conftest.py" => hit("pytest conftest", f.dir),
        "pytest.ini" | ".pytest.ini" | "pytest.toml" | ".pytest.toml" => {
            hit("pytest configuration", f.dir)
        }
        "pyproject.toml" if (f.differs)(&|t| section(t, &["tool.pytest"])) => {
            hit("pytest settings in pyproject.toml", f.dir)
        }
        "setup.cfg" if (f.differs)(&|t| section(t, &["tool:pytest"])) => {
            hit("pytest settings in setup.cfg", f.dir)
        }
        "tox.ini" if (f.differs)(&|t| section(t, &["pytest"])) => {
            hit("pytest settings in tox.ini", f.dir)
        }
        "sitecustomize.py" | "usercustomize.py" => hit("Python start-up hook", ""),
        _ if f.name.ends_with(".pth") => hit("Python path hook", ""),
        _ => None,
    }
}

/// What a Python file a command wrote decides for a later pytest run.
pub fn written(name: &str, _under: &dyn Fn(&str) -> bool) -> Option<&'static str> {
    Some(match name {
        "conftest.py" => "pytest conftest",
        "pytest.ini" | ".pytest.ini" | "pytest.toml" | ".pytest.toml" | "tox.ini" | "setup.cfg"
        | "pyproject.toml" => "pytest configuration",
        "pytest.py" => "a module named pytest",
        "sitecustomize.py" | "usercustomize.py" => "Python start-up hook",
        _ if name.ends_with(".pth") => "Python path hook",
        _ => return None,
    })
}
