"""Figures of the hopper experiments (seed 002 Figs. 1-3): PNG, axes with units, written atomically.

matplotlib is imported inside the functions (Agg backend).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.fileio import save_figure
from hapticam.identify.hopper.model import HopperParams, PeriodicOrbit, sample_states
from hapticam.identify.hopper.fit import HopperData, HopperFit, predict

#: Okabe & Ito (2008) colour-blind-safe palette
COLOURS = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#D55E00", "#0072B2", "#CC79A7")


def _figure(nrows: int, height: float = 2.8) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, 1, figsize=(8.0, height * nrows), squeeze=False)
    return fig, axes[:, 0]




def _shade_ground(ax: Any, t: np.ndarray, x: np.ndarray) -> None:
    """Grey where the foot is on the floor (seed 002 Fig. 1's convention)."""
    down = x <= 0.0
    edges = np.flatnonzero(np.diff(down.astype(int)))
    starts = [0] + list(edges + 1)
    for a, b in zip(starts, list(edges + 1) + [t.size]):
        if down[a]:
            ax.axvspan(t[a], t[b - 1], color="0.85", lw=0, zorder=0)


def orbit_figure(params: HopperParams, accurate: PeriodicOrbit, relaxed: PeriodicOrbit, start: np.ndarray,
                 path: str | os.PathLike[str], periods: float = 4.0) -> Path:
    """Positions and velocities from ``start`` on the section (a transient converging to the orbit, as Fig. 1),
    and the Poincare iterates of both integrators with their fixed points."""
    from hapticam.identify.hopper.model import poincare_map

    t = np.linspace(0.0, periods * params.period_s, 2001)
    s = sample_states(params, start, t)
    fig, (ax1, ax2, ax3) = _figure(3)
    for ax, cols, unit in ((ax1, (0, 2), "m"), (ax2, (1, 3), "m/s")):
        _shade_ground(ax, t, s[:, 2])
        ax.plot(t, s[:, cols[0]], color=COLOURS[5], label="body y" if unit == "m" else "body y'")
        ax.plot(t, s[:, cols[1]], color=COLOURS[4], label="foot x" if unit == "m" else "foot x'")
        ax.set_xlabel("time t (s)")
        ax.set_ylabel(f"{'height' if unit == 'm' else 'velocity'} ({unit})")
        ax.legend(loc="lower left", ncol=2, fontsize=8)
    ax1.set_title("hopper from a section point off the orbit (grey: foot on the floor)")
    for orbit, colour, label in ((accurate, COLOURS[3], "accurate (RK4, events located)"),
                                 (relaxed, COLOURS[1], "relaxed Euler h = 0.01 s (paper)")):
        z, pts = start.copy(), [start.copy()]
        for _ in range(8):
            z = poincare_map(params, z, orbit.integrator)
            pts.append(z)
        pts = np.array(pts)
        ax3.plot(pts[:, 0], pts[:, 1], "o-", ms=3, color=colour, label=label)
        ax3.plot(*orbit.zeta, "*", ms=12, color=colour)
    ax3.set_xlabel("section height y (m)")
    ax3.set_ylabel("section velocity y' (m/s)")
    ax3.set_title("Poincare iterates at sigma = pi and fixed points (stars)")
    ax3.legend(fontsize=8)
    return save_figure(fig, path, dpi=110, error=IdentificationError)


def fit_figure(data: HopperData, guess: np.ndarray, fits: list[HopperFit], path: str | os.PathLike[str],
               title: str) -> Path:
    """Data, the true trajectory, the guess's and each estimate's predictions; below, the prediction error
    against function evaluations for each minimiser."""
    n = data.y_m.size
    rel = data.tau_s * np.arange(1, n + 1)
    fig, (ax1, ax2) = _figure(2, height=3.2)
    ax1.plot(rel, data.y_m, ".", color="0.5", ms=4, label=f"data (noise sd {data.noise_m:g} m)")
    ax1.plot(rel, data.y_clean_m, color=COLOURS[0], lw=2, label="truth")
    ax1.plot(rel, predict(guess, data.names, data.params, data.tau_s, n), "--", color=COLOURS[1], label="guess")
    for fit, colour in zip(fits, (COLOURS[3], COLOURS[4])):
        ax1.plot(rel, predict(fit.theta, data.names, data.params, data.tau_s, n), color=colour, lw=1.2,
                 label=f"{fit.method} estimate")
        e, c = np.array(fit.history).T
        ax2.semilogy(e, c, "o-", ms=3, color=colour, label=fit.method)
    ax1.set_xlabel("time after the initial condition, i tau (s)")
    ax1.set_ylabel("body height y (m)")
    ax1.set_title(title)
    ax1.legend(fontsize=8, ncol=2)
    ax2.set_xlabel("function evaluations (simulations)")
    ax2.set_ylabel("prediction error eps (m^2)")
    ax2.legend(fontsize=8)
    return save_figure(fig, path, dpi=110, error=IdentificationError)
