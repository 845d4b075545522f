"""The tilted Furuta pendulum of seed 003 (eqs. 6-10): energy, gradient, inertia, friction partials, and the
printed eq. 8 shown to gain energy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hapticam.identify.friction import furuta, paper

NO_FRICTION = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0])
TRUTH = paper.combinations(paper.TRUTH)


def test_friction_off_conserves_energy_over_35_s() -> None:
    _, X = furuta.simulate(paper.SIM_X0, NO_FRICTION)
    e = furuta.energy(X)
    assert np.ptp(e) < 1e-6  # J, over 35 s at 1 kHz
    assert np.ptp(X[:, 1]) > 2.0  # it really swings


def test_printed_eq8_gains_energy() -> None:
    """Eqs. 7-8 as printed (H11 without m2 L1^2, their Coriolis terms): not a Lagrangian system."""
    _, X = furuta.simulate(paper.SIM_X0, NO_FRICTION, duration_s=10.0, variant="printed")
    e = furuta.energy(X, "printed")
    assert e[-1] - e[0] > 1.0  # J gained from nothing (initial |E| ~ 0.2 J)


def test_gravity_is_gradient_of_potential() -> None:
    rng = np.random.default_rng(1)
    q = rng.uniform(-np.pi, np.pi, (50, 2))
    h = 1e-6
    for i in range(2):
        dq = np.zeros(2)
        dq[i] = h
        fd = (furuta.potential(q + dq) - furuta.potential(q - dq)) / (2 * h)
        np.testing.assert_allclose(furuta.gravity(q)[:, i], fd, rtol=1e-7, atol=1e-9)  # eq. 9 = dV/dq


def test_inertia_symmetric_positive_definite_and_includes_m2_L1_squared() -> None:
    H = furuta.mass_matrix(np.linspace(-np.pi, np.pi, 721))
    assert np.array_equal(H, np.swapaxes(H, -1, -2))
    assert np.all(np.linalg.eigvalsh(H) > 0)
    printed = furuta.mass_matrix(np.array(0.3), "printed")
    assert H[0, 0, 0] - furuta.mass_matrix(np.array(-np.pi), "printed")[0, 0] == pytest.approx(
        paper.M2_KG * paper.L1_M ** 2, rel=1e-12)
    assert printed[1, 1] == H[0, 1, 1]


def test_friction_dissipates_and_matches_reference_integrator() -> None:
    """With friction the energy never rises (dE/dt = -f . q' <= 0), and RK4 at 1 kHz agrees with DOP853."""
    t, X = furuta.simulate(paper.SIM_X0, TRUTH, duration_s=5.0)
    e = furuta.energy(X)
    assert np.all(np.diff(e) < 1e-9) and e[0] - e[-1] > 1e-3
    c = furuta.coefficients()
    acc = np.empty(2)

    def rhs(_t: float, x: np.ndarray) -> np.ndarray:
        furuta.accel(c, TRUTH, True, x, acc)
        return np.array([x[2], x[3], acc[0], acc[1]])

    ref = solve_ivp(rhs, (0.0, 5.0), paper.SIM_X0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=t[::100])
    np.testing.assert_allclose(X[::100, :2], ref.y.T[:, :2], atol=1e-5)  # rad: RK4's error at 1 ms, mostly
    np.testing.assert_allclose(X[::100, 2:], ref.y.T[:, 2:], atol=1e-4)  # rad/s   where friction reverses


def test_accel_jacobian_matches_finite_differences() -> None:
    c = furuta.coefficients()
    rng = np.random.default_rng(2)
    acc, dax, dap, tmp = np.empty(2), np.empty((2, 4)), np.empty((2, 8)), np.empty(6)
    for scale in (0.003, 0.5):  # near the Stribeck region and sliding
        x = np.r_[rng.uniform(-2, 2, 2), rng.normal(0, scale, 2)]
        assert furuta.accel_jac(c, TRUTH, True, x, acc, dax, dap, tmp) == 0
        for i in range(4):
            hh = 1e-7
            ap, am, dx = np.empty(2), np.empty(2), np.zeros(4)
            dx[i] = hh
            furuta.accel(c, TRUTH, True, x + dx, ap)
            furuta.accel(c, TRUTH, True, x - dx, am)
            np.testing.assert_allclose(dax[:, i], (ap - am) / (2 * hh), rtol=1e-5, atol=1e-6)
        for i in range(8):
            hh, dp = 1e-4 * TRUTH[i], np.zeros(8)
            dp[i] = hh
            ap, am = np.empty(2), np.empty(2)
            furuta.accel(c, TRUTH + dp, True, x, ap)
            furuta.accel(c, TRUTH - dp, True, x, am)
            np.testing.assert_allclose(dap[:, i], (ap - am) / (2 * hh), rtol=1e-4, atol=1e-6)


def test_friction_torque_squared_peak_at_v_t() -> None:
    fr = np.array([0.0, 2e-4, 5e-3, 0.0] * 2)
    out = np.empty(6)
    furuta.friction_torque(fr, 0, 5e-3, True, out)
    assert out[0] == pytest.approx(2e-4, rel=1e-12) and abs(out[1]) < 1e-12  # peak F_n (mu_s - mu_d) at v_t
    furuta.friction_torque(fr, 0, 5e-3, False, out)
    assert out[0] == pytest.approx(2e-4 / 1.0, rel=1e-12) and out[1] > 0  # printed form still rising at v_t
