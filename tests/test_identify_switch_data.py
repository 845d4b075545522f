"""Real data: the twelve keyboard-switch captures (bluepylons, Open-Switch-Curve-Meter, CC-BY 4.0).

Each must identify without error with the default settings, report m and b unidentifiable (the motion
is quasi-static), and the model read back from its file must predict the force along the captured
path (pressing then releasing, the renderer's kernel deciding the direction) with a fit of at least
95 % (seed 003 eq. 53), using at most 60 segments per direction.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from hapticam.capture import Capture
from hapticam.capture_io import load_capture
from hapticam.identify.impedance.fit import identify_impedance, predict_force
from hapticam.identify.metrics import fit_percent
from hapticam.identify.preprocess import direction_of_travel
from hapticam.models.files import load_model
from hapticam.models.kernels import model_force

from conftest import SWITCH_DIR, SWITCH_FILES

SWITCH = str(SWITCH_DIR)
FILES = [str(p) for p in SWITCH_FILES]


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p)[:-4] for p in FILES])
def test_switch_identifies_and_fits(tmp_path, path):
    cap = load_capture(path)
    fit = identify_impedance(cap)
    assert fit.identifiable["m"] is False and fit.identifiable["b"] is False
    assert fit.fixed == {"m": 0.0, "b": 0.0}
    for name in ("press", "release"):
        assert 1 <= fit.directions[name].segmentation.n_segments <= 60
    out = tmp_path / "model.yaml"
    fit.save(out)
    model, doc = load_model(out)
    assert sum("not identifiable" in n for n in doc.provenance["notes"]) == 2
    prep = fit.prepared
    pred = predict_force(model, prep.x, prep.v, prep.a, dt_s=0.1)
    assert fit_percent(cap.f_N, pred) >= 95.0
    assert np.array_equal(pred, fit.prediction_N)


def test_training_directions_match_the_renderer_kernel():
    """The samples grouped as press/release are exactly those the kernel renders with each table."""
    cap = load_capture(os.path.join(SWITCH, "Cherry-MX-Blue-RGB.csv"))
    fit = identify_impedance(cap)
    prep = fit.prepared
    compiled = fit.model.compile()
    state = compiled.reset_state()
    kernel_dir = np.empty(cap.n)
    for i in range(cap.n):
        model_force(compiled.params, state, prep.x[i], prep.v[i], prep.a[i], 0.1)
        kernel_dir[i] = state[0]
    assert np.array_equal(kernel_dir, direction_of_travel(prep.v, fit.model.dead_band_mps))
    turn = int(np.argmax(cap.x_m))
    assert kernel_dir[turn - 5] == 1 and kernel_dir[turn + 6] == -1


def test_hx711_dropouts_are_excluded_and_reported():
    cap = load_capture(os.path.join(SWITCH, "NK-Kailh-Box-Jade.csv"))
    f = cap.f_N.copy()
    spikes = [150, 500, 760, 1100, 1400]
    f[spikes] = -2.03  # about -207 gf
    dirty = Capture.from_arrays(cap.t_s, cap.x_m, f, name="dirty")
    fit = identify_impedance(dirty)
    assert fit.summary["dropouts"] == 5 and fit.provenance["metrics"]["dropouts"] == 5
    assert any("5 force dropout(s)" in n for n in fit.notes)
    clean = identify_impedance(cap)
    keep = dirty.valid
    # the dropouts change neither the fit quality nor the model much
    assert fit_percent(cap.f_N[keep], fit.prediction_N[keep]) >= 95.0
    x = np.linspace(0.0005, 0.0035, 200)
    for d in (1, -1):
        diff = fit.model.static_force(x, d) - clean.model.static_force(x, d)
        assert np.sqrt(np.mean(diff ** 2)) < 0.02
