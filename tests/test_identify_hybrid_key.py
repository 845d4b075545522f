"""``identify hybrid-key`` against a hybrid-key target with known parameters drawn at random (seeded).

The target (world/piano_key.py) is the model's own physics behind the probe's stiff tip, probed at
10 kHz with the probe's sensor noise, quantisation and bias; every parameter the fit reports as identified
must be within 5 % of the truth or within 3 of its reported standard errors.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hapticam.cli import main
from hapticam.errors import IdentificationError
from hapticam.world.excitations import make_excitation
from hapticam.world.piano_key import KeyStrokes
from hapticam.world.probe import ProbeSpec, probe
from hapticam.world.targets import get_target
from hapticam.identify.hybrid_key.fit import identify_hybrid_key
from hapticam.identify.hybrid_key.static import static_estimates
from hapticam.models.files import load_model

RATE_HZ = 10_000.0


def draw_target(seed: int):
    """A hybrid-key target with parameters drawn around a grand action's (geometry kept valid)."""
    rng = np.random.default_rng(seed)
    u = rng.uniform
    r, x_l, x_r = u(4.0, 6.0), u(8.0e-3, 9.0e-3), u(3.0e-3, 5.0e-3)
    return get_target("hybrid-key", key_mass_kg=u(0.02, 0.05), return_spring_Npm=u(5.0, 20.0), preload_N=u(0.1, 0.3),
                      hammer_mass_kg=u(0.007, 0.013), lever_ratio=r, contact_b_Nspm=5e6 * u(1.5, 4.0),
                      let_off_m=x_l, repetition_m=x_r, check_drop_m=min(u(0.015, 0.022), 0.9 * r * (x_l - x_r)),
                      keybed_m=x_l + u(1.2e-3, 2.0e-3), string_height_m=r * x_l + u(2e-3, 4e-3),
                      string_restitution=u(0.3, 0.6), keybed_k_Npm=u(5e4, 2e5), keybed_b_Nspm=u(50.0, 150.0))


def captures_of(target, seed: int = 0) -> list:
    lo, hi = target.probe_range_m()
    x_l = target.let_off_m
    excitations = {"slow": make_excitation("triangle", lo, hi, 4.0), "strokes": KeyStrokes(lo, hi),
                   "bounce": make_excitation("sine", 0.45 * x_l, 0.55 * x_l, 1.0, frequency_hz=12.0),
                   "periodic": make_excitation("sweep", lo, hi, 4.0)}
    out = []
    for name, exc in excitations.items():
        cap = probe(target, exc, sample_rate_hz=RATE_HZ, seed=seed)
        out.append((name, cap.t_s, cap.x_m, cap.f_N, exc.metadata()["kind"]))
    return out


@pytest.fixture(scope="module")
def drawn():
    target = draw_target(12)
    caps = captures_of(target)
    fit = identify_hybrid_key(caps, probe_tip=(target.pad_Npm, target.pad_Nspm))
    return target, caps, fit


def test_static_estimates_match_the_closed_forms_of_a_slow_stroke(drawn):
    """The slow stroke's closed forms alone (k_r, the weight through the lever, the escapement geometry)."""
    target, caps, _ = drawn
    name, t, x, f, _ = caps[0]
    st = static_estimates(t, x, f)
    weight = target.lever_ratio * target.hammer_mass_kg * target.gravity_mps2     # r m_h g
    assert st.weight_through_lever_N == pytest.approx(weight, rel=0.02)
    assert st.let_off_m == pytest.approx(target.let_off_m, abs=20e-6)
    assert st.check_drop_m == pytest.approx(target.check_drop_m, rel=0.02)        # d_c = g t_f^2 / 2
    assert st.repetition_m == pytest.approx(target.repetition_m, rel=0.03)


def test_every_identified_parameter_is_within_5_percent_or_3_standard_errors(drawn):
    target, _, fit = drawn
    truth = {n: getattr(target, n) for n in ("return_spring_Npm", "hammer_mass_kg", "lever_ratio", "key_mass_kg",
                                             "let_off_m", "check_drop_m", "repetition_m", "keybed_m", "keybed_k_Npm",
                                             "keybed_b_Nspm", "string_height_m", "string_restitution")}
    truth["preload_N"] = target.preload_N + ProbeSpec().force_bias_N   # the sensor's bias adds to the preload
    truth["contact_b_Nspm"] = target.contact_b_Nspm
    assert {"contact_n", "gravity_mps2", "contact_k_Npm"} <= set(fit.fixed)
    identified = [n for n in truth if n not in fit.fixed]
    assert len(identified) >= 11
    for name in identified:
        value, se = fit.values[name], fit.std_errors[name]
        assert math.isfinite(se) and se > 0, name
        assert abs(value - truth[name]) <= max(0.05 * abs(truth[name]), 3.0 * se), (name, value, truth[name], se)


