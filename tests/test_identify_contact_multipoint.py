"""Multi-point contact least squares (seed 004 eqs. 4.1-4.9) on a simulated gravity drop, and its files."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import IdentificationError
from hapticam.identify.contact import thesis_tables as tt
from hapticam.identify.contact.multipoint import MultiPointData, fit_multipoint, regressors
from hapticam.identify.contact.multipoint_io import load_multipoint, save_multipoint
from hapticam.identify.contact.multipoint_sim import B_NSPM, K_NPM, MU, gravity_drop

TRUTH = np.array([K_NPM, B_NSPM, MU])


@pytest.fixture(scope="module")
def clean() -> MultiPointData:
    return gravity_drop()


@pytest.mark.parametrize("rows", ["force", "moment", "both"])
def test_noise_free_gravity_drop_recovers_k_b_mu(clean, rows):
    fit = fit_multipoint(clean, rows)
    assert np.all(np.abs(np.array([fit.k_Npm, fit.b_Nspm, fit.mu]) / TRUTH - 1) < 1e-6)
    eight = clean.active.sum(1) == 8                  # resting on all eight points: each instant solves alone
    assert np.any(eight)
    assert np.allclose(fit.history[eight], TRUTH, rtol=1e-6)


def test_gravity_drop_with_a_half_newton_force_plate_beats_table_5_2():
    data = gravity_drop(resolution_N=0.5)
    fit = fit_multipoint(data, "force")
    err = 100 * np.abs(np.array([fit.k_Npm, fit.b_Nspm, fit.mu]) / TRUTH - 1)
    assert np.all(err <= np.array(tt.GRAVITY_DROP_ERRORS_PCT)), err
    assert np.all(np.abs(np.array([fit.k_Npm, fit.b_Nspm, fit.mu]) - TRUTH) < 4 * fit.se)  # honest errors
    both = fit_multipoint(data, "both")
    assert np.all(both.se <= fit.se * 1.01)           # more rows, no larger uncertainty


def test_equation_4_7_as_printed_cannot_separate_k_from_b(clean):
    phi, _ = regressors(clean, "force")
    assert np.linalg.matrix_rank(phi.reshape(-1, 3), tol=1e-9 * np.abs(phi).max()) == 3   # eq. 4.5
    on = clean.active
    d = np.where(on, clean.delta_m, 0.0)[..., None]
    n = np.where(on[..., None], clean.normal, 0.0)
    r = np.where(on[..., None], clean.r_m, 0.0)
    typo = np.stack([np.sum(d * n, 1), np.sum(d * n, 1), np.sum(d * r, 1)], axis=-1)  # [d n, d n, d r]
    assert np.linalg.matrix_rank(typo.reshape(-1, 3)) == 2


def test_instants_whose_contacts_share_one_normal_stay_unsolved(clean):
    fit = fit_multipoint(clean, "force")
    count = clean.active.sum(1)
    for i in np.nonzero(count > 0)[0]:
        normals = clean.normal[i][clean.active[i]]
        parallel = np.allclose(normals, normals[0])   # delta n and delta' n collinear: k, b inseparable
        assert np.isnan(fit.history[i, 0]) == parallel, i
    assert np.all(np.isnan(fit.history[count == 0]))
    with pytest.raises(IdentificationError, match="not separable"):
        d = np.linspace(1e-4, 2e-4, 5)[:, None]       # one contact, rate proportional to depth
        fit_multipoint(MultiPointData(clean.t_s[:5], clean.force_N[:5], d, 10 * d, np.tile([0, 0, 1.0], (5, 1, 1)),
                                      np.tile([1.0, 0, 0], (5, 1, 1))))


@pytest.mark.parametrize("suffix", ["npz", "csv"])
def test_file_round_trip(clean, tmp_path, suffix):
    path = tmp_path / f"drop.{suffix}"
    save_multipoint(path, clean)
    back = load_multipoint(path)
    assert back.active.sum() == clean.active.sum()
    assert np.array_equal(np.sort(back.delta_m[back.active]), np.sort(clean.delta_m[clean.active]))
    a, b = fit_multipoint(clean, "both"), fit_multipoint(back, "both")
    assert np.allclose([a.k_Npm, a.b_Nspm, a.mu], [b.k_Npm, b.b_Nspm, b.mu], rtol=1e-12)


def _csv(tmp_path, text):
    p = tmp_path / "m.csv"
    p.write_text(text)
    return p


HEAD = "t_s,Fx_N,Fy_N,Fz_N,delta_m,delta_dot_mps,nx,ny,nz,tx,ty,tz\n"


@pytest.mark.parametrize("body,match", [
    ("", "header and at least one row"),
    ("t,Fx\n0,1\n", "expected columns"),
    (HEAD + "0,0,0,1,1e-4,0,0,0,1,1,0\n", "fields"),
    (HEAD + "0,0,0,x,1e-4,0,0,0,1,1,0,0\n", "not a number"),
    (HEAD + "0,0,0,1,1e-4,0,0,0,2,1,0,0\n", "unit vectors"),
    (HEAD + "0,0,0,1,1e-4,0,0,0,1,1,0,0\n0,0,0,2,1e-4,0,0,0,1,1,0,0\n", "disagree"),
    (HEAD + "1,0,0,1,1e-4,0,0,0,1,1,0,0\n0,0,0,1,1e-4,0,0,0,1,1,0,0\n", "increasing"),
    (HEAD + "0,0,0,1,1e-4,nan,0,0,1,1,0,0\n", "NaN"),
])
def test_bad_csv_files_are_one_clear_error(tmp_path, body, match):
    p = _csv(tmp_path, body) if body else tmp_path / "empty.csv"
    if not body:
        p.write_text("")
        match = "empty"
    with pytest.raises(IdentificationError, match=match):
        load_multipoint(p)


def test_bad_npz_and_paths(tmp_path, clean):
    with pytest.raises(IdentificationError, match="no such file"):
        load_multipoint(tmp_path / "missing.npz")
    p = tmp_path / "partial.npz"
    np.savez(p, t_s=clean.t_s, force_N=clean.force_N)
    with pytest.raises(IdentificationError, match="missing arrays"):
        load_multipoint(p)
    q = tmp_path / "pickled.npz"
    arrays = {k: getattr(clean, k) for k in ("t_s", "force_N", "delta_m", "delta_dot_mps", "normal", "tangent")}
    arrays["t_s"] = np.array([object()] * clean.t_s.size, dtype=object)
    np.savez(q, **arrays)
    with pytest.raises(IdentificationError, match="not a readable npz"):
        load_multipoint(q)
    (tmp_path / "junk.npz").write_bytes(b"not a zip file at all")
    with pytest.raises(IdentificationError, match="not a readable npz"):
        load_multipoint(tmp_path / "junk.npz")
    (tmp_path / "data.txt").write_text("1")
    with pytest.raises(IdentificationError, match=".npz or .csv"):
        load_multipoint(tmp_path / "data.txt")
    with pytest.raises(IdentificationError, match="moment rows need"):
        fit_multipoint(MultiPointData(clean.t_s, clean.force_N, clean.delta_m, clean.delta_dot_mps, clean.normal,
                                      clean.tangent), "moment")
    with pytest.raises(IdentificationError, match="rows"):
        fit_multipoint(clean, "torque")
