"""Identifying event-based transients (identify/transients.py): known pulses added to a hybrid key's force are
recovered; a capture too coarse for its spikes yields a note and no transient; on the simulated piano action
(world/piano_key.py, probed as the demo probes it) the pulses identified on one slow press carry the impulse
of a held-out press's landing spike; ``identify hybrid-key`` writes them into the model file."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.ndimage import median_filter

from hapticam.capture_io import save_capture
from hapticam.cli import main
from hapticam.world.excitations import make_excitation
from hapticam.world.piano_key import KeyStrokes
from hapticam.world.probe import probe
from hapticam.world.targets import get_target
from hapticam.identify.hybrid_key.fit import identify_hybrid_key
from hapticam.identify.hybrid_key.params import friction_width, to_model, with_extras
from hapticam.identify.transients import identify_transients, replay
from hapticam.models.contact import Contact
from hapticam.models.files import load_model
from hapticam.models.hybrid_key.model import EV_LANDING, HybridKey, coupling_for_device
from hapticam.models.transients import Transient

NOISE_N = 0.002


def synthetic_capture(truth: Transient, rate_hz: float, seed: int = 0):
    """Strokes of the bundled piano key at ``rate_hz``: the model's own force (its kernel along the motion)
    plus ``truth``'s pulse at each of its landings and the force sensor's noise."""
    model = load_model("example:piano-key")[0]
    strokes = KeyStrokes(0.0, 0.0103, press_s=(0.1, 0.05), hold_s=0.25, release_s=0.15, rest_s=0.15)
    t = np.arange(0.0, strokes.duration_s, 1.0 / rate_hz)
    x = strokes.position(t)
    trace = model.simulate(x, 1.0 / rate_hz)
    f = trace.force_N.copy()
    for te, code, v in zip(trace.event_time_s, trace.event_code, trace.event_speed_mps):
        if code == EV_LANDING:
            lag = t - te
            on = lag >= 0.0
            f[on] += (truth.gain_N_per_mps * abs(v) * np.exp(-lag[on] / truth.decay_s)
                      * np.sin(2.0 * math.pi * truth.frequency_hz * lag[on]))
    f += np.random.default_rng(seed).normal(0.0, NOISE_N, f.size)
    return model, ("strokes", t, x, f, None)


@pytest.mark.parametrize("rate_hz, tolerance", [(10_000.0, 0.02), (4_000.0, 0.03)])
def test_known_pulses_are_recovered(rate_hz: float, tolerance: float) -> None:
    truth = Transient("landing", 25.0, 120.0, 0.003)
    model, capture = synthetic_capture(truth, rate_hz)
    transients, notes = identify_transients(model, [capture])
    found = {t.event: t for t in transients}
    assert set(found) == {"landing"}                     # the strings got no pulse, and none is invented
    landing = found["landing"]
    assert landing.gain_N_per_mps == pytest.approx(truth.gain_N_per_mps, rel=tolerance)
    assert landing.frequency_hz == pytest.approx(truth.frequency_hz, rel=tolerance)
    assert landing.decay_s == pytest.approx(truth.decay_s, rel=tolerance)
    assert landing.samples >= 5 and landing.gain_sd is not None and landing.gain_sd < 0.05 * landing.gain_N_per_mps
    assert any("landing" in note for note in notes)


def test_a_capture_too_coarse_for_its_spikes_says_so_and_gives_no_transient() -> None:
    truth = Transient("landing", 25.0, 600.0, 5e-4)      # a spike under a millisecond
    model, capture = synthetic_capture(truth, 2_000.0)
    transients, notes = identify_transients(model, [capture])
    assert transients == ()
    coarse = [note for note in notes if "2000 Hz" in note and "resolve" in note]
    assert coarse, notes
    fine_model, fine = synthetic_capture(truth, 10_000.0)  # the same spikes sampled finely are resolved
    assert [t.event for t in identify_transients(fine_model, [fine])[0]] == ["landing"]


def test_a_model_without_impacts_gets_none() -> None:
    _model, capture = synthetic_capture(Transient("landing", 25.0, 120.0, 0.003), 4_000.0)
    transients, notes = identify_transients(Contact("linear", x_c_m=0.005, k_Npm=500.0), [capture])
    assert transients == () and len(notes) == 1


# -- the piano action ------------------------------------------------------------------------------------
def slow_press(target, seed: int, duration_s: float, rate_hz: float):
    lo, hi = target.probe_range_m()
    excitation = make_excitation("triangle", lo, hi, duration_s)
    return probe(target, excitation, sample_rate_hz=rate_hz, seed=seed)


def rendered_model(fit):
    """The identified key as the demo writes it: coupled to the simulated device's handle at 1 kHz, with
    what the captures showed beside it."""
    v = fit.values
    kc, bc = coupling_for_device(2.0, 1000.0, v["key_mass_kg"] + v["lever_ratio"] ** 2 * v["hammer_mass_kg"])
    return with_extras(to_model(v, (kc, bc)), fit.extra, friction_width(fit.extra.get("friction_N", 0.0), 0.05, 1000.0))


@pytest.fixture(scope="module")
def piano():
    target = get_target("piano-key")
    training = slow_press(target, seed=3, duration_s=3.0, rate_hz=10_000.0)
    held_out = slow_press(target, seed=4, duration_s=4.0, rate_hz=4_000.0)   # as the demo holds one out
    capture = ("slow", training.t_s, training.x_m, training.f_N, "triangle")
    model = rendered_model(identify_hybrid_key([capture]))
    transients, notes = identify_transients(model, [capture])
    return training, held_out, model, transients, notes


def test_piano_landing_pulse_carries_the_held_out_spikes_impulse(piano) -> None:
    """The held-out press's landing spike: the capture minus the model above its running median over 20 ms
    (verify's local baseline), integrated over the spike; the pulses the transient gives the model's landings
    there, integrated over the same span."""
    _training, held_out, model, transients, _notes = piano
    landing = {t.event: t for t in transients}["landing"]
    key = next(c for c in model.components() if isinstance(c, HybridKey))
    rep = replay(model, key, "held-out", held_out.t_s, held_out.x_m, held_out.f_N)
    residual = rep.f_N - rep.model_N                      # what the model's own force leaves at the landing
    half = int(round(0.01 / rep.dt_s))
    excess = residual - median_filter(residual, size=2 * half + 1, mode="nearest")
    peak = int(np.argmax(rep.f_N))
    assert rep.f_N[peak] > 5.0                            # the hammer's landing in its backcheck after let-off
    above = excess > 0.05                                 # the spike: the run above the baseline around its peak
    start, stop = peak, peak
    while above[start - 1]:
        start -= 1
    while above[stop + 1]:
        stop += 1
    span = slice(start - 1, stop + 2)
    t_span = rep.t_s[span]
    captured = float(np.trapezoid(np.clip(excess[span], 0.0, None), t_span))
    near = (rep.event_code == EV_LANDING) & (np.abs(rep.event_s - rep.t_s[start]) < 0.01)
    assert near.any()
    pulses = sum(np.array([landing.force_N(t - t_event, v) for t in t_span])
                 for t_event, v in zip(rep.event_s[near] - rep.event_s[near].min() + rep.t_s[start - 1],
                                       rep.event_speed_mps[near]))
    assert float(np.trapezoid(pulses, t_span)) == pytest.approx(captured, rel=0.15)
    # the pulse, a few milliseconds long, has the spike's length: a half period about as long
    assert 1.0 / (2.0 * landing.frequency_hz) == pytest.approx(t_span[-1] - t_span[0], rel=0.5)


def test_identify_hybrid_key_writes_the_transients(piano, tmp_path: Path, capsys) -> None:
    training = piano[0]
    save_capture(tmp_path / "slow.csv", training)
    out = tmp_path / "key.yaml"
    assert main(["identify", "hybrid-key", str(tmp_path / "slow.csv"), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    model, doc = load_model(out)
    assert [t.event for t in model.transients] == ["landing"]
    assert model.transients[0].samples >= 1 and "landing" in printed
    assert any(note.startswith("transients:") for note in doc.provenance["notes"])
