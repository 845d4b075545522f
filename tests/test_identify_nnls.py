"""The project's NNLS against scipy's and against the optimality (KKT) conditions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import nnls as scipy_nnls

from hapticam.identify.impedance.nnls import nnls


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("shape", [(5, 3), (30, 10), (11, 40), (201, 60)])
def test_matches_scipy_and_the_kkt_conditions(seed, shape):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=shape)
    b = rng.normal(size=shape[0])
    x, rnorm = nnls(A, b, maxiter=50 * (shape[1] + 10))
    ref, _ = scipy_nnls(A, b, maxiter=50 * (shape[1] + 10))
    assert np.all(x >= 0.0)
    assert rnorm == pytest.approx(np.linalg.norm(A @ ref - b), rel=1e-8, abs=1e-10)
    w = A.T @ (b - A @ x)                                   # dual: <= 0 where x = 0, = 0 where x > 0
    scale = np.abs(A).sum() * max(1.0, np.abs(b).max())
    assert np.all(w[x == 0.0] <= 1e-9 * scale) and np.allclose(w[x > 0.0], 0.0, atol=1e-9 * scale)


def test_an_unconstrained_optimum_inside_the_orthant_is_the_least_squares_answer():
    A = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    truth = np.array([0.5, 1.5])
    x, rnorm = nnls(A, A @ truth)
    assert np.allclose(x, truth) and rnorm == pytest.approx(0.0, abs=1e-12)


def test_an_optimum_outside_is_clipped_to_its_face():
    x, _ = nnls(np.eye(2), np.array([-1.0, 2.0]))           # closed form: (0, 2)
    assert np.allclose(x, [0.0, 2.0])
