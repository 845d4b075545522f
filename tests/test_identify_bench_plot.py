"""bench identify --plot: the pipeline's time and fit per capture drawn from the bench's own rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hapticam.errors import HapticError
from hapticam.commands.bench.identify import run_pipeline_bench
from hapticam.commands.bench.identify_plot import plot_pipeline


def test_pipeline_rows_are_drawn(tmp_path):
    for name in ("Cherry-MX-Red.csv", "Gateron-Brown.csv"):
        shutil.copy(Path(__file__).parent / "data" / "switch_curves" / name, tmp_path / name)
    rows = run_pipeline_bench(tmp_path, repeat=1)
    assert [r["capture"] for r in rows] == ["Cherry-MX-Red.csv", "Gateron-Brown.csv"]
    assert all(r["fit_percent"] > 99.0 and r["holdout_fit_percent"] > 99.0 and r["pipeline_s"] < 2.0 for r in rows)
    png = plot_pipeline(rows, tmp_path / "pipeline.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(HapticError, match="no pipeline rows"):
        plot_pipeline([], tmp_path / "empty.png")
    assert not (tmp_path / "empty.png").exists()
