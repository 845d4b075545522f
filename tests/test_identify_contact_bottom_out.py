"""A key's floor from the end of its press stroke: the simulated keyswitch's bottom-out (a probe tip in
series with a Hunt-Crossley wall, n = 1.5) recovered after the series correction, and refused when the
capture does not reach it."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from hapticam.world.excitations import make_excitation
from hapticam.world.keyswitch import Keyswitch
from hapticam.world.probe import probe
from hapticam.errors import IdentificationError
from hapticam.identify.contact.bottom_out import capture_velocity, fit_bottom_out


def _press(target: Keyswitch, hi_m: float | None = None, seed: int = 1):
    lo, hi = target.probe_range_m()
    cap = probe(target, make_excitation("triangle", lo, hi if hi_m is None else hi_m, 4.0), sample_rate_hz=4000.0,
                seed=seed)
    return cap, capture_velocity(cap), float(np.median(np.diff(cap.t_s)))


@pytest.mark.parametrize("kind", ["linear", "tactile", "clicky"])
@pytest.mark.parametrize("overdrive_m", [0.05e-3, 0.15e-3])
def test_bottom_out_k_and_n_within_5_percent_after_the_series_correction(kind, overdrive_m):
    target = getattr(Keyswitch, kind)(overdrive_m=overdrive_m)
    cap, v, dt = _press(target)
    fit = fit_bottom_out(cap.x_m, cap.f_N, v, dt_s=dt, probe_stiffness_Npm=target.contact_Npm)
    assert fit.k == pytest.approx(target.bottom_k, rel=0.05)
    assert fit.n == pytest.approx(1.5, rel=0.05)
    floor_at = target.pretravel_m + target.travel_m                      # stem touches the floor here
    assert fit.x_b_m == pytest.approx(floor_at, abs=5e-6)
    naive = fit_bottom_out(cap.x_m, cap.f_N, v)                         # the tip's compliance left in
    assert abs(naive.k / target.bottom_k - 1.0) > 0.3                    # why the correction matters


def test_a_press_that_stops_short_of_the_floor_is_refused():
    target = Keyswitch.linear()
    cap, v, dt = _press(target, hi_m=target.pretravel_m + target.travel_m - 0.4e-3)
    with pytest.raises(IdentificationError, match="does not reach a floor"):
        fit_bottom_out(cap.x_m, cap.f_N, v, dt_s=dt, probe_stiffness_Npm=target.contact_Npm)


def test_identify_impedance_bottom_out_writes_the_floor_as_a_contact_wall(tmp_path):
    from hapticam.capture_io import save_capture
    from hapticam.models.files import load_model

    target = Keyswitch.linear(overdrive_m=0.15e-3)
    cap, _, _ = _press(target)
    src = tmp_path / "press.csv"
    save_capture(src, cap)
    out = tmp_path / "key.yaml"
    done = subprocess.run([sys.executable, "-m", "hapticam", "identify", "impedance", str(src), "-o", str(out),
                           "--bottom-out", "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["passive"] and summary["bottom_out"]["fit_percent_whole_capture"] > 99.0
    model = load_model(out)[0]
    assert [c.kind for c in model.components()] == ["segmented-impedance", "contact"]
    wall = model.components()[1]
    deep = wall.x_c_m + 0.2e-3                                            # past the data: the wall keeps rising
    assert model.force(deep, 0.0) > model.force(wall.x_c_m + 0.1e-3, 0.0) + 1.0
    bad = subprocess.run([sys.executable, "-m", "hapticam", "identify", "impedance", str(src), "-o",
                          str(tmp_path / "x.yaml"), "--probe-stiffness", "2e5"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--bottom-out" in bad.stderr and not (tmp_path / "x.yaml").exists()
