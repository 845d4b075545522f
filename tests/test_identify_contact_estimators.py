"""The nine single-point contact estimators of seed 004 against ground truth, batch solutions and each other.

Synthetic contact: k = 1e6 N/m, b = 200 N s/m, x ~ 1e-4 m, force read by a 12-bit sensor over +-300 N.
"""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import IdentificationError
from hapticam.identify.contact import recursive, synthetic
from hapticam.identify.contact.batch import gls
from hapticam.identify.contact.fit import ESTIMATORS, fit_contact
from hapticam.identify.contact.frequency import FrequencyEstimator, eem, etfe, gmle, oem, spectra

K, B = 1e6, 200.0


def _contact(rec: synthetic.SyntheticRecord) -> tuple[np.ndarray, ...]:
    on = int(np.argmax(rec.f_true_N > 0))
    return rec.t_s[on:], rec.x_m[on:] - rec.x_c_m, rec.f_N[on:], rec.v_mps[on:]


@pytest.fixture(scope="module")
def records() -> dict[str, synthetic.SyntheticRecord]:
    return {"pe_noisy": synthetic.persistent_excitation(duration_s=4.0),
            "pe_clean": synthetic.persistent_excitation(duration_s=4.0, noise=False),
            "steps_noisy": synthetic.quasi_static_steps(),
            "steps_clean": synthetic.quasi_static_steps(noise=False)}


@pytest.fixture(scope="module")
def fits(records):
    return {name: fit_contact(r.t_s, r.x_m, r.f_N, "all") for name, r in records.items()}


@pytest.mark.parametrize("name,tol", [("pe_noisy", 0.01), ("pe_clean", 0.001), ("steps_noisy", 0.01),
                                      ("steps_clean", 0.001)])
def test_every_estimator_recovers_k(fits, name, tol):
    fit = fits[name]
    assert set(fit.results) == set(ESTIMATORS)
    for est, r in fit.results.items():
        assert abs(r.k_Npm / K - 1) < tol, (est, r.k_Npm)
    ks = np.array([r.k_Npm for r in fit.results.values()])
    assert np.ptp(ks) / np.mean(ks) < 0.02  # the nine agree (thesis: 3.6 % on rig data)


@pytest.mark.parametrize("name", ["pe_noisy", "pe_clean"])
def test_persistent_excitation_identifies_b_within_5_percent(fits, name):
    fit = fits[name]
    assert fit.b_identifiable
    for est, r in fit.results.items():
        assert abs(r.b_Nspm / B - 1) < 0.05, (est, r.b_Nspm)
    assert abs(fit.to_model().b_Nspm / B - 1) < 0.05


def test_quasi_static_steps_report_b_not_identifiable(fits):
    fit = fits["steps_noisy"]
    assert not fit.b_identifiable
    assert fit.b_verdict.startswith("not identifiable")
    assert fit.to_model().b_Nspm == 0.0            # not invented
    assert not any(r.extra["b_identifiable"] for r in fit.results.values())
    assert fits["pe_noisy"].b_identifiable         # the same rule passes an excited record


def test_kalman_without_process_noise_equals_rls_lambda_one(records):
    t, d, f, v = _contact(records["pe_noisy"])
    r = 0.0173  # not a power of two: the equality is not bit-for-bit by accident
    kal = recursive.kalman(t, d, f, v, r=r, p0=1e5)
    ls1 = recursive.ils(t, d, f, v, lam=1.0, p0=1e5)
    assert np.max(np.abs(kal.history - ls1.history) / np.abs(ls1.history)) < 1e-9
    lsf = recursive.ils(t, d, f, v, lam=0.98, p0=1e5)  # with forgetting they differ
    assert np.max(np.abs(kal.history - lsf.history) / np.abs(lsf.history)) > 1e-3


def test_output_error_converges_in_one_iteration_and_equals_equation_error(records):
    t, d, f, v = _contact(records["pe_clean"])
    sp = spectra(t, d, f, v)
    for start in ((1e6, 50.0), (1e3, 0.0), (1e9, 1e4)):
        o = oem(sp, start)
        assert o.iterations == 1 and o.status == "ok"
        assert abs(o.k_Npm / eem(sp).k_Npm - 1) < 1e-9
        assert np.allclose(o.history[1], o.theta, rtol=0, atol=0)


def test_ils_initial_guess_up_to_1e4_times_truth(records):
    rec = records["steps_noisy"]
    a = 2500  # the first 2 s hold (onset at 0.5 s, ramp 2 s, 1 kHz)
    sl = slice(a, a + 2000)
    t, d, f, v = rec.t_s[sl], rec.x_m[sl] - rec.x_c_m, rec.f_N[sl], rec.v_mps[sl]
    for k0 in (0.0, 1e2, 1e4, 1e6, 1e8, 1e10):
        assert abs(recursive.ils(t, d, f, v, theta0=(k0, 50.0)).k_Npm / K - 1) < 0.005, k0
    short = slice(a, a + 1000)  # with less data the prior's residue shows: linear in the guess (sec. 3.6.1)
    e = [recursive.ils(rec.t_s[short], rec.x_m[short] - rec.x_c_m, rec.f_N[short], rec.v_mps[short],
                       theta0=(k0, 50.0)).k_Npm / K - 1 for k0 in (1e10, 1e11, 1e12)]
    assert 9.5 < e[2] / e[1] < 10.5 and 9.5 < e[1] / e[0] < 10.5


