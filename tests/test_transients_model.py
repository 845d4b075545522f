"""Event-based transients in the model file (models/transients.py, models/files.py): the pulse's closed forms
against numerical integration, the energy bound against a clipped, slew-limited, sampled rendering, the file
round trip in both encodings, ``model show`` and ``model convert``, and the refusals of bad input."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from hapticam.cli import main
from hapticam.errors import ModelFileError, ModelValidationError
from hapticam.models.files import document_from_mapping, load_model, save_model
from hapticam.models.hybrid_key.layout import EV_LANDING, EV_STRING
from hapticam.models.transients import (EVENT_CODES, TRANSIENT_EVENTS, Transient, pulse_energy_bound_J,
                                        pulse_force_integral_bound_Ns)

LANDING = Transient("landing", 30.0, 120.0, 0.003, gain_sd=1.5, frequency_sd_hz=4.0, decay_sd_s=2e-4, samples=6)
STRING = Transient("string", 8.0, 450.0, 0.001, samples=2)


def test_event_codes_are_the_hybrid_keys() -> None:
    assert EVENT_CODES["landing"] == EV_LANDING and EVENT_CODES["string"] == EV_STRING
    assert set(EVENT_CODES) == set(TRANSIENT_EVENTS)
    assert len(set(EVENT_CODES.values())) == len(EVENT_CODES)


def test_impulse_and_force_follow_the_decaying_sinusoid() -> None:
    t = np.linspace(0.0, 0.2, 400_001)
    v = -0.7                                           # the speed's magnitude sets the amplitude
    force = np.array([LANDING.force_N(ti, v) for ti in t[::1000]])
    exact = 30.0 * 0.7 * np.exp(-t[::1000] / 0.003) * np.sin(2 * math.pi * 120.0 * t[::1000])
    np.testing.assert_allclose(force, exact, atol=1e-12)
    assert LANDING.force_N(-1e-3, v) == 0.0
    dense = 30.0 * 0.7 * np.exp(-t / 0.003) * np.sin(2 * math.pi * 120.0 * t)
    assert LANDING.impulse_Ns(v) == pytest.approx(np.trapezoid(dense, t), rel=1e-6)


def _rendered_pulse(transient: Transient, v: float, max_force: float, max_rate: float, tick_s: float,
                    phase_s: float, duration_s: float = 0.3) -> np.ndarray:
    """The pulse as a loop renders it: sampled every tick from ``phase_s`` after the impact, clipped, and
    moved toward by at most ``max_rate`` per second (a slew limiter); each value held for a tick."""
    ticks = phase_s + np.arange(int(duration_s / tick_s)) * tick_s
    target = np.clip([transient.force_N(t, v) for t in ticks], -max_force, max_force)
    out, y = np.empty(target.size), 0.0
    for i, f in enumerate(target):
        y += float(np.clip(f - y, -max_rate * tick_s, max_rate * tick_s))
        out[i] = y
    return out


#: a pulse shorter than a 1 kHz tick: the held first sample carries most of it (the bound's tick term)
SHORT = Transient("landing", 30.0, 1000.0, 3e-4)


@pytest.mark.parametrize("max_force, max_rate", [(math.inf, math.inf), (5.0, math.inf), (5.0, 2e3), (50.0, 1e4),
                                                 (2.0, 500.0)])
@pytest.mark.parametrize("tick_s", [1e-3, 1e-4])
@pytest.mark.parametrize("transient", [LANDING, SHORT], ids=["landing", "short"])
def test_energy_bound_holds_for_the_clipped_slew_limited_sampled_pulse(transient, max_force, max_rate, tick_s) -> None:
    v = 0.6
    bound = pulse_energy_bound_J(transient, v, max_force, max_rate, tick_s=tick_s)
    worst = 0.0
    for phase in np.linspace(0.0, tick_s, 7, endpoint=False):
        held = _rendered_pulse(transient, v, max_force, max_rate, tick_s, phase, duration_s=0.05)
        worst = max(worst, float(np.sum(np.abs(held)) * tick_s) * v)   # a handle at v along the force throughout
    assert worst <= bound
    if math.isinf(max_rate):                           # and it is not vacuous (a slow slew limiter leaves
        assert bound < 4.0 * worst                     # little of a short pulse: its ramp term is loose)


def test_energy_bound_without_limits_is_amplitude_times_decay_times_speed() -> None:
    v = 0.5
    assert pulse_force_integral_bound_Ns(LANDING, v) == pytest.approx(30.0 * v * 0.003)
    assert pulse_energy_bound_J(LANDING, v) == pytest.approx(30.0 * v * 0.003 * v)
    assert pulse_energy_bound_J(LANDING, v, handle_speed_mps=0.1) == pytest.approx(30.0 * v * 0.003 * 0.1)
    t = np.linspace(0.0, 0.1, 200_001)                  # and the bound is above the exact integral of |F|
    exact = np.trapezoid(np.abs(30.0 * v * np.exp(-t / 0.003) * np.sin(2 * math.pi * 120.0 * t)), t)
    assert exact < pulse_force_integral_bound_Ns(LANDING, v) < 2.0 * exact


@pytest.mark.parametrize("field, value", [("max_force_N", 0.0), ("max_force_N", float("nan")),
                                          ("max_rate_N_per_s", -1.0), ("tick_s", -1e-3), ("handle_speed_mps", "1")])
def test_energy_bound_refuses_bad_limits(field, value) -> None:
    kwargs = {"max_force_N": 5.0, "max_rate_N_per_s": 1e3, field: value}
    with pytest.raises(ModelValidationError, match=field):
        pulse_energy_bound_J(LANDING, 0.5, **kwargs)


def test_to_dict_round_trip_and_unknown_deviations_left_out() -> None:
    for transient in (LANDING, STRING):
        assert Transient.from_dict(transient.to_dict()) == transient
    assert "gain_sd" not in STRING.to_dict() and STRING.to_dict()["samples"] == 2


@pytest.mark.parametrize("change, field", [
    ({"event": "thud"}, "event"), ({"event": 1}, "event"),
    ({"gain_N_per_mps": -1.0}, "gain_N_per_mps"), ({"gain_N_per_mps": 2e4}, "gain_N_per_mps"),
    ({"gain_N_per_mps": "30"}, "gain_N_per_mps"),
    ({"frequency_hz": 0.5}, "frequency_hz"), ({"frequency_hz": 6000.0}, "frequency_hz"),
    ({"decay_s": 0.0}, "decay_s"), ({"decay_s": 1.0}, "decay_s"), ({"decay_s": float("inf")}, "decay_s"),
    ({"gain_sd": -0.1}, "gain_sd"), ({"decay_sd_s": "x"}, "decay_sd_s"),
    ({"samples": 2.5}, "samples"), ({"samples": True}, "samples"), ({"samples": -1}, "samples"),
    ({"colour": "red"}, "colour"),
])
def test_from_dict_refusals_name_the_field(change, field) -> None:
    with pytest.raises(ModelValidationError, match=field):
        Transient.from_dict({**LANDING.to_dict(), **change})


def test_from_dict_refuses_a_missing_field_and_a_non_mapping() -> None:
    data = LANDING.to_dict()
    del data["decay_s"]
    with pytest.raises(ModelValidationError, match="decay_s"):
        Transient.from_dict(data)
    with pytest.raises(ModelValidationError):
        Transient.from_dict(["landing", 30.0])


@pytest.mark.parametrize("suffix", [".yaml", ".msgpack"])
def test_model_file_round_trip(tmp_path: Path, suffix: str) -> None:
    model = load_model("example:piano-key")[0]
    model.transients = (LANDING, STRING)
    path = tmp_path / f"key{suffix}"
    save_model(path, model)
    loaded, doc = load_model(path)
    assert loaded.transients == (LANDING, STRING)
    assert doc.transients == [LANDING.to_dict(), STRING.to_dict()]
    assert loaded == model                                 # the parameters are untouched
    again = tmp_path / f"again{suffix}"
    save_model(again, loaded, transients=())               # an explicit empty tuple writes none
    assert load_model(again)[0].transients == () and "transients" not in load_model(again)[1].to_dict()


def test_a_file_without_transients_reads_as_before(tmp_path: Path) -> None:
    model, doc = load_model("example:piano-key")
    assert model.transients == () and doc.transients is None and "transients" not in doc.to_dict()
    save_model(tmp_path / "k.yaml", model)
    assert "transients" not in yaml.safe_load((tmp_path / "k.yaml").read_text())


def _file_with(transients) -> dict:
    model, doc = load_model("example:piano-key")
    return {**doc.to_dict(), "transients": transients}


@pytest.mark.parametrize("transients, where", [
    ({"event": "landing"}, "transients"),
    (["landing"], "transients[0]"),
    ([LANDING.to_dict(), {**STRING.to_dict(), "frequency_hz": -5.0}], "transients[1].frequency_hz"),
    ([LANDING.to_dict(), {**LANDING.to_dict(), "gain_N_per_mps": 3.0}], "transients[1].event"),
    ([{**LANDING.to_dict(), "decay": 0.01}], "transients[0].decay"),
])
def test_model_file_refusals_name_the_entry_and_field(transients, where) -> None:
    with pytest.raises(ModelFileError, match=r"^key\.yaml: " + where.replace("[", r"\[").replace("]", r"\]")):
        document_from_mapping(_file_with(transients), "key.yaml")


def test_model_show_prints_each_transient_and_convert_keeps_them(tmp_path: Path, capsys) -> None:
    model = load_model("example:piano-key")[0]
    model.transients = (LANDING, STRING)
    save_model(tmp_path / "k.yaml", model)
    assert main(["model", "show", str(tmp_path / "k.yaml")]) == 0
    out = capsys.readouterr().out.splitlines()
    lines = [line for line in out if line.split()[:1] in (["landing"], ["string"])]
    assert len(lines) == 2
    assert all(w in lines[0] for w in ("30", "1.5", "120", "4", "3", "0.2", "6 impacts"))
    assert "string" in lines[1] and "450" in lines[1] and "+-" not in lines[1]
    assert main(["model", "convert", str(tmp_path / "k.yaml"), str(tmp_path / "k.msgpack")]) == 0
    assert load_model(tmp_path / "k.msgpack")[0].transients == (LANDING, STRING)
