"""``hapticam plot``: captures, recordings and models on the same axes.

- Force against position per direction of travel: captures and recordings as points, models as their
  quasi-static curves (``F(x)`` while pressing and while releasing, evaluated with the renderer's kernel)
  over the plotted range, with the end of the model's data marked where its file says.
- Force and position against time for captures and recordings.

Colours are the Okabe-Ito palette (distinguishable with the common colour-vision deficiencies); pressing
is drawn solid or filled, releasing dashed or hollow. Axes carry units. The PNG is written atomically.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.capture import Capture
from hapticam.errors import UsageError
from hapticam.fileio import save_figure
from hapticam.identify.preprocess import prepare
from hapticam.models.base import Model
from hapticam.models.kernels import model_force

#: Okabe & Ito (2008), "Color universal design": black first, then the seven colours
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442")
MODEL_POINTS = 1500


def static_curve(model: Model, x_m: np.ndarray, direction: int) -> np.ndarray:
    """The model's force (N) at each x while moving slowly in ``direction`` (+1 pressing, -1 releasing)."""
    compiled = model.compile()
    out = np.empty(x_m.size)
    for i, x in enumerate(x_m):
        state = compiled.reset_state()
        model_force(compiled.params, state, float(x), direction * 0.1, 0.0, 1e-3)    # set the direction
        out[i] = model_force(compiled.params, state, float(x), direction * 1e-3, 0.0, 1e-3)
    return out


def plot(captures: list[tuple[str, Capture]], models: list[tuple[str, Model, dict[str, Any]]],
         path: str | os.PathLike[str]) -> Path:
    """Draw ``captures`` (name, capture) and ``models`` (name, model, provenance) to the PNG ``path``."""
    if not captures and not models:
        raise UsageError("plot: nothing to draw")
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    with_time = bool(captures)
    fig, axes = plt.subplots(1, 2 if with_time else 1, figsize=(13 if with_time else 7, 5), squeeze=False,
                             constrained_layout=True)
    ax_fx = axes[0, 0]
    lo, hi = _x_range(captures, models)
    colours = iter(OKABE_ITO * 4)
    for name, cap in captures:
        colour = next(colours)
        prep = prepare(cap)
        for d, marker, face in ((1, "o", colour), (-1, "o", "none")):
            sel = (prep.direction == d) & cap.valid
            ax_fx.plot(cap.x_m[sel] * 1e3, cap.f_N[sel], marker, ms=2.5, mfc=face, mec=colour, ls="none",
                       label=f"{name}, {'pressing' if d > 0 else 'releasing'}")
    xs = np.linspace(lo, hi, MODEL_POINTS)
    for name, model, prov in models:
        colour = next(colours)
        for d, style in ((1, "-"), (-1, "--")):
            ax_fx.plot(xs * 1e3, static_curve(model, xs, d), style, color=colour, lw=1.4,
                       label=f"{name}, {'pressing' if d > 0 else 'releasing'}")
        data = (prov.get("settings") or {}).get("data_range_m")
        if isinstance(data, list) and len(data) == 2:
            for edge in data:
                ax_fx.axvline(edge * 1e3, color=colour, ls=":", lw=1)
            ax_fx.text(data[1] * 1e3, ax_fx.get_ylim()[1], " data ends", color=colour, fontsize=8, va="top")
    ax_fx.set_xlabel("position x (mm)")
    ax_fx.set_ylabel("force on the object F (N)")
    ax_fx.set_title("force-displacement per direction of travel")
    ax_fx.grid(alpha=0.3)
    ax_fx.legend(fontsize=7)
    if with_time:
        _time_axes(axes[0, 1], captures)
    return save_figure(fig, path, dpi=90, tight=False)


def _x_range(captures: list[tuple[str, Capture]], models: list[tuple[str, Model, dict[str, Any]]]
             ) -> tuple[float, float]:
    """The positions to draw models over: the captures' travel, else the models' data or 0-5 mm."""
    if captures:
        lo = min(float(c.x_m.min()) for _, c in captures)
        hi = max(float(c.x_m.max()) for _, c in captures)
    else:
        ranges = [(p.get("settings") or {}).get("data_range_m") for _, _, p in models]
        ranges = [r for r in ranges if isinstance(r, list) and len(r) == 2]
        lo, hi = (min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else (0.0, 5e-3)
    pad = 0.1 * (hi - lo) if hi > lo else 1e-3
    return lo - pad, hi + pad


def _time_axes(ax: Any, captures: list[tuple[str, Capture]]) -> None:
    twin = ax.twinx()
    colours = iter(OKABE_ITO * 4)
    for name, cap in captures:
        colour = next(colours)
        t = cap.t_s - cap.t_s[0]
        ax.plot(t, cap.f_N, color=colour, lw=0.9, label=f"{name}: force")
        twin.plot(t, cap.x_m * 1e3, color=colour, lw=0.9, ls="--", label=f"{name}: position")
    ax.set_xlabel("time t (s)")
    ax.set_ylabel("force F (N), solid")
    twin.set_ylabel("position x (mm), dashed")
    ax.set_title("force and position against time")
    ax.grid(alpha=0.3)
