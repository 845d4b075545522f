"""The UAS observer of seed 003 (eqs. 16-23, Table II): eq. 23's closed form, and Table IV as its end points."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import IdentificationError
from hapticam.identify.friction import furuta, paper, uas


@pytest.fixture(scope="module")
def record() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t, X = furuta.simulate(paper.SIM_X0, paper.combinations(paper.TRUTH))
    rng = np.random.default_rng(7)
    Xm = X.copy()
    Xm[:, :2] += rng.normal(0, paper.NOISE_ANGLE_RAD, (t.size, 2))
    Xm[:, 2:] += rng.normal(0, paper.NOISE_RATE_RADPS, (t.size, 2))
    return t, X, Xm


@pytest.fixture(scope="module")
def observed(record) -> uas.UASResult:
    t, _, Xm = record
    return uas.uas_observe(t, Xm[:, 2:], Xm[0, :2], paper.TABLE3_GUESS)


def test_eq23_closed_form_holds_in_the_implementation(observed: uas.UASResult) -> None:
    """Every z follows z* + (z0 - z*) exp(-(lu + ll) S), S = integral |e| dt, whatever the data."""
    closed = uas.eq23_closed_form(paper.TABLE3_GUESS, observed.S)
    span = np.abs(paper.TABLE3_GUESS - uas.eq23_end_point())
    assert np.max(np.abs(observed.z - closed) / span) < 1e-9
    assert observed.S[-1] > 1.0  # exp(-51 S) ~ 0: at the end points
    np.testing.assert_allclose(observed.z[-1], uas.eq23_end_point(), rtol=1e-12)


def test_table4_is_eq23_end_points_with_stated_gamma(record, observed: uas.UASResult) -> None:
    np.testing.assert_allclose(uas.eq23_end_point(), paper.TABLE4_ESTIMATE, rtol=5e-4)
    z, _ = uas.readout_experiment(observed, record[2][:, 2:])
    np.testing.assert_allclose(z, paper.TABLE4_ESTIMATE, rtol=5e-4)  # from a simulation with Table III's truth
    assert np.max(np.abs(z / paper.TRUTH - 1)) > 2.0  # ... which it does not identify
    other = uas.eq23_end_point(uas.UASSettings(gamma=0.0))
    assert np.max(np.abs(other / paper.TABLE4_ESTIMATE - 1)) > 5e-3  # gamma is what sets them


def test_observer_tracks_the_rates(record, observed: uas.UASResult) -> None:
    t, X, _ = record
    late = t > 10.0
    assert np.sqrt(np.mean(observed.e_norm[late] ** 2)) < 0.1  # rad/s, vs rates of ~1 rad/s
    _, i = uas.readout_simulation(observed)
    assert observed.e_norm[i] < paper.READOUT_SIM and i > int(np.argmax(observed.e_norm))


def test_class_and_function_agree(record) -> None:
    t, _, Xm = record
    n = 400
    res = uas.uas_observe(t[:n], Xm[:n, 2:], Xm[0, :2], paper.TABLE3_GUESS)
    obs = uas.UASObserver(Xm[0, :2], Xm[0, 2:], paper.TABLE3_GUESS, dt_s=t[1] - t[0])
    for i in range(1, n):
        z = obs.update(Xm[i, 2:])
    np.testing.assert_allclose(z, res.z[-1], rtol=1e-13)
    np.testing.assert_allclose(obs.x[:4], np.r_[res.q_hat[-1], res.w_hat[-1]], rtol=1e-13)


def test_bad_inputs() -> None:
    t = np.arange(10) * 1e-3
    with pytest.raises(IdentificationError, match="rates"):
        uas.uas_observe(t, np.zeros((9, 2)), np.zeros(2), paper.TABLE3_GUESS)
    with pytest.raises(IdentificationError, match="positive"):
        uas.uas_observe(t, np.zeros((10, 2)), np.zeros(2), -paper.TABLE3_GUESS)
    with pytest.raises(IdentificationError, match="confidences"):
        uas.UASSettings(lambda_l=(0.0,) * 10).arrays()
