"""The time panel of ``hapticam plot``: force and position against time, on twin axes.

A capture of a 90 s sweep at 4 kHz holds 360 000 samples, far more than the panel's few hundred pixel
columns: each trace is drawn from its :func:`envelope` (the smallest and the largest sample of each of
:data:`ENVELOPE_COLUMNS` equal spans of time, in time order), which draws the same picture as every
sample (a line through each column's minimum and maximum covers the column's whole range) from at most
``2 ENVELOPE_COLUMNS`` points, and keeps the signal's extremes exactly.

Force (left axis) and position (right axis) have their own colours, carried by their axis labels and
tick labels. Each axis puts its trace in its own band of the panel, force above and position below, so
that a fast excitation's two bands of oscillation do not cover each other; ticks are only where the
trace is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hapticam.capture import Capture

#: time spans a trace is reduced to (about two per pixel column of the panel at the plot's 90 dpi)
ENVELOPE_COLUMNS = 1000
#: (force, position) colours per capture: Okabe-Ito vermillion and blue, then orange and sky blue, ...
TRACE_COLOURS = (("#D55E00", "#0072B2"), ("#E69F00", "#56B4E9"), ("#CC79A7", "#009E73"))
TRACE_STYLES = ("-", "--", ":")
#: the panel's share (bottom, top, as fractions of its height) for the force and the position band
FORCE_BAND = (0.47, 0.97)
POSITION_BAND = (0.03, 0.41)


def envelope(t: np.ndarray, y: np.ndarray, columns: int = ENVELOPE_COLUMNS) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and the largest finite sample of ``y`` in each of ``columns`` equal spans of ``t``
    (increasing), in time order: at most ``2 columns`` points. Short signals are returned as they are."""
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(t) & np.isfinite(y)
    t, y = t[keep], y[keep]
    if t.size <= 2 * columns or not t[-1] > t[0]:
        return t, y
    column = np.minimum(((t - t[0]) / (t[-1] - t[0]) * columns).astype(np.int64), columns - 1)
    order = np.lexsort((y, column))                      # by column, then by value
    starts = np.flatnonzero(np.r_[True, np.diff(column[order]) != 0])
    ends = np.r_[starts[1:], order.size] - 1
    picks = np.sort(np.column_stack([order[starts], order[ends]]), axis=1).ravel()
    return t[picks], y[picks]


def time_axes(ax: Any, captures: list[tuple[str, Capture]]) -> Any:
    """Draw force (left, ``ax``) and position (right, a twin of ``ax``) against time; returns the twin."""
    twin = ax.twinx()
    handles = []
    force_range, position_range = [np.inf, -np.inf], [np.inf, -np.inf]
    for i, (name, cap) in enumerate(captures):
        f_colour, x_colour = TRACE_COLOURS[i % len(TRACE_COLOURS)]
        style = TRACE_STYLES[(i // len(TRACE_COLOURS)) % len(TRACE_STYLES)]
        t = cap.t_s - cap.t_s[0]
        tf, f = envelope(t, cap.f_N)
        tx, x = envelope(t, cap.x_m * 1e3)
        handles += ax.plot(tf, f, style, color=f_colour, lw=0.8, label=f"{name}: force F (N, left)")
        handles += twin.plot(tx, x, style, color=x_colour, lw=0.8, label=f"{name}: position x (mm, right)")
        _widen(force_range, f)
        _widen(position_range, x)
    f_colour, x_colour = TRACE_COLOURS[0]
    _band(ax, force_range, FORCE_BAND, f_colour)
    _band(twin, position_range, POSITION_BAND, x_colour)
    ax.set_xlabel("time t (s)")
    ax.set_ylabel("force on the object F (N)", color=f_colour)
    twin.set_ylabel("position x (mm)", color=x_colour)
    ax.set_title("force and position against time")
    ax.grid(alpha=0.3)
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.13), frameon=False)
    return twin


def _widen(span: list[float], values: np.ndarray) -> None:
    if values.size:
        span[0], span[1] = min(span[0], float(values.min())), max(span[1], float(values.max()))


def _band(ax: Any, span: list[float], band: tuple[float, float], colour: str) -> None:
    """Limit ``ax`` so that values ``span`` fill the fraction ``band`` of its height; ticks within
    ``span``, in ``colour``."""
    from matplotlib.ticker import MaxNLocator

    lo, hi = span
    if not np.isfinite(lo):
        return
    if hi - lo <= 0:
        lo, hi = lo - 0.5, hi + 0.5
    height = (hi - lo) / (band[1] - band[0])
    bottom = lo - band[0] * height
    ax.set_ylim(bottom, bottom + height)
    slack = 0.02 * (hi - lo)
    ticks = MaxNLocator(nbins=4).tick_values(lo, hi)
    ax.set_yticks(ticks[(ticks >= lo - slack) & (ticks <= hi + slack)])
    ax.tick_params(axis="y", colors=colour)