@pytest.mark.parametrize("tip", [(1.0e6, 100.0), (1.0e5, 10.0)])
def test_a_compliant_tip_leaves_every_identified_parameter_within_5_percent_or_3_standard_errors(tip):
    """The same key behind a tip 10 and 100 times softer: the key rings on it after let-off and the hammer's
    bounces come later than the model's. The key mass is read only from the first flight after each let-off,
    whose end the string fit pins (it read every simulated flight and gave 0.0815 and 0.115 kg for 0.0254),
    with the force filtered as the acceleration is."""
    from dataclasses import replace

    target = replace(draw_target(12), pad_Npm=tip[0], pad_Nspm=tip[1])
    fit = identify_hybrid_key(captures_of(target), probe_tip=tip)
    assert "key_mass_kg" not in fit.fixed
    truth = {n: getattr(target, n) for n in ("return_spring_Npm", "hammer_mass_kg", "lever_ratio", "key_mass_kg",
                                             "let_off_m", "check_drop_m", "repetition_m", "keybed_m", "keybed_k_Npm",
                                             "keybed_b_Nspm", "string_height_m")}
    truth["preload_N"] = target.preload_N + ProbeSpec().force_bias_N
    for name in (n for n in truth if n not in fit.fixed):
        value, se = fit.values[name], fit.std_errors[name]
        assert abs(value - truth[name]) <= max(0.05 * abs(truth[name]), 3.0 * se), (name, value, truth[name], se)
    assert fit.values["key_mass_kg"] == pytest.approx(target.key_mass_kg, rel=0.05)


def test_a_capture_the_model_reproduces_poorly_is_named_in_the_notes(drawn):
    """The oscillation below let-off, whose bounces the kinematic key does not follow, fits far below 75 %:
    the notes (and so the model file's provenance, and the demo) name it, not only the CLI's warning."""
    _, _, fit = drawn
    from hapticam.identify.hybrid_key.fit import POOR_FIT_PERCENT

    poor = [name for name, pct in fit.fit_percent.items() if pct < POOR_FIT_PERCENT]
    assert poor
    for name in poor:
        assert any(n.startswith(f"{name}: the model reproduces this capture at") for n in fit.notes)


