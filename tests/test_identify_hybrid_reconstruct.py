"""Reconstruction of the perturbed thermostat (seed 000 section 3, Figs. 2-3) against its closed form."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.identify.hybrid import thermostat as th
from hapticam.identify.hybrid.engine import simulate
from hapticam.identify.hybrid.reconstruct import (predicted_switches, reconstruct_lambda,
                                                  reconstruct_with_switch_times, switching_windows)

T = np.arange(0.0, 6.0 + 5e-4, 1e-3)  # s, fine enough that every switching window holds samples
TAU_COLUMN = 1  # directions: x0, then tau, u1, u2, s1, s2


@pytest.fixture(scope="module")
def nominal():
    return simulate(th.THERMOSTAT, np.zeros(1), th.NOMINAL, T)


def _perturbed(d_tau):
    p = th.NOMINAL.copy()
    p[0] += d_tau
    return p, th.closed_form(p, T)


def _delta(d_tau):
    d = np.zeros(6)
    d[TAU_COLUMN] = d_tau
    return d


def _errors_in_windows(nominal, d_tau):
    """Max |error| of lambda-only and lambda + lambda_t inside each true switching window."""
    p, truth = _perturbed(d_tau)
    lam = reconstruct_lambda(nominal, _delta(d_tau))[:, 0]
    both = reconstruct_with_switch_times(th.THERMOSTAT, nominal, th.NOMINAL, _delta(d_tau))[:, 0]
    rows = []
    for t_nom, t_true in zip(nominal.events.t, th.switch_times(p, 7.0)):
        window = (T >= min(t_nom, t_true)) & (T <= max(t_nom, t_true))
        assert window.sum() >= 4
        rows.append((np.max(np.abs(lam - truth)[window]), np.max(np.abs(both - truth)[window])))
    return np.array(rows)


@pytest.mark.parametrize("d_tau", [0.01, -0.01])
def test_inside_each_switching_window_lambda_t_makes_it_ten_times_more_accurate(nominal, d_tau):
    """Each of the five windows in 6 s, switches later (tau up) and earlier (tau down)."""
    p, _ = _perturbed(d_tau)
    shift_true = th.switch_times(p, 7.0)[:5] - nominal.events.t
    shift_predicted = predicted_switches(nominal, _delta(d_tau)) - nominal.events.t
    assert np.all(np.abs(shift_predicted - shift_true) <= 0.1 * np.abs(shift_true))  # first order in delta
    errors = _errors_in_windows(nominal, d_tau)
    assert errors.shape == (5, 2) and np.all(errors[:, 0] > 0.005)  # lambda alone misses by |F+ - F-| |dt|
    assert np.all(errors[:, 1] * 10 <= errors[:, 0])


def test_at_the_chosen_perturbation_tau_102_lambda_t_is_ten_times_more_accurate_in_the_windows(nominal):
    """tau = 1.02 (Figs. 2-3): the largest error inside any window; the ratio shrinks as 1/delta, since
    lambda + lambda_t is left with the expansion's own O(delta^2) error (at tau = 0.98 it is 9.3)."""
    errors = _errors_in_windows(nominal, 0.02)
    assert errors[:, 1].max() * 10 <= errors[:, 0].max()
    assert np.all(errors[:3, 1] * 10 <= errors[:3, 0])


def test_outside_the_windows_the_error_is_second_order(nominal):
    d_tau = 0.02
    outside = ~switching_windows(nominal, 1.5 * _delta(d_tau), T)  # away from every window of either size
    errors = []
    for d in (d_tau, d_tau / 2):
        _, truth = _perturbed(d)
        for recon in (reconstruct_lambda(nominal, _delta(d)),
                      reconstruct_with_switch_times(th.THERMOSTAT, nominal, th.NOMINAL, _delta(d))):
            errors.append(np.max(np.abs(recon[:, 0] - truth)[outside]))
    lam_full, both_full, lam_half, both_half = errors
    assert lam_full / lam_half == pytest.approx(4.0, rel=0.1)
    assert both_full / both_half == pytest.approx(4.0, rel=0.1)
    assert both_full < 0.02  # and small: a few hundredths of a unit on a 0.5-1.5 swing after five switches


def test_a_switch_predicted_earlier_continues_the_new_mode_backwards(nominal):
    """tau = 0.98 moves the switches earlier; inside the first window the reconstruction follows the
    cooling mode continued backwards from the nominal switch, i.e. the closed-form cooling curve."""
    d_tau = -0.02
    p, truth = _perturbed(d_tau)
    t_nom, t_new = nominal.events.t[0], predicted_switches(nominal, _delta(d_tau))[0]
    assert t_new < t_nom
    both = reconstruct_with_switch_times(th.THERMOSTAT, nominal, th.NOMINAL, _delta(d_tau))[:, 0]
    window = (T > t_new + 2e-3) & (T < t_nom - 2e-3)
    assert np.all(np.diff(both[window]) < 0) and np.all(np.diff(truth[window]) < 0)  # both cooling

