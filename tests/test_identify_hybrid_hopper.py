"""The vertical hopper of seed 002: its periodic orbit, both ways (the paper's relaxed Euler and accurate
integration), checked against solve_ivp with events and the paper's numbers; the printed leg force fails."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import IdentificationError
from hapticam.identify.hopper.model import (
    ACCURATE, AIR, GROUND, PAPER_EULER, HopperParams, Integrator, fixed_point, flow_from_section, map_jacobian,
    poincare_map, rk4_events, sample_heights, section_state)
from hapticam.identify.hopper.ivp import poincare_map_ivp, simulate_ivp

PAPER = HopperParams()                      # seed 002 Fig. 1: (m, mu, k, b, l0, a, omega, g) = (1, 2, 10, 5, 2, 2, 2 pi, 2)


@pytest.fixture(scope="module")
def accurate_orbit():
    return fixed_point(PAPER, ACCURATE)


def test_relaxed_euler_at_the_papers_step_gives_the_papers_fixed_point_and_eigenvalues():
    orbit = fixed_point(PAPER, PAPER_EULER)                               # seed 002 sec. 4.3, Appendix A
    assert orbit.zeta == pytest.approx([1.952, 1.908], abs=0.005)
    lam = orbit.eigenvalues[np.argmax(orbit.eigenvalues.imag)]
    assert lam.real == pytest.approx(-0.27, abs=0.01) and lam.imag == pytest.approx(0.73, abs=0.01)


def test_accurate_fixed_point_and_eigenvalues_reproduce_and_agree_with_solve_ivp(accurate_orbit):
    from scipy.optimize import root

    assert accurate_orbit.zeta == pytest.approx([1.9650, 1.8757], abs=1e-3)
    lam = accurate_orbit.eigenvalues[np.argmax(accurate_orbit.eigenvalues.imag)]
    assert lam.real == pytest.approx(-0.2490, abs=1e-3) and lam.imag == pytest.approx(0.6993, abs=1e-3)
    # independent: DOP853 at rtol 1e-11 with terminal events, its own fixed point and central differences
    z = root(lambda q: poincare_map_ivp(PAPER, q, rtol=1e-11) - q, [1.9, 1.9], options={"xtol": 1e-12}).x
    assert z == pytest.approx(accurate_orbit.zeta, abs=1e-7)
    d = 1e-5
    J = np.column_stack([(poincare_map_ivp(PAPER, z + e, rtol=1e-11) - poincare_map_ivp(PAPER, z - e, rtol=1e-11))
                         / (2 * d) for e in (np.array([d, 0.0]), np.array([0.0, d]))])
    assert J == pytest.approx(accurate_orbit.jacobian, abs=1e-5)
    # the map is stable and has no eigenvalue near 0 (seed 002 sec. 4.3: a local diffeomorphism)
    assert np.all(np.abs(accurate_orbit.eigenvalues) < 0.8) and np.all(np.abs(accurate_orbit.eigenvalues) > 0.7)


def test_the_papers_numbers_are_euler_error_that_shrinks_with_the_step(accurate_orbit):
    err = {h: np.max(np.abs(fixed_point(PAPER, Integrator("relaxed", h)).zeta - accurate_orbit.zeta))
           for h in (1e-2, 1e-3)}
    assert err[1e-2] > 0.01                                 # the paper's (1.95, 1.91) is not the orbit to 2 digits
    assert 5 < err[1e-2] / err[1e-3] < 20                   # first order
    coarse = fixed_point(PAPER, Integrator("accurate", 5e-3)).zeta
    assert coarse == pytest.approx(accurate_orbit.zeta, abs=1e-8)    # RK4 is converged long before that


def test_sampled_heights_match_solve_ivp_through_transient_hops():
    t = np.arange(1, 401) * 0.05
    for zeta in ([1.127, 2.295], [2.1, 0.0], [1.5, 1.0]):
        ours = sample_heights(PAPER, np.array(zeta), t, h=1e-3)
        ref, _, _ = simulate_ivp(PAPER, np.array(zeta), t, rtol=1e-11, atol=1e-13)
        assert np.max(np.abs(ours - ref)) < 1e-8


def test_one_hop_per_period_on_the_orbit_and_the_foot_lands_before_the_section(accurate_orbit):
    y, s, ev = np.empty((1, 4)), np.empty(4), np.empty(64)
    status, mode, n = rk4_events(PAPER.block(), GROUND, section_state(accurate_orbit.zeta), 0.0, np.array([20.0]),
                                 1e-3, y, s, ev)
    assert status == 0 and mode == GROUND and n == 40        # lift-off and landing once per clock period
    assert np.diff(ev[:n:2]) == pytest.approx(np.ones(19), abs=1e-9)
    mid_mode, mid = flow_from_section(PAPER, accurate_orbit.zeta, 0.5)
    assert mid_mode == AIR and mid[2] > 0.3                  # the foot is well off the floor mid-cycle


def test_the_printed_force_actuator_does_not_hop_from_the_papers_orbit():
    printed = PAPER.with_values(actuator="force")          # L = k (l0 - (y - x)) + a sin(sigma), as printed
    with pytest.raises(IdentificationError, match="in the air"):
        poincare_map(printed, np.array([1.952, 1.908]))
    y, s, ev = np.empty((1, 4)), np.empty(4), np.empty(64)
    _, _, n = rk4_events(printed.block(), GROUND, section_state(np.array([1.952, 1.908])), 0.0, np.array([20.0]),
                         1e-3, y, s, ev)
    assert n < 20                                           # fewer than half the 40 events of the orbit
    t = np.linspace(0.05, 20.0, 400)
    assert sample_heights(printed, np.array([1.952, 1.908]), t).min() < 1.0    # the body sinks onto the floor
    with pytest.raises(IdentificationError):
        fixed_point(printed, ACCURATE, guess=(1.952, 1.908))


def test_jacobian_is_consistent_with_the_map_along_a_direction(accurate_orbit):
    z, v = accurate_orbit.zeta, np.array([0.6, -0.8])
    for eps in (1e-3, 1e-4):
        step = (poincare_map(PAPER, z + eps * v) - poincare_map(PAPER, z)) / eps
        assert step == pytest.approx(accurate_orbit.jacobian @ v, abs=5 * eps)
    assert map_jacobian(PAPER, z) == pytest.approx(accurate_orbit.jacobian, abs=1e-8)


@pytest.mark.parametrize("bad", [{"m": -1.0}, {"k": float("nan")}, {"omega": 0.0}, {"actuator": "spring"}])
def test_bad_parameters_are_refused_with_the_name(bad):
    with pytest.raises(IdentificationError, match=next(iter(bad)) if "actuator" not in bad else "actuator"):
        HopperParams(**bad)


def test_bad_integrator_settings_are_refused():
    with pytest.raises(IdentificationError, match="integrator"):
        Integrator("rk45")
    with pytest.raises(IdentificationError, match="step"):
        Integrator("accurate", h=0.5)
