"""The force-travel plot of a library entry, as the catalogue page shows it and opens it full size.

Both directions of travel (pressing blue, releasing orange, Okabe-Ito colours that stay apart for
colour-blind readers), the captured curve as dots and the identified model's rendering as lines, over
the travel past contact in mm, so the page's travel columns read straight off the axis; the bump top
(pre-travel), the force 2 mm past contact (actuation force) and the bottom-out are marked where the
entry's features were read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hapticam.fileio import save_figure

#: size (inches) and resolution of the saved plot: 660 x 480 px, shown at 360 px wide on the page
PLOT_SIZE_IN = (4.4, 3.2)
PLOT_DPI = 150
#: the axes' edges as fractions of the figure: room for the title above and the legend's two rows below
MARGINS = {"left": 0.13, "right": 0.97, "top": 0.92, "bottom": 0.31}
PRESS_COLOUR, RELEASE_COLOUR = "#0072B2", "#E69F00"


def key_plot(result: Any, features: dict[str, Any], onset_m: float, actuation_travel_m: float, path: Path,
             title: str) -> None:
    """Save the plot (module notes) of a verification ``result`` as a PNG at ``path`` (atomically).

    ``features``: the entry's perceptual features (travels measured from contact at ``onset_m``, m; the
    actuation force read ``actuation_travel_m`` past it)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=PLOT_SIZE_IN, dpi=PLOT_DPI)
    fig.subplots_adjust(**MARGINS)                       # fixed: a layout engine doubles the drawing time
    for curves, how in ((result.curves_reference, "capture"), (result.curves_rendered, "model")):
        x_mm = (curves.x_m - onset_m) * 1e3
        style = {"ls": "none", "marker": ".", "ms": 4, "alpha": 0.45, "mew": 0} if how == "capture" else {"lw": 0.9}
        ax.plot(x_mm, curves.press_N, color=PRESS_COLOUR, **style)
        ax.plot(x_mm, curves.release_N, color=RELEASE_COLOUR, **style)
    marks = _mark_features(ax, features, actuation_travel_m)
    ax.set_xlabel("travel past contact (mm)", fontsize=10)
    ax.set_ylabel("force on the key (N)", fontsize=10)
    ax.set_title(title, fontsize=10)
    ax.tick_params(labelsize=9)
    ax.grid(True, lw=0.4, alpha=0.5)
    fig.legend(handles=_legend_handles() + marks, loc="lower center", ncol=4, fontsize=8.5, frameon=False,
               handlelength=1.5, columnspacing=1.0, borderaxespad=0.3)
    save_figure(fig, path, tight=False)


def _legend_handles() -> list[Any]:
    """Legend entries of the curves: a colour per direction, dots for the capture, a line for the model."""
    from matplotlib.lines import Line2D

    return [Line2D([], [], color=PRESS_COLOUR, lw=2.5, label="pressing"),
            Line2D([], [], color=RELEASE_COLOUR, lw=2.5, label="releasing"),
            Line2D([], [], color="#666666", ls="none", marker="o", ms=4, mew=0, label="capture"),
            Line2D([], [], color="#666666", lw=1.0, label="model")]


def _mark_features(ax: Any, features: dict[str, Any], actuation_travel_m: float) -> list[Any]:
    """Mark the bump top, the force at the actuation travel and the bottom-out where there are; return
    their legend entries."""
    marks = []
    pre, peak = features.get("pretravel_m"), features.get("bump_peak_N")
    if pre is not None and peak:
        marks += ax.plot([pre * 1e3], [peak], "v", color="black", ms=5, label="bump top")
    if features.get("actuation_force_N") is not None:
        marks += ax.plot([actuation_travel_m * 1e3], [features["actuation_force_N"]], "X", color="#009E73", ms=6,
                         mec="white", mew=0.6, label=f"force at {actuation_travel_m * 1e3:g} mm")
    if features.get("total_travel_m") is not None:
        marks.append(ax.axvline(features["total_travel_m"] * 1e3, color="#555555", ls=":", lw=1.0,
                                label="bottom-out"))
    return marks
