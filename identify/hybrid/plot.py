"""Figures of the seed 000 experiments (PNG, axes with units), written atomically.

matplotlib is imported inside the functions (Agg backend).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.fileio import save_figure

#: Okabe & Ito (2008) colour-blind-safe palette
COLOURS = ("#000000", "#E69F00", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#999999")


def _figure(nrows: int, height: float = 2.8) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, 1, figsize=(8.0, height * nrows), sharex=True, squeeze=False)
    return fig, axes[:, 0]




def reconstruction_figure(t: np.ndarray, nominal: np.ndarray, perturbed: np.ndarray, recon: np.ndarray,
                          title: str, path: str | os.PathLike[str]) -> Path:
    """Thermostat (seed 000 Figs. 2-3): nominal (dashed), perturbed (solid), reconstruction (dotted) over
    time (s), and the reconstruction's error on a log scale."""
    fig, (ax, ax_err) = _figure(2)
    ax.plot(t, nominal, "--", color=COLOURS[6], label="nominal (tau = 1)")
    ax.plot(t, perturbed, "-", color=COLOURS[0], label="perturbed (tau = 1.02)")
    ax.plot(t, recon, ":", color=COLOURS[3], lw=2.0, label="reconstruction")
    ax.set_ylabel("temperature x (arbitrary units)")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    ax_err.semilogy(t, np.maximum(np.abs(recon - perturbed), 1e-12), color=COLOURS[3])
    ax_err.set_ylabel("|reconstruction - perturbed|")
    ax_err.set_xlabel("time t (s)")
    return save_figure(fig, path, dpi=110, error=IdentificationError)


def trajectories_figure(t_true: np.ndarray, y_true: np.ndarray, segments: Sequence[tuple[np.ndarray, np.ndarray]],
                        t_paddle: np.ndarray, y_paddle: np.ndarray, title: str,
                        path: str | os.PathLike[str]) -> Path:
    """Ball height (m) against time (s): the system to be identified, the adjusting model's flights from
    its estimates (seed 000 Figs. 4 and 6) and the paddle."""
    fig, (ax,) = _figure(1, 3.6)
    ax.plot(t_paddle, y_paddle, color=COLOURS[6], lw=1.0, label="paddle")
    ax.plot(t_true, y_true, color=COLOURS[0], label="system to be identified")
    for i, (ts, ys) in enumerate(segments):
        ax.plot(ts, ys, ":", color=COLOURS[3], lw=1.8, label="adjusting model" if i == 0 else None)
    ax.set_ylabel("height y (m)")
    ax.set_xlabel("time t (s)")
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=8)
    return save_figure(fig, path, dpi=110, error=IdentificationError)


def convergence_figure(t: np.ndarray, estimates: np.ndarray, truth: Sequence[float], labels: Sequence[str],
                       title: str, path: str | os.PathLike[str]) -> Path:
    """Parameter estimates (one panel each, ``labels`` with units) against the time (s) of the event after
    which they were made, with the true value dashed (seed 000 Figs. 5 and 7)."""
    estimates = np.atleast_2d(np.asarray(estimates, dtype=float).T).T
    fig, axes = _figure(estimates.shape[1], 2.6)
    for j, ax in enumerate(axes):
        ax.plot(t, estimates[:, j], "o-", ms=3, color=COLOURS[2], label="estimate")
        ax.axhline(truth[j], ls="--", color=COLOURS[0], label="true value")
        ax.set_ylabel(labels[j])
        ax.legend(loc="lower right", fontsize=8)
    axes[0].set_title(title)
    axes[-1].set_xlabel("time of the latest measured event t (s)")
    return save_figure(fig, path, dpi=110, error=IdentificationError)
