"""Reconstruction of a perturbed trajectory from the nominal one and its sensitivities (seed 000 section 3).

With ``delta`` a change along the simulation's directions (default: initial state, then parameters):

* lambda only (Fig. 2): ``x(t) ~ x_nom(t) + lambda(t) delta`` (a first-order Taylor expansion at fixed t).
  Right where both runs are in the same mode; wrong by about ``|F+ - F-| |dt_i|`` over each switching
  window, between the nominal switch ``t_i`` and the perturbed one ``t_i + lambda_t delta``.
* lambda and lambda_t (Fig. 3, after Hiskens and Pai): inside each predicted window the perturbed run is
  in the other mode than the nominal one, so the expansion is taken about the nominal run continued in
  the perturbed run's mode: when the switch comes later (``lambda_t delta > 0``) the old mode is continued
  past ``t_i`` with its sensitivities until the predicted switch (the paper's extended simulation); when
  it comes earlier, the new mode is continued backwards from ``t_i`` to the predicted switch (the same
  idea the other way; seed 000 shows only the first case). The error is then O(delta^2) everywhere but in
  a window of O(delta^2) about each predicted switch.
"""

from __future__ import annotations

import numpy as np

from hapticam.identify.hybrid.engine import HybridModel, Trajectory, default_directions, simulate


def predicted_switches(traj: Trajectory, delta: np.ndarray) -> np.ndarray:
    """Predicted switching instants (s) of the perturbed run: ``t_i + lambda_t delta`` (seed 000 eq. 7)."""
    return traj.events.t + traj.events.lambda_t @ delta


def reconstruct_lambda(traj: Trajectory, delta: np.ndarray) -> np.ndarray:
    """``x_nom(t_k) + lambda(t_k) delta`` at the trajectory's output times (Fig. 2)."""
    return traj.x + traj.S @ delta


def reconstruct_with_switch_times(model: HybridModel, traj: Trajectory, p: np.ndarray, delta: np.ndarray, *,
                                  h: float | np.ndarray = 1e-3, Pd: np.ndarray | None = None) -> np.ndarray:
    """Reconstruction with lambda and lambda_t (Fig. 3) at the trajectory's output times.

    ``traj`` is the nominal run of ``model`` at parameters ``p`` (s, model units) with steps ``h``; ``Pd``
    the parameter directions it was run with (default :func:`~.engine.default_directions`). Windows of
    successive switches are assumed not to overlap (delta small against the time between switches).
    """
    if Pd is None:
        Pd = default_directions(model)[1]
    out = reconstruct_lambda(traj, delta)
    ev = traj.events
    for i, t_new in enumerate(predicted_switches(traj, delta)):
        t_i = ev.t[i]
        if t_new > t_i:  # the perturbed run is still in the old mode: continue it forwards
            inside = (traj.t > t_i) & (traj.t < t_new)
            start_x, start_S, mode = ev.x_minus[i], ev.S_minus[i], ev.mode_from[i]
        else:  # the perturbed run is already in the new mode: continue that backwards
            inside = (traj.t >= t_new) & (traj.t < t_i)
            start_x, start_S, mode = ev.x_plus[i], ev.S_plus[i], ev.mode_to[i]
        if not np.any(inside):
            continue
        t_window = traj.t[inside]
        times = np.concatenate([[t_i], t_window if t_new > t_i else t_window[::-1]])
        cont = simulate(model, start_x, p, times, mode0=int(mode), t0=t_i, h=h, S0=start_S, Pd=Pd, events=False)
        x_c, S_c = cont.x[1:], cont.S[1:]
        if t_new <= t_i:
            x_c, S_c = x_c[::-1], S_c[::-1]
        out[inside] = x_c + S_c @ delta  # the expansion about the continued mode (Hiskens and Pai)
    return out


def switching_windows(traj: Trajectory, delta: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Mask of the times in ``t`` that lie between a nominal switch and its predicted perturbed one."""
    lo = np.minimum(traj.events.t, predicted_switches(traj, delta))
    hi = np.maximum(traj.events.t, predicted_switches(traj, delta))
    return np.any((t[:, None] >= lo[None, :]) & (t[:, None] <= hi[None, :]), axis=1)
