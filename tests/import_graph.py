"""The import graph of the ``hapticam`` package, drawn from the code, and the layer rule it must obey.

Run as ``python -m tests.import_graph`` (from the repository root) to print every edge and every
violation; ``tests/test_architecture.py`` asserts there are none.

Layers, low to high (docs/architecture.md, section Layers): ground (errors, captures, file helpers at
the package root) < models < identify, devices and the simulated world < render core < render/verify <
the library, demos and the Python API's verbs (``api.py``) < the commands (``commands/``: the command
line, benches and reproductions, with the root cli that dispatches to them). identify imports neither devices
nor the world, and neither of them imports identify. An import counts
wherever it stands (module top or inside a function): a lazy import upward is still an arrow upward.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "hapticam"
SKIP_DIRS = {"tests", ".venv", "build", ".git", "__pycache__"}

#: (layer rank, name) per module-name prefix; the longest matching prefix wins.
LAYERS = {
    "hapticam": (0, "ground"),
    "hapticam.models": (1, "models"),
    "hapticam.identify": (2, "identify"),
    "hapticam.devices": (2, "devices"),
    "hapticam.world": (2, "world"),
    "hapticam.render": (3, "render core"),
    "hapticam.render.verify": (4, "render/verify"),
    "hapticam.library": (5, "library"),
    "hapticam.demos": (5, "demos"),
    "hapticam.commands": (6, "commands"),
    "hapticam.cli": (6, "commands"),
    "hapticam.__main__": (6, "commands"),
    "hapticam.api": (5, "api"),
}
#: Same-rank layers that must not import each other.
SEPARATE = {("identify", "devices"), ("devices", "identify"), ("identify", "world"), ("world", "identify")}
#: Modules a layer must not import although they are below it: the render core drives any device through
#: its binding and the registry, so the simulator is nothing special to it, and only render/verify
#: (the comparison mode) stands on identify.
FORBIDDEN = {"render core": ("hapticam.identify", "hapticam.world.sim")}


def module_name(path: Path) -> str:
    """The dotted module name of a source file under the package root."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def source_files() -> list[Path]:
    """Every ``.py`` file of the package (tests and build output excluded)."""
    return sorted(p for p in ROOT.rglob("*.py")
                  if not SKIP_DIRS.intersection(p.relative_to(ROOT).parts[:-1])
                  and p.relative_to(ROOT).parts[0] not in SKIP_DIRS)


def imports_of(path: Path) -> set[str]:
    """The ``hapticam`` modules imported anywhere in ``path`` (relative imports resolved)."""
    name = module_name(path)
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != PACKAGE:
                continue
            found.add(mod)
            for alias in node.names:  # "from hapticam.models import files" imports a submodule
                found.add(f"{mod}.{alias.name}")
    return found


def layer_of(module: str) -> tuple[int, str]:
    """The layer of a module: its longest registered prefix."""
    best = ""
    for prefix in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    return LAYERS[best]


def graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (only those that exist as files or packages)."""
    files = {module_name(p): p for p in source_files()}
    known = set(files)
    return {m: {i for i in imports_of(p) if i in known and i != m} for m, p in files.items()}


def violations(g: dict[str, set[str]]) -> list[str]:
    """Upward imports, imports between separate layers, and import cycles, one line each."""
    out = []
    for src, targets in sorted(g.items()):
        rank, name = layer_of(src)
        for dst in sorted(targets):
            d_rank, d_name = layer_of(dst)
            # a package's __init__ may re-export its own modules; importing a parent package is not upward
            if src.startswith(dst + ".") or dst.startswith(src + "."):
                continue
            if d_rank > rank:
                out.append(f"upward: {src} ({name}) imports {dst} ({d_name})")
            elif (name, d_name) in SEPARATE:
                out.append(f"across: {src} ({name}) imports {dst} ({d_name})")
            elif any(dst == f or dst.startswith(f + ".") for f in FORBIDDEN.get(name, ())):
                out.append(f"forbidden: {src} ({name}) imports {dst}")
    out.extend(f"cycle: {' -> '.join(c)}" for c in cycles(g))
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles between modules (one representative per strongly connected component)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result = []
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                result.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return result


def main() -> int:
    g = graph()
    for src in sorted(g):
        for dst in sorted(g[src]):
            print(f"{src} -> {dst}")
    bad = violations(g)
    print(f"\n{len(bad)} violation(s)")
    for line in bad:
        print("  " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
