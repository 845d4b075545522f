"""Benchmark of the recursive contact estimators against their peers, on the same data, in one run.

``bench_contact(quick)`` times, on a persistently excited synthetic contact (:mod:`.synthetic`):

- hapticam's compiled RLS (seed 004 eqs. 2.3-2.5, ``[x, x', x'']``, lambda 0.98, P0 = 1e5 I) against
  padasip's ``FilterRLS`` with the same forgetting, prior and initial weights;
- hapticam's compiled Kalman filter (state ``[k, b]``, identity transition, Q = 0) against filterpy's
  ``KalmanFilter`` (``predict()`` then ``update()`` each sample, ``H`` set per sample);
- the per-sample Python ``update()`` of both hapticam classes, for scale.

Each row reports both times (best of ``repeat``), the ratio peer/ours and the largest relative difference of
the final estimates (the peers compute the same recursions; their agreement is part of the result).
padasip and filterpy are imported here only (the ``bench`` extra); a missing one gives a row with a note.
Absolute times drift on a shared machine; the ratios are the result.
"""

from __future__ import annotations

import numpy as np

import hapticam.identify.contact.recursive as recursive
import hapticam.identify.contact.synthetic as synthetic
from hapticam.identify.contact.result import derivatives
from hapticam.identify.timing import best_of as _best


def _data(quick: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rec = synthetic.persistent_excitation(duration_s=1.0 if quick else 8.0)
    on = int(np.argmax(rec.f_true_N > 0))
    t, x, f = rec.t_s[on:], rec.x_m[on:] - rec.x_c_m, rec.f_N[on:]
    v, a = derivatives(x, float(t[1] - t[0]))
    return t, x, v, a, f


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.maximum(np.abs(b), 1e-300)))


def _rls_rows(t: np.ndarray, x: np.ndarray, v: np.ndarray, a: np.ndarray, f: np.ndarray, repeat: int) -> list[dict]:
    theta0 = np.array([1e6, 50.0, 0.0])
    ours_s, ours = _best(lambda: recursive.rls(t, x, f, theta0=theta0), repeat)
    phi = np.column_stack([x, v, a])

    def loop() -> np.ndarray:
        est = recursive.RLS(theta0)
        for i in range(f.size):
            est.update(f[i], *phi[i])
        return est.theta

    loop_s, th_loop = _best(loop, 1)
    rows = [{"name": "RLS per-sample update() (Python loop)", "samples": f.size, "ours_s": ours_s, "peer_s": loop_s,
             "ratio": loop_s / ours_s, "max_rel_diff": _rel(th_loop, ours.theta)}]
    try:
        import padasip as pa
    except ImportError:
        rows.append({"name": "padasip FilterRLS", "note": "padasip is not installed (pip install hapticam[bench])"})
        return rows

    def peer() -> np.ndarray:
        filt = pa.filters.FilterRLS(n=3, mu=recursive.LAMBDA, eps=1.0 / recursive.P0, w=theta0.copy())
        filt.run(f, phi)
        return filt.w

    peer_s, th_pa = _best(peer, 1)
    rows.append({"name": "padasip FilterRLS vs hapticam rls", "samples": f.size, "ours_s": ours_s, "peer_s": peer_s,
                 "ratio": peer_s / ours_s, "max_rel_diff": _rel(th_pa, ours.theta)})
    return rows


def _kalman_rows(t: np.ndarray, x: np.ndarray, v: np.ndarray, f: np.ndarray, repeat: int) -> list[dict]:
    r = 0.01
    ours_s, ours = _best(lambda: recursive.kalman(t, x, f, v, r=r), repeat)
    try:
        from filterpy.kalman import KalmanFilter
    except ImportError:
        return [{"name": "filterpy KalmanFilter", "note": "filterpy is not installed (pip install filterpy)"}]

    def peer() -> np.ndarray:
        kf = KalmanFilter(dim_x=2, dim_z=1)
        kf.x = np.array([[1e6], [50.0]])
        kf.F = np.eye(2)
        kf.Q = np.zeros((2, 2))
        kf.P = np.eye(2) * recursive.P0 * r
        kf.R = np.array([[r]])
        H = np.zeros((1, 2))
        for i in range(f.size):
            kf.predict()
            H[0, 0], H[0, 1] = x[i], v[i]
            kf.update(f[i], H=H)
        return kf.x[:, 0]

    peer_s, th_fp = _best(peer, 1)
    return [{"name": "filterpy KalmanFilter vs hapticam kalman", "samples": f.size, "ours_s": ours_s,
             "peer_s": peer_s, "ratio": peer_s / ours_s, "max_rel_diff": _rel(th_fp, ours.theta)}]


def bench_contact(quick: bool = False, repeat: int = 3) -> list[dict]:
    """Rows ``{name, samples, ours_s, peer_s, ratio (peer / ours), max_rel_diff}`` (or ``{name, note}``)."""
    t, x, v, a, f = _data(quick)
    recursive.rls(t[:10], x[:10], f[:10])  # compile (or load from the numba cache) outside the timing
    recursive.kalman(t[:10], x[:10], f[:10], v[:10], r=0.01)
    return _rls_rows(t, x, v, a, f, repeat) + _kalman_rows(t, x, v, f, repeat)


def format_rows(rows: list[dict]) -> str:
    """The benchmark as a text table."""
    lines = [f"{'comparison':<44}{'samples':>9}{'ours s':>10}{'peer s':>10}{'ratio':>9}{'max rel diff':>14}",
             "-" * 96]
    for r in rows:
        if "note" in r:
            lines.append(f"{r['name']:<44}{r['note']}")
        else:
            lines.append(f"{r['name']:<44}{r['samples']:>9}{r['ours_s']:>10.4f}{r['peer_s']:>10.4f}{r['ratio']:>9.1f}"
                         f"{r['max_rel_diff']:>14.2e}")
    return "\n".join(lines)
