"""Model files: both encodings, lossless round trips, and hostile input (issue 2, "Model files")."""

from __future__ import annotations

import math
import os
from pathlib import Path

import msgpack
import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hapticam.errors import HapticError, ModelFileError
from hapticam.models import Composite, Contact, ImpedanceTable, SegmentedImpedance
from hapticam.models.files import (FORMAT_NAME, MAX_FILE_BYTES, SCHEMA_VERSION, example_names, load_model,
                                   make_provenance, save_model)

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
nonneg = st.floats(min_value=0.0, max_value=1e3, allow_nan=False, allow_infinity=False)


@st.composite
def impedance_tables(draw, linear: bool) -> ImpedanceTable:
    n_seg = draw(st.integers(min_value=1, max_value=8))
    steps = draw(st.lists(st.floats(min_value=1e-5, max_value=1e-2), min_size=n_seg, max_size=n_seg))
    x0 = draw(st.floats(min_value=-0.05, max_value=0.05))
    bps = x0 + np.concatenate([[0.0], np.cumsum(steps)])
    n_val = n_seg + 1 if linear else n_seg
    vals = lambda strat: draw(st.lists(strat, min_size=n_val, max_size=n_val))  # noqa: E731
    return ImpedanceTable(breakpoints_m=bps.tolist(), m_kg=vals(nonneg), b_Nspm=vals(nonneg),
                          k_Npm=vals(finite), f0_N=vals(finite))


@st.composite
def impedance_models(draw) -> SegmentedImpedance:
    linear = draw(st.booleans())
    press = draw(impedance_tables(linear))
    release = draw(st.one_of(st.none(), impedance_tables(linear)))
    return SegmentedImpedance(press, release, interpolation="linear" if linear else "constant",
                              dead_band_mps=draw(st.floats(min_value=0.0, max_value=0.1)))


@st.composite
def contact_models(draw) -> Contact:
    law = draw(st.sampled_from(["linear", "hunt-crossley"]))
    return Contact(law=law, x_c_m=draw(finite) * 1e-3, k_Npm=draw(nonneg) * 10, b_Nspm=draw(nonneg),
                   n=draw(st.floats(min_value=0.5, max_value=3.0)) if law == "hunt-crossley" else 1.0,
                   side=draw(st.sampled_from([1, -1])))


any_model = st.one_of(impedance_models(), contact_models(),
                      st.lists(st.one_of(impedance_models(), contact_models()), min_size=1, max_size=3)
                      .map(Composite))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=any_model, sigma=st.floats(min_value=0, max_value=1e6))
def test_yaml_msgpack_yaml_round_trip_is_lossless(tmp_path: Path, model, sigma: float) -> None:
    prov = make_provenance("property-test", settings={"lambda": 0.999}, metrics={"fit_percent": 97.5})
    save_model(tmp_path / "a.yaml", model, provenance=prov, uncertainty={"k_Npm_std": [sigma]})
    m1, d1 = load_model(tmp_path / "a.yaml")
    save_model(tmp_path / "b.msgpack", m1, provenance=d1.provenance, uncertainty=d1.uncertainty)
    m2, d2 = load_model(tmp_path / "b.msgpack")
    save_model(tmp_path / "c.yaml", m2, provenance=d2.provenance, uncertainty=d2.uncertainty)
    m3, d3 = load_model(tmp_path / "c.yaml")
    assert m1 == model and m2 == model and m3 == model
    assert d1.to_dict() == d2.to_dict() == d3.to_dict()
    assert (tmp_path / "a.yaml").read_bytes() == (tmp_path / "c.yaml").read_bytes()
    # Same physics after the trip: identical force at a few points (bit for bit).
    for x in (-0.01, 0.0, 0.002, 0.04):
        assert model.force(x, 0.01) == m3.force(x, 0.01) or (math.isnan(model.force(x, 0.01)))


@pytest.mark.parametrize("name", ["linear-key", "tactile-key", "piano-key"])
def test_examples_load_by_name(name: str) -> None:
    assert name in example_names()
    model, doc = load_model(f"example:{name}")
    assert doc.kind == model.kind
    assert np.isfinite(model.force(0.001, 0.01))


def _write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _valid_mapping() -> dict:
    _model, doc = load_model("example:linear-key")
    return doc.to_dict()


HOSTILE_YAML = {
    "python-tag": ("!!python/object/apply:os.system ['echo pwned']\n", "tags are not allowed"),
    "std-tag": (lambda: yaml.safe_dump(_valid_mapping()).replace("kind: ", "kind: !!str ", 1),
                "tags are not allowed"),
    "billion-laughs": ("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", "anchors and aliases"),
    "not-a-mapping": ("- 1\n- 2\n", "expected a mapping"),
    "malformed": ("format: hapticam-model\nkind: [unclosed\n", "not valid YAML"),
    "empty": ("", "file is empty"),
    "wrong-format": ("format: something-else\n", "not a hapticam model file"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_YAML))
