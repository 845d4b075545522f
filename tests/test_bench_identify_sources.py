"""``hapticam bench identify``: what the whole pipeline is timed on (a wheel has no repository captures),
one install hint for the optional peers, and a bar over the captures in a terminal."""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest

import hapticam.commands.bench.identify as bench
from conftest import SWITCH_DIR
from hapticam.errors import UsageError
from hapticam.identify.impedance.fit import predict_force
from hapticam.models.files import load_model_only
from terminal import Terminal


def test_without_the_repository_captures_the_pipeline_is_timed_on_the_example_models(monkeypatch, tmp_path):
    monkeypatch.setattr(bench, "DEFAULT_CAPTURES", tmp_path / "site-packages" / "tests" / "data")   # a wheel
    captures, what = bench.pipeline_captures()
    assert [c.name for c in captures] == [f"example-{name}" for name in bench.EXAMPLE_MODELS]
    assert "bundled example models" in what and "--captures" in what
    for capture, name in zip(captures, bench.EXAMPLE_MODELS):     # the example's own force, plus 2 mN of noise
        x = capture.x_m
        truth = predict_force(load_model_only(f"example:{name}"), x, np.gradient(x, capture.dt_s), 0 * x,
                              capture.dt_s)
        assert np.std(capture.f_N - truth) == pytest.approx(2e-3, rel=0.15)
    rows = bench.run_pipeline_bench(captures, repeat=1)
    assert [r["capture"] for r in rows] == [c.name for c in captures]
    assert all(r["fit_percent"] > 99.0 and r["holdout_fit_percent"] > 99.0 for r in rows)


def test_captures_are_taken_from_files_and_folders_and_their_absence_is_said(tmp_path, monkeypatch):
    # where a source checkout keeps the repository's captures (an installed wheel has none: see above)
    monkeypatch.setattr(bench, "DEFAULT_CAPTURES", SWITCH_DIR)
    shutil.copy(SWITCH_DIR / "Cherry-MX-Red.csv", tmp_path / "a.csv")
    (tmp_path / "more").mkdir()
    shutil.copy(SWITCH_DIR / "Gateron-Brown.csv", tmp_path / "more" / "b.csv")
    paths, what = bench.pipeline_captures([tmp_path / "a.csv", tmp_path / "more"])
    assert [p.name for p in paths] == ["a.csv", "b.csv"] and what.startswith("2 capture file(s) from")
    (tmp_path / "empty").mkdir()
    assert bench.pipeline_captures(tmp_path / "empty") == ([], f"no capture files (.csv, .txt, .npz, .ods) in {tmp_path / 'empty'}")
    with pytest.raises(UsageError, match="no such capture file or folder"):
        bench.pipeline_captures(tmp_path / "nowhere")
    paths, what = bench.pipeline_captures()
    assert len(paths) == 12 and what.startswith("the repository's 12 real switch captures")


def test_missing_peers_get_one_install_hint(monkeypatch):
    from hapticam.commands.bench.contact import bench_contact

    for peer in ("padasip", "filterpy"):
        monkeypatch.setitem(sys.modules, peer, None)                # not installed
    results = {"samples": 2000, "regressors": 4, "forgetting": 0.999, "hapticam_ewls_core_s": 1e-4,
               "hapticam_ewls_fit_s": 2e-4, "numpy_lstsq_s": 3e-4, "max_rel_diff_lam1_vs_lstsq": 1e-10,
               **bench._time_padasip(np.ones((10, 4)), np.ones(10), np.ones(4), 0.999, 1e-4),
               "contact": bench_contact(quick=True, repeat=1)}            # the contact bench's own rows
    results.update(peers_missing=bench.missing_peers(), peers_hint=bench.PEERS_HINT)
    assert results["peers_missing"] == ["padasip", "filterpy"]
    table = bench.format_table(results)
    assert table.count("pip install") == 1 and "pip install 'hapticam[bench]'" in table
    assert "padasip, filterpy" in table.splitlines()[-1]


def test_the_pipeline_shows_a_bar_over_the_captures_in_a_terminal(monkeypatch):
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    bench.run_pipeline_bench([SWITCH_DIR / "Cherry-MX-Red.csv"], repeat=1)
    assert "timing the whole pipeline" in term.getvalue() and "1/1" in term.getvalue()
