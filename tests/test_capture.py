"""Capture loading, writing, validation and dropout detection, including hostile files."""

from __future__ import annotations

import os

import numpy as np
import pytest

from hapticam.errors import CaptureError
from hapticam.capture import Capture, detect_dropouts
from hapticam.capture_io import load_capture, save_capture

from conftest import SWITCH_DIR, SWITCH_FILES
GOOD_HEADER = "t_s,x_m,force_N"


def _rows(n=50):
    t = np.arange(n) * 0.01
    x = 1e-3 * np.sin(2 * np.pi * t)
    f = 100.0 * x + 0.5
    return t, x, f


def _write_csv(path, header=GOOD_HEADER, rows=None, extra=""):
    t, x, f = _rows() if rows is None else rows
    body = "\n".join(f"{float(a)!r},{float(b)!r},{float(c)!r}" for a, b, c in zip(t, x, f))
    path.write_text(f"# source: test\n{header}\n{body}\n{extra}")
    return path


def test_real_switch_files_load_as_they_are():
    assert len(SWITCH_FILES) == 12
    for path in SWITCH_FILES:
        cap = load_capture(path)
        assert cap.n > 1400 and cap.sample_rate_hz == pytest.approx(10.0)
        assert 3.5e-3 < cap.x_m.max() < 4.6e-3  # microns -> metres: about 4 mm of travel
        assert 1.1 < cap.f_N.max() < 1.3  # newtons
        assert cap.metadata["source"].startswith("bluepylons/Open-Switch-Curve-Meter")
        assert cap.dropouts.size == 0  # sharp click drops are physics, not dropouts
        assert len(cap.sha256) == 64


def test_units_in_column_names_are_converted(tmp_path):
    t, x, f = _rows()
    rows = (t * 1e3, x * 1e3, f / 9.80665e-3)
    cap = load_capture(_write_csv(tmp_path / "c.csv", "t_ms,x_mm,force_gf", rows))
    np.testing.assert_allclose(cap.t_s, t, rtol=1e-12)
    np.testing.assert_allclose(cap.x_m, x, rtol=1e-12, atol=1e-18)
    np.testing.assert_allclose(cap.f_N, f, rtol=1e-12)
    assert cap.metadata["units"]["force_N"] == "force_gf"


def test_optional_and_unknown_columns(tmp_path):
    t, x, f = _rows()
    v = np.gradient(x, t)
    lines = ["t_s,x_m,force_N,v_mmps,a_mps2,temperature_C"]
    lines += [f"{a},{b},{c},{d * 1e3},0.0,21.5" for a, b, c, d in zip(t, x, f, v)]
    p = tmp_path / "c.csv"
    p.write_text("\n".join(lines) + "\n")
    cap = load_capture(p)
    np.testing.assert_allclose(cap.v_mps, v, rtol=1e-12)
    assert np.all(cap.a_mps2 == 0.0)
    assert any("temperature_C" in n for n in cap.notes)


@pytest.mark.parametrize("suffix", [".csv", ".npz"])
def test_round_trip_is_exact_and_atomic(tmp_path, suffix):
    t, x, f = _rows()
    cap = Capture.from_arrays(t, x, f, v_mps=np.gradient(x, t), metadata={"source": "probe 7", "rate": 100},
                              notes=["first note", "looks: like metadata"])
    path = tmp_path / f"cap{suffix}"
    save_capture(path, cap)
    back = load_capture(path)
    for name in ("t_s", "x_m", "f_N", "v_mps"):
        assert np.array_equal(getattr(back, name), getattr(cap, name))
    assert back.a_mps2 is None
    assert back.metadata["source"] == "probe 7"
    assert any("first note" in n for n in back.notes) and any("looks: like metadata" in n for n in back.notes)
    assert sorted(os.listdir(tmp_path)) == [f"cap{suffix}"]  # no temporary files left behind


def test_writer_refuses_missing_folder_and_bad_suffix(tmp_path):
    cap = Capture.from_arrays(*_rows())
    with pytest.raises(CaptureError, match="does not exist"):
        save_capture(tmp_path / "nope" / "c.csv", cap)
    with pytest.raises(CaptureError, match="unknown capture file type"):
        save_capture(tmp_path / "c.xlsx", cap)


def test_dropouts_are_detected_counted_and_excluded():
    path = os.path.join(SWITCH_DIR, "NK-Kailh-Box-Jade.csv")
    cap = load_capture(path)
    f = cap.f_N.copy()
    spikes = [100, 400, 401, 770, 1200]  # two adjacent, one in the click region, one near bottom-out
    f[spikes] = -207 * 9.80665e-3  # the HX711 drop reported by the tester's README
    dirty = Capture.from_arrays(cap.t_s, cap.x_m, f)
    assert dirty.dropouts.tolist() == spikes
    assert not dirty.valid[spikes].any() and dirty.valid.sum() == cap.n - len(spikes)
    assert f"{len(spikes)} dropout(s)" in dirty.describe()


def test_steps_and_ramps_are_not_dropouts():
    step = np.concatenate([np.full(50, 0.7), np.full(50, 0.2)])
    ramp = np.concatenate([np.linspace(0.5, 0.6, 40), np.linspace(0.6, 1.3, 8), np.linspace(1.3, 0.5, 8)])
    assert detect_dropouts(step).size == 0
    assert detect_dropouts(ramp).size == 0
    spiky = step.copy()
    spiky[20] = 3.0
    assert detect_dropouts(spiky).tolist() == [20]


