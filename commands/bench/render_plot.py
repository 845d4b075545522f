"""``hapticam bench render --plot PNG``: the lateness distributions of the render bench's loops.

Each loop's lateness is kept as its tail, the quantile at ``q = 1 - 10^-e`` for ``e`` from 0.3 to 5
(:func:`tail_from_samples`, :func:`tail_from_histogram`), and drawn as the fraction of ticks later than a
lateness against that lateness, both axes logarithmic: the curve's reach to the right is what a deadline
sees. Colours are the Okabe-Ito palette (distinguishable with the common colour-vision deficiencies).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hapticam.fileio import save_figure
from hapticam.render.layout import HIST_BIN_NS

#: fractions of ticks later than the plotted lateness: 10^-0.3 (half) to 10^-5
TAIL_EXCEED = 10.0 ** -np.linspace(0.3, 5.0, 48)
#: Okabe & Ito (2008), "Color universal design"
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442")


def tail_from_samples(lateness_ns: np.ndarray) -> dict[str, list[float]]:
    """Lateness (us) exceeded by each fraction of :data:`TAIL_EXCEED` of the ticks, from per-tick samples (ns)."""
    v = np.asarray(lateness_ns, dtype=float) * 1e-3
    if v.size == 0:
        return {"exceed": [], "lateness_us": []}
    return {"exceed": TAIL_EXCEED.tolist(), "lateness_us": np.quantile(v, 1.0 - TAIL_EXCEED).tolist()}


def tail_from_histogram(hist: np.ndarray) -> dict[str, list[float]]:
    """As :func:`tail_from_samples` from the loop's lateness histogram (``HIST_BIN_NS`` bins, upper edges)."""
    total = float(hist.sum())
    if total == 0:
        return {"exceed": [], "lateness_us": []}
    idx = np.searchsorted(np.cumsum(hist), (1.0 - TAIL_EXCEED) * total, side="left")
    return {"exceed": TAIL_EXCEED.tolist(), "lateness_us": ((idx + 1) * HIST_BIN_NS * 1e-3).tolist()}


def plot_lateness(results: dict[str, Any], path: str | Path) -> Path:
    """Write the PNG of every loop's and condition's lateness tail in ``results`` (``run_bench``'s)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    styles = {"idle": "-", "load": "--"}
    for i, name in enumerate(("hapticam", "python")):
        for cond in ("idle", "load"):
            tail = results.get(name, {}).get(cond, {}).get("tail")
            if not tail or not tail["exceed"]:
                continue
            us = np.maximum(np.asarray(tail["lateness_us"]), HIST_BIN_NS * 1e-3)   # the resolution as the floor
            ax.step(us, tail["exceed"], where="post", linestyle=styles[cond], color=OKABE_ITO[4 if i == 0 else 5],
                    label=f"{name}, {cond}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("lateness of a tick's start (us)")
    ax.set_ylabel("fraction of ticks later than that")
    ax.set_title(f"servo loop at {results.get('rate_hz', 1000):g} Hz, {results.get('seconds', 0):g} s per run "
                 f"({str(results.get('scheduling', '')).split(';')[0]})", fontsize=9)
    ax.axvline(1e6 / float(results.get("rate_hz", 1000.0)), color=OKABE_ITO[0], linewidth=0.8, linestyle=":")
    ax.text(1e6 / float(results.get("rate_hz", 1000.0)), 1.2e-5, " one period", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)