def test_identify_cli_writes_the_model_with_its_uncertainty(tmp_path, capsys):
    from hapticam.capture_io import save_capture
    from hapticam.capture import Capture

    target = get_target("hybrid-key")
    paths = []
    for name, t, x, f, kind in captures_of(target)[:2]:
        path = tmp_path / f"{name}.npz"
        save_capture(path, Capture.from_arrays(t, x, f, metadata={"excitation": {"kind": kind}}))
        paths.append(str(path))
    out = tmp_path / "key.yaml"
    assert main(["identify", "hybrid-key", *paths, "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    model, doc = load_model(out)
    assert model.kind == "hybrid-key" and model.coupling_k_Npm == pytest.approx(summary["coupling"]["k_Npm"])
    assert doc.uncertainty["lever_ratio"] > 0 and "contact_k_Npm" in summary["fixed"]
    assert model.lever_ratio == pytest.approx(target.lever_ratio, rel=0.05)


@pytest.mark.parametrize("argv, message", [
    (["identify", "hybrid-key", "nope.npz", "-o", "k.yaml"], "nope.npz"),
    (["identify", "hybrid-key", "x.npz", "-o", "k.txt"], "-o k.txt"),
    (["identify", "hybrid-key", "x.npz", "-o", "k.yaml", "--probe-stiffness", "-3"], "--probe-stiffness"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_slow_stroke_alone_keeps_the_key_mass_at_its_prior_and_says_so(drawn):
    """A slow press has no acceleration to tell the key's mass by (it fitted -0.0085 +- 0.0015 kg before)."""
    target, caps, _fit = drawn
    from hapticam.identify.hybrid_key.fit import PRIORS

    fit = identify_hybrid_key([c for c in caps if c[0] == "slow"])
    assert fit.values["key_mass_kg"] == PRIORS["key_mass_kg"] and "key_mass_kg" in fit.fixed
    assert "key_mass_kg" not in fit.std_errors


def test_slow_strokes_that_miss_let_off_or_the_keybed_are_named_in_either_order(drawn):
    target, caps, _fit = drawn
    slow = next(c for c in caps if c[0] == "slow")
    lo, hi = target.probe_range_m()
    for name, depth, message in (("shallow", 0.5 * target.let_off_m, "no let-off found"),
                                 ("no-keybed", 0.5 * (target.let_off_m + target.keybed_m), "without pressing into")):
        cap = probe(target, make_excitation("triangle", lo, lo + depth, 4.0), sample_rate_hz=RATE_HZ, seed=1)
        short = (name, cap.t_s, cap.x_m, cap.f_N, "triangle")
        for order in ([short, slow], [slow, short]):
            with pytest.raises(IdentificationError, match=f"{name}: slow stroke: .*{message}"):
                identify_hybrid_key(order)


def test_the_same_capture_twice_is_refused(tmp_path, capsys):
    from hapticam.capture_io import save_capture
    from hapticam.capture import Capture

    name, t, x, f, kind = captures_of(get_target("hybrid-key"))[0]
    path = tmp_path / "slow.npz"
    save_capture(path, Capture.from_arrays(t, x, f, metadata={"excitation": {"kind": kind}}))
    assert main(["identify", "hybrid-key", str(path), str(tmp_path / "." / "slow.npz"), "-o",
                 str(tmp_path / "k.yaml")]) == 2
    assert "given twice" in capsys.readouterr().err and not (tmp_path / "k.yaml").exists()


def test_bench_peer_solve_ivp_simulates_the_same_key():
    """The bench's plain-scipy peer (solve_ivp with events) and the compiled kernel give the same low-passed
    force through let-off, so the bench times the same computation."""
    from hapticam.commands.bench.hybrid_key import TRUTH, peer_force, synthetic_captures
    from hapticam.identify.hybrid_key.params import from_model
    from hapticam.identify.hybrid_key.static import smooth
    from hapticam.models.hybrid_key.model import HybridKey

    _, t, x, _, _ = synthetic_captures()[0]
    sel = (t >= 1.2) & (t < 2.2)                            # 6 mm to the keybed: let-off, flight, landing
    ts, xs = t[sel] - t[sel][0], x[sel]
    key = HybridKey(**TRUTH)
    ours = smooth(key.simulate(xs, 1e-4).force_N, 1e-4, 20.0)
    peer = smooth(peer_force(from_model(key), ts, xs), 1e-4, 20.0)
    assert np.max(np.abs(ours - peer)[500:-500]) < 0.01 * np.ptp(ours)


def test_verify_of_the_identified_model_on_a_held_out_press_fits_95_percent():
    """The grand action's key identified from its four captures, coupled to the simulated device's handle
    for 1 kHz, replayed through the servo loop along a held-out slow press and release (another seed, the
    probe's default 4 kHz) by ``hapticam verify``'s comparison: fit >= 95 % (seed 003 eq. 53), passive.
    (The fit's shortfall is the backcheck landing: a spike of tens of newtons for a tenth of a
    millisecond through the probe's stiff tip, which the coupled key renders as a smooth bump; drawn
    targets whose held-out samples land on the spike's peak fit 83-98 %.)"""
    from hapticam.identify.hybrid_key.params import to_model
    from hapticam.models.hybrid_key.model import coupling_for_device
    from hapticam.render.verify import verify

    target = get_target("hybrid-key")
    fit = identify_hybrid_key(captures_of(target), probe_tip=(target.pad_Npm, target.pad_Nspm))
    v = fit.values
    model = to_model(v, coupling_for_device(2.0, 1000.0, v["key_mass_kg"] + v["lever_ratio"] ** 2 * v["hammer_mass_kg"]))
    lo, hi = target.probe_range_m()
    held_out = probe(target, make_excitation("triangle", lo, hi, 4.0), seed=7)
    check = verify(model, held_out)
    assert check.fit_percent >= 95.0 and check.passive


def test_a_string_the_landing_times_do_not_pin_is_kept_out_of_reach_and_the_key_mass_holds():
    """The piano action probed as the demo probes it (seed 3): its strokes' landings give a string height of
    43.8 +- 26.9 mm, which, kept in reach, stood in the hammer's flights the key's mass is read over and
    halved it (30 g for the action's 60 g). Unidentified, the string is kept out of reach."""
    from hapticam.demos.camera_hybrid import _excitations

    target = get_target("piano-key")
    caps = []
    for name, exc in _excitations(target):
        if name != "tap":
            cap = probe(target, exc, sample_rate_hz=RATE_HZ, seed=3)
            caps.append((name, cap.t_s, cap.x_m, cap.f_N, exc.metadata()["kind"]))
    fit = identify_hybrid_key(caps, probe_tip=(target.pad_Npm, 0.0), key_on_tip=True)
    assert fit.fixed["string_height_m"].startswith("not identified by the landing times")
    reach = target.ratio * (target.pretravel_m + target.dip_m)          # the hammer at the keybed
    assert fit.values["string_height_m"] > reach                          # the string out of reach
    assert fit.values["key_mass_kg"] == pytest.approx(target.key_mass_kg, rel=0.05)
