"""The thesis's contact arithmetic against its tables (seed 004 secs. 3.4-3.5, 4.1.2), the power-law /
Hunt-Crossley fit and a key's bottom-out seen through a compliant probe."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import IdentificationError
from hapticam.identify.contact import mechanics as mech
from hapticam.identify.contact import synthetic
from hapticam.identify.contact import thesis_tables as tt
from hapticam.identify.contact.fit import fit_contact
from hapticam.identify.contact.power_law import fit_power_law
from hapticam.commands.reproduce.contact import implied_rig_stiffness


def test_series_springs_tables_3_8_and_3_9():
    k_rig = implied_rig_stiffness()
    assert 3.455e6 < k_rig < 3.475e6                     # what the printed 3.46e6 was rounded from
    for _, k_sp, k_calc, _, _ in tt.TABLE_3_8 + tt.TABLE_3_9:
        assert abs(mech.series_stiffness(k_sp, k_rig) / k_calc - 1) < 0.01
        # with the printed inputs, each printed k_calc lies within their rounding (half a unit of the last digit)
        lo = mech.series_stiffness(k_sp - 0.005e6, tt.K_SMT_NPM + 0.005e6)
        hi = mech.series_stiffness(k_sp + 0.005e6, tt.K_SMT_NPM - 0.005e6)
        assert lo * 0.995 < k_calc < hi * 1.005
    assert mech.series_stiffness(1.99e6, 3.46e6) == pytest.approx(1 / (1 / 1.99e6 - 1 / 3.46e6), rel=1e-15)


def test_series_error_column_is_the_magnitude_of_eq_3_5():
    _, k_sp, _, k_pay, err = tt.TABLE_3_9[3]
    e = float(mech.percent_error(k_pay, mech.series_stiffness(k_sp, implied_rig_stiffness())))
    assert e == pytest.approx(err, abs=0.5)
    _, k_sp, k_calc, k_pay, err = tt.TABLE_3_8[3]        # k_calc > k_payload: the table prints |error|
    assert float(mech.percent_error(k_pay, k_calc)) < 0 < err


def test_series_stiffness_rejects_a_measurement_stiffer_than_the_rig():
    with pytest.raises(IdentificationError, match="below the rig"):
        mech.series_stiffness(4e6, 3.46e6)
    assert mech.series_stiffness_se(2e6, 1e4, 4e6) == pytest.approx((4e6 / 2e6) ** 2 * 1e4)


def test_secant_stiffness_table_3_7():
    for name, (n, k) in tt.TABLE_3_5.items():
        ours = mech.secant_stiffness(np.array(tt.LOADS_C[name]), k, n)
        assert np.all(np.abs(ours / np.array(tt.TABLE_3_7[name]) - 1) < 0.01), name
    # Table C-2's displacement needs n = 1.27 (its footnote's 2.27 is a typo)
    assert mech.power_law_displacement(52.0, 2.01e8, 1.27) == pytest.approx(6.50e-6, rel=0.01)
    assert mech.power_law_displacement(52.0, 2.01e8, 2.27) > 1e-4


def test_hertz_aluminium_within_half_a_percent():
    E2, nu2 = tt.HERTZ_HALF_SPACE
    (E1, nu1), paper = tt.HERTZ_SPECIMENS["aluminium"]
    k = mech.hertz_stiffness(tt.HERTZ_RADIUS_M, E1, nu1, E2, nu2)
    assert abs(k / paper - 1) < 0.005
    (E1p, nu1p), paper_p = tt.HERTZ_SPECIMENS["plastic"]
    assert 0.03 < 1 - mech.hertz_stiffness(tt.HERTZ_RADIUS_M, E1p, nu1p, E2, nu2) / paper_p < 0.05  # thesis rounds
    # E* is the reciprocal of footnote 3's sum: for two identical bodies E* = E / (2 (1 - nu^2))
    assert mech.effective_modulus(70e9, 0.33, 70e9, 0.33) == pytest.approx(70e9 / (2 * (1 - 0.33 ** 2)))
    d = mech.hertz_displacement(100.0, tt.HERTZ_RADIUS_M, E1, nu1, E2, nu2)   # eq. 3.2 inverts eq. 3.3
    assert k * d ** 1.5 == pytest.approx(100.0, rel=1e-12)


def test_b0_and_hardware_error():
    assert mech.damping_from_ratio(0.02, 1e5, 9.2) == pytest.approx(38.37, abs=0.005)
    dx, dF, x, F, paper = tt.HARDWARE_ERROR
    assert mech.stiffness_relative_error(dx, x, dF, F) == pytest.approx(paper, abs=1e-4)


def test_power_law_fit_recovers_an_instron_curve():
    n, k = tt.TABLE_3_5["plastic half-sphere"]
    d = np.linspace(0, mech.power_law_displacement(400.0, k, n), 3000)
    rng = np.random.default_rng(3)
    f = k * d ** n + rng.normal(0, 1.0, d.size)           # a 5 kN cell at 1 N accuracy
    fit = fit_power_law(d[d > 0], f[d > 0], fit_damping=False, fit_datum=False)
    assert abs(fit.n - n) < 0.01 and abs(fit.k / k - 1) < 0.05
    assert abs(fit.n - n) < 4 * fit.se["n"] + 1e-3


def test_hunt_crossley_damping_is_identified_when_excited():
    rng = np.random.default_rng(5)
    t = np.arange(4000) / 1000.0
    d = 1e-4 * (2.0 + np.sin(2 * np.pi * 3 * t) + 0.5 * np.sin(2 * np.pi * 11 * t)) / 3.5
    v = np.gradient(d, t)
    f = 2e8 * d ** 1.4 * (1 + 40.0 * v) + rng.normal(0, 0.02, d.size)
    fit = fit_power_law(d, f, v)
    assert fit.b_identifiable and abs(fit.b_prime_spm / 40.0 - 1) < 0.05 and abs(fit.n - 1.4) < 0.01
    assert fit.b_Nspm == pytest.approx(fit.k * fit.b_prime_spm)


def test_key_bottom_out_through_a_probe_tip():
    rec = synthetic.series_hunt_crossley()                # k 2.2e8 N/m^1.5, n 1.5, probe 2e5 N/m
    k, n, kp = rec.truth["k"], rec.truth["n"], rec.truth["k_probe_Npm"]
    fit = fit_contact(rec.t_s, rec.x_m, rec.f_N, law="hunt-crossley", probe_stiffness_Npm=kp)
    assert abs(fit.k_Npm / k - 1) < 0.05 and abs(fit.n / n - 1) < 0.05
    assert abs(fit.x_c_m - rec.x_c_m) < 1e-6
    model = fit.to_model()
    assert model.law == "hunt-crossley" and model.n == pytest.approx(fit.n)
    raw = fit_contact(rec.t_s, rec.x_m, rec.f_N, law="hunt-crossley")   # the probe's compliance left in
    assert abs(raw.n / n - 1) > 0.2


def test_linear_wall_behind_a_rig_spring():
    rec = synthetic.series_hunt_crossley(k=1e6, n=1.0, b_prime=0.0, k_probe=3e6, d_max_m=1e-4, full_scale_N=300.0)
    fit = fit_contact(rec.t_s, rec.x_m, rec.f_N, "gls", probe_stiffness_Npm=3e6)
    assert abs(fit.k_Npm / 1e6 - 1) < 0.01
    assert abs(fit.k_uncorrected_Npm / (1 / (1 / 1e6 + 1 / 3e6)) - 1) < 0.01   # the chain's stiffness
    assert mech.series_stiffness(fit.k_uncorrected_Npm, 3e6) == pytest.approx(fit.k_Npm, rel=0.01)  # eq. 3.4
