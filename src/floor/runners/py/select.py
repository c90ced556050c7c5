"""A pytest plugin of the floor: keeps exactly the node ids it was asked for.

The floor passes pytest the test *files* and this plugin the node ids (one per line in the file
named by $SHIPMOOR_PYTEST_SELECT), instead of node ids on the command line: pytest stops with a
usage error and runs nothing when one node id on its command line does not exist or its file
does not import, so one bad id would hide the others. Here a file that does not import is
reported as a collection error and the other files still run. Everything else is deselected,
so it shows in no result.

It also appends a JSON line per finished test to $SHIPMOOR_PYTEST_PROGRESS, for the progress
lines claim-check prints as tests finish; the floor's outcomes come from the JUnit file alone.
"""

import json
import os

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    with open(os.environ["SHIPMOOR_PYTEST_SELECT"], encoding="utf-8") as f:
        wanted = {line.rstrip("\n") for line in f if line.strip()}
    keep = [item for item in items if item.nodeid in wanted]
    drop = [item for item in items if item.nodeid not in wanted]
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


_finished = {}


def pytest_runtest_logreport(report):
    """One line per test once its teardown is reported: failed when any phase failed, skipped
    when one was skipped (an xfail too), else passed; the time is that of all its phases."""
    out = os.environ.get("SHIPMOOR_PYTEST_PROGRESS")
    if not out:
        return
    state = _finished.setdefault(report.nodeid, {"outcome": "passed", "duration": 0.0})
    state["duration"] += getattr(report, "duration", 0.0) or 0.0
    if report.failed:
        state["outcome"] = "failed"
    elif report.skipped and state["outcome"] != "failed":
        state["outcome"] = "skipped"
    if report.when != "teardown":
        return
    line = {"nodeid": report.nodeid, "outcome": state["outcome"], "duration": state["duration"]}
    with open(out, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def _worktree_packages(root):
    """Top-level modules and packages the worktree itself provides, at its root or under src/."""
    names = {}
    skip = {"conftest", "setup", "noxfile", "tasks", "docs", "tests", "testing", "test"}
    for base in (root, os.path.join(root, "src")):
        try:
            entries = os.listdir(base)
        except OSError:
            continue
        for entry in entries:
            path = os.path.join(base, entry)
            if entry.endswith(".py"):
                name = entry[:-3]
                if name.startswith("test_") or name.endswith("_test"):
                    continue
            elif os.path.isfile(os.path.join(path, "__init__.py")):
                name = entry
            else:
                continue
            if name.isidentifier() and name not in skip:
                names.setdefault(name, path)
    return names


def pytest_sessionfinish(session):
    """Records the worktree's own packages that this run imported from somewhere else (an
    installed copy, or one that pytest itself had loaded first): the tests then ran against
    that copy, not against the commit under check."""
    out = os.environ.get("SHIPMOOR_PYTEST_IMPORTS")
    root = os.environ.get("SHIPMOOR_WORKTREE")
    if not out or not root:
        return
    import sys

    root = os.path.realpath(root)
    candidates = {}
    for base in (os.environ.get("SHIPMOOR_PYTEST_ROOT") or root, root):
        for name, path in _worktree_packages(os.path.realpath(base)).items():
            candidates.setdefault(name, os.path.relpath(path, root))
    outside = []
    for name, rel in sorted(candidates.items()):
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None) if module is not None else None
        if not file:
            continue
        real = os.path.realpath(file)
        if os.path.commonpath([real, root]) != root:
            outside.append({"module": name, "file": real, "worktree": rel})
    with open(out, "w", encoding="utf-8") as f:
        json.dump(outside, f)
