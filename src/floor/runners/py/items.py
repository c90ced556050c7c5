"""Test items and imports of one Python test file, for attribution (book: floor/attribution.md).

Usage: python3 -I items.py <file>. Prints one JSON object:
{"items": [{"name", "start", "end", "uses"}], "imports": [{"start", "end", "names"}]}.
Exit 1 (nothing printed) when the file does not parse.

- items: every function and method at module level or inside classes (nested classes too),
  named as in a pytest node id after the file (`test_f`, `TestA::test_b`,
  `TestA::TestInner::test_c`); the extent includes the decorators. `uses` holds every name
  the item mentions (Name ids, each segment of an attribute chain, its parameters, which pytest
  resolves as fixtures by name), the names used by its enclosing classes' headers (bases,
  decorators), and, transitively, the names used by the module-level functions and classes it
  calls by name or requests as fixtures, and by the autouse fixtures of its module and classes
  (a helper or fixture that needs the new API is the test's need too).
- imports: every `import` / `from … import` statement with the names it binds there
  (`import a.b` binds `a`, `import a.b as c` binds `c`, `from m import x as y` binds `y`;
  `from m import *` binds nothing we can know).
"""

import ast
import json
import sys


def mentioned(node):
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return out


def called_by_name(node):
    """Plain names and parameters: `helper()` reaches a module-level helper (`obj.helper()` does
    not), and a parameter reaches the fixture of that name, which pytest passes by name."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return out


def is_autouse(node):
    """A `@pytest.fixture(autouse=True)` (or `@fixture(autouse=True)`): it runs around every test
    at its level, so what it needs every test there needs."""
    for d in getattr(node, "decorator_list", []):
        if isinstance(d, ast.Call):
            for k in d.keywords:
                if k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value is True:
                    return True
    return False


def autouse_names(body):
    return {
        node.name
        for node in body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_autouse(node)
    }


def extent(node):
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return start, node.end_lineno


def header_uses(cls):
    out = set()
    for part in list(cls.bases) + list(cls.keywords) + list(cls.decorator_list):
        out |= mentioned(part)
    return out


def main(path):
    with open(path, "rb") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return 1

    # Module-level functions and classes by name, with what each mentions.
    helpers = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            helpers[node.name] = (mentioned(node), called_by_name(node))

    def closure(node, inherited, reached=()):
        seen = mentioned(node) | inherited
        todo = [n for n in called_by_name(node) | set(reached) if n in helpers]
        done = set()
        while todo:
            n = todo.pop()
            if n in done:
                continue
            done.add(n)
            uses, calls = helpers[n]
            seen |= uses
            todo.extend(m for m in calls if m in helpers and m not in done)
        return seen

    items = []

    def visit(body, prefix, inherited, autouse):
        autouse = autouse | autouse_names(body)
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start, end = extent(node)
                uses = closure(node, inherited | (autouse - {node.name}), autouse - {node.name})
                items.append(
                    {
                        "name": "::".join(prefix + [node.name]),
                        "start": start,
                        "end": end,
                        "uses": sorted(uses),
                    }
                )
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + [node.name], inherited | header_uses(node), autouse)

    visit(tree.body, [], set(), set())

    imports = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = {(a.asname or a.name.split(".")[0]) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names = {(a.asname or a.name) for a in node.names if a.name != "*"}
        else:
            continue
        imports.append(
            {"start": node.lineno, "end": node.end_lineno, "names": sorted(names)}
        )

    json.dump({"items": items, "imports": imports}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
