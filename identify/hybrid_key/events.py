"""Event times of the hammer in a key's force, and the parameters they identify (seed 000 section 4).

A hammer landing on the key (jack or backcheck) is an impact: the force the probe reads jumps by the
impulse ``r m_h (1 + e) v`` spread over a sample or two, far above the key's smooth force. Its time is
set by the hammer's flight, which the model computes exactly (a parabola, the string's reset), so
landing times identify what the flight depends on: the string height (strokes at graded speeds, the
first landing after each let-off; the string's restitution trades off against it there), and the Hunt-Crossley ``alpha = b / k`` through the
rebound of the first bounces of a key oscillated below let-off (a Hunt-Crossley impact's restitution
depends on ``alpha`` times the impact speed only). Fits are least squares on the event times (measured
minus simulated), standard errors from the Jacobian.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.optimize import least_squares

from hapticam.identify.hybrid_key.params import Prepared, to_model
from hapticam.identify.hybrid_key.static import smooth
from hapticam.models.hybrid_key.model import EV_LANDING, EV_LETOFF

#: Landings slower than this (m/s, relative) are not counted (their spikes drown in the key's force).
MIN_LANDING_MPS = 0.05
#: High-pass cut-off (Hz) that separates impact spikes from the key's smooth force.
SPIKE_CUTOFF_HZ = 200.0
#: Landings of the first bounces of an oscillation used for alpha (later ones depend on the earlier ones).
BOUNCES = 3


def landing_spikes(prep: Prepared, hammer_mass_kg: float, lever_ratio: float) -> np.ndarray:
    """Times (s from the first sample) of the impact spikes: onsets of runs where the high-passed force
    exceeds a quarter of the spike of a ``MIN_LANDING_MPS`` landing, r m_h (1 + 1/2) v / dt (N)."""
    hp = prep.f_N - smooth(prep.f_N, prep.dt_s, SPIKE_CUTOFF_HZ)
    thr = max(0.25 * lever_ratio * hammer_mass_kg * 1.5 * MIN_LANDING_MPS / prep.dt_s, 20.0 * prep.noise_N)
    above = np.concatenate([[False], hp > thr])
    onsets = np.flatnonzero(~above[:-1] & above[1:])
    keep = [i for k, i in enumerate(onsets) if k == 0 or i - onsets[k - 1] > round(1e-3 / prep.dt_s)]
    return np.asarray(keep, dtype=float) * prep.dt_s - 0.5 * prep.dt_s   # inside the sample's tick


def _model_landings(prep: Prepared, values: dict[str, float], tip: tuple[float, float] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Let-off times and landing times (above ``MIN_LANDING_MPS``) of the model along the capture; ``tip``:
    the probe tip's stiffness and damping, through which the probe pulls the key (the key a body of its own)."""
    trace = to_model(values, tip).simulate(prep.x_m, prep.dt_s, v_mps=prep.v_mps, a_mps2=prep.a_mps2)
    land = trace.event_time_s[(trace.event_code == EV_LANDING) & (trace.event_speed_mps > MIN_LANDING_MPS)]
    return trace.events(EV_LETOFF), land


def _first_after(times: np.ndarray, t0: float, window: float) -> float:
    later = times[(times > t0) & (times < t0 + window)]
    return float(later[0]) if later.size else math.nan


def _fit(residual, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Trust-region least squares on event times (unbounded coordinates; difference steps max(1, |z|) 0.02, wider than the jitter of later landings), standard errors from the Jacobian
    (s^2 = RSS / (N - p))."""
    sol = least_squares(residual, z0, method="trf", diff_step=2e-2, max_nfev=200)
    J = np.asarray(sol.jac)
    n, p = J.shape
    s2 = 2.0 * float(sol.cost) / max(n - p, 1)
    cov = s2 * np.linalg.pinv(J.T @ J)
    return sol.x, np.sqrt(np.clip(np.diag(cov), 0.0, None)), float(np.linalg.norm(J))


def string_fit(strokes: Sequence[Prepared], values: dict[str, float]) -> tuple[dict[str, float], dict[str, float], str]:
    """String height from the first landing after each let-off (module docstring), the string's
    restitution at ``values`` (in these landing times it trades off against the height: a lower string
    returns the hammer as early as a livelier one, within the landings' jitter). Returns values, standard
    errors (empty when no landing moved with the string) and a note."""
    meas = [landing_spikes(p, values["hammer_mass_kg"], values["lever_ratio"]) for p in strokes]
    base_letoffs = [_model_landings(p, values)[0] for p in strokes]
    top = values["lever_ratio"] * values["let_off_m"]

    def residual(z: np.ndarray) -> np.ndarray:
        v = dict(values, string_height_m=top + math.exp(z[0]))
        out = []
        for p, m, lets in zip(strokes, meas, base_letoffs):
            _, land = _model_landings(p, v)
            for t_l in lets:
                tm, ts = _first_after(m, t_l, 0.5), _first_after(land, t_l, 0.5)
                out.append(ts - tm if math.isfinite(tm) and math.isfinite(ts) else 0.5)
        return np.asarray(out)

    grid = [math.log(h) for h in (0.25e-3, 0.5e-3, 1e-3, 1.5e-3, 2e-3, 3e-3, 4e-3, 6e-3, 8e-3, 16e-3)]
    z0 = np.array([min(grid, key=lambda z: float(np.sum(residual(np.array([z])) ** 2)))])
    z, se, jnorm = _fit(residual, z0)
    if not jnorm > 0.0 or residual(z).size < 2:
        return {}, {}, "string: no landing after let-off depends on it (no stroke reached the string)"
    gap = math.exp(z[0])
    n = residual(z).size
    return ({"string_height_m": top + gap}, {"string_height_m": float(gap * se[0])},
            f"string height from {n} first landings after let-off (strokes at graded speeds)")


def bounce_alpha(bounce: Prepared, values: dict[str, float], tip: tuple[float, float] | None = None
                 ) -> tuple[float, float, str]:
    """Hunt-Crossley alpha = b / k (s/m) from the first ``BOUNCES`` landings of an oscillation below
    let-off, k fixed. Returns alpha, its standard error and a note (NaN when the hammer never bounced)."""
    meas = landing_spikes(bounce, values["hammer_mass_kg"], values["lever_ratio"])[:BOUNCES]
    if meas.size < 2:
        return math.nan, math.nan, ("contact: no landing in the oscillation stood out as a spike (a quarter of a "
                                    f"{MIN_LANDING_MPS:g} m/s landing's impulse within one sample): a felt landing "
                                    "slowly, or behind a compliant tip, spreads over milliseconds; alpha kept at its prior")
    k = values["contact_k_Npm"]

    def residual(z: np.ndarray) -> np.ndarray:
        _, land = _model_landings(bounce, dict(values, contact_b_Nspm=math.exp(z[0]) * k), tip)
        land = land[:meas.size]
        out = np.full(meas.size, 0.05)
        out[:land.size] = land - meas[:land.size]
        return out

    grid = [math.log(a) for a in (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)]
    z0 = np.array([min(grid, key=lambda z: float(np.sum(residual(np.array([z])) ** 2)))])
    z, se, _ = _fit(residual, z0)
    alpha = math.exp(z[0])
    return alpha, alpha * float(se[0]), f"contact: alpha = b / k from the first {meas.size} landings of the oscillation"
