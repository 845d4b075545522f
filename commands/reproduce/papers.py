"""``hapticam reproduce``: the papers' experiments, run and compared with the papers' numbers.

Each paper's subpackage declares its experiments in a ``reproduce`` module as ``EXPERIMENTS`` (name ->
:class:`Experiment`); this module gathers them. ``run(name, out_dir, quick)`` writes the experiment's
figures (PNG, axes with units) into ``out_dir`` and returns a :class:`ReproResult` whose rows set our
numbers beside the paper's. ``quick`` is the reduced run the test suite uses; the full run is the
default of the command.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from hapticam.errors import UsageError
from hapticam.fileio import make_output_folder

#: the subpackages whose ``reproduce`` module declares experiments
SOURCES = ("hapticam.commands.reproduce.contact", "hapticam.commands.reproduce.friction",
           "hapticam.commands.reproduce.hopper", "hapticam.commands.reproduce.hybrid",
           "hapticam.commands.reproduce.seed001")


#: one table row: (quantity, ours, the paper's, unit) as display strings
Row = tuple[str, str, str, str]


@dataclass
class ReproResult:
    """Rows ``(quantity, ours, the paper's, unit)`` as display strings, the figures written, notes."""

    rows: list[Row]
    figures: list[Path]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Experiment:
    """One reproducible experiment: ``run(out_dir, quick) -> ReproResult``."""

    name: str
    title: str
    run: Callable[[Path, bool], ReproResult]


def experiments() -> dict[str, Experiment]:
    """Every declared experiment by name."""
    found: dict[str, Experiment] = {}
    for module in SOURCES:
        for name, exp in importlib.import_module(module).EXPERIMENTS.items():
            found[name] = exp
    return dict(sorted(found.items()))


def run(name: str, out_dir: Path, quick: bool = False) -> ReproResult:
    """Run experiment ``name`` writing into ``out_dir`` (created)."""
    table = experiments()
    if name not in table:
        raise UsageError(f"unknown experiment {name!r}; known: {', '.join(table)} (hapticam reproduce --list)")
    make_output_folder("-o", out_dir)
    return table[name].run(out_dir, quick)


def format_result(name: str, result: ReproResult) -> str:
    """The comparison table of one experiment."""
    w = max([len(r[0]) for r in result.rows] + [8])
    lines = [name, f"  {'quantity':<{w}}  {'ours':>18}  {'paper':>18}  unit", "  " + "-" * (w + 46)]
    lines += [f"  {q:<{w}}  {ours:>18}  {paper:>18}  {unit}" for q, ours, paper, unit in result.rows]
    lines += [f"  figure: {p}" for p in result.figures]
    lines += [f"  note: {n}" for n in result.notes]
    return "\n".join(lines)
