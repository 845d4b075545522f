"""Friction identification for products (``hapticam identify friction``): the law fit against closed forms,
spin-downs of a simulated detent knob and presses of a simulated sprung key with known friction."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hapticam.world.excitations import Triangle, make_excitation
from hapticam.world.knob import DetentKnob, FrictionKey, SpeedProfile, turns
from hapticam.world.probe import ProbeSpec, simulate
from hapticam.errors import IdentificationError
from hapticam.identify.friction.press_speeds import fit_press_speeds, hat_basis
from hapticam.identify.friction.product import detent_columns, fit_law, law_columns
from hapticam.identify.friction.spin_down import fit_spin_downs
from hapticam.models.friction import stribeck_term

#: a torque sensor zeroed before the run, 0.2 mN m noise (a knob's torques are tens of mN m)
TORQUE_SENSOR = ProbeSpec(force_bias_N=0.0, force_noise_N=2e-4, force_resolution_N=1e-4)


def _close(fit, truth, coulomb_viscous=0.05, stribeck=0.10):
    """Coulomb and viscous within 5 %, Stribeck peak and speed within 10 % (issue tolerances)."""
    lv = fit.levels
    assert lv["coulomb"] == pytest.approx(truth["coulomb"], rel=coulomb_viscous)
    assert lv["viscous"] == pytest.approx(truth["viscous"], rel=coulomb_viscous)
    if truth.get("stribeck_peak"):
        assert lv["stribeck_peak"] == pytest.approx(truth["stribeck_peak"], rel=stribeck)
        assert lv["shape_speed"] == pytest.approx(truth["shape_speed"], rel=stribeck)


# -- the regression against closed forms -------------------------------------------------------------
@pytest.mark.parametrize("law", ["coulomb-viscous", "stribeck", "lugre"])
def test_shape_derivative_matches_central_differences(law):
    v = np.linspace(-3.0, 3.0, 41)
    s, h = 0.7, 1e-6
    _, d = law_columns(law, v[v != 0], s)
    up, _ = law_columns(law, v[v != 0], s * math.exp(h))
    down, _ = law_columns(law, v[v != 0], s * math.exp(-h))
    np.testing.assert_allclose(d, (up - down) / (2 * h), rtol=1e-6, atol=1e-9)


def test_stribeck_fit_recovers_the_law_and_its_standard_errors_are_calibrated():
    rng = np.random.default_rng(4)
    v = np.concatenate([np.geomspace(1e-3, 0.2, 400), -np.geomspace(1e-3, 0.2, 400)])
    c, p, b, vt, sd = 0.05, 0.03, 2.0, 5e-3, 2e-3
    spring = rng.uniform(0, 4e-3, v.size)
    f = c * np.tanh(4 * v / vt) + p * stribeck_term(v / vt) + b * v + 60.0 * spring + 0.3  # seed 003 eq. 5, squared
    errors = []
    for seed in range(12):
        y = f + sd * np.random.default_rng(seed).standard_normal(v.size)
        fit = fit_law("stribeck", v, y, np.column_stack([spring, np.ones_like(v)]), ("k", "f0"))
        errors.append([(fit.levels[k] - t) / fit.se[k] for k, t in
                       (("coulomb", c), ("stribeck_peak", p), ("viscous", b), ("shape_speed", vt))])
        assert fit.extra["k"] == pytest.approx(60.0, rel=0.02)
    z = np.asarray(errors)
    assert np.all(np.abs(z.mean(axis=0)) < 1.0)                 # unbiased
    assert np.all((z.std(axis=0) > 0.6) & (z.std(axis=0) < 1.5))  # white residuals: SE match the scatter


def test_lugre_steady_state_fit_recovers_fc_fs_vs_sigma2():
    v = np.concatenate([np.geomspace(1e-3, 0.3, 300), -np.geomspace(1e-3, 0.3, 300)])
    fc, fs, vs, s2 = 0.1, 0.16, 0.01, 0.5
    y = (fc + (fs - fc) * np.exp(-(v / vs) ** 2)) * np.sign(v) + s2 * v  # Canudas de Wit et al. 1995, steady state
    fit = fit_law("lugre", v, y)
    assert fit.levels["coulomb"] == pytest.approx(fc, rel=1e-6)
    assert fit.levels["coulomb"] + fit.levels["stribeck_peak"] == pytest.approx(fs, rel=1e-6)
    assert fit.levels["shape_speed"] == pytest.approx(vs, rel=1e-5)
    model = fit.to_model()
    np.testing.assert_allclose(model.steady_state_force(v), y, atol=1e-9)


def test_detents_are_found_by_the_periodogram_and_not_invented():
    theta = np.linspace(0.0, 20.0, 4000)
    rng = np.random.default_rng(1)
    found = detent_columns(theta, 1e-3 * np.sin(18 * theta) + 1e-4 * rng.standard_normal(theta.size))
    assert found is not None and found[1] == 18
    assert detent_columns(theta, 1e-4 * rng.standard_normal(theta.size)) is None


def test_hat_basis_interpolates_linearly():
    knots = np.array([0.0, 1.0, 3.0])
    x = np.array([-1.0, 0.5, 2.0, 5.0])
    np.testing.assert_allclose(hat_basis(x, knots) @ np.array([1.0, 3.0, 7.0]), [1.0, 2.0, 5.0, 7.0])


# -- the simulated knob: spin-downs (angle only) ----------------------------------------------------
def _spin_down(knob, seed=0):
    run = simulate(knob, make_excitation("spin-down", 0.0, 2 * math.pi, 1.5), TORQUE_SENSOR, seed=seed)
    cap = run.to_capture()
    cap.f_N[:] = 0.0                            # angle only: the fit must not need the torque
    return cap


@pytest.fixture(scope="module")
def spin_downs():
    knob = DetentKnob(name="knob")
    heavy = DetentKnob(name="knob", inertia_kgm2=knob.inertia_kgm2 + 1e-3)
    return knob, _spin_down(knob), _spin_down(heavy, seed=1)


def test_spin_down_with_known_inertia_identifies_the_knob(spin_downs):
    knob, cap, _ = spin_downs
    assert cap.metadata["axis"] == "rotary"
    fit, coasts = fit_spin_downs([cap], "stribeck", inertia=knob.inertia_kgm2)
    _close(fit, knob.truth())
    assert coasts[0].peak_speed == pytest.approx(4 * math.pi, rel=0.02)
    assert any("24 per revolution" in n for n in fit.notes)


def test_two_spin_downs_with_an_added_inertia_identify_the_inertia_too(spin_downs):
    knob, cap, heavy = spin_downs
    fit, _ = fit_spin_downs([cap, heavy], "stribeck", added_inertia=[0.0, 1e-3])
    _close(fit, knob.truth())
    assert fit.extra["inertia_kgm2"] == pytest.approx(knob.inertia_kgm2, rel=0.05)


def test_spin_down_with_a_coarse_encoder_gets_a_longer_window():
    """A 16384-count encoder (0.38 mrad steps): the window grows until the deceleration's noise is small."""
    from hapticam.identify.friction.spin_down import WINDOW_S, choose_window

    knob = DetentKnob(name="knob")
    spec = ProbeSpec(force_bias_N=0.0, force_noise_N=2e-4, encoder_resolution_m=2 * math.pi / 16384)
    cap = simulate(knob, make_excitation("spin-down", 0.0, 2 * math.pi, 1.5), spec).to_capture()
    assert choose_window(cap.t_s, cap.x_m) > 2 * WINDOW_S
    fit, _ = fit_spin_downs([cap], "stribeck", inertia=knob.inertia_kgm2)
    _close(fit, knob.truth())


