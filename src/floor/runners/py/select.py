"""A pytest plugin of the floor: keeps exactly the node ids it was asked for.

The floor passes pytest the test *files* and this plugin the node ids (one per line in the file
named by $SHIPMOOR_PYTEST_SELECT), instead of node ids on the command line: pytest stops with a
usage error and runs nothing when one node id on its command line does not exist or its file
does not import, so one bad id would hide the others. Here a file that does not import is
reported as a collection error and the other files still run. Everything else is deselected,
so it shows in no result.
"""

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
