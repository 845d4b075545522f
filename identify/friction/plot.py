"""Figures of the seed 003 reproduction: the angles, and the estimates (PNG, axes with units).

matplotlib is imported inside the functions (Agg backend); files are written with
:func:`hapticam.fileio.atomic_write`, never half-written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.fileio import save_figure

#: Okabe & Ito (2008) colour-blind-safe palette
COLOURS = ("#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#999999")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt




def angles_figure(t_s: np.ndarray, measured: np.ndarray, simulated: dict[str, np.ndarray],
                  path: str | os.PathLike[str]) -> Path:
    """Arm and pendulum angles (rad) against time (s): the measured record and each simulation of
    ``simulated`` (label -> (n, 2) angles), as seed 003 figs. 6 and 12. Returns the path."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(9.0, 6.0), sharex=True)
    for j, (ax, name) in enumerate(zip(axes, ("arm angle theta0 (rad)", "pendulum angle theta1 (rad)"))):
        ax.plot(t_s, measured[:, j], color=COLOURS[8], lw=2.5, label="measured (simulated truth + noise)")
        for i, (label, q) in enumerate(simulated.items()):
            ax.plot(t_s, q[:, j], color=COLOURS[1 + i], lw=0.9, label=label)
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="upper right")
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("seed 003, 35 s passive swing: measured angles and simulations with each method's parameters",
                 fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110, error=IdentificationError, tight=False)


def estimates_figure(t_s: np.ndarray, e_norm: np.ndarray, z_over_truth: np.ndarray, closed_over_truth: np.ndarray,
                     names: tuple[str, ...], combos_over_truth: np.ndarray, combo_se: np.ndarray,
                     combo_names: tuple[str, ...], path: str | os.PathLike[str]) -> Path:
    """Three panels: the observer error ``|e|`` (rad/s); the UAS parameters over their truth against time,
    with eq. 23's closed form dashed (they coincide: the trajectories are the closed form); the grey-box
    combinations over their truth with one standard error. Returns the path."""
    plt = _pyplot()
    fig, (ax_e, ax_z, ax_c) = plt.subplots(3, 1, figsize=(9.0, 9.0))
    ax_e.semilogy(t_s, np.maximum(e_norm, 1e-12), color=COLOURS[0], lw=0.6)
    ax_e.set_ylim(bottom=1e-5)
    ax_e.set_ylabel("|e| observer (rad/s)")
    ax_e.set_xlabel("time (s)")
    for i, name in enumerate(names):
        colour = COLOURS[i % (len(COLOURS) - 1)]
        ax_z.semilogy(t_s, z_over_truth[:, i], color=colour, lw=1.0, label=name)
        ax_z.semilogy(t_s, closed_over_truth[:, i], color=colour, lw=1.0, ls="--")
    ax_z.axhline(1.0, color=COLOURS[8], lw=2.0)
    ax_z.set_ylabel("UAS estimate / truth (-)")
    ax_z.set_xlabel("time (s)  (dashed: eq. 23 closed form in S = integral |e| dt)")
    ax_z.legend(fontsize=6, ncol=5, loc="upper right")
    x = np.arange(len(combo_names))
    ax_c.errorbar(x, combos_over_truth, yerr=combo_se, fmt="o", color=COLOURS[1], capsize=3,
                  label="grey-box (1 standard error)")
    ax_c.axhline(1.0, color=COLOURS[8], lw=2.0)
    ax_c.axhspan(0.95, 1.05, color=COLOURS[3], alpha=0.15, label="truth +-5 %")
    ax_c.set_xticks(x, combo_names, fontsize=7)
    ax_c.set_ylabel("grey-box estimate / truth (-)")
    ax_c.legend(fontsize=7)
    for ax in (ax_e, ax_z, ax_c):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110, error=IdentificationError, tight=False)
