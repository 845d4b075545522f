"""``hapticam identify impedance``: summary, JSON, model file, and every bad input ending in exit 2."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from hapticam.cli import main
from hapticam.capture import Capture
from hapticam.capture_io import save_capture
from hapticam.models.files import load_model, sha256_of_file

from conftest import SWITCH_DIR

SWITCH = str(SWITCH_DIR)


def _capture(tmp_path, name="cap.csv", seed=0, freq=(1.0, 4.0), seconds=20.0):
    """A small dynamic capture: mass-spring-damper driven by a swept sine (truth m 0.2, b 3, k 500)."""
    rng = np.random.default_rng(seed)
    fs = 1000.0
    t = np.arange(int(seconds * fs)) / fs
    phase = 2 * np.pi * (freq[0] * t + 0.5 * (freq[1] - freq[0]) * t * t / seconds)
    w = 2 * np.pi * (freq[0] + (freq[1] - freq[0]) * t / seconds)
    x = 0.01 - 0.01 * np.cos(phase)
    v = 0.01 * np.sin(phase) * w
    a = 0.01 * np.cos(phase) * w * w + 0.01 * np.sin(phase) * 2 * np.pi * (freq[1] - freq[0]) / seconds
    f = 0.2 * a + 3.0 * v + 500.0 * x + 0.5 + rng.normal(0, 0.01, t.size)
    path = tmp_path / name
    save_capture(path, Capture.from_arrays(t, x, f, metadata={"source": "simulated"}))
    return path


def test_summary_table_and_model_file(tmp_path, capsys):
    cap = _capture(tmp_path)
    other = _capture(tmp_path, "other.csv", seed=1, freq=(2.0, 2.0), seconds=5.0)
    out = tmp_path / "model.yaml"
    assert main(["identify", "impedance", str(cap), "-o", str(out), "--validate", str(other)]) == 0
    text = capsys.readouterr().out
    assert "press" in text and "release" in text and "training fit" in text and "validation fit" in text
    model, doc = load_model(out)
    assert doc.provenance["method"] == "ewls-segmented-passive"
    assert doc.provenance["source"]["sha256"] == sha256_of_file(cap)
    assert doc.provenance["settings"]["forgetting"] == 0.999
    assert doc.provenance["metrics"]["fit_percent"] > 99.0
    assert doc.provenance["metrics"]["validate_fit_percent"] > 95.0
    assert set(doc.uncertainty) == {"press", "release"}
    _, _, k, _ = model.parameters_at(np.array([0.01]), 1)
    assert k[0] == pytest.approx(500.0, rel=0.05)


def test_json_summary(tmp_path, capsys):
    cap = _capture(tmp_path)
    out = tmp_path / "model.msgpack"
    assert main(["identify", "impedance", str(cap), "-o", str(out), "--json", "--validate", str(cap)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["fit_percent"] > 99.0 and summary["validate_fit_percent"] > 99.0
    assert set(summary["segments"]) == {"press", "release"}
    assert summary["identifiable"] == {"k": True, "F0": True, "m": True, "b": True}
    assert out.exists()


def test_fix_term_and_options(tmp_path, capsys):
    cap = _capture(tmp_path)
    out = tmp_path / "m.yaml"
    assert main(["identify", "impedance", str(cap), "-o", str(out), "--fix", "m=0.2", "--grid-mm", "2",
                 "--max-segments", "3", "--interpolation", "linear", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["identifiable"]["m"] is False
    assert all(n <= 3 for n in summary["segments"].values())
    model, _ = load_model(out)
    assert np.all(model.press.m_kg == 0.2) and model.interpolation == "linear"


BAD_ARGS = [
    (["--forgetting", "1.5"], "--forgetting must be in"),
    (["--forgetting", "nan"], "--forgetting must be in"),
    (["--grid-mm", "-1"], "--grid-mm must be a positive"),
    (["--tolerance", "-0.1"], "--tolerance must be"),
    (["--max-segments", "0"], "--max-segments must be"),
    (["--fix", "k=3"], "expected m=VALUE or b=VALUE"),
    (["--fix", "m=heavy"], "is not a number"),
    (["--cutoff-hz", "0"], "--cutoff-hz must be"),
    (["--grid-mm", "1e-6"], "coarser grid"),
    (["--cutoff-hz", "5000"], "Nyquist"),
]


@pytest.mark.parametrize("extra,pattern", BAD_ARGS)
def test_bad_arguments_exit_2_without_output(tmp_path, capsys, extra, pattern):
    cap = _capture(tmp_path, seconds=5.0)
    out = tmp_path / "model.yaml"
    assert main(["identify", "impedance", str(cap), "-o", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hapticam: error:") and pattern in err and "\n" not in err
    assert not out.exists()


def test_bad_output_paths(tmp_path, capsys):
    cap = _capture(tmp_path, seconds=5.0)
    for out, pattern in ((tmp_path / "m.txt", "use a .yaml or .msgpack"), (tmp_path / "no" / "m.yaml", "does not exist"),
                         (tmp_path, "is a folder")):
        assert main(["identify", "impedance", str(cap), "-o", str(out)]) == 2
        assert pattern in capsys.readouterr().err


BAD_FILES = {
    "truncated.csv": (b"t_s,x_m,force_N\n0,0,0\n0.1,0.001,1\n0.2,0.0", "expected 3 fields"),
    "malformed.csv": (b"t_s,x_m,force_N\n0,0,0\n0.1,zero,1\n", "is not a number"),
    "wrong_units.csv": (b"t_s,x_parsec,force_N\n0,0,0\n", "unknown unit"),
    "nan.csv": (b"t_s,x_m,force_N\n" + b"".join(f"{i * 0.01},{i * 1e-4},{'nan' if i == 7 else 1}\n".encode()
                                               for i in range(40)), "not a finite number"),
    "hostile.csv": (b"\x00\xff" * 1000, "NUL bytes"),
    "hostile.npz": (b"PK\x03\x04garbage", "not a valid .npz"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_capture_files_exit_2_without_output(tmp_path, capsys, name):
    data, pattern = BAD_FILES[name]
    bad = tmp_path / name
    bad.write_bytes(data)
    out = tmp_path / "model.yaml"
    assert main(["identify", "impedance", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hapticam: error:") and pattern in err and "\n" not in err
    assert not out.exists() and sorted(os.listdir(tmp_path)) == [name]


def test_bad_validation_capture_writes_nothing(tmp_path, capsys):
    cap = _capture(tmp_path, seconds=5.0)
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"t_s,x_m\n0,0\n")
    out = tmp_path / "model.yaml"
    assert main(["identify", "impedance", str(cap), "-o", str(out), "--validate", str(bad)]) == 2
    assert "missing column force_N" in capsys.readouterr().err
    assert not out.exists()


def test_quasi_static_capture_without_velocity_or_acceleration_content(tmp_path, capsys):
    """A constant-speed press and release: m and b are reported unidentifiable and fixed to 0."""
    n = 800
    x = np.concatenate([np.arange(n // 2), np.arange(n // 2, 0, -1)]) * 5e-6
    t = np.arange(x.size) * 0.1
    f = 300.0 * x + np.where(np.arange(x.size) < n // 2, 0.05, -0.05)
    path = tmp_path / "qs.csv"
    save_capture(path, Capture.from_arrays(t, x, f))
    out = tmp_path / "qs.yaml"
    assert main(["identify", "impedance", str(path), "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["identifiable"]["m"] is False and summary["identifiable"]["b"] is False
    _, doc = load_model(out)
    assert any("m is not identifiable" in n for n in doc.provenance["notes"])


def test_bench_identify_runs_all_peers_and_writes_json(bench_identify_table):
    code, text, _, res = bench_identify_table      # the table on stdout, the results in --json-file
    assert code == 0
    assert "hapticam EWLS core" in text and "numpy lstsq" in text and "whole pipeline per capture" in text
    assert [(p["capture"], p["fit_percent"] > 99.0) for p in res["pipeline"]] == [("Cherry-MX-Red.csv", True)]
    assert res["samples"] == 2000 and res["hapticam_ewls_core_s"] > 0 and res["numpy_lstsq_s"] > 0
    assert res["max_rel_diff_lam1_vs_lstsq"] < 1e-8
    if res.get("padasip_s") is not None:  # the same estimator: both track the truth [0.5, 8, 800, 1]
        np.testing.assert_allclose(res["theta_padasip"], res["theta_core"], rtol=0.05)
    assert main(["bench", "identify", "--samples", "10"]) == 2


@pytest.mark.parametrize("level", [0.0, 0.3])
def test_a_capture_whose_force_never_changes_is_refused(tmp_path, capsys, level):
    capture = tmp_path / "flat.csv"
    rows = "\n".join(f"{i * 0.01:.2f},{i * 1e-5:.6f},{level}" for i in range(400))
    capture.write_text("t_s,x_m,force_N\n" + rows + "\n")
    from hapticam.cli import main

    assert main(["identify", "impedance", str(capture), "-o", str(tmp_path / "m.yaml")]) == 2
    assert "the force never changes" in capsys.readouterr().err
    assert not (tmp_path / "m.yaml").exists()