BAD_CSV = {
    "empty": (b"", "file is empty"),
    "header only": (b"t_s,x_m,force_N\n", "no data lines"),
    "comments only": (b"# just a note\n", "no header"),
    "missing column": (b"t_s,x_m\n0,0\n", "missing column force_N"),
    "unknown unit": (b"t_s,x_furlong,force_N\n0,0,0\n", "unknown unit 'furlong'"),
    "no unit": (b"t_s,x,force_N\n0,0,0\n", "has no unit"),
    "two positions": (b"t_s,x_m,x_mm,force_N\n0,0,0,0\n", "two columns"),
    "binary": (bytes(range(256)) * 4, "NUL bytes"),
    "latin-1": ("t_s,x_m,force_N\n0,0,0 \xb5\n".encode("latin-1"), "not UTF-8"),
    "long line": (b"t_s,x_m,force_N\n" + b"1" * 5000 + b"\n", "longer than"),
}


def _valid_lines(n=50):
    t, x, f = _rows(n)
    return [f"{float(a)!r},{float(b)!r},{float(c)!r}" for a, b, c in zip(t, x, f)]


def _file(lines):
    return ("t_s,x_m,force_N\n" + "\n".join(lines) + "\n").encode()


def _mutate(i, text):
    lines = _valid_lines()
    lines[i] = text
    return _file(lines)


BAD_CSV.update({
    "truncated": (_file(_valid_lines()[:-1] + ["0.49,0.00"]), "expected 3 fields.*truncated"),
    "malformed number": (_mutate(10, "0.1,abc,1.0"), "line 12: column x_m: 'abc' is not a number"),
    "nan": (_mutate(10, "0.1,nan,1.0"), "line 12: column x_m is nan"),
    "inf": (_mutate(10, "0.1,0.0,inf"), "line 12: column force_N is inf"),
    "force past any probe": (_mutate(10, "0.1,0.0,1.1e300"), "column force_N sample 10: value 1.1e\\+300 is beyond"),
    "position past any probe": (_mutate(10, "0.1,-2e13,1.0"), "column x_m sample 10: value -2e\\+13 is beyond"),
    "decreasing time": (_mutate(10, "0.05,0.0,1.0"), "time is decreasing at sample 10"),
    "duplicated time": (_mutate(10, "0.09,0.0,1.0"), "time is duplicated at sample 10"),
    "too few": (_file(_valid_lines(5)), "only 5 samples"),
    "no motion": (_file([f"{i * 0.01},0.001,1.0" for i in range(50)]), "no motion"),
    "irregular": (_file([f"{(i * 0.01) ** 1.7},{i * 1e-5},1.0" for i in range(50)]), "too irregular"),
})


@pytest.mark.parametrize("case", sorted(BAD_CSV))
def test_bad_csv_gives_one_clear_error(tmp_path, case):
    data, pattern = BAD_CSV[case]
    path = tmp_path / "bad.csv"
    path.write_bytes(data)
    with pytest.raises(CaptureError, match=pattern) as info:
        load_capture(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def _npz(path, **arrays):
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return path


def test_bad_npz_files(tmp_path):
    t, x, f = _rows()
    good = _npz(tmp_path / "good.npz", t_s=t, x_m=x, force_N=f)
    assert load_capture(good).n == t.size
    cases = {
        "pickle": (_npz(tmp_path / "p.npz", t_s=t, x_m=x, force_N=np.array([{"a": 1}] * t.size, dtype=object)),
                   "pickles are refused"),
        "lengths": (_npz(tmp_path / "l.npz", t_s=t, x_m=x[:-1], force_N=f), "differ in length"),
        "missing": (_npz(tmp_path / "m.npz", t_s=t, x_m=x), "missing column force_N"),
        "2-D": (_npz(tmp_path / "d.npz", t_s=t, x_m=np.stack([x, x]), force_N=f), "must be 1-D"),
        "text dtype": (_npz(tmp_path / "s.npz", t_s=t, x_m=x, force_N=np.array(["a"] * t.size)), "expected numbers"),
    }
    trunc = tmp_path / "t.npz"
    trunc.write_bytes(good.read_bytes()[:200])
    cases["truncated"] = (trunc, "not a valid .npz")
    for name, (path, pattern) in cases.items():
        with pytest.raises(CaptureError, match=pattern):
            load_capture(path)


def test_bad_paths(tmp_path):
    with pytest.raises(CaptureError, match="no such file"):
        load_capture(tmp_path / "missing.csv")
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(CaptureError, match="is a directory"):
        load_capture(tmp_path / "dir.csv")
    with pytest.raises(CaptureError, match="unknown capture file type"):
        load_capture(tmp_path / "c.xlsx")


def test_zip_bomb_is_refused_before_expanding(tmp_path, monkeypatch):
    import hapticam.capture_io as capture_mod

    path = tmp_path / "bomb.npz"
    with open(path, "wb") as fh:
        np.savez_compressed(fh, t_s=np.zeros(2_000_000), x_m=np.zeros(2), force_N=np.zeros(2))
    assert path.stat().st_size < 100_000
    monkeypatch.setattr(capture_mod, "MAX_CAPTURE_BYTES", 100_000)  # 16 MB expanded > 8 x 100 kB
    with pytest.raises(CaptureError, match="would expand"):
        load_capture(path)
