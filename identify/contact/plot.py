"""Convergence plots: estimate against time per estimator (the thesis's Fig. 2-6 (a)), PNG, axes with units.

Recursive estimators (and the global LS's growing-window solution) are drawn as curves over the contact's
time; the frequency-domain estimators, which have no time history, as horizontal lines at their final
values. matplotlib is imported inside the functions (Agg backend); files are written through a temporary
file and renamed, never half-written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.fileio import save_figure

#: Okabe & Ito (2008) colour-blind-safe palette, then black
COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442", "#000000", "#999999")




def _figure(nrows: int) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, 1, figsize=(8.0, 2.8 * nrows), sharex=True, squeeze=False)
    return fig, axes[:, 0]


def convergence_figure(fit: Any, path: str | os.PathLike[str]) -> Path:
    """Write stiffness and damping estimates against time for every estimator of ``fit`` (a
    :class:`~hapticam.identify.contact.fit.ContactFit`) to the PNG ``path``; returns the path."""
    if not getattr(fit, "results", None):
        raise IdentificationError("convergence figure: the fit holds no estimator results (Hunt-Crossley fit?)")
    fig, (ax_k, ax_b) = _figure(2)
    t0 = float(fit.t_s[0])
    span = (0.0, float(fit.t_s[-1] - t0))
    for i, (name, r) in enumerate(fit.results.items()):
        colour = COLOURS[i % len(COLOURS)]
        if r.axis_kind == "time":
            ax_k.plot(r.axis - t0, r.history[:, 0], color=colour, lw=1.0, label=name)
            ax_b.plot(r.axis - t0, r.history[:, 1], color=colour, lw=1.0, label=name)
        else:
            ax_k.hlines(r.k_Npm, *span, colors=colour, linestyles="--", lw=1.0, label=f"{name} (final)")
            ax_b.hlines(r.b_Nspm, *span, colors=colour, linestyles="--", lw=1.0, label=f"{name} (final)")
    k, b = fit.k_Npm, fit.b_Nspm
    ax_k.set_ylim(*_limits(k, fit.results, 0))
    ax_b.set_ylim(*_limits(b, fit.results, 1))
    ax_k.set_ylabel("stiffness k (N/m)")
    ax_b.set_ylabel("damping b (N s/m)")
    ax_b.set_xlabel("time since contact onset (s)")
    ax_k.set_title("contact parameter estimates (seed 004 estimators)")
    ax_b.set_title("damping " + fit.b_verdict.split(";")[0], fontsize=8)
    ax_k.legend(fontsize=7, ncol=3, loc="best")
    for ax in (ax_k, ax_b):
        ax.grid(True, alpha=0.3)
    return save_figure(fig, path, dpi=110, error=IdentificationError)


def _limits(centre: float, results: dict[str, Any], j: int) -> tuple[float, float]:
    """A y-range showing every final estimate and the convergence without the first transients' extremes."""
    finals = np.array([r.theta[j] for r in results.values() if np.isfinite(r.theta[j])] + [centre])
    lo, hi = float(np.min(finals)), float(np.max(finals))
    pad = max(0.5 * (hi - lo), 0.05 * abs(centre), 1e-9)
    return lo - pad, hi + pad


def history_figure(t_s: np.ndarray, history: np.ndarray, truth: tuple[float, float, float] | None,
                   path: str | os.PathLike[str]) -> Path:
    """Per-instant multi-point estimates ``(k, b, mu)`` against time (the thesis's Fig. 5-13 (c)-(e))."""
    fig, axes = _figure(3)
    labels = ("stiffness k (N/m)", "damping b (N s/m)", "friction coefficient mu (-)")
    for j, ax in enumerate(axes):
        ax.plot(t_s, history[:, j], ".", ms=2, color=COLOURS[3], label="per-instant solve")
        if truth is not None:
            ax.axhline(truth[j], color=COLOURS[4], lw=1.0, label="simulation input")
            ax.set_ylim(truth[j] * 0.5, truth[j] * 1.5)
        ax.set_ylabel(labels[j])
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    axes[0].set_title("multi-point contact: per-instant least squares (seed 004 eqs. 4.5, 4.7)")
    axes[-1].set_xlabel("time (s)")
    return save_figure(fig, path, dpi=110, error=IdentificationError)