def test_spin_down_coulomb_viscous_on_a_knob_without_stribeck():
    knob = DetentKnob(name="knob", stribeck_Nm=0.0)
    fit, _ = fit_spin_downs([_spin_down(knob)], "coulomb-viscous", inertia=knob.inertia_kgm2)
    _close(fit, {"coulomb": knob.coulomb_Nm, "viscous": knob.viscous_Nmsprad})


def test_spin_down_needs_an_inertia_and_a_spin_down(spin_downs):
    _, cap, _ = spin_downs
    with pytest.raises(IdentificationError, match="inertia"):
        fit_spin_downs([cap], "stribeck")
    with pytest.raises(IdentificationError, match="inertia"):
        fit_spin_downs([cap], "stribeck", inertia=-1e-3)
    never_let_go = SpeedProfile(0.0, (0.0, 2.0, 2.0), (0.2, 1.0))       # spun up and held: no coast
    flat = simulate(DetentKnob(name="knob"), never_let_go, TORQUE_SENSOR).to_capture()
    with pytest.raises(IdentificationError, match="spin-down"):
        fit_spin_downs([flat], "stribeck", inertia=1e-3)


# -- the simulated key: pressed at several speeds ---------------------------------------------------
def _presses(key, speeds=(1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 1e-1)):
    travel = 4e-3
    return [simulate(key, Triangle(0.5 * travel, 0.5 * travel, period_s=2 * travel / s), seed=i).to_capture()
            for i, s in enumerate(speeds)]


def test_key_pressed_at_several_speeds_identifies_friction_and_spring():
    key = FrictionKey(name="friction-key")
    fit = fit_press_speeds(_presses(key), "stribeck")
    _close(fit.law_fit, key.truth())
    # the spring table: preload + k x at the knots, plus the force sensor's bias (the probe's default 5 mN)
    spring = key.preload_N + key.spring_Npm * fit.knots + ProbeSpec().force_bias_N
    np.testing.assert_allclose(fit.spring, spring, atol=1e-3)


def test_key_coulomb_viscous_law():
    key = FrictionKey(name="friction-key", stribeck_Nm=0.0)
    fit = fit_press_speeds(_presses(key, (2e-3, 5e-3, 2e-2, 5e-2, 1e-1)), "coulomb-viscous")
    _close(fit.law_fit, {"coulomb": key.coulomb_Nm, "viscous": key.viscous_Nmsprad})


def test_knob_turned_at_several_speeds():
    knob = DetentKnob(name="knob")
    run = simulate(knob, turns(0.0, speeds=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0), hold_s=0.5), TORQUE_SENSOR)
    fit = fit_press_speeds([run.to_capture()], "stribeck", axis="rotary")
    _close(fit.law_fit, knob.truth())
    assert fit.detents_per_rev == 24
    assert fit.law_fit.extra["inertia_kgm2"] == pytest.approx(knob.inertia_kgm2, rel=0.05)


def test_one_way_pressing_cannot_separate_spring_and_friction():
    key = FrictionKey(name="friction-key")
    cap = _presses(key, (5e-3,))[0]
    keep = np.arange(cap.n // 2 - 100)
    from hapticam.capture import Capture

    half = Capture.from_arrays(cap.t_s[keep], cap.x_m[keep], cap.f_N[keep], metadata=cap.metadata)
    with pytest.raises(IdentificationError, match="one way"):
        fit_press_speeds([half], "stribeck")
