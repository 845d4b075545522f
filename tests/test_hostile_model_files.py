"""Model files that fight back: each is refused by ``model validate``, ``model show`` and ``render`` with exit
code 2 and one short line on stderr (no traceback, no value quoted at length), within 5 s of processor time,
and a composite of thousands of components before any model is built; or, when valid, loaded with its
oversized values shown as excerpts. The files are written here; each case names what it once did."""

from __future__ import annotations

import copy
import json
import re
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest
import yaml

from hapticam.cli import main
from hapticam.models import HybridKey, SegmentedImpedance
from hapticam.models.composite import MAX_COMPONENTS, Composite

LIMIT_S = 5.0
#: a refusal names the file and the field and quotes an excerpt: well under this many characters
LINE_CHARS = 300
COMMANDS = {"validate": ("model", "validate"), "show": ("model", "show"), "render": ("render",)}
RENDER_ARGS = ("--simulated-clock", "--duration", "0.1")

PROVENANCE = {"created": "2026-01-01T00:00:00Z", "hapticam_version": "0.1.0", "method": "hand-authored",
              "settings": {}}
TABLE = {"interpolation": "constant", "dead_band_mps": 0.001,
         "press": {"breakpoints_m": [0.0, 0.001, 0.004], "m_kg": [0.004, 0.004], "b_Nspm": [0.02, 0.02],
                   "k_Npm": [3000.0, 70.0], "f0_N": [0.0, 0.3]}}
CONTACT = {"law": "hunt-crossley", "x_c_m": 0.004, "k_Npm": 1.0e6, "b_Nspm": 3.0e5, "n": 1.5, "side": 1}
KEY = {"key_mass_kg": 0.03, "return_spring_Npm": 10.0, "preload_N": 0.05, "hammer_mass_kg": 0.01,
       "lever_ratio": 5.0, "contact": {"law": "hunt-crossley", "k_Npm": 5.0e6, "b_Nspm": 1.5e7, "n": 1.5}}


def _document(kind: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"format": "hapticam-model", "schema_version": 1, "kind": kind, "parameters": copy.deepcopy(parameters),
            "provenance": copy.deepcopy(PROVENANCE)}


def _table_with(field: str, value: float) -> dict[str, Any]:
    doc = _document("segmented-impedance", TABLE)
    doc["parameters"]["press"][field][0] = value
    return doc


def _key_with(field: str, value: float) -> dict[str, Any]:
    doc = _document("hybrid-key", KEY)
    if field.startswith("contact."):
        doc["parameters"]["contact"][field.split(".", 1)[1]] = value
    else:
        doc["parameters"][field] = value
    return doc


def _write(path: Path, doc: dict[str, Any]) -> Path:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    path.write_bytes(msgpack.packb(doc) if path.suffix == ".msgpack" else yaml.dump(doc, Dumper=dumper).encode())
    return path


def _yaml_text() -> str:
    """A valid model file's YAML, to edit as text (PyYAML would take minutes to write a 60 MB value)."""
    return yaml.safe_dump(_document("segmented-impedance", TABLE), sort_keys=False)


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    cpu_s: float


def _cli(capsys, command: str, path: Path) -> Outcome:
    """One CLI command on ``path``, in this process, with the processor time it took (s; every thread of
    this process: on a shared machine the wall time also counts other programs' turns)."""
    argv = [*COMMANDS[command], str(path), *(RENDER_ARGS if command == "render" else ())]
    t0 = time.process_time()
    code = main(argv)
    cpu_s = time.process_time() - t0
    out, err = capsys.readouterr()
    return Outcome(code, out, err, cpu_s)


def _refused(outcome: Outcome, path: Path, *words: str) -> str:
    """Assert one refusal line naming ``path`` and ``words`` (exit 2, short, in time); return it."""
    assert outcome.code == 2, outcome
    assert outcome.err.count("\n") == 1 and "Traceback" not in outcome.err, outcome.err[:2000]
    assert len(outcome.err) < LINE_CHARS, outcome.err[:2000]
    assert str(path) in outcome.err, outcome.err
    after_name = outcome.err.split(str(path), 1)[1]
    assert all(w in after_name for w in words), outcome.err
    assert outcome.cpu_s < LIMIT_S, outcome
    return outcome.err