def test_hostile_yaml_gives_one_model_file_error(tmp_path: Path, case: str) -> None:
    text, expected = HOSTILE_YAML[case]
    text = text() if callable(text) else text
    with pytest.raises(ModelFileError, match=expected):
        load_model(_write(tmp_path, "m.yaml", text))


def test_newer_schema_unknown_kind_unknown_field_and_nan(tmp_path: Path) -> None:
    good = _valid_mapping()
    cases = {
        "newer": ({**good, "schema_version": SCHEMA_VERSION + 1}, "newer hapticam"),
        "unknown-kind": ({**good, "kind": "warp-drive"}, "unknown model kind"),
        "unknown-field": ({**good, "colour": "red"}, "unknown field 'colour'"),
        "unknown-provenance": ({**good, "provenance": {"author": "x"}}, "provenance: unknown field"),
        "missing-parameters": ({k: v for k, v in good.items() if k != "parameters"}, "missing field"),
        "bad-sha": ({**good, "provenance": {"source": {"name": "c", "sha256": "xyz"}}}, "sha256"),
    }
    for case, (mapping, expected) in cases.items():
        with pytest.raises(ModelFileError, match=expected):
            load_model(_write(tmp_path, f"{case}.msgpack", msgpack.packb(mapping)))
    nan_doc = yaml.safe_dump(good).replace("schema_version: 1", "schema_version: 1\nuncertainty: {a: .nan}")
    with pytest.raises(ModelFileError, match="finite"):
        load_model(_write(tmp_path, "nan.yaml", nan_doc))


def test_truncated_and_corrupted_msgpack(tmp_path: Path) -> None:
    data = msgpack.packb(_valid_mapping())
    for cut in (1, len(data) // 3, len(data) - 1):
        with pytest.raises(ModelFileError, match="truncated or corrupted"):
            load_model(_write(tmp_path, "t.msgpack", data[:cut]))
    with pytest.raises(ModelFileError, match="trailing bytes"):
        load_model(_write(tmp_path, "x.msgpack", data + b"\x00"))
    with pytest.raises(ModelFileError, match="extension types"):
        load_model(_write(tmp_path, "e.msgpack", msgpack.packb(msgpack.ExtType(5, b"boom"))))


def test_oversized_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with open(path, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(ModelFileError, match="MiB limit"):
        load_model(path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.binary(max_size=400), suffix=st.sampled_from([".yaml", ".msgpack"]))
def test_random_bytes_never_escape_as_anything_but_model_file_error(tmp_path: Path, blob: bytes,
                                                                    suffix: str) -> None:
    path = _write(tmp_path, "r" + suffix, blob)
    try:
        load_model(path)
    except ModelFileError:
        pass


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=10_000), flip=st.integers(min_value=0, max_value=255))
def test_damaged_example_files_fail_cleanly(tmp_path: Path, cut: int, flip: int) -> None:
    good = yaml.safe_dump(_valid_mapping()).encode()
    pos = cut % len(good)
    damaged = good[:pos] + bytes([flip]) + good[pos + 1:]
    for data in (good[:pos], damaged):
        try:
            load_model(_write(tmp_path, "d.yaml", data))
        except ModelFileError:
            pass


def test_write_is_atomic_and_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_model("example:linear-key")[0]
    target = tmp_path / "m.yaml"
    save_model(target, model)
    before = target.read_bytes()

    def fail(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(ModelFileError, match="cannot write"):
        save_model(target, Contact(law="linear", x_c_m=0.0, k_Npm=1.0, b_Nspm=0.0))
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.yaml"]


def test_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="unknown model file type"):
        load_model(tmp_path / "m.json")
    with pytest.raises(ModelFileError, match="no such file"):
        load_model(tmp_path / "none.yaml")
    with pytest.raises(ModelFileError, match="unknown example"):
        load_model("example:nope")
    assert issubclass(ModelFileError, HapticError) and issubclass(ModelFileError, ValueError)


def test_document_fields(tmp_path: Path) -> None:
    model = load_model("example:tactile-key")[0]
    prov = make_provenance("ewls-segmented", settings={"forgetting": 0.999}, source_name="cap.csv",
                           source_sha256="0" * 64, metrics={"fit_percent": 99.0}, notes=["m fixed to 0"])
    save_model(tmp_path / "m.yaml", model, provenance=prov)
    raw = yaml.safe_load((tmp_path / "m.yaml").read_text())
    assert raw["format"] == FORMAT_NAME and raw["schema_version"] == SCHEMA_VERSION
    assert raw["provenance"]["source"]["sha256"] == "0" * 64
    assert raw["provenance"]["created"].endswith("Z")
