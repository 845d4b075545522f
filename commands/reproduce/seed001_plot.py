"""Figures of the seed 001 reproduction (PNG, axes with units): the parameters against position as Fig. 3,
the 2 Hz validation as Fig. 4.

matplotlib is imported inside the functions (Agg backend); files are written with
:func:`hapticam.fileio.save_figure`, never half-written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.fileio import save_figure
from hapticam.identify.impedance.result import ImpedanceFit

#: Okabe & Ito (2008) colour-blind-safe palette: truth, pressing, releasing, measured
TRUTH, PRESS, RELEASE, MEASURED = "#000000", "#D55E00", "#0072B2", "#999999"
PANELS = (("m", "mass m (kg)"), ("b", "damping b (N s/m)"), ("k", "stiffness k (N/m)"), ("F0", "offset F0 (N)"))


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _truth(device: Any, x_m: np.ndarray, direction: int) -> list[np.ndarray]:
    """``[m, b, k, F0]`` of the device at ``x_m`` (``F0``: seed 001 eq. 6's offset)."""
    return [np.full_like(x_m, device.mass_kg), np.full_like(x_m, device.damping_Nspm), device.stiffness(x_m),
            device.offset(x_m, direction)]


def parameters_figure(device: Any, fit: ImpedanceFit, profiles: dict[int, dict[str, Any]],
                      path: str | os.PathLike[str]) -> Path:
    """``m, b, k, F0`` against position (mm): the device's truth, the EWLS profiles on the grid (points:
    Table 1 as printed, and the pipeline's with its covariance bound) and the segmented model (lines),
    pressing and releasing. ``profiles``: direction -> {"table1", "pipeline"} -> profile. Returns the path."""
    plt = _pyplot()
    fig, axes = plt.subplots(4, 1, figsize=(8.0, 9.5), sharex=True)
    inner = [fit.model.table(d).breakpoints_m[[1, -2]] for d in (1, -1)]   # the held ends left out
    xs = np.linspace(max(b[0] for b in inner), min(b[1] for b in inner), 2000, endpoint=False)
    for direction, name, colour in ((1, "press", PRESS), (-1, "release", RELEASE)):
        model = fit.model.parameters_at(xs, direction)
        truth = _truth(device, xs, direction)
        plain, bounded = profiles[direction]["table1"], profiles[direction]["pipeline"]
        for j, ax in enumerate(axes):
            ax.plot(1e3 * xs, truth[j], color=TRUTH, lw=1.0, ls="-" if direction == 1 else ":",
                    label=f"truth ({name})")
            ax.plot(1e3 * plain.x_m, plain.theta[:, j], "o", ms=3.5, color=colour, mfc="none",
                    label=f"EWLS lam 0.999, Table 1 ({name})")
            ax.plot(1e3 * bounded.x_m, bounded.theta[:, j], "+", ms=4, color=colour, alpha=0.6,
                    label=f"EWLS lam 0.999, bounded P ({name})")
            ax.plot(1e3 * xs, model[j], color=colour, lw=1.2, label=f"segmented model ({name})")
    for ax, (_name, label) in zip(axes, PANELS):
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylim(0.0, 2.0 * device.mass_kg)
    axes[0].legend(fontsize=7, ncol=2, loc="upper right")
    axes[-1].set_xlabel("position x (mm)")
    fig.suptitle("seed 001 Fig. 3: parameters against position, 1-4 Hz swept sine, no dashpot", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110, error=IdentificationError, tight=False)


def validation_figure(check: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Force (N) against time (s) on the 2 Hz sinusoid, measured, true and predicted, and the prediction's
    error against the true force (N). Returns the path."""
    plt = _pyplot()
    fig, (ax_f, ax_e) = plt.subplots(2, 1, figsize=(8.0, 6.0), sharex=True, height_ratios=(2, 1))
    t = check["t_s"]
    ax_f.plot(t, check["measured_N"], color=MEASURED, lw=2.5, label="measured")
    ax_f.plot(t, check["true_N"], color=TRUTH, lw=1.0, label="true (simulated device)")
    ax_f.plot(t, check["predicted_N"], color=PRESS, lw=1.0, ls="--", label="predicted (segmented model)")
    ax_f.set_ylabel("force (N)")
    ax_f.legend(fontsize=7, loc="upper right")
    ax_e.plot(t, check["predicted_N"] - check["true_N"], color=PRESS, lw=0.8)
    ax_e.set_ylabel("predicted - true (N)")
    ax_e.set_xlabel("time (s)")
    for ax in (ax_f, ax_e):
        ax.grid(alpha=0.3)
    fig.suptitle("seed 001 Fig. 4: forces, measured and predicted, 2 Hz sinusoid", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110, error=IdentificationError, tight=False)
