"""What ``hapticam plot`` (and ``identify impedance --plot``) puts in its figure, read from the figure's lines.

References come from outside the drawing code: the model's contact point from its own impedance table
(``SegmentedImpedance.static_force``), the shift from ``hapticam verify``'s replay, the data range from
the model file's provenance, and the extremes of a synthetic 90 s sweep from its arrays.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from hapticam.capture import Capture
from hapticam.capture_io import load_capture
from hapticam.identify.alignment import align_to_model, contact_point
from hapticam.identify.plot import figure
from hapticam.identify.preprocess import prepare
from hapticam.models.files import load_model
from hapticam.models.impedance import SegmentedImpedance

from conftest import SWITCH_DIR

CAPTURE = SWITCH_DIR / "Gateron-Brown.csv"
MODEL = "example:gateron-brown"


@pytest.fixture(scope="module")
def gateron():
    """The F-x axes of the Gateron Brown capture drawn with its example model, and what they came from."""
    cap = load_capture(CAPTURE)
    model, doc = load_model(MODEL)
    fig = figure([("Gateron-Brown.csv", cap)], [(MODEL, model, doc.provenance)])
    yield fig.axes[0], cap, model, doc.provenance
    import matplotlib.pyplot as plt
    plt.close(fig)


def line(ax, label_start: str):
    hits = [ln for ln in ax.get_lines() if str(ln.get_label()).startswith(label_start)]
    assert len(hits) == 1, f"no single line labelled {label_start!r}: {[ln.get_label() for ln in ax.get_lines()]}"
    return hits[0]


def model_contact_m(model) -> float:
    """The model's contact point from its impedance table (not from the plot's kernel sweep)."""
    imp = next(p for p in model.components() if isinstance(p, SegmentedImpedance))
    lo, hi = imp.x_range()
    xs = np.linspace(lo - 1e-3, hi, 4001)
    c = contact_point(xs, imp.static_force(xs, 1))
    assert c is not None
    return c


def test_capture_is_drawn_with_its_contact_on_the_models(gateron):
    ax, cap, model, _ = gateron
    press = line(ax, "Gateron-Brown.csv, pressing")
    x_mm, f = press.get_xdata(), press.get_ydata()
    drawn = contact_point(np.asarray(x_mm) * 1e-3, np.asarray(f))
    assert drawn == pytest.approx(model_contact_m(model), abs=0.05e-3)
    # the legend names the shift, and the shift is what moved the samples
    match = re.search(r"shifted ([+-]\d+\.\d+) mm to the model's contact", press.get_label())
    assert match, press.get_label()
    prep = prepare(cap)
    sel = (prep.direction == 1) & cap.valid
    np.testing.assert_allclose(np.asarray(x_mm) - cap.x_m[sel] * 1e3, float(match.group(1)), atol=1e-3)
    assert float(match.group(1)) == pytest.approx(-0.55, abs=0.02)       # the capture starts before contact


def test_plot_moves_the_capture_as_verify_does():
    from hapticam.render.verify.compare import verify

    cap = load_capture(CAPTURE)
    model = load_model(MODEL)[0]
    replay = verify(model, cap).replay
    shift = align_to_model(model, prepare(cap))
    assert shift.offset_m == replay["x_offset_m"] and shift.backlash_m == replay["backlash_m"]
    assert shift.offset_m == pytest.approx(-0.55e-3, abs=0.02e-3)


def test_model_beyond_its_data_is_dotted_grey_and_labelled(gateron):
    ax, cap, _, provenance = gateron
    lo, hi = (v * 1e3 for v in provenance["settings"]["data_range_m"])
    solid = line(ax, f"{MODEL}, pressing")
    xs, fs = np.asarray(solid.get_xdata()), np.asarray(solid.get_ydata())
    drawn = np.isfinite(fs)
    assert xs[drawn].min() >= lo and xs[drawn].max() <= hi               # solid only over the model's data
    beyond = line(ax, f"{MODEL}, beyond data")
    bx, bf = np.asarray(beyond.get_xdata()), np.asarray(beyond.get_ydata())
    step = float(np.diff(bx).max())
    out = np.isfinite(bf)
    assert np.all((bx[out] <= lo + step) | (bx[out] >= hi - step))
    assert (bx[out] > hi).any() and (bx[out] < lo).any()                  # both ends are beyond the data
    assert beyond.get_linestyle() != solid.get_linestyle()
    assert to_rgba(beyond.get_color()) != to_rgba(solid.get_color())
    assert np.nanmax(bf) > 1.4                                            # the end stop nothing measured ...
    assert ax.get_ylim()[1] < 1.4 < np.nanmax(bf)                         # ... does not set the force scale
    assert ax.get_ylim()[1] > float(cap.f_N.max())                        # the data's 1.2 N peak does
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(t.startswith(f"{MODEL}, beyond data") for t in labels)


def sweep_capture() -> tuple[Capture, np.ndarray, np.ndarray]:
    """A 90 s, 1-4 Hz swept sine at 4 kHz (360 001 samples) with a one-sample force spike."""
    t = np.arange(360_001) / 4000.0
    phase = 2 * np.pi * (1.0 * t + 1.5 / 90.0 * t ** 2)
    x = 2.2e-3 * (1 - np.cos(phase))
    f = 0.25 + 150.0 * x + 0.003 * np.sin(0.37 * np.arange(t.size))
    f[123_457] = 1.7
    return Capture.from_arrays(t, x, f, name="sweep"), x, f


def test_time_panel_of_a_long_sweep_is_decimated_but_keeps_its_extremes():
    cap, x, f = sweep_capture()
    fig = figure([("sweep.npz", cap)], [])
    try:
        time_ax = fig.axes[1]
        twin = next(a for a in fig.axes[2:] if a.bbox.bounds == time_ax.bbox.bounds)
        force, = time_ax.get_lines()
        position, = twin.get_lines()
        for ln, values in ((force, f), (position, x * 1e3)):
            y = np.asarray(ln.get_ydata())
            assert y.size <= 3000
            assert y.max() == values.max() and y.min() == values.min()
            assert np.all(np.diff(np.asarray(ln.get_xdata())) >= 0)              # in time order
        assert np.asarray(force.get_xdata())[np.argmax(force.get_ydata())] == pytest.approx(123_457 / 4000.0)
        # two colours, each carried by its axis label; both in the legend
        assert to_rgba(force.get_color()) != to_rgba(position.get_color())
        assert to_rgba(time_ax.yaxis.label.get_color()) == to_rgba(force.get_color())
        assert to_rgba(twin.yaxis.label.get_color()) == to_rgba(position.get_color())
        labels = [t.get_text() for t in time_ax.get_legend().get_texts()]
        assert any("force" in s for s in labels) and any("position" in s for s in labels)
        # force above, position below: the two traces do not share rows of the panel
        f_rows = time_ax.transData.transform(np.column_stack([force.get_xdata(), force.get_ydata()]))[:, 1]
        x_rows = twin.transData.transform(np.column_stack([position.get_xdata(), position.get_ydata()]))[:, 1]
        assert f_rows.min() > x_rows.max()
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)
