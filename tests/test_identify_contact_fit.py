"""``fit_contact``: onset and datum, orientation, sides, the model it writes, its errors, the convergence
figure and the seed 004 reproduction."""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import IdentificationError
from hapticam.identify.contact import synthetic
from hapticam.identify.contact.fit import ContactSettings, fit_contact
from hapticam.identify.contact.onset import datum_effect, detect_onset, normal_displacement
from hapticam.identify.contact.plot import convergence_figure
from hapticam.commands.reproduce.contact import EXPERIMENTS
from hapticam.models.contact import Contact, contact_force


@pytest.fixture(scope="module")
def steps() -> synthetic.SyntheticRecord:
    return synthetic.quasi_static_steps(levels=3)


def test_onset_is_the_force_spike_and_the_fitted_datum_is_exact():
    rec = synthetic.quasi_static_steps(levels=3, noise=False)
    on = detect_onset(rec.f_N)
    first = int(np.argmax(rec.f_true_N > 0))
    assert first <= on.index and rec.f_N[on.index] > on.threshold_N >= rec.f_N[on.index - 1]
    assert on.threshold_N == pytest.approx(1e-3 * rec.f_N.max())   # noise-free: 0.1 % of the range
    eff = datum_effect(rec.x_m, rec.v_mps, rec.f_N, on)
    assert abs(eff.x_fit_m - rec.x_c_m) < 1e-10
    assert eff.x_spike_m > rec.x_c_m and eff.k_spike_Npm > eff.k_fit_Npm      # a late datum overstates k
    predicted = eff.dk_dx0_Npm2 * (eff.x_spike_m - eff.x_fit_m) / eff.k_fit_Npm
    assert eff.relative_change == pytest.approx(predicted, rel=0.2)           # first order in the datum error
    ks = [row[2] for row in eff.shifts]
    assert ks == sorted(ks)                                                   # later datum, stiffer estimate


def test_spike_datum_versus_fitted_datum_in_fit_contact(steps):
    fitted = fit_contact(steps.t_s, steps.x_m, steps.f_N)
    spike = fit_contact(steps.t_s, steps.x_m, steps.f_N, settings=ContactSettings(datum="spike"))
    assert abs(fitted.k_Npm / 1e6 - 1) < 1e-3
    assert spike.k_Npm > fitted.k_Npm and spike.x_c_m == pytest.approx(fitted.datum.x_spike_m)
    assert fitted.datum.relative_change == pytest.approx(spike.datum.relative_change)


def test_orientation_correction_follows_the_contact_point():
    n = 5
    tilt = np.radians(np.linspace(0, 4, n))
    R = np.zeros((n, 3, 3))
    R[:, 0, 0] = R[:, 2, 2] = np.cos(tilt)
    R[:, 0, 2], R[:, 2, 0] = np.sin(tilt), -np.sin(tilt)
    tip = np.array([0.0, 0.0, -0.1])                  # contact point 10 cm below the tool origin
    origin = np.zeros((n, 3))
    normal = np.array([0.0, 0.0, -1.0])               # the wall is below: pressing moves -z
    d = normal_displacement(origin, normal, rotation=R, tip_offset_m=tip)
    assert np.allclose(d, 0.1 * np.cos(tilt))         # the tilted tool lifts its tip: penetration drops
    assert np.allclose(normal_displacement(origin, normal), 0.0)
    with pytest.raises(IdentificationError, match="tip_offset_m"):
        normal_displacement(origin, normal, rotation=R)


def test_mirrored_record_gives_the_same_wall_on_the_other_side(steps):
    up = fit_contact(steps.t_s, steps.x_m, steps.f_N)
    down = fit_contact(steps.t_s, -steps.x_m, -steps.f_N, side=-1)
    assert down.k_Npm == pytest.approx(up.k_Npm, rel=1e-9)
    m = down.to_model()
    assert m.side == -1 and m.x_c_m == pytest.approx(-up.x_c_m, abs=1e-12)


def test_model_written_is_the_hapticam_contact_model():
    rec = synthetic.persistent_excitation(duration_s=2.0)
    fit = fit_contact(rec.t_s, rec.x_m, rec.f_N, "oem")
    model = fit.to_model()
    assert isinstance(model, Contact) and model.law == "linear"
    assert model.b_Nspm == pytest.approx(fit.b_Nspm) and fit.b_identifiable
    p = model.params_block()
    x = rec.x_c_m + 1e-4
    assert contact_force(p, np.zeros(0), x, 0.01, 0.0, 1e-3) == pytest.approx(1e6 * 1e-4 + 200 * 0.01, rel=1e-3)
    assert np.isfinite(fit.k_se) and fit.k_se > 0 and "oem" in fit.table()


@pytest.mark.parametrize("change,match", [
    (dict(estimator="lms"), "estimator"),
    (dict(law="hertz"), "law"),
    (dict(law="hunt-crossley", estimator="rls"), "linear law"),
    (dict(side=0), "side"),
    (dict(probe_stiffness_Npm=-1.0), "probe_stiffness_Npm"),
    (dict(settings=ContactSettings(datum="guess")), "datum"),
])
def test_bad_arguments_are_one_clear_error(steps, change, match):
    kw = dict(estimator="gls")
    kw.update(change)
    with pytest.raises(IdentificationError, match=match):
        fit_contact(steps.t_s, steps.x_m, steps.f_N, **kw)


def test_bad_records_are_one_clear_error(steps):
    x = steps.x_m.copy()
    x[100] = np.nan
    with pytest.raises(IdentificationError, match="NaN"):
        fit_contact(steps.t_s, x, steps.f_N)
    t = steps.t_s.copy()
    t[50:] += 0.01
    with pytest.raises(IdentificationError, match="uniform"):
        fit_contact(t, steps.x_m, steps.f_N)
    with pytest.raises(IdentificationError, match="no contact"):
        fit_contact(steps.t_s, steps.x_m, np.zeros_like(steps.f_N))
    with pytest.raises(IdentificationError, match="samples"):
        fit_contact(steps.t_s, steps.x_m, steps.f_N[:-1])


def test_convergence_figure_is_a_png(tmp_path, steps):
    fit = fit_contact(steps.t_s, steps.x_m, steps.f_N, "all")
    path = convergence_figure(fit, tmp_path / "conv.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(IdentificationError, match="does not exist"):
        convergence_figure(fit, tmp_path / "nowhere" / "conv.png")


def test_reproduction_quick(tmp_path):
    exp = EXPERIMENTS["seed004-contact"]
    res = exp.run(tmp_path, True)
    rows = {r[0]: r for r in res.rows}
    assert rows["b0 = 2 zeta sqrt(k m)"][1] == "38.37"
    assert rows["OEM Newton-Raphson iterations"][1] == "1"
    assert rows["steps: damping verdict"][1] == "not identifiable"
    assert rows["excited: damping verdict"][1] == "identified"
    assert all(len(r) == 4 and all(isinstance(c, str) for c in r) for r in res.rows)
    assert len(res.figures) == 3 and all(p.exists() and p.parent == tmp_path for p in res.figures)
