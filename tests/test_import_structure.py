"""The package's import structure (issue 20 item 3): no import cycle among aqmlab's modules, imports
inside functions included, and every module importable on its own in a fresh interpreter.

The static check reads the source (``ast``), so an import hidden in a function, which Python runs
late and which therefore never fails at start-up, still counts; only imports under
``if TYPE_CHECKING:`` are left out (they never run). The import check runs each module with no other
aqmlab module loaded before it, so a module that works only because another one happened to be
imported first fails here.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG_DIR = ROOT / "python" / "aqmlab"
#: The Rust extension (a module with no Python imports), named where maturin builds it.
EXTENSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]["module-name"]


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under the package directory ``root``."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            for b in n.body:
                lines.update(range(b.lineno, (b.end_lineno or b.lineno) + 1))
    return lines


def import_graph(root: Path, extensions: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its body (functions included).

    ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``; an
    import of a name of a package's ``__init__`` is an edge to the package. ``extensions``:
    compiled modules (leaves: they import no Python module of the package)."""
    mods = modules(root)
    graph: dict[str, set[str]] = {m: set() for m in [*mods, *extensions]}
    known = set(graph)
    for m, f in mods.items():
        tree = ast.parse(f.read_text(), str(f))
        skip = _type_checking_lines(tree)
        here = m.split(".") if f.name == "__init__.py" else m.split(".")[:-1]
        for n in ast.walk(tree):
            if getattr(n, "lineno", None) in skip:
                continue
            targets: list[str] = []
            if isinstance(n, ast.Import):
                targets = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                if n.level:
                    base_parts = here[: len(here) - (n.level - 1)]
                    base = ".".join(base_parts + ([n.module] if n.module else []))
                else:
                    base = n.module or ""
                subs = [f"{base}.{a.name}" for a in n.names if f"{base}.{a.name}" in known]
                targets = subs + ([base] if len(subs) < len(n.names) else [])
            for t in targets:
                while t not in known and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t in known and t != m:
                    graph[m].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_check_finds_a_cycle_hidden_in_a_function(tmp_path):
    # A hand-made package: a imports b at the top, b imports a inside a function (the kind of cycle
    # that never fails at start-up), c imports a name of the package's __init__, which imports c.
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("def f():\n    from p import c\nX = 1\n")
    (pkg / "a.py").write_text("from p import b\n")
    (pkg / "b.py").write_text("def g():\n    from p.a import thing\n")
    (pkg / "c.py").write_text("from p import X\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p import a\n"
    )
    (pkg / "e.py").write_text("from . import d\n")
    g = import_graph(pkg)
    assert g["p.e"] == {"p.d"} and g["p.d"] == set()
    assert sorted(cycles(g)) == [["p", "p.c"], ["p.a", "p.b"]]


def test_no_import_cycle_in_the_package():
    found = cycles(import_graph(PKG_DIR, (EXTENSION,)))
    assert found == [], "import cycles (function-level imports included): " + "; ".join(
        " <-> ".join(c) for c in found
    )


# Each module imported with no aqmlab module loaded before it: the package's modules are removed
# from sys.modules between imports (the Rust extension stays: a PyO3 module is initialised once per
# process), third-party modules stay loaded, which changes nothing about aqmlab's own import order.
_IMPORT_EACH = """
import importlib, json, sys, traceback
failed = {}
for name in json.loads(sys.argv[1]):
    ours = [m for m in sys.modules if m == "aqmlab" or m.startswith("aqmlab.")]
    for m in ours:
        if m != "aqmlab._core":
            del sys.modules[m]
    try:
        importlib.import_module(name)
    except BaseException:
        failed[name] = traceback.format_exc(limit=3)
print(json.dumps(failed))
"""


def test_every_module_imports_on_its_own_in_a_fresh_interpreter():
    # __main__ runs the command when imported (that is its job): it is imported by every CLI test.
    names = [m for m in modules(PKG_DIR) if m != "aqmlab.__main__"]
    assert len(names) > 40
    r = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, json.dumps(names)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    failed = json.loads(r.stdout.strip().splitlines()[-1])
    assert failed == {}, "\n".join(f"{k}:\n{v}" for k, v in failed.items())


def test_the_public_api_is_what_dir_lists_and_every_name_resolves():
    code = (
        "import aqmlab, json\n"
        "names = dir(aqmlab)\n"
        "missing = [n for n in names if getattr(aqmlab, n, None) is None]\n"
        "print(json.dumps([names, sorted(aqmlab.__all__), missing]))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    names, public, missing = json.loads(r.stdout)
    assert names == sorted([*public, "__version__"]) and missing == []
    assert {"run", "Scenario", "load", "load_scenario", "sweep", "load_sweep", "InputError"} <= set(
        public
    )
