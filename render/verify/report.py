"""The verification report: one PNG figure and one JSON file with every number.

The figure has three panels: force-displacement overlay per direction (captured vs rendered), force
versus time with the residual (on a press with impacts, the impact windows shaded, each labelled with its
captured and rendered impulse, and the onsets of either side marked), and the feature table with each verdict.
"""

from __future__ import annotations

import json
import os
import textwrap
from typing import TYPE_CHECKING, Any


from hapticam.fileio import save_figure, atomic_write_bytes, json_safe

#: a feature's linear unit -> the same quantity on a rotary axis (docs/architecture.md, Conventions)
ROTARY_UNITS = {"m": "rad", "N": "N m", "N/m": "N m/rad"}

if TYPE_CHECKING:  # pragma: no cover
    from hapticam.render.verify.compare import VerifyResult


def write_json(path: str | os.PathLike[str], data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON, atomically."""
    atomic_write_bytes(path, (json.dumps(json_safe(data), indent=2) + "\n").encode())


def write_figure(path: str | os.PathLike[str], result: "VerifyResult") -> None:
    """Draw the verification figure to a PNG, atomically (matplotlib's Agg backend, no display)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(13, 8.5), constrained_layout=True)
    grid = fig.add_gridspec(2, 2, height_ratios=[1.1, 1.0])
    ax_fx = fig.add_subplot(grid[0, 0])
    ax_t = fig.add_subplot(grid[0, 1])
    ax_tab = fig.add_subplot(grid[1, :])

    ref, ren = result.curves_reference, result.curves_rendered
    rotary = result.axis == "rotary"
    # linear: mm and N; rotary: rad and N m (the _m, _N fields then hold those)
    x_scale, x_label, force = (1.0, "angle theta (rad)", "N m") if rotary else (1e3, "position x (mm)", "N")
    for curves, style, label in ((ref, "-", "captured"), (ren, "--", "rendered")):
        ax_fx.plot(curves.x_m * x_scale, curves.press_N, style, color="tab:blue", lw=1.2,
                   label=f"{label}, pressing")
        ax_fx.plot(curves.x_m * x_scale, curves.release_N, style, color="tab:orange", lw=1.2,
                   label=f"{label}, releasing")
    ax_fx.set_xlabel(x_label)
    ax_fx.set_ylabel(f"{'torque on the object T' if rotary else 'force on the object F'} ({force})")
    ax_fx.set_title("force-displacement, per direction of travel")
    ax_fx.legend(fontsize=8)
    ax_fx.grid(alpha=0.3)

    t = result.t_s
    for k, (a, b) in enumerate(result.impact_spans_s):      # where the features were not read (module notes)
        ax_t.axvspan(a, b, color="0.85", lw=0, label="features not read" if k == 0 else None)
    ax_t.plot(t, result.force_reference_N, color="black", lw=0.8, label="captured")
    ax_t.plot(t, result.force_rendered_N, color="tab:red", lw=0.8, alpha=0.8, label="rendered")
    ax_t.plot(t, result.force_rendered_N - result.force_reference_N, color="tab:green", lw=0.6,
              label="residual")
    ax_t.set_xlabel("time t (s)")
    ax_t.set_ylabel(f"{'torque' if rotary else 'force'} ({force})")
    title = f"fit {result.fit_percent:.2f} % (seed 003 eq. 53), RMS {result.rms_N * 1e3:.1f} m{force}"
    if result.impacts is not None and result.impacts.has_impacts:
        _draw_impacts(ax_t, result.impacts)
        fit = result.impacts.fit_outside_percent
        title = f"fit outside the impact windows {'-' if fit is None else f'{fit:.2f}'} %\nplain " + title
    inertia = result.unmodelled_inertia
    if inertia is not None and inertia["inertia"] > 0.0 and any(f.startswith("fit ") and "inertial" in f
                                                                for f in result.failures):
        # the fit failed and verify put it down to inertia the rendering lacks: say so on the plot
        j_unit = "kg m^2" if rotary else "kg"
        title += (f"\nwith the inertia it lacks ({inertia['inertia']:.3g} {j_unit}): "
                  f"{inertia['fit_percent_with_inertia']:.2f} %")
    ax_t.set_title(title)
    ax_t.legend(fontsize=8)
    ax_t.grid(alpha=0.3)

    ax_tab.axis("off")
    rows = [[v.name, _fmt(v.reference, v.unit, rotary), _fmt(v.rendered, v.unit, rotary),
             _fmt(v.difference, v.unit, rotary), _fmt(v.threshold, v.unit, rotary),
             "FEELS DIFFERENT" if v.noticeable else "same", v.note]
            for v in result.features.verdicts]
    if rows:
        for r in rows:
            r[-1] = textwrap.fill(r[-1], 60)
        table = ax_tab.table(cellText=rows, colLabels=["feature", "captured", "rendered", "difference",
                                                       "JND", "verdict", "note"], loc="upper center",
                             colWidths=[0.17, 0.09, 0.09, 0.09, 0.09, 0.1, 0.37], cellLoc="left")
        table.auto_set_font_size(False)
        table.set_fontsize(8)
        table.scale(1, 1.6)
    verdict = "PASS" if result.passed else "FAIL"
    ax_tab.set_title(f"{result.model_name} vs {result.capture_name}: {verdict}", fontsize=11)
    if result.capture_source:
        fig.text(0.01, 0.005, f"capture: {result.capture_source}", fontsize=7, color="dimgray")

    save_figure(fig, path, dpi=90, tight=False)


def _draw_impacts(ax: Any, impacts: Any) -> None:
    """Shade the impact windows, label each with its captured and rendered impulse (mN s), and mark the
    onsets of either side at the top of the axes."""
    for k, w in enumerate(impacts.windows):
        ax.axvspan(w.start_s, w.end_s, color="tab:orange" if w.passed else "tab:red", alpha=0.15, lw=0,
                   label="impact windows (impulse ok / off)" if k == 0 else None)
        ax.annotate(f"{w.captured_impulse_Ns * 1e3:.3g}\n{w.rendered_impulse_Ns * 1e3:.3g}",
                    xy=(w.start_s, 1.0), xycoords=("data", "axes fraction"), xytext=(1, -16),
                    textcoords="offset points", va="top", fontsize=6, color="dimgray")
    marks = ((impacts.captured_onsets_s, 0.98, "black", "captured onsets"),
             (impacts.rendered_onsets_s, 0.94, "tab:red", "rendered onsets"))
    for times, height, colour, label in marks:
        if times:
            ax.plot(times, [height] * len(times), "v", color=colour, ms=4, label=label,
                    transform=ax.get_xaxis_transform())
    ax.text(0.995, 0.02, "window labels: captured / rendered impulse (mN s)", transform=ax.transAxes,
            ha="right", fontsize=6, color="dimgray")


def _fmt(value: float | None, unit: str, rotary: bool = False) -> str:
    if value is None:
        return "-"
    if rotary:                                   # the feature's linear unit read on a rotary axis
        return f"{value:.4g} {ROTARY_UNITS.get(unit, unit)}"
    if unit == "m":
        return f"{value * 1e3:.3f} mm"
    if unit == "N":
        return f"{value:.3f} N"
    return f"{value:.4g} {unit}"