# -- values no key, switch or device has -------------------------------------------------------------------
ABSURD = {
    "stiffness 1e300": (lambda: _table_with("k_Npm", 1e300), "press.k_Npm[0]"),
    "damping 1e300": (lambda: _table_with("b_Nspm", 1e300), "press.b_Nspm[0]"),
    "offset force 1e300": (lambda: _table_with("f0_N", 1e300), "press.f0_N[0]"),
    "mass -1": (lambda: _table_with("m_kg", -1.0), "press.m_kg[0]"),
    "key mass -1": (lambda: _key_with("key_mass_kg", -1.0), "key_mass_kg"),
    "key mass 1e-30": (lambda: _key_with("key_mass_kg", 1e-30), "key_mass_kg"),
    "hammer mass 1e-30": (lambda: _key_with("hammer_mass_kg", 1e-30), "hammer_mass_kg"),
    "key contact 1e300": (lambda: _key_with("contact.k_Npm", 1e300), "contact.k_Npm"),
    "composite's contact 1e300": (
        lambda: _document("composite", {"components": [{"kind": "segmented-impedance", "parameters": TABLE},
                                                       {"kind": "contact", "parameters": {**CONTACT, "k_Npm": 1e300}}]}),
        "components[1].k_Npm"),
}


@pytest.mark.parametrize("case", list(ABSURD))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_absurd_parameter_is_refused_naming_its_path(tmp_path, capsys, case, command):
    make, parameter = ABSURD[case]
    path = _write(tmp_path / "absurd.yaml", make())
    _refused(_cli(capsys, command, path), path, parameter)


def test_every_numeric_parameter_of_a_hybrid_key_in_all_its_forms_has_a_declared_range():
    # the optional fields (let-off, string, keybed, rail, touch, coupling) and both contact laws
    full = {**KEY, "let_off_m": 0.0085, "check_drop_m": 0.02, "repetition_m": 0.001, "string_height_m": 0.045,
            "string_restitution": 0.4, "keybed_m": 0.01, "keybed_k_Npm": 1e5, "keybed_b_Nspm": 100.0,
            "hammer_rail": True, "jack_pickup_m": 0.002, "touch_m": 0.001, "coupling_k_Npm": 1000.0,
            "coupling_b_Nspm": 1.5}
    rigid = {**{k: v for k, v in full.items() if not k.startswith("coupling")},
             "contact": {"law": "rigid", "restitution": 0.3}}
    for parameters, nested in ((full, "contact.k_Npm"), (rigid, "contact.restitution")):
        key = HybridKey.from_dict(copy.deepcopy(parameters))
        paths = {path for path, _ in key.parameter_values()}
        assert nested in paths and "touch_m" in paths
        for path in paths:
            assert key.range_of(path) is not None, path
        Composite([key, SegmentedImpedance.from_dict(copy.deepcopy(TABLE))]).check_ranges()


# -- numbers and values past what Python or a message holds -------------------------------------------------
def _long_integer_files(tmp_path: Path) -> dict[str, tuple[Path, int]]:
    """YAML files with a 5000-digit integer (Python converts at most 4300 digits of text to an int), and the
    line it is on."""
    digits = "9" * 5000
    base = _yaml_text()
    texts = {"parameter": base.replace("dead_band_mps: 0.001", f"dead_band_mps: {digits}"),
             "provenance": base.replace("settings: {}", f"settings: {{grid: {digits}}}"),
             "underscored": base.replace("dead_band_mps: 0.001", f"dead_band_mps: 1_{digits}")}
    files = {}
    for name, text in texts.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        files[name] = (path, text[:text.index(digits)].count("\n") + 1)
    return files


