"""``hapticam bench identify --plot PNG``: the whole pipeline's time and fit per capture, as distributions.

Left: seconds per capture of the passive pipeline and of the unconstrained one (what the passivity
constraints cost in time). Right: training and held-out fit per capture (seed 003 eq. 53). Colours are the
Okabe-Ito palette (distinguishable with the common colour-vision deficiencies).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hapticam.errors import HapticError
from hapticam.fileio import save_figure

#: Okabe & Ito (2008), "Color universal design"
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442")


def plot_pipeline(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """Write the PNG of ``run_pipeline_bench``'s rows (one per capture)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows:
        raise HapticError("bench identify --plot: no pipeline rows to draw (no captures were timed)")
    names = [r["capture"].rsplit(".", 1)[0] for r in rows]
    y = np.arange(len(rows))
    fig, (ax_t, ax_f) = plt.subplots(1, 2, figsize=(10, 0.35 * len(rows) + 1.6), dpi=110, sharey=True)
    ax_t.barh(y - 0.2, [r["pipeline_s"] * 1e3 for r in rows], 0.4, color=OKABE_ITO[4], label="passive (default)")
    ax_t.barh(y + 0.2, [r["unconstrained_s"] * 1e3 for r in rows], 0.4, color=OKABE_ITO[1], label="unconstrained")
    ax_t.set_yticks(y, names, fontsize=8)
    ax_t.invert_yaxis()
    ax_t.set_xlabel("time per capture (ms, best of the repeats)")
    ax_t.legend(fontsize=8)
    ax_f.plot([r["fit_percent"] for r in rows], y, "o", color=OKABE_ITO[3], label="training fit")
    ax_f.plot([r["holdout_fit_percent"] for r in rows], y, "s", mfc="none", color=OKABE_ITO[5], label="held-out fit")
    ax_f.set_xlabel("fit (%, seed 003 eq. 53)")
    ax_f.legend(fontsize=8)
    for ax in (ax_t, ax_f):
        ax.grid(True, axis="x", alpha=0.3)
    return save_figure(fig, path)
