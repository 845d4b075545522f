"""``hapticam bench identify``: the piano-key identification's time beside the fit a Python user would write.

The peer simulates the same hybrid key along a capture's key motion with ``scipy.integrate.solve_ivp``
(LSODA, event location for landing, lift-off and the string; let-off and repetition as crossings of the
key position), and takes the same finite-difference Jacobian of the slow stroke's force (low-passed at
``SLOW_CUTOFF_HZ`` as there: impulses are tick means in the kernel, samples in the peer) in the six
escapement parameters that the identification's standard errors come from
(:func:`hapticam.identify.hybrid_key.fit._static_errors`): seven simulations each way, on the same
stretch of a slow press and release through let-off, in one run. The whole identification (four
synthetic captures at 10 kHz of the piano example's action pulled through a stiff tip, as the
``hybrid-key`` probe target is) is timed beside it.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from hapticam.identify.hybrid_key.fit import SLOW_CUTOFF_HZ
from hapticam.identify.hybrid_key.params import from_model, to_model
from hapticam.identify.hybrid_key.static import smooth
from hapticam.models.hybrid_key.model import HybridKey

#: The six parameters of the Jacobian (as in key_fit.STATIC_FREE).
BENCH_FREE = ("hammer_mass_kg", "lever_ratio", "let_off_m", "check_drop_m", "repetition_m", "keybed_m")


def _drive(p: dict[str, float], x: float, escaped: bool) -> tuple[float, float]:
    """Drive point (m) and its lever ratio ds/dx (the model's escapement, hapticam.models.hybrid_key.model)."""
    r = p["lever_ratio"]
    if not escaped:
        return r * x, r
    span = p["let_off_m"] - p["repetition_m"]
    f = min(max((x - p["repetition_m"]) / span, 0.0), 1.0)
    return r * x - p["check_drop_m"] * f, (r - p["check_drop_m"] / span) if 0.0 < f < 1.0 else r


def peer_force(p: dict[str, float], t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The hybrid key's force along sampled key motion, simulated with solve_ivp (the plain-Python peer)."""
    g, m, n = p["gravity_mps2"], p["hammer_mass_kg"], p["contact_n"]
    k, b = p["contact_k_Npm"], p["contact_b_Nspm"]
    v = np.gradient(x, t)
    a = np.gradient(v, t)
    xt = lambda tt: float(np.interp(tt, t, x))                       # noqa: E731
    vt = lambda tt: float(np.interp(tt, t, v))                       # noqa: E731
    state = {"escaped": x[0] > p["let_off_m"], "contact": True}
    y0 = _drive(p, x[0], state["escaped"])[0] - (m * g / k) ** (1.0 / n)
    z = np.array([y0, 0.0])
    fc_out = np.zeros(t.size)

    def contact_force(tt: float, zz: np.ndarray) -> float:
        s, lever = _drive(p, xt(tt), state["escaped"])
        rho, rho_dot = s - zz[0], lever * vt(tt) - zz[1]
        return max(0.0, k * rho ** n + b * rho ** n * rho_dot) if rho > 0 else 0.0   # seed 000 eq. 26

    def rhs(tt: float, zz: np.ndarray) -> list[float]:
        fc = contact_force(tt, zz) if state["contact"] else 0.0
        return [zz[1], fc / m - g]

    def gap(tt: float, zz: np.ndarray) -> float:
        return zz[0] - _drive(p, xt(tt), state["escaped"])[0]
    gap.terminal = True

    def string(tt: float, zz: np.ndarray) -> float:
        return zz[0] - p["string_height_m"]
    string.terminal, string.direction = True, 1.0
    above, below = x > p["let_off_m"], x <= p["repetition_m"]
    changes = list(np.flatnonzero((above[1:] != above[:-1]) | (below[1:] != below[:-1])) + 1) + [t.size - 1]
    t0, c = t[0], 0
    while t0 < t[-1]:
        while changes[c] < t.size - 1 and t[changes[c]] <= t0:
            c += 1
        t_end = t[changes[c]]
        mask = (t > t0) & (t <= t_end)
        gap.direction = 1.0 if state["contact"] else -1.0
        sol = solve_ivp(rhs, (t0, t_end), z, method="LSODA", t_eval=t[mask], events=(gap, string),
                        rtol=1e-6, atol=1e-9, max_step=2e-4)
        for tq, zq in zip(sol.t, sol.y.T):
            q = int(np.searchsorted(t, tq))
            lever = _drive(p, x[q], state["escaped"])[1]
            fc_out[q] = contact_force(tq, zq) * lever if state["contact"] else 0.0
        if sol.status == 1:                     # an event: landing/lift-off toggles contact, the string resets
            hit_string = sol.t_events[1].size > 0 and (sol.t_events[0].size == 0
                                                       or sol.t_events[1][0] < sol.t_events[0][0])
            if hit_string:
                t0, z = sol.t_events[1][0], sol.y_events[1][0].copy()
                z[1] = -p["string_restitution"] * z[1]          # y_dot+ = -e_s y_dot-
                z[0] -= 1e-12
            else:
                t0, z = sol.t_events[0][0], sol.y_events[0][0].copy()
                state["contact"] = not state["contact"]
            continue
        t0, z = t_end, sol.y[:, -1]
        j = changes[c]
        if above[j] and not state["escaped"]:
            state["escaped"], state["contact"] = True, False      # let-off: the drive point drops away
        elif below[j] and state["escaped"]:
            state["escaped"] = False
    key = p["key_mass_kg"] * a + p["return_spring_Npm"] * x + p["preload_N"]
    kb = p["keybed_k_Npm"] * (x - p["keybed_m"]) + p["keybed_b_Nspm"] * v
    return key + np.where(x > p["keybed_m"], np.maximum(kb, 0.0), 0.0) + fc_out


def _jacobian(force, p: dict[str, float], rel: float = 1e-3) -> np.ndarray:
    f0 = force(p)
    cols = []
    for name in BENCH_FREE:
        q = dict(p, **{name: p[name] * (1.0 + rel)})
        cols.append((force(q) - f0) / (p[name] * rel))
    return np.column_stack(cols)


#: The bench's key (the piano example's action) and the stiff tip through which its captures are taken.
TRUTH = dict(key_mass_kg=0.03, return_spring_Npm=10.0, preload_N=0.05, hammer_mass_kg=0.010, lever_ratio=5.0,
             contact={"law": "hunt-crossley", "k_Npm": 5e6, "b_Nspm": 1.5e7, "n": 1.5}, let_off_m=0.0085,
             check_drop_m=0.020, repetition_m=0.004, string_height_m=0.045, string_restitution=0.4, keybed_m=0.010,
             keybed_k_Npm=1e5, keybed_b_Nspm=100.0)
TIP = (1e7, 1000.0)


def synthetic_captures(rate_hz: float = 10_000.0, noise_N: float = 2e-3, seed: int = 0) -> list[tuple]:
    """Captures of ``TRUTH`` pulled through the tip ``TIP`` (the key a body of its own) along a slow triangle
    (4 s), three raised-cosine strokes (0.2, 0.1, 0.05 s), a 12 Hz oscillation below let-off and a 1-4 Hz
    sweep (4 s), with Gaussian force noise: (name, t, x, F, excitation kind)."""
    rng = np.random.default_rng(seed)
    key = HybridKey(**TRUTH, coupling_k_Npm=TIP[0], coupling_b_Nspm=TIP[1])
    top = 0.0103
    dt = 1.0 / rate_hz
    t4 = np.arange(0.0, 4.0, dt)
    tri = top * (1.0 - np.abs(2.0 * t4 / 4.0 - 1.0))
    strokes = []
    for press in (0.2, 0.1, 0.05):      # rest, press (raised cosine), hold, release (0.15 s), rest
        u = np.arange(0.0, 0.2 + press + 0.3 + 0.15 + 0.2, dt)
        down = 0.5 * (1 - np.cos(np.pi * np.clip((u - 0.2) / press, 0, 1)))
        up = 0.5 * (1 - np.cos(np.pi * np.clip((u - 0.5 - press) / 0.15, 0, 1)))
        strokes.append(top * (down - up))
    t1 = np.arange(0.0, 1.0, dt)
    phase = 2 * np.pi * (t4 + 3.0 * t4 * t4 / 8.0)          # 1 -> 4 Hz linear sweep
    paths = [("slow", tri, "triangle"), ("strokes", np.concatenate(strokes), "strokes"),
             ("bounce", 0.004 - 0.0005 * np.cos(2 * np.pi * 12.0 * t1), "sine"),
             ("periodic", 0.5 * top * (1 - np.cos(phase)), "sweep")]
    out = []
    for name, x, kind in paths:
        f = key.simulate(x, dt).force_N + rng.normal(0.0, noise_N, x.size)
        out.append((name, np.arange(x.size) * dt, x, f, kind))
    return out


def bench_key(quick: bool = False, repeat: int = 1) -> dict[str, Any]:
    """Time the piano-key identification and the slow-stroke Jacobian, hapticam against the solve_ivp peer."""
    from hapticam.identify.hybrid_key.fit import identify_hybrid_key

    caps = synthetic_captures()
    identify_hybrid_key(caps[:2])                       # compile (or load from the numba cache) first
    best = math.inf
    for _ in range(max(repeat, 1)):
        t0 = time.perf_counter()
        fit = identify_hybrid_key(caps, probe_tip=TIP)
        best = min(best, time.perf_counter() - t0)
    # the slow stroke's Jacobian: a stretch through let-off (1 s quick, 2 s otherwise)
    _, t, x, _, _ = caps[0]
    sel = (t >= 1.0) & (t < (2.0 if quick else 3.0))
    ts, xs = t[sel] - t[sel][0], x[sel]
    p = from_model(fit.model if fit.model.coupling_k_Npm is None else to_model(fit.values))
    dt = float(ts[1] - ts[0])
    ours = lambda q: smooth(to_model(q).simulate(xs, dt).force_N, dt, SLOW_CUTOFF_HZ)   # noqa: E731
    peer = lambda q: smooth(peer_force(q, ts, xs), dt, SLOW_CUTOFF_HZ)                  # noqa: E731
    _jacobian(ours, p)
    t0 = time.perf_counter()
    j_ours = _jacobian(ours, p)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    j_peer = _jacobian(peer, p)
    t_peer = time.perf_counter() - t0
    agree = float(np.linalg.norm(j_peer - j_ours) / np.linalg.norm(j_ours))
    return {"identify_s": best, "captures": len(caps), "samples": int(sum(c[1].size for c in caps)),
            "jacobian_samples": int(ts.size), "jacobian_hapticam_s": t_ours, "jacobian_scipy_s": t_peer,
            "ratio": t_peer / t_ours, "jacobian_relative_difference": agree}


def format_key_rows(r: dict[str, Any]) -> str:
    """The piano-key rows of the identify bench table."""
    return "\n".join([
        f"{'piano-key identification (4 captures, ' + format(r['samples'], ',') + ' samples)':<52}{r['identify_s']:>9.2f} s",
        f"{'slow-stroke Jacobian, 6 params, ' + format(r['jacobian_samples'], ',') + ' samples':<52}"
        f"{'hapticam':>9}{'solve_ivp':>11}{'ratio':>8}",
        f"{'':<52}{r['jacobian_hapticam_s']:>8.3f}s{r['jacobian_scipy_s']:>10.2f}s{r['ratio']:>8.0f}",
        f"Jacobians differ by {100 * r['jacobian_relative_difference']:.1f} % (solve_ivp peer vs compiled kernel)"])


__all__ = ["bench_key", "format_key_rows", "peer_force", "HybridKey"]