@pytest.mark.parametrize("where", ["parameter", "provenance", "underscored"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_5000_digit_integer_is_refused_naming_its_line(tmp_path, capsys, where, command):
    path, line = _long_integer_files(tmp_path)[where]
    _refused(_cli(capsys, command, path), path, f"line {line}")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_date_that_does_not_exist_is_refused_in_one_line(tmp_path, capsys, command):
    text = _yaml_text().replace("'2026-01-01T00:00:00Z'", "2026-13-45")
    assert "2026-13-45" in text
    path = tmp_path / "date.yaml"
    path.write_text(text)
    _refused(_cli(capsys, command, path), path)


HUGE = 60_000_000


def _huge_value_file(tmp_path: Path, where: str) -> tuple[Path, int]:
    """A file quoting a long value where a message once quoted it whole, and that value's length."""
    base = _yaml_text()
    if where == "duplicate key":                           # 60 MB of YAML: the line was 60 MB
        key = "A" * (HUGE // 2)
        text = base.replace("settings: {}", f"settings:\n    ? {key}\n    : 1\n    ? {key}\n    : 2")
        length = len(key)
    elif where == "key above a nan":
        key = "K" * (HUGE // 2)
        text = base.replace("settings: {}", f"settings:\n    ? {key}\n    : .nan")
        length = len(key)
    else:                                                  # schema version 999...9 (4000 digits)
        text = base.replace("schema_version: 1", "schema_version: " + "9" * 4000)
        length = 4000
    path = tmp_path / "huge.yaml"
    path.write_text(text)
    return path, length


@pytest.mark.parametrize("where", ["duplicate key", "key above a nan", "schema version"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_huge_value_is_quoted_as_a_short_excerpt_with_its_length(tmp_path, capsys, where, command):
    path, length = _huge_value_file(tmp_path, where)
    line = _refused(_cli(capsys, command, path), path)
    assert any(0 <= int(n) - length <= 2 for n in re.findall(r"\d+", line)), line    # its length, quotes or not


def test_model_show_prints_a_huge_provenance_value_as_an_excerpt(tmp_path, capsys):
    # a valid file: its 60 MB method and 10,000 settings were printed whole
    settings = ", ".join(f"s{i}: {i}" for i in range(10_000))
    path = tmp_path / "long.yaml"
    path.write_text(_yaml_text().replace("method: hand-authored", "method: " + "M" * HUGE)
                    .replace("settings: {}", f"settings: {{{settings}}}"))
    outcome = _cli(capsys, "show", path)
    assert outcome.code == 0 and outcome.cpu_s < LIMIT_S, outcome.err
    assert len(outcome.out) < 20_000 and str(HUGE) in outcome.out


# -- thousands of components, millions of nodes --------------------------------------------------------------
def _components_file(tmp_path: Path, n: int, suffix: str) -> Path:
    doc = _document("composite", {"components": [{"kind": "segmented-impedance", "parameters": TABLE}] * n})
    path = tmp_path / f"parts{suffix}"
    if suffix == ".yaml":                                  # JSON is YAML's flow style, and written without aliases
        path.write_text(json.dumps(doc))
        return path
    return _write(path, doc)


@pytest.fixture
def built(monkeypatch) -> list[str]:
    """The kinds of the models built from files while the test runs."""
    kinds: list[str] = []
    for cls in (SegmentedImpedance, HybridKey):
        original = cls.from_dict.__func__

        def counted(c, data, _original=original):
            kinds.append(c.kind)
            return _original(c, data)
        monkeypatch.setattr(cls, "from_dict", classmethod(counted))
    return kinds


@pytest.mark.parametrize("suffix", [".msgpack", ".yaml"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_5000_components_are_refused_before_any_model_is_built(tmp_path, capsys, built, suffix, command):
    # the 1.9 MB msgpack of 5,000 components took 57 s in model show, 29 s of processor time in render
    path = _components_file(tmp_path, 5000, suffix)
    _refused(_cli(capsys, command, path), path, str(MAX_COMPONENTS))
    assert built == []


def test_a_composite_at_the_component_limit_is_loaded(tmp_path, capsys):
    path = _components_file(tmp_path, MAX_COMPONENTS, ".msgpack")
    outcome = _cli(capsys, "validate", path)
    assert outcome.code == 0 and f"({MAX_COMPONENTS} components)" in outcome.out, outcome
    assert _cli(capsys, "validate", _components_file(tmp_path, MAX_COMPONENTS + 1, ".msgpack")).code == 2


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_msgpack_of_millions_of_nodes_is_refused_while_it_is_decoded(tmp_path, capsys, command):
    # 15 million one-byte numbers in 15 MB: was loaded, in 37 s
    doc = _document("segmented-impedance", TABLE)
    doc["provenance"]["settings"] = {f"a{i}": [0] * 1_000_000 for i in range(15)}
    path = _write(tmp_path / "nodes.msgpack", doc)
    _refused(_cli(capsys, command, path), path, "1,000,000")


def test_a_long_key_above_a_long_list_is_checked_without_a_path_per_entry(tmp_path, capsys):
    # a 1 MB key above 400,000 entries: a path string of 1 MB for each entry was 400 GB of copying
    doc = _document("segmented-impedance", TABLE)
    doc["provenance"]["settings"] = {"K" * 1_000_000: [0] * 400_000}
    path = _write(tmp_path / "key.msgpack", doc)
    outcome = _cli(capsys, "validate", path)
    assert outcome.code == 0 and outcome.cpu_s < LIMIT_S, outcome


def _free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def test_a_control_load_model_refuses_5000_components_at_once(tmp_path):
    # the load once kept the control socket answering "busy" for 33 s; the worker runs this same request
    from hapticam.world.sim import SimulatedDevice
    from hapticam.models.files import load_model_only
    from hapticam.render.loop import LoopConfig
    from hapticam.render.session import RenderSession

    (tmp_path / "models").mkdir()
    _components_file(tmp_path / "models", 5000, ".msgpack")
    session = RenderSession(load_model_only("example:linear-key"), SimulatedDevice(), LoopConfig(realtime=False),
                            control=_free_address(), model_dir=tmp_path / "models")
    try:
        t0 = time.process_time()
        reply = session.control.handle(msgpack.packb({"cmd": "load_model", "name": "parts.msgpack"}))
        took_s = time.process_time() - t0
    finally:
        session.control.halt()
    assert reply["ok"] is False and str(MAX_COMPONENTS) in reply["error"], reply
    assert len(reply["error"]) < LINE_CHARS and took_s < 1.0, (took_s, reply)
