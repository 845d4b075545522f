"""The hybrid engine's trajectories, events and sensitivities against closed forms and central differences."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from hapticam.errors import IdentificationError
from hapticam.identify.hybrid import ball
from hapticam.identify.hybrid import thermostat as th
from hapticam.identify.hybrid.engine import event_map, simulate

FD_STEP = 1e-6  # central differences, step h = 1e-6 (times the parameter's size when it exceeds 1)


def _central_differences(model, x0, p, t, *, h_steps=1e-3):
    """Central differences of the event times and of the states at t along every default direction."""
    n, q = model.n_x, model.n_p
    d_events, d_states = [], []
    for k in range(n + q):
        scale = 1.0 if k < n else max(1.0, abs(p[k - n]))
        runs = []
        for sign in (1.0, -1.0):
            x, pp = x0.copy(), p.copy()
            if k < n:
                x[k] += sign * FD_STEP * scale
            else:
                pp[k - n] += sign * FD_STEP * scale
            runs.append(simulate(model, x, pp, t, h=h_steps))
        a, b = runs
        assert a.events.t.size == b.events.t.size, "a perturbation changed the event sequence"
        d_events.append((a.events.t - b.events.t) / (2 * FD_STEP * scale))
        d_states.append((a.x - b.x) / (2 * FD_STEP * scale))
    return np.stack(d_events, axis=-1), np.stack(d_states, axis=-1)


def _relative_error(ours, reference, floor_fraction=1e-3):
    """Entry-wise |ours - reference| / |reference|, the denominator floored at a fraction of the largest
    value of that sensitivity (over events or output times); states use the whole largest value."""
    scale = np.max(np.abs(reference), axis=tuple(range(reference.ndim - 1)), keepdims=True)
    return np.abs(ours - reference) / np.maximum(np.abs(reference), floor_fraction * scale + 1e-300)


def _away_from_events(t, event_t, margin=1e-4):
    return np.min(np.abs(t[:, None] - event_t[None, :]), axis=1) > margin


def test_thermostat_events_and_trajectory_match_the_closed_form():
    p = th.NOMINAL
    t = np.linspace(0.0, 8.0, 801)
    traj = simulate(th.THERMOSTAT, np.array([0.0]), p, t)
    np.testing.assert_allclose(traj.events.t, th.switch_times(p, 8.0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(traj.x[:, 0], th.closed_form(p, t), rtol=0, atol=1e-9)
    assert list(traj.events.mode_from[:3]) == [0, 1, 0]


def test_thermostat_switching_time_sensitivity_matches_its_closed_form():
    p = th.NOMINAL
    traj = simulate(th.THERMOSTAT, np.array([0.0]), p, np.array([0.0, 3.0]))
    tau_column = 1  # directions: x0, then tau, u1, u2, s1, s2
    dt1 = traj.events.lambda_t[0, tau_column]
    assert dt1 == pytest.approx(3.0 - np.log(4.0), abs=1e-9)  # dt1/dtau = 3 - ln 4 at the chosen Table 2 values
    assert dt1 == pytest.approx(th.dt1_dtau(p), abs=1e-9)
    assert traj.events.lambda_t[1, tau_column] == pytest.approx(th.dt2_dtau(p), abs=1e-9)
    # from t1 = -ln(1 - tau s1/u1)/tau: dt1/ds1 = 1/(u1 - tau s1), dt1/du1 = -s1/(u1 (u1 - tau s1))
    assert traj.events.lambda_t[0, 4] == pytest.approx(1.0 / (p[1] - p[0] * p[3]), abs=1e-9)
    assert traj.events.lambda_t[0, 2] == pytest.approx(-p[3] / (p[1] * (p[1] - p[0] * p[3])), abs=1e-9)


def test_thermostat_sensitivities_match_central_differences():
    p, x0 = th.NOMINAL, np.array([0.0])
    t = np.linspace(0.0, 6.0, 241)
    traj = simulate(th.THERMOSTAT, x0, p, t)
    d_events, d_states = _central_differences(th.THERMOSTAT, x0, p, t)
    assert traj.events.t.size == 5
    assert np.max(_relative_error(traj.events.lambda_t, d_events)) < 1e-6
    away = _away_from_events(t, traj.events.t)
    assert np.max(_relative_error(traj.S[away], d_states[away], 1.0)) < 1e-6


def test_ball_on_a_moving_paddle_sensitivities_match_central_differences():
    """Rigid ball: the guard y_p(t) - y and the reset v+ = (1 + e) v_p(t) - e v- both depend on time.

    Five impacts: later ones grow the differences' own truncation error (O(h^2) times a growing third
    derivative) past 1e-6, while the sensitivities still agree with h = 1e-7 differences to 1e-7."""
    p, x0 = ball.RIGID_NOMINAL, ball.START
    t = np.linspace(0.0, 2.0, 201)
    traj = simulate(ball.RIGID, x0, p, t)
    d_events, d_states = _central_differences(ball.RIGID, x0, p, t)
    assert traj.events.t.size >= 5
    assert np.max(_relative_error(traj.events.lambda_t, d_events)) < 1e-6
    away = _away_from_events(t, traj.events.t)
    assert np.max(_relative_error(traj.S[away], d_states[away], 1.0)) < 1e-6
    # the sensitivities are not trivially small: the impacts move with e by tenths of a second per unit e
    assert np.max(np.abs(traj.events.lambda_t[:, 2])) > 0.1


def test_rigid_ball_impacts_match_ballistic_flights_solved_independently():
    e, amp, omega, g = ball.RIGID_NOMINAL
    traj = simulate(ball.RIGID, ball.START, ball.RIGID_NOMINAL, np.array([0.0, 2.0]))
    t0, y0, v0, times = 0.0, ball.START[0], ball.START[1], []
    for _ in range(traj.events.t.size):
        def gap(t):  # height of the ball above the paddle in free flight from (t0, y0, v0)
            return y0 + v0 * (t - t0) - 0.5 * g * (t - t0) ** 2 - amp * np.sin(omega * t)
        grid = t0 + np.linspace(1e-6, 2.0, 200001)
        first = np.argmax(gap(grid) < 0.0)
        t_hit = brentq(gap, grid[first - 1], grid[first], xtol=1e-14)
        v_minus = v0 - g * (t_hit - t0)
        v_paddle = amp * omega * np.cos(omega * t_hit)
        t0, y0, v0 = t_hit, amp * np.sin(omega * t_hit), (1 + e) * v_paddle - e * v_minus
        times.append(t_hit)
    np.testing.assert_allclose(traj.events.t, times, rtol=0, atol=1e-9)


def test_hunt_crossley_sensitivities_agree_with_central_differences_to_the_step_error():
    """The contact flow |rho|^1.5 is not smooth at lift-off, so lambda_t (the continuous-time formula) and the
    discrete map agree to O(h^1.5): with a 2 us contact step, to 1e-4."""
    p, x0 = ball.HC_NOMINAL, ball.START
    t = np.linspace(0.0, 0.8, 81)
    steps = np.array([1e-3, 2e-6])
    traj = simulate(ball.HUNT_CROSSLEY, x0, p, t, h=steps)
    d_events, d_states = _central_differences(ball.HUNT_CROSSLEY, x0, p, t, h_steps=steps)
    assert traj.events.t.size >= 4 and list(traj.events.mode_from[:2]) == [0, 1]
    assert np.max(_relative_error(traj.events.lambda_t, d_events)) < 1e-4
    away = _away_from_events(t, traj.events.t)
    assert np.max(_relative_error(traj.S[away], d_states[away], 1.0)) < 1e-4


def test_event_map_jacobian_in_time_and_velocity_matches_central_differences():
    """One impact map of the rigid ball from (t_k, v_k+) with its Jacobian, the initial time a direction."""
    p = ball.RIGID_NOMINAL
    amp, omega = p[1], p[2]

    def step(t_k, v_k, e):
        pp = p.copy()
        pp[0] = e
        x0 = np.array([amp * np.sin(omega * t_k), v_k])
        dx0 = np.array([[amp * omega * np.cos(omega * t_k), 0.0, 0.0], [0.0, 1.0, 0.0]])
        dp = np.zeros((4, 3))
        dp[0, 2] = 1.0
        return event_map(ball.RIGID, 0, t_k, x0, pp, dx0, np.array([1.0, 0.0, 0.0]), dp)

    z = np.array([0.21, 1.6, 0.7])
    base = step(*z)
    jac = np.vstack([base.dt, base.dx_plus[1]])
    fd = np.empty((2, 3))
    for c in range(3):
        dz = np.zeros(3)
        dz[c] = FD_STEP
        a, b = step(*(z + dz)), step(*(z - dz))
        fd[:, c] = [(a.t - b.t) / (2 * FD_STEP), (a.x_plus[1] - b.x_plus[1]) / (2 * FD_STEP)]
    assert np.max(_relative_error(jac, fd)) < 1e-6


def test_bad_input_and_a_sticking_ball_are_refused_with_a_clear_error():
    with pytest.raises(IdentificationError, match="x0 must have 1"):
        simulate(th.THERMOSTAT, np.zeros(2), th.NOMINAL, np.array([0.0, 1.0]))
    with pytest.raises(IdentificationError, match="finite"):
        simulate(th.THERMOSTAT, np.array([np.nan]), th.NOMINAL, np.array([0.0, 1.0]))
    with pytest.raises(IdentificationError, match="monotonic"):
        simulate(th.THERMOSTAT, np.zeros(1), th.NOMINAL, np.array([0.0, 2.0, 1.0]))
    with pytest.raises(IdentificationError, match="step h"):
        simulate(th.THERMOSTAT, np.zeros(1), th.NOMINAL, np.array([0.0, 1.0]), h=0.0)
    # dropped from 0.1 m the ball is caught by the rising paddle: an error, not a ball falling through it
    with pytest.raises(IdentificationError, match="sticking"):
        simulate(ball.RIGID, np.array([0.1, 0.0]), ball.RIGID_NOMINAL, np.array([0.0, 5.0]))


def test_a_model_defined_in_a_function_is_compiled_in_memory_and_matches_its_closed_form():
    """x' = -a x, reset to 1 when x falls to 1/2: switches every ln 2 / a, so dt_k/da = -k ln 2 / a^2."""
    from numba import njit

    from hapticam.identify.hybrid.engine import HybridModel

    @njit
    def flow(mode, t, x, p, dx):
        dx[0] = -p[0] * x[0]

    @njit
    def flow_jac(mode, t, x, p, Fx, Fp):
        Fx[0, 0] = -p[0]
        Fp[0, 0] = -x[0]

    @njit
    def n_guards(mode):
        return 1

    @njit
    def guard(mode, j, t, x, p, gx, gp):
        gx[0], gp[0] = -1.0, 0.0
        return 0.5 - x[0], 0.0

    @njit
    def reset(mode, j, t, x, p, xr, Rx, Rp, Rt):
        xr[0], Rx[0, 0], Rp[0, 0], Rt[0] = 1.0, 0.0, 0.0, 0.0
        return 0

    model = HybridModel("test-relaxation", 1, 1, 1, flow, flow_jac, n_guards, guard, reset)
    a = 2.0
    traj = simulate(model, np.array([1.0]), np.array([a]), np.array([0.0, 2.0]))
    k = np.arange(1, traj.events.t.size + 1)
    assert traj.events.t.size == 5
    np.testing.assert_allclose(traj.events.t, k * np.log(2) / a, atol=1e-9)
    np.testing.assert_allclose(traj.events.lambda_t[:, 1], -k * np.log(2) / a**2, atol=1e-9)


def test_bound_kernels_are_not_imported_from_a_folder_others_can_write(tmp_path, monkeypatch):
    from hapticam.identify.hybrid import engine

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert engine._kernel_folder() == tmp_path / "hapticam_hybrid_kernels"
    (tmp_path / "hapticam_hybrid_kernels").chmod(0o777)
    assert engine._kernel_folder() is None
