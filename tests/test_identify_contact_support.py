"""What a contact capture supports: a free-space baseline, a wall inside the data, finite standard errors
(a keyswitch capture of the bundled data, the simulated tactile switch, synthetic walls of known truth)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hapticam.capture import Capture
from hapticam.capture_io import load_capture, save_capture
from hapticam.cli import main
from hapticam.world.excitations import make_excitation
from hapticam.world.keyswitch import Keyswitch
from hapticam.world.probe import simulate
from hapticam.errors import IdentificationError
from hapticam.identify.contact.fit import ESTIMATORS, fit_contact
from hapticam.identify.contact.recursive import P0, kalman
from hapticam.identify.contact.synthetic import persistent_excitation, quasi_static_steps

GATERON = Path(__file__).parent / "data" / "switch_curves" / "Gateron-Brown.csv"


@pytest.fixture(scope="module")
def tactile_sine():
    """The simulated tactile switch pressed by a 2 Hz sine over its whole travel for 10 s, from rest at its top."""
    switch = Keyswitch.tactile()
    travel = switch.pretravel_m + switch.travel_m
    return simulate(switch, make_excitation("sine", 0.0, travel, 10.0)).to_capture()


def _from(cap, start):
    return Capture.from_arrays(cap.t_s[start:] - cap.t_s[start], cap.x_m[start:], cap.f_N[start:], detect=False)


def test_a_keyswitch_capture_has_no_wall_in_its_data():
    """Gateron Brown: the force steps to its 0.27 N preload at 0.55 mm; a wall through it lies at -2.7 mm."""
    cap = load_capture(GATERON)
    fit = fit_contact(cap.t_s, cap.x_m, cap.f_N, "all")
    assert not cap.x_m.min() <= fit.x_c_m <= cap.x_m.max()
    assert "outside the captured travel 0 to 4.455 mm" in fit.unsupported
    assert "identify impedance --bottom-out" in fit.unsupported
    assert set(fit.results) == set(ESTIMATORS)
    assert all(r.status.startswith("wall outside the data") for r in fit.results.values())
    with pytest.raises(IdentificationError, match="no wall in the data"):
        fit.to_model()


def test_the_keyswitch_capture_writes_no_model(tmp_path, capsys):
    out = tmp_path / "m.yaml"
    assert main(["identify", "contact", str(GATERON), "-o", str(out), "--estimator", "all"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no wall in the data" in err and len(err.splitlines()) == 1 and not out.exists()


def test_a_capture_pressed_from_the_start_is_refused_for_want_of_a_baseline(tactile_sine, tmp_path, capsys):
    pressed = _from(tactile_sine, int(np.argmax(tactile_sine.f_N > 0.3)))    # the recording starts mid-press
    with pytest.raises(IdentificationError, match="no free-space baseline") as refused:
        fit_contact(pressed.t_s, pressed.x_m, pressed.f_N)
    assert "following the probe's position" in str(refused.value)
    path = tmp_path / "pressed.csv"
    save_capture(path, pressed)
    assert main(["identify", "contact", str(path), "-o", str(tmp_path / "m.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert "no free-space baseline" in err and len(err.splitlines()) == 1 and not (tmp_path / "m.yaml").exists()


def test_a_short_free_start_is_the_baseline_and_the_switch_has_no_wall_in_the_data(tactile_sine):
    """The probe touches the switch 57 ms in, inside the default baseline (1 % of the record, 100 ms): the
    quiet samples before the touch are the baseline (the threshold was above the capture's peak force)."""
    cap = tactile_sine
    touch = int(np.argmax(cap.f_N > 0.1))
    assert 20 <= touch < cap.n // 100 and cap.x_m[touch] == pytest.approx(Keyswitch.tactile().pretravel_m, abs=0.05e-3)
    fit = fit_contact(cap.t_s, cap.x_m, cap.f_N)
    assert abs(fit.onset.index - touch) <= 5
    assert fit.unsupported.startswith("no wall in the data")
    assert f"x = {cap.x_m[fit.onset.index] * 1e3:.4g} mm" in fit.unsupported


def test_a_synthetic_wall_is_supported_and_an_estimate_without_standard_error_is_not_ok():
    rec = persistent_excitation(k=1e6, b=200.0, duration_s=2.0)
    fit = fit_contact(rec.t_s, rec.x_m, rec.f_N, "all")
    assert fit.unsupported is None and fit.to_model().to_dict()["k_Npm"] == pytest.approx(1e6, rel=0.01)
    assert fit.results["ia"].se is None and fit.results["ia"].status.startswith("no standard error")
    assert all(r.status == "ok" for name, r in fit.results.items() if name != "ia")


def test_a_kalman_estimate_its_prior_dominates_says_so():
    """Without process noise the filter's shift from least squares is the prior's, P P0^-1 (theta0 - theta_ls)."""
    rec = quasi_static_steps(k=1e6, b=200.0)                        # holds: the velocity barely excites b
    d = rec.x_m - rec.x_c_m
    keep = d > 0
    t, d, f = rec.t_s[keep], d[keep], rec.f_N[keep]
    res = kalman(t, d, f, theta0=(1e6, 50.0))
    v = np.gradient(d, t[1] - t[0])
    theta_ls = np.linalg.lstsq(np.column_stack([d, v]), f, rcond=None)[0]
    p0 = P0 * res.extra["r_N2"] * np.eye(2)
    np.testing.assert_allclose(res.theta - theta_ls, res.cov @ np.linalg.solve(p0, np.array([1e6, 50.0]) - theta_ls),
                               rtol=1e-4, atol=1e-9)
    se_b = res.se[1]
    assert abs(res.b_Nspm - theta_ls[1]) > 3 * se_b
    assert res.status.startswith("prior-dominated") and "b0 = 50" in res.status
