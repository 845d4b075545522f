"""Cross-checks of the recursive contact estimators against padasip's RLS and filterpy's Kalman filter on
the same data, and the benchmark that times them (peers from the ``bench`` / test extras)."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.identify.contact import recursive, synthetic
from hapticam.commands.bench.contact import bench_contact, format_rows
from hapticam.identify.contact.result import derivatives


@pytest.fixture(scope="module")
def data():
    rec = synthetic.persistent_excitation(duration_s=0.6)
    on = int(np.argmax(rec.f_true_N > 0))
    t, x, f, v = rec.t_s[on:], rec.x_m[on:] - rec.x_c_m, rec.f_N[on:], rec.v_mps[on:]
    return t, x, f, v


def test_rls_equals_padasip_filter_rls(data):
    import padasip as pa                     # in the test extra
    t, x, f, _ = data
    vv, aa = derivatives(x, t[1] - t[0])
    phi = np.column_stack([x, vv, aa])
    ours = recursive.rls(t, x, f)                                   # lambda 0.98, P0 = 1e5 I, (1e6, 50, 0)
    filt = pa.filters.FilterRLS(n=3, mu=0.98, eps=1e-5, w=np.array([1e6, 50.0, 0.0]))
    _, _, w_prior = filt.run(f, phi)                                # padasip records the weights before each step
    scale = np.max(np.abs(ours.history), axis=0)                    # per parameter (m passes through 0)
    assert np.max(np.abs(filt.w - ours.theta) / scale) < 1e-9
    # mid-run the two roundings differ by up to ~1e-7: P spans 1e3..1e13 in SI units (P0 = 1e5 I unscaled)
    assert np.max(np.abs(w_prior[1:] - ours.history[:-1]) / scale) < 1e-6


def test_kalman_equals_filterpy_kalman_filter(data):
    import filterpy.kalman as kmod           # in the test extra
    t, x, f, v = data
    r, q = 0.02, np.diag([1e2, 1e-2])                               # with process noise too
    ours = recursive.kalman(t, x, f, v, r=r, q=q)
    kf = kmod.KalmanFilter(dim_x=2, dim_z=1)
    kf.x = np.array([[1e6], [50.0]])
    kf.F, kf.Q, kf.P, kf.R = np.eye(2), q, np.eye(2) * 1e5 * r, np.array([[r]])
    hist = np.empty((f.size, 2))
    for i in range(f.size):
        kf.predict()
        kf.update(f[i], H=np.array([[x[i], v[i]]]))
        hist[i] = kf.x[:, 0]
    assert np.max(np.abs(hist - ours.history) / np.abs(ours.history)) < 1e-9
    assert np.allclose(kf.P, ours.cov, rtol=1e-7)


def test_benchmark_runs_and_the_peers_agree():
    import padasip  # noqa: F401  (in the test extra)
    import filterpy  # noqa: F401  (in the test extra)
    rows = bench_contact(quick=True, repeat=1)
    assert {r["name"] for r in rows} >= {"padasip FilterRLS vs hapticam rls", "filterpy KalmanFilter vs hapticam kalman"}
    for r in rows:
        assert r["ours_s"] > 0 and r["peer_s"] > 0 and r["ratio"] == pytest.approx(r["peer_s"] / r["ours_s"])
        assert r["max_rel_diff"] < 1e-9
    assert "ratio" in format_rows(rows)
