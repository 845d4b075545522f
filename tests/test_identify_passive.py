"""Identified models are safe to render: passive by construction, honest about what the data supports.

References: the constrained solver against scipy's SLSQP on the same problems (batch solution) and
against the KKT conditions; the twelve real switch captures (CC-BY 4.0, bluepylons) through the whole
pipeline: passivity (:func:`check_passivity`), training and held-out fit, perceptual verdicts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import LinearConstraint, minimize, nnls

from hapticam.capture import Capture
from hapticam.capture_io import load_capture
from hapticam.errors import IdentificationError
from hapticam.identify.alignment import contact_point, remove_backlash
from hapticam.identify.impedance.constrained import constrained_lsq
from hapticam.identify.impedance.fit import identify_impedance
from hapticam.identify.preprocess import prepare
from hapticam.models.kernels import model_force
from hapticam.models.passivity import check_passivity
from hapticam.render.verify import verify

from conftest import SWITCH_DIR

REAL = sorted(Path(SWITCH_DIR).glob("*.csv"))


@pytest.mark.parametrize("seed", range(5))
def test_constrained_lsq_meets_the_kkt_conditions_and_equals_trust_constr(seed):
    rng = np.random.default_rng(seed)
    n, m = 8, 12
    X = rng.normal(size=(60, n))
    y = rng.normal(size=60)
    C = rng.normal(size=(m, n))
    d = C @ rng.normal(size=n) + 0.1 * rng.random(m)          # feasible by construction, many constraints bind
    G, h = X.T @ X, X.T @ y
    sol = constrained_lsq(G, h, C, d)
    assert sol.active.size >= 1
    assert np.all(C @ sol.theta <= d + 1e-9)                                 # primal feasibility
    # KKT: 2 (G theta - h) + C_A' lambda = 0 with lambda >= 0 on the active constraints
    grad = 2 * (G @ sol.theta - h)
    lam, res = nnls(C[sol.active].T, -grad)
    assert res <= 1e-8 * max(1.0, np.linalg.norm(grad))
    ref = minimize(lambda t: np.sum((X @ t - y) ** 2), np.zeros(n), jac=lambda t: 2 * X.T @ (X @ t - y),
                   hess=lambda t: 2 * G, constraints=[LinearConstraint(C, -np.inf, d)], method="trust-constr",
                   options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000})
    np.testing.assert_allclose(sol.theta, ref.x, atol=1e-5)
    rise = np.sum((X @ sol.theta - y) ** 2) - np.sum((X @ sol.theta0 - y) ** 2)
    assert sol.cost_increase == pytest.approx(rise, rel=1e-6, abs=1e-9)


def test_constrained_lsq_returns_the_unconstrained_solution_when_it_is_feasible():
    G = np.diag([2.0, 3.0])
    h = np.array([2.0, 3.0])                                      # theta0 = (1, 1)
    sol = constrained_lsq(G, h, np.array([[1.0, 1.0]]), np.array([5.0]))
    np.testing.assert_allclose(sol.theta, [1.0, 1.0])
    assert sol.active.size == 0 and sol.cost_increase == 0.0
    with pytest.raises(IdentificationError, match="infeasible"):
        constrained_lsq(G, h, np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([-1.0, -1.0]))  # x <= -1, x >= 1


@pytest.fixture(scope="module")
def real_fits():
    return {p.stem: (load_capture(p), identify_impedance(load_capture(p))) for p in REAL}


def test_all_twelve_real_switches_are_passive_and_fit_at_99_percent_training_and_held_out(real_fits):
    assert len(real_fits) == 12
    for name, (_capture, fit) in real_fits.items():
        report = check_passivity(fit.model)
        assert report.passive, (name, report.issues)
        assert fit.summary["fit_percent"] >= 99.0, name
        assert fit.summary["holdout"]["fit_percent"] >= 99.0, (name, fit.summary["holdout"])


@pytest.mark.parametrize("name", [p.stem for p in REAL])
def test_each_real_switch_model_verifies_against_its_capture(real_fits, name):
    capture, fit = real_fits[name]
    result = verify(fit.model, capture)
    assert result.passed, (name, result.failures)                       # fit >= 95 % and every feature
    assert result.features.noticeable == []


def test_unconstrained_fit_is_what_allow_active_gives_and_it_is_active(real_fits):
    capture = real_fits["Cherry-MX-Red"][0]
    free = identify_impedance(capture, allow_active=True, correct_backlash=False)
    assert not check_passivity(free.model).passive                # the raw data has release above press
    passive = identify_impedance(capture, correct_backlash=False)
    assert check_passivity(passive.model).passive
    cost = passive.provenance["metrics"]["passivity_cost_percent"]
    assert 0.0 < cost == pytest.approx(free.summary["fit_percent"] - passive.summary["fit_percent"], abs=0.05)


def _static(model, x, direction):
    c = model.compile()
    s = c.reset_state()
    model_force(c.params, s, x, direction * 0.1, 0.0, 1e-3)          # set the direction
    return model_force(c.params, s, x, direction * 1e-3, 0.0, 1e-3)


def test_force_holds_its_end_value_beyond_the_captured_travel(real_fits):
    capture, fit = real_fits["Cherry-MX-Red"]
    x_end = float(capture.x_m.max())
    at_end = _static(fit.model, x_end, 1)
    assert _static(fit.model, x_end + 0.3e-3, 1) == pytest.approx(at_end, abs=1e-9)   # 4.4 mm: not 6.8 N
    assert _static(fit.model, x_end + 5e-3, 1) == pytest.approx(at_end, abs=1e-9)
    assert fit.provenance["settings"]["data_range_m"][1] == pytest.approx(x_end, abs=1e-4)


def _key_capture(backlash_m: float) -> Capture:
    """A quasi-static key: free travel to 0.5 mm, then a 150 N/m spring and a wall at 3.5 mm; releasing
    force 0.05 N lower (friction); the releasing samples recorded ``backlash_m`` early (lost motion)."""
    x = np.concatenate([np.arange(0, 4e-3, 5e-6), np.arange(4e-3, -5e-6, -5e-6)])
    direction = np.concatenate([np.ones(800), -np.ones(x.size - 800)])
    true_x = np.where(direction < 0, x + backlash_m, x)
    f = np.where(true_x > 0.5e-3, 0.3 + 150 * (true_x - 0.5e-3), 0.0)
    f = f + np.where(true_x > 3.5e-3, 2e4 * (true_x - 3.5e-3), 0.0) - np.where((direction < 0) & (f > 0), 0.05, 0.0)
    rng = np.random.default_rng(0)
    return Capture.from_arrays(np.arange(x.size) * 0.1, x, f + rng.normal(0, 2e-3, x.size))


def test_backlash_is_estimated_from_the_contact_points_and_removed():
    prep = prepare(_key_capture(40e-6))
    shift = remove_backlash(prep)
    assert shift == pytest.approx(40e-6, abs=6e-6)                  # within about one 5 um step
    fit = identify_impedance(_key_capture(40e-6))
    assert check_passivity(fit.model).passive and fit.summary["fit_percent"] >= 99.0
    assert "backlash" in " ".join(fit.notes)
    assert remove_backlash(prepare(_key_capture(0.0))) <= 6e-6


def test_contact_point_is_the_first_rise_above_the_noise_and_none_when_loaded_from_the_start():
    x = np.linspace(0, 4e-3, 801)
    f = np.where(x > 1e-3, 0.4 + 100 * (x - 1e-3), 0.0) + np.random.default_rng(1).normal(0, 1e-3, x.size)
    assert contact_point(x, f) == pytest.approx(1e-3, abs=1e-5)
    assert contact_point(x, 1.0 + 100 * x) is None                   # a preloaded spring: no free travel


def test_sine_excitation_is_told_what_the_data_does_not_support():
    from hapticam.demos.camera import _probe_capture

    fit = identify_impedance(_probe_capture("tactile-switch", "sine", seed=0))
    tri = _probe_capture("tactile-switch", "triangle", seed=1)
    from hapticam.identify.impedance.fit import validate_model

    val = validate_model(fit.model, tri)["fit_percent"]
    hold = fit.summary["holdout"]
    assert check_passivity(fit.model).passive
    # either the model generalises to the other excitation, or the fit says which excitation to use
    assert val >= 95.0 or any("triangle" in n or "swept sine" in n for n in fit.notes), (val, hold, fit.notes)
