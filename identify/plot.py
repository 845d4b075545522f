"""``hapticam plot``: captures, recordings and models on the same axes.

- Force against position per direction of travel: captures and recordings as points, models as their
  quasi-static curves (``F(x)`` while pressing and while releasing, evaluated with the renderer's kernel)
  over the plotted range.
- Force and position against time for captures and recordings (:mod:`hapticam.identify.plot_time`).

Alignment: with a model to compare with, each capture is drawn where ``hapticam verify`` compares it,
moved onto the first model by :func:`hapticam.identify.alignment.align_to_model` (backlash removed from
the releasing samples, then the pressing contact point shifted onto the model's); the legend gives the
shift. A model is drawn solid only over its data, the positions its file says it was fitted from (its
provenance's ``data_range_m``; without one, the positions of the captures drawn with it); beyond them it
is dotted grey, labelled "beyond data", and the force axis is sized to the data, so an end stop nothing
measured does not set the scale.

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
from hapticam.identify.alignment import Alignment, align_to_model
from hapticam.identify.plot_time import time_axes
from hapticam.identify.preprocess import Prepared, prepare
from hapticam.models.base import Model
from hapticam.models.kernels import model_force

#: Okabe & Ito (2008), "Color universal design": black first, then the seven colours
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442")
MODEL_POINTS = 1500
BEYOND_DATA = "#8C8C8C"
#: shifts (m) smaller than this are not mentioned
SHIFT_SHOWN_M = 0.5e-6


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
         path: str | os.PathLike[str], *, align: bool = True) -> Path:
    """Draw ``captures`` (name, capture) and ``models`` (name, model, provenance) to the PNG ``path``;
    ``align``: move the captures onto the first model (module notes)."""
    return save_figure(figure(captures, models, align=align), path, dpi=90, tight=False)


def figure(captures: list[tuple[str, Capture]], models: list[tuple[str, Model, dict[str, Any]]], *,
           align: bool = True) -> Any:
    """The matplotlib figure :func:`plot` writes: F-x axes first, then (with captures) the time axes."""
    if not captures and not models:
        raise UsageError("plot: nothing to draw")
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    with_time = bool(captures)
    fig, axes = plt.subplots(1, 2 if with_time else 1, figsize=(13 if with_time else 7, 6), squeeze=False,
                             constrained_layout=True)
    _fx_axes(axes[0, 0], captures, models, align)
    if with_time:
        time_axes(axes[0, 1], captures)
    return fig


def _fx_axes(ax: Any, captures: list[tuple[str, Capture]], models: list[tuple[str, Model, dict[str, Any]]],
             align: bool) -> None:
    target = models[0] if (models and align) else None
    placed = [_placed(cap, target[1] if target else None) for _, cap in captures]
    colours = iter(OKABE_ITO * 4)
    forces = [_draw_capture(ax, name, cap, prep, shift, next(colours))
              for (name, cap), (prep, shift) in zip(captures, placed)]
    captured = _span([prep.x[cap.valid] for (_, cap), (prep, _) in zip(captures, placed)])
    lo, hi = _x_range(captured, models)
    xs = np.linspace(lo, hi, MODEL_POINTS)
    beyond = []
    for name, model, prov in models:
        inside, curves = _draw_model(ax, name, model, _data_range(prov) or captured, xs, next(colours))
        forces.append({d: f[inside] for d, f in curves.items()})
        beyond += [(name, d, np.where(_with_edges(~inside), f, np.nan)) for d, f in curves.items()]
    _force_limits(ax, _span([f for group in forces for f in group.values()]))
    _beyond_data(ax, xs, beyond)
    ax.set_xlim(lo * 1e3, hi * 1e3)
    moved = any(s is not None and max(abs(s.offset_m), abs(s.backlash_m)) >= SHIFT_SHOWN_M for _, s in placed)
    ax.set_xlabel("position x (mm)" + (f", captures moved onto {target[0]}" if moved and target else ""))
    ax.set_ylabel("force on the object F (N)")
    ax.set_title("force-displacement per direction of travel")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.13), ncol=1, frameon=False)


def _draw_capture(ax: Any, name: str, cap: Capture, prep: Prepared, shift: Alignment | None,
                  colour: str) -> dict[int, np.ndarray]:
    """Points per direction (pressing filled, releasing hollow) at the prepared (aligned) positions;
    returns the forces drawn per direction (N)."""
    drawn = {}
    for d in (1, -1):
        sel = (prep.direction == d) & cap.valid
        label = f"{name}, {'pressing' if d > 0 else 'releasing'}"
        if shift is not None:
            label += _shift_note(shift, d)
        ax.plot(prep.x[sel] * 1e3, cap.f_N[sel], "o", ms=2.5, mfc=colour if d > 0 else "none", mec=colour,
                ls="none", label=label)
        drawn[d] = cap.f_N[sel]
    return drawn


def _draw_model(ax: Any, name: str, model: Model, data: tuple[float, float] | None, xs: np.ndarray,
                colour: str) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """The model's curves within ``data`` (m; all of ``xs`` when None); returns the mask of ``xs`` inside
    and the whole curves per direction (N)."""
    inside = np.ones(xs.size, dtype=bool) if data is None else (xs >= data[0]) & (xs <= data[1])
    curves = {}
    for d, style in ((1, "-"), (-1, "--")):
        curves[d] = static_curve(model, xs, d)
        ax.plot(xs * 1e3, np.where(inside, curves[d], np.nan), style, color=colour, lw=1.4,
                label=f"{name}, {'pressing' if d > 0 else 'releasing'}"
                + ("" if data is not None else " (no data range recorded)"))
    return inside, curves


def _placed(cap: Capture, model: Model | None) -> tuple[Prepared, Alignment | None]:
    """The capture prepared and, given a model, moved onto it."""
    prep = prepare(cap)
    return prep, (align_to_model(model, prep) if model is not None else None)


def _shift_note(shift: Alignment, direction: int) -> str:
    """The legend's words for how a direction's samples were moved (the axis label names the model)."""
    parts = []
    if abs(shift.offset_m) >= SHIFT_SHOWN_M:
        parts.append(f"{shift.offset_m * 1e3:+.3f} mm to the model's contact")
    if direction < 0 and abs(shift.backlash_m) >= SHIFT_SHOWN_M:
        parts.append(f"{shift.backlash_m * 1e3:+.3f} mm for backlash")
    return ", shifted " + " and ".join(parts) if parts else ", as captured"


def _with_edges(mask: np.ndarray) -> np.ndarray:
    """``mask`` grown by one sample either way, so that two complementary segments meet."""
    grown = mask.copy()
    grown[1:] |= mask[:-1]
    grown[:-1] |= mask[1:]
    return grown


def _beyond_data(ax: Any, xs: np.ndarray, curves: list[tuple[str, int, np.ndarray]]) -> None:
    """Draw the models beyond their data: dotted grey, one legend entry per model (with the force it
    reaches when that is off the axes)."""
    top = ax.get_ylim()[1]
    for name, d, f in curves:
        if not np.isfinite(f).any():
            continue
        label = None
        if d > 0:
            peak = float(np.nanmax(f))
            label = f"{name}, beyond data" + (f" (reaches {peak:.3g} N)" if peak > top else "")
        ax.plot(xs * 1e3, f, ":", color=BEYOND_DATA, lw=1.3, label=label)


def _force_limits(ax: Any, span: tuple[float, float] | None) -> None:
    """Force axis over ``span`` (N: the data and the models within their data), with a little room."""
    if span is None:
        return
    lo, hi = span
    pad = 0.08 * (hi - lo) if hi > lo else 0.1
    ax.set_ylim(lo - pad, hi + pad)


def _data_range(prov: dict[str, Any]) -> tuple[float, float] | None:
    data = (prov.get("settings") or {}).get("data_range_m")
    if (isinstance(data, (list, tuple)) and len(data) == 2
            and all(isinstance(v, (int, float)) and np.isfinite(v) for v in data) and data[0] < data[1]):
        return float(data[0]), float(data[1])
    return None


def _span(arrays: list[np.ndarray]) -> tuple[float, float] | None:
    """Smallest and largest finite value over ``arrays`` (None when there is none)."""
    kept = [a[np.isfinite(a)] for a in arrays]
    kept = [a for a in kept if a.size]
    if not kept:
        return None
    return min(float(a.min()) for a in kept), max(float(a.max()) for a in kept)


def _x_range(captured: tuple[float, float] | None, models: list[tuple[str, Model, dict[str, Any]]]
             ) -> tuple[float, float]:
    """The positions to draw over: the captures' travel, else the models' data or 0-5 mm."""
    if captured is not None:
        lo, hi = captured
    else:
        ranges = [r for r in (_data_range(p) for _, _, p in models) if r is not None]
        lo, hi = (min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else (0.0, 5e-3)
    pad = 0.1 * (hi - lo) if hi > lo else 1e-3
    return lo - pad, hi + pad