def test_classes_per_sample_equal_functional_forms(records):
    t, d, f, v = _contact(records["pe_noisy"])
    t, d, f, v = t[:400], d[:400], f[:400], v[:400]
    dt = t[1] - t[0]
    from hapticam.identify.contact.result import derivatives
    vv, aa = derivatives(d, dt)
    rls_c, ils_c, kal_c, ia_c = (recursive.RLS(), recursive.ILS(), recursive.ContactKalman(r=0.3),
                                 recursive.IndirectAdaptive())
    for i in range(d.size):
        rls_c.update(f[i], d[i], vv[i], aa[i])
        ils_c.update(f[i], d[i], v[i])
        kal_c.update(f[i], d[i], v[i])
        ia_c.update(f[i], d[i], v[i], dt)
    assert np.allclose(rls_c.theta, recursive.rls(t, d, f).theta, rtol=1e-12)
    assert np.allclose(ils_c.theta, recursive.ils(t, d, f, v).theta, rtol=1e-12)
    assert np.allclose(kal_c.theta, recursive.kalman(t, d, f, v, r=0.3).theta, rtol=1e-12)
    assert np.allclose(ia_c.theta, recursive.indirect_adaptive(t, d, f, v).theta, rtol=1e-12)
    fe = FrequencyEstimator("gmle")
    assert np.allclose(fe.fit(t, d, f, v).theta, gmle(spectra(t, d, f, v)).theta)


def test_gls_equals_lstsq_and_its_standard_error_matches_monte_carlo():
    ks, ses = [], []
    for seed in range(24):
        rec = synthetic.persistent_excitation(duration_s=0.8, seed=seed)
        t, d, f, v = _contact(rec)
        r = gls(t, d, f, v)
        ref = np.linalg.lstsq(np.column_stack([d, v]), f, rcond=None)[0]
        assert np.allclose(r.theta, ref, rtol=1e-10)
        ks.append(r.k_Npm)
        ses.append(r.se[0])
    assert 0.6 < np.std(ks, ddof=1) / np.mean(ses) < 1.6


def test_indirect_adaptive_needs_gamma_as_the_gain_not_its_inverse(records):
    t, d, f, v = _contact(records["pe_clean"])
    literal = recursive.indirect_adaptive(t, d, f, v, theta0=(5e5, 50.0), gamma=1.0 / np.array(recursive.GAMMA))
    assert abs(literal.k_Npm / 5e5 - 1) < 1e-9       # time constant ~1e17 s: it never leaves the guess
    gain = recursive.indirect_adaptive(t, d, f, v, theta0=(5e5, 50.0))
    assert abs(gain.k_Npm / K - 1) < 1e-3


def test_velocity_transform_is_exact_where_thesis_jw_form_is_biased(records):
    t, d, f, v = _contact(records["pe_clean"])   # a contact record: starts at 0, ends pressed in
    exact = oem(spectra(t, d, f, v))
    literal = oem(spectra(t, d, f, v, derivative="jw"))
    assert abs(exact.b_Nspm / B - 1) < 1e-9
    assert abs(literal.b_Nspm / B - 1) > 1e-3      # the missing end term x(T) - x(0)
    fs, n = 1000.0, 2000                          # periodic record, bin-centred tones: jw X is exact
    tt = np.arange(n) / fs
    w = 2 * np.pi * np.array([5.0, 12.5, 31.0])
    dp = 1e-4 + 2e-5 * np.sin(np.outer(tt, w)).sum(1)
    vp = 2e-5 * (w * np.cos(np.outer(tt, w))).sum(1)
    fp = K * dp + B * vp
    per = oem(spectra(tt, dp, fp, vp, derivative="jw", freqs_Hz=[5.0, 12.5, 31.0]))
    assert abs(per.k_Npm / K - 1) < 1e-9 and abs(per.b_Nspm / B - 1) < 1e-9


def test_equation_error_explodes_as_b_goes_to_zero():
    rec = synthetic.persistent_excitation(duration_s=2.0, b=0.0)
    t, d, f, v = _contact(rec)
    sp = spectra(t, d, f, v)
    e, o = eem(sp), oem(sp)
    assert abs(o.k_Npm / K - 1) < 1e-3
    assert e.status.startswith("ill-conditioned") or abs(e.b_Nspm) > 1e4


def test_etfe_per_frequency_estimates_and_gain_phase(records):
    t, d, f, v = _contact(records["pe_clean"])
    r = etfe(spectra(t, d, f, v, n_freq=12))
    assert r.history.shape == (12, 2) and r.axis_kind == "frequency"
    assert np.allclose(r.history[:, 0], K, rtol=1e-8) and np.allclose(r.history[:, 1], B, rtol=1e-6)
    assert np.all(r.extra["gain_mpN"] > 0)


def test_covariance_bound_prevents_wind_up_on_long_holds():
    fs = 1000.0
    t = np.arange(40000) / fs
    d = 1e-4 * np.minimum(1.0, t / 0.05)  # one step, then 40 s without motion
    f = K * d + B * np.gradient(d, t)
    with pytest.raises(IdentificationError, match="p_max"):
        recursive.rls(t, d, f)                   # P grows by 1/0.98 per sample: overflow
    r = recursive.rls(t, d, f, p_max=1e8)
    assert abs(r.k_Npm / K - 1) < 1e-6 and r.extra["covariance_bound_steps"] > 30000


@pytest.mark.parametrize("bad", [dict(lam=0.0), dict(lam=1.5), dict(p0=-1.0), dict(p_max=0.0), dict(theta0=(1.0,))])
def test_bad_settings_are_one_clear_error(bad, records):
    t, d, f, _ = _contact(records["pe_clean"])
    with pytest.raises(IdentificationError):
        recursive.rls(t[:50], d[:50], f[:50], **bad)
    with pytest.raises(IdentificationError, match="gamma"):
        recursive.IndirectAdaptive(gamma=(-1.0, 2.0))
    with pytest.raises(IdentificationError, match="freqs_Hz"):
        spectra(t, d, f, freqs_Hz=[1e9])
