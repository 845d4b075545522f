"""End stops, composites, the passivity report, and the bundled keyswitch examples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hapticam.errors import ModelValidationError
from hapticam.models.base import model_from_dict
from hapticam.models.composite import Composite, EndStops, end_stops_force
from hapticam.models.contact import Contact
from hapticam.models.files import example_names, load_model
from hapticam.models.friction import Friction
from hapticam.models.impedance import ImpedanceTable, SegmentedImpedance, position_table
from hapticam.models.kernels import model_force
from hapticam.models.passivity import PassivityReport, check_passivity


def reference_end_stops(x_min, x_max, k, b, x, v) -> float:
    if x > x_max:
        return max(0.0, k * (x - x_max) + b * v)
    if x < x_min:
        return -max(0.0, k * (x_min - x) - b * v)
    return 0.0


def test_end_stops_kernel_matches_reference_and_never_pulls() -> None:
    rng = np.random.default_rng(41)
    es = EndStops(-1e-3, 4e-3, 3e3, 5.0)
    p, s = es.params_block(), es.initial_state()
    x = rng.uniform(-3e-3, 6e-3, 3000)
    v = rng.normal(0, 0.5, 3000)
    got = np.array([end_stops_force(p, s, xi, vi, 0.0, 1e-3) for xi, vi in zip(x, v)])
    want = np.array([reference_end_stops(-1e-3, 4e-3, 3e3, 5.0, xi, vi) for xi, vi in zip(x, v)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert np.all(got[x > 4e-3] >= 0) and np.all(got[x < -1e-3] <= 0)
    assert np.any((x > 4e-3) & (got == 0)) and np.any((x < -1e-3) & (got == 0))  # clamp exercised
    assert not got[(x >= -1e-3) & (x <= 4e-3)].any()


@pytest.mark.parametrize("kwargs, match", [
    (dict(x_max_m=-1e-3), "x_max_m: must be > x_min_m"),
    (dict(k_Npm=-1.0), "k_Npm: must be >= 0"),
    (dict(b_Nspm=-1.0), "b_Nspm: must be >= 0"),
    (dict(x_min_m=float("nan")), "x_min_m: must be finite"),
    (dict(k_Npm="stiff"), "k_Npm: expected a number"),
])
def test_end_stops_validation(kwargs, match) -> None:
    base = dict(x_min_m=0.0, x_max_m=4e-3, k_Npm=1e3, b_Nspm=1.0)
    base.update(kwargs)
    with pytest.raises(ModelValidationError, match=match):
        EndStops.from_dict(base)


def _parts():
    table = position_table([0.0, 2e-3, 4e-3], [0.3, 0.45, 0.6], [0.25, 0.4, 0.58])
    fric = Friction("lugre", sigma0_Npm=1e4, sigma1_Nspm=1.0, sigma2_Nspm=0.05, Fc_N=0.02, Fs_N=0.03, vs_mps=0.01)
    bottom = Contact("hunt-crossley", 3.8e-3, 1e6, 3e5, 1.5)
    stops = EndStops(-2e-3, 4.2e-3, 2e3, 1.0)
    return table, fric, bottom, stops


def test_composite_force_is_the_sum_of_its_components() -> None:
    parts = _parts()
    comp = Composite([Composite(list(parts[:2])), Composite([parts[2]]), parts[3]])  # nested, flattened
    assert [c.kind for c in comp.components()] == ["segmented-impedance", "friction", "contact", "end-stops"]
    compiled = comp.compile()
    s = compiled.reset_state()
    singles = [(c, c.compile()) for c in parts]
    states = [cm.reset_state() for _, cm in singles]
    rng = np.random.default_rng(42)
    t = np.arange(2000) * 1e-3
    xs = 2.1e-3 + 2.4e-3 * np.sin(2 * np.pi * 1.5 * t) + rng.normal(0, 1e-5, t.size)
    vs = np.gradient(xs, 1e-3)
    for x, v in zip(xs, vs):
        want = sum(model_force(cm.params, st, x, v, 0.0, 1e-3) for (_, cm), st in zip(singles, states))
        assert model_force(compiled.params, s, x, v, 0.0, 1e-3) == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert s[1] == states[1][0]  # the LuGre bristle state evolved identically inside the composite


def test_composite_round_trip_and_errors() -> None:
    comp = Composite(list(_parts()))
    again = model_from_dict("composite", comp.to_dict())
    assert again == comp
    np.testing.assert_array_equal(again.compile().params, comp.compile().params)
    with pytest.raises(ModelValidationError, match="at least one component"):
        Composite([])
    with pytest.raises(ModelValidationError, match="at least one component"):
        Composite.from_dict({"components": []})
    with pytest.raises(ModelValidationError, match=r"components\[1\]: expected a model"):
        Composite([_parts()[0], "spring"])  # type: ignore[list-item]
    bad = comp.to_dict()
    bad["components"][2]["parameters"]["n"] = 0.0
    with pytest.raises(ModelValidationError, match=r"components\[2\]\.n: must be > 0"):
        Composite.from_dict(bad)
    bad = comp.to_dict()
    bad["components"][0]["kind"] = "spring"
    with pytest.raises(ModelValidationError, match=r"components\[0\]\.kind: unknown model kind 'spring'"):
        Composite.from_dict(bad)
    with pytest.raises(ModelValidationError, match=r"components\[0\]: unknown field 'params'"):
        Composite.from_dict({"components": [{"kind": "end-stops", "parameters": {}, "params": {}}]})


# -- passivity ---------------------------------------------------------------------------------------
def test_hysteretic_table_is_passive_and_cycle_energy_matches() -> None:
    x = np.linspace(0.0, 4e-3, 9)
    model = position_table(x, 0.3 + 75 * x, 0.25 + 75 * x)
    rep = check_passivity(model)
    assert rep.passive and not rep.issues and not rep.active_ranges_m
    assert rep.cycle_energy_J == pytest.approx(0.05 * 4e-3, rel=1e-9)  # 50 mN of hysteresis over 4 mm
    assert rep.x_range_m == (0.0, 4e-3)


def test_active_table_is_flagged_with_its_range() -> None:
    x = np.linspace(0.0, 4e-3, 41)
    f_press = 0.3 + 75 * x
    f_release = f_press - 0.05
    f_release[(x >= 1e-3) & (x <= 2e-3)] += 0.08  # releasing 30 mN above pressing on 1..2 mm
    rep = check_passivity(position_table(x, f_press, f_release))
    assert not rep.passive
    assert len(rep.active_ranges_m) == 1
    lo, hi = rep.active_ranges_m[0]
    # the linear ramps cross zero 5/8 of the way into the 0.1 mm segments on both sides
    assert lo == pytest.approx(0.9e-3 + 0.0625e-3, abs=5e-7)
    assert hi == pytest.approx(2.1e-3 - 0.0625e-3, abs=5e-7)
    assert any("releasing static force exceeds pressing" in s and "by up to 0.03" in s for s in rep.issues)
    assert "issue: releasing static force exceeds" in str(rep)


def test_active_constant_table_uses_k_x_plus_f0() -> None:
    bp = [0.0, 2e-3, 4e-3]
    press = ImpedanceTable(bp, [0, 0], [0, 0], [100.0, 100.0], [0.3, 0.3])
    release = ImpedanceTable(bp, [0, 0], [0, 0], [50.0, 150.0], [0.3, 0.2])  # above pressing where 50 x - 0.1 > 0
    rep = check_passivity(SegmentedImpedance(press, release))
    assert not rep.passive
    # 50 x - 0.1 keeps rising past the table's end, and -50 x below its start (the end segments continue)
    (lo, hi), (below, zero) = rep.active_ranges_m
    assert lo == pytest.approx(2e-3, abs=1e-6) and hi == np.inf
    assert below == -np.inf and zero == 0.0
    # W = int_0^2mm 50 x dx + int_2mm^4mm (0.1 - 50 x) dx = 1e-4 - 1e-4 = 0: exact despite the jump at 2 mm
    assert abs(rep.cycle_energy_J) < 1e-12


@pytest.mark.parametrize("side", ["beyond", "below"])
def test_a_table_whose_end_lines_cross_outside_it_is_active_there(side: str) -> None:
    """The kernel continues the end segments past the table (k x + F0): press 100 x, release 200 x - 1 on
    0..10 mm is passive inside but releases above pressing past 10 mm (it passed, and rendered between 12
    and 28 mm it gave the hand 47 mJ over three cycles); mirrored, below 0."""
    if side == "beyond":
        press = ImpedanceTable([0.0, 0.01], [0.0], [0.0], [100.0], [0.0])
        release = ImpedanceTable([0.0, 0.01], [0.0], [0.0], [200.0], [-1.0])
    else:                                                   # release - press = -100 x: rises below 0
        press = ImpedanceTable([0.0, 0.01], [0.0], [0.0], [200.0], [0.0])
        release = ImpedanceTable([0.0, 0.01], [0.0], [0.0], [100.0], [0.0])
    rep = check_passivity(SegmentedImpedance(press, release))
    assert not rep.passive
    (lo, hi), = rep.active_ranges_m
    if side == "beyond":
        assert lo == pytest.approx(0.01, abs=1e-9) and hi == np.inf
    else:
        assert lo == -np.inf and hi == pytest.approx(0.0, abs=1e-9)
    assert any(f"{side} the table the end segments' lines continue" in s for s in rep.issues)
    # the line itself, closed form: release - press at 1 m out
    x_out = 1.01 if side == "beyond" else -1.0
    m = SegmentedImpedance(press, release)
    assert m.static_force(x_out, -1) - m.static_force(x_out, 1) > 0


def test_negative_damping_and_mass_are_flagged() -> None:
    bp = [0.0, 1e-3, 2e-3, 3e-3]
    press = ImpedanceTable(bp, [0.01, 0.01, 0.01], [0.1, -0.2, 0.1], [0, 0, 0], [0.3, 0.3, 0.3])
    release = ImpedanceTable(bp, [0.01, 0.01, -0.005], [0.1, 0.1, 0.1], [0, 0, 0], [0.2, 0.2, 0.2])
    rep = check_passivity(SegmentedImpedance(press, release))
    assert not rep.passive
    assert len(rep.negative_damping_ranges_m) == 1
    d, lo, hi = rep.negative_damping_ranges_m[0]
    assert d == 1 and lo == pytest.approx(1e-3) and hi == pytest.approx(2e-3, abs=1e-6)
    (d, lo, hi), = rep.negative_mass_ranges_m
    assert d == -1 and lo == pytest.approx(2e-3) and hi == pytest.approx(3e-3)
    assert any("negative damping b while pressing" in s for s in rep.issues)
    assert any("negative mass m while releasing" in s for s in rep.issues)


def test_friction_and_contact_notes() -> None:
    parts = list(_parts())
    rep = check_passivity(Composite(parts))
    assert rep.passive
    text = str(rep)
    assert text.splitlines()[0] == "passive: yes"
    assert "hunt-crossley contact at 3.800 mm: passive by construction" in text
    assert "lugre friction: passivity not guaranteed" in text  # sigma2 = 0.05 < sigma1 (Fs - Fc) / Fc = 0.5
    ok = Friction("lugre", sigma0_Npm=1e4, sigma1_Nspm=1.0, sigma2_Nspm=0.5, Fc_N=0.02, Fs_N=0.03, vs_mps=0.01)
    assert "lugre friction: passive (sigma2 >= sigma1" in str(check_passivity(ok))
    # Stribeck with mu_s far below mu_d: the second term of seed 003 eq. 5 outweighs the first near v = sqrt(3) v_t
    active = Friction("stribeck", mu_d=0.1, mu_s=0.0, mu_v_Nspm=0.0, v_t_mps=0.01, F_nt_N=1.0, F_n_N=1.0)
    rep = check_passivity(active)
    assert not rep.passive and "stribeck friction opposes dissipation" in rep.issues[0]
    assert isinstance(rep, PassivityReport)


# -- bundled examples --------------------------------------------------------------------------------
@pytest.mark.parametrize("alias, real", [("linear-key", "cherry-mx-red"), ("tactile-key", "gateron-brown"),
                                         ("clicky-key", "kailh-box-jade")])
def test_the_short_example_names_are_the_real_keys(alias: str, real: str) -> None:
    model, doc = load_model(f"example:{alias}")
    assert model.to_dict() == load_model(f"example:{real}")[0].to_dict()
    assert check_passivity(model).passive and doc.provenance["method"] != "hand-authored"
    assert f"example:{alias}" in [f"example:{n}" for n in example_names()]


@pytest.mark.parametrize("name", ["linear-key", "tactile-key"])
def test_hand_written_keys_load_are_passive_and_keyswitch_like(name: str) -> None:
    model, doc = load_model(Path(__file__).parent / "data" / "models" / f"hand-{name}.yaml")
    assert isinstance(model, Composite)
    assert check_passivity(model).passive
    kinds = [c.kind for c in model.components()]
    assert "segmented-impedance" in kinds and "contact" in kinds and "end-stops" in kinds
    assert doc.provenance["method"] == "hand-authored"
    imp = next(c for c in model.components() if isinstance(c, SegmentedImpedance))
    press = lambda x: float(imp.static_force(np.asarray(x), 1))  # noqa: E731
    gf = 9.80665e-3
    assert 0.25 <= press(0.2e-3) <= 0.6  # preload
    assert 0.45 <= press(3.8e-3) <= 0.7  # near bottom-out
    # bottom-out: force rises steeply past the contact wall
    assert model.force(4.05e-3, 0.05) > model.force(3.7e-3, 0.05) + 0.5
    x = np.linspace(0.2e-3, 3.8e-3, 361)
    f = imp.static_force(x, 1)
    if name == "linear-key":
        assert 45 * gf <= press(2e-3) <= 60 * gf
        assert np.all(np.diff(f) > 0)  # monotonic: no bump
    else:
        peak = int(np.argmax(f[x < 2e-3]))
        assert 0.8e-3 <= x[peak] <= 1.6e-3  # tactile bump
        drop = f[peak] - f[(x > x[peak]) & (x < 2.6e-3)].min()
        assert drop > 0.08  # then a drop of the order of 100 mN
        assert "friction" in kinds
