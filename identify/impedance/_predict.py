"""Compiled loop running the renderer's kernel along a recorded path (imported lazily)."""

from __future__ import annotations

from numba import njit

from hapticam.models.kernels import model_force


@njit(cache=True, nogil=True)
def predict_loop(params, state, x, v, a, dt, out):
    """``out[i] = model_force(params, state, x[i], v[i], a[i], dt)`` with the state carried along."""
    for i in range(x.shape[0]):
        out[i] = model_force(params, state, x[i], v[i], a[i], dt)
