"""Newton observers (seed 000 eqs. 15-24) against batch least squares, and on the bouncing ball's impact maps."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import IdentificationError
from hapticam.identify.hybrid import ball
from hapticam.identify.hybrid import ball_observer as bo
from hapticam.identify.hybrid.newton_observer import NewtonObserver, lifted_map, observe

# a linear system with one unknown parameter-like state: x = [position, velocity, drift], y = position
A = np.array([[1.0, 0.1, 0.005], [0.0, 1.0, 0.1], [0.0, 0.0, 1.0]])
C = np.array([[1.0, 0.0, 0.0]])


def _linear_step(z, u=None):
    return A @ z, A


def _linear_measure(z, u=None):
    return C @ z, C


def test_on_a_linear_system_the_lifted_newton_step_is_the_batch_least_squares_solution():
    rng = np.random.default_rng(1)
    x_true = np.array([0.3, -1.0, 2.0])
    xs = [x_true]
    for _ in range(11):
        xs.append(A @ xs[-1])
    Y = np.array([C @ x for x in xs])[:, 0] + rng.normal(0, 1e-3, 12)
    n_lift = 8  # over-determined: 8 measurements, 3 unknowns -> the pseudo-inverse (seed 000 section 4.1)
    est = observe(_linear_step, _linear_measure, Y, [None] * 12, np.zeros(3), n_lift)
    for row, k in zip(est, range(n_lift - 1, 12)):
        window = Y[k - n_lift + 1:k + 1]
        obs_matrix = np.vstack([C @ np.linalg.matrix_power(A, j) for j in range(n_lift)])
        zeta = np.linalg.lstsq(obs_matrix, window, rcond=None)[0]  # batch LS for the window's first state
        np.testing.assert_allclose(row, np.linalg.matrix_power(A, n_lift - 1) @ zeta, rtol=1e-9, atol=1e-12)


def test_lifted_map_jacobian_of_the_ball_impact_map_matches_central_differences():
    p = ball.RIGID_NOMINAL
    step = bo.rigid_step(p)
    truth = bo.true_events(ball.RIGID, p, 2.0)
    zeta = np.array([truth.t[0], truth.x_plus[0, 1], 0.6])  # an impact of the true run, a different e
    H, J = lifted_map(step, bo.measure_time, zeta, [None] * 5)
    fd = np.empty_like(J)
    for c in range(3):
        dz = np.zeros(3)
        dz[c] = 1e-6
        fd[:, c] = (lifted_map(step, bo.measure_time, zeta + dz, [None] * 5)[0]
                    - lifted_map(step, bo.measure_time, zeta - dz, [None] * 5)[0]) / 2e-6
    assert np.all(np.diff(H) > 0.2)  # five successive impacts
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


@pytest.mark.parametrize("start", [0.6, 1.4])
def test_rigid_ball_restitution_within_one_percent_by_the_20th_impact(start):
    """From a 40 % wrong start, impact times with 0.1 ms Gaussian timing noise, three noise draws."""
    p = ball.RIGID_NOMINAL
    truth = bo.true_events(ball.RIGID, p, 8.0)
    assert truth.t.size >= 20
    for seed in range(3):
        times = bo.timing_noise(truth.t[:20], 1e-4, seed)
        n_lift = 8
        est = bo.observe_rigid(times, p, start * p[0], n_lift=n_lift)
        assert est.shape == (20 - n_lift + 1, 3)
        assert est[-1, 2] == pytest.approx(p[0], rel=0.01)  # the estimate after the 20th impact
        assert est[-1, 1] == pytest.approx(truth.x_plus[19, 1], rel=0.02)  # and the ball's velocity then


@pytest.fixture(scope="module")
def hunt_crossley_truth():
    return bo.true_events(ball.HUNT_CROSSLEY, ball.HC_NOMINAL, 5.0, steps=np.array([2e-4, 2e-6]))


@pytest.mark.parametrize("start", [(0.6, 1.4), (1.4, 0.6), (0.6, 0.6)])
def test_hunt_crossley_k_and_b_within_one_percent_from_times_quantised_at_10_khz(start, hunt_crossley_truth):
    """The truth is simulated with finer steps than the observer's model; times are those a 10 kHz capture
    sees (the first sample at or after each onset and lift-off); k and b start 40 % off, in opposite
    directions (a different restitution) or the same (the same b/k, a different contact time)."""
    p = ball.HC_NOMINAL
    truth = hunt_crossley_truth
    times = bo.quantised(truth.t, 1e4)
    assert np.any(times != truth.t) and list(truth.mode[:2]) == [1, 0]
    first = 1  # start at the first lift-off: its take-off velocity is guessed from the next flight
    v0 = bo.ballistic_velocity(times[first], times[first + 1], p)
    sl = slice(first, first + 24)
    est = bo.observe_hunt_crossley(times[sl], truth.mode[sl], p, start[0] * p[0], start[1] * p[1], v0, n_lift=10)
    assert est[-1, 2] == pytest.approx(p[0], rel=0.01) and est[-1, 3] == pytest.approx(p[1], rel=0.01)
    assert np.all(np.abs(est[-5:, 2:] / p[:2] - 1) < 0.01)


def test_observer_settings_are_checked():
    with pytest.raises(IdentificationError, match="at least 1"):
        NewtonObserver(_linear_step, _linear_measure, 0, np.zeros(3))
