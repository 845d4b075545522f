"""The house rules, checked on the code: the import graph obeys the layers, modules and functions stay small.

Layers, low to high: ground (errors, captures, file helpers) < models < identify, devices < render core
< render/verify < demos, root cli (docs/architecture.md, section Layers); ``tests/import_graph.py`` draws
the graph from the source.
"""

from __future__ import annotations

import ast

import pytest

import import_graph as ig  # tests/ is on sys.path (pytest prepends the test folder)

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def test_import_graph_has_no_cycle_and_no_upward_or_forbidden_import():
    g = ig.graph()
    assert len(g) > 40                                       # the walker found the package
    assert ig.violations(g) == []


def test_checker_sees_a_lazy_upward_import_a_cycle_and_a_forbidden_import():
    g = {"hapticam.models.a": {"hapticam.render.loop"},      # upward, even if imported inside a function
         "hapticam.devices.x": {"hapticam.devices.y"}, "hapticam.devices.y": {"hapticam.devices.x"},
         "hapticam.render.loop": {"hapticam.identify.impedance.ewls"},
         "hapticam.identify.impedance.ewls": set()}
    found = ig.violations(g)
    assert any(v.startswith("upward: hapticam.models.a") for v in found)
    assert any(v.startswith("cycle:") and "hapticam.devices.x" in v for v in found)
    assert any(v.startswith("forbidden: hapticam.render.loop") for v in found)


def test_lazy_imports_inside_functions_count(tmp_path, monkeypatch):
    pkg = tmp_path / "models"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text("def f():\n    from hapticam.render import loop\n    return loop\n")
    monkeypatch.setattr(ig, "ROOT", tmp_path)
    assert "hapticam.render.loop" in ig.imports_of(pkg / "m.py")


@pytest.mark.parametrize("path", ig.source_files(), ids=lambda p: str(p.relative_to(ig.ROOT)))
def test_module_is_under_the_size_limit(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_MODULE_LINES, f"{path.name}: {n} lines"


def _is_numba_kernel(node: ast.AST) -> bool:
    for dec in getattr(node, "decorator_list", []):
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("njit", "jit", "cfunc"):
            return True
    return False


def _builds_kernels(node: ast.AST) -> bool:
    """A factory that compiles numba kernels around its arguments (``build_servo``): its length is
    the kernels' (one tick must stay one compiled unit), not orchestration."""
    return any(_is_numba_kernel(n) for n in ast.walk(node) if n is not node)


def test_functions_fit_on_a_screen_outside_numba_kernels():
    long = []
    for path in ig.source_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_numba_kernel(node)
                    and not _builds_kernels(node)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ig.ROOT)}:{node.lineno} {node.name} ({n} lines)")
    assert long == []
