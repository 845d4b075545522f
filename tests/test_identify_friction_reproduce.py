"""``hapticam reproduce seed003-furuta`` (quick run through the CLI) and the checks of its rows."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hapticam.cli import main
from hapticam.identify.friction import paper, uas
from hapticam.commands.reproduce.friction import UAS_NOT_IDENTIFIED, implied_gamma_table3


def _row(rows: list, start: str) -> list:
    hits = [r for r in rows if r[0].startswith(start)]
    assert len(hits) == 1, (start, [r[0] for r in rows])
    return hits[0]


def test_quick_reproduction_through_the_cli(tmp_path, capsys) -> None:
    assert main(["reproduce", "--list"]) == 0
    assert "seed003-furuta" in capsys.readouterr().out
    assert main(["reproduce", "seed003-furuta", "--quick", "-o", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["seed003-furuta"]
    rows, figures = data["rows"], data["figures"]
    assert sorted(p.rsplit("/", 1)[-1] for p in figures) == ["seed003_angles.png", "seed003_estimates.png"]
    for p in figures:
        with open(p, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert UAS_NOT_IDENTIFIED in data["notes"]  # the observer's output is never presented as identified
    grey = [float(x) for x in _row(rows, "fit eq. 53 arm / pendulum: grey-box")[1].split(" / ")]
    assert min(grey) > 98.0  # even on the quick 8 s record the grey-box reproduces the angles
    uas_fit = [float(x) for x in _row(rows, "fit eq. 53 arm / pendulum: UAS read-out")[1].split(" / ")]
    assert max(uas_fit) < 95.0  # the end points of eq. 23 do not
    assert _row(rows, "computation time: UAS observer")[2] == "3.43 (UAS)"
    assert _row(rows, "normalised time eq. 54: UAS observer")[2].startswith(f"{3.43 / 35000:.3e}")
    end = _row(rows, "eq. 23 end points (gamma 5.33e-3) vs Table IV")
    assert float(end[1]) < 0.05  # %
    closed = _row(rows, "eq. 23 closed form vs the observer's z")
    assert float(closed[1]) < 1e-9
    # the UAS read-out column of the parameter rows is eq. 23's end point, whatever the record
    z_star = uas.eq23_end_point()
    for i, name in enumerate(paper.PARAM_NAMES):
        ours = _row(rows, f"{name}: grey-box / UAS read-out / naive")[1].split(" / ")
        assert float(ours[1]) == pytest.approx(z_star[i], rel=1e-3)
    assert main(["reproduce", "seed003-nope"]) == 2


def test_table3_estimates_need_a_negative_gamma() -> None:
    """Eq. 23 with Table II: mu_v0 and theta_t0 share bounds and confidences, so
    z = z* + (z0 - z*) exp(-51 S) for both with one z* and one S. Table III's guesses and estimates then fix
    z*, and gamma = 51 z* - zu - 50 zl is negative: no admissible gamma reproduces Table III."""
    gamma = implied_gamma_table3()
    assert gamma < 0.0
    settings = uas.UASSettings(gamma=gamma)
    z_star = uas.eq23_end_point(settings)
    g, est = paper.TABLE3_GUESS[[2, 3]], paper.TABLE3_ESTIMATE[[2, 3]]
    decay = (est - z_star[[2, 3]]) / (g - z_star[[2, 3]])
    assert decay[0] == pytest.approx(decay[1], rel=1e-9)  # one S reproduces both printed estimates exactly
    S = -math.log(decay[0]) / 51.0
    np.testing.assert_allclose(uas.eq23_closed_form(paper.TABLE3_GUESS, np.array([S]), settings)[0, [2, 3]], est,
                               rtol=1e-9)


def test_bench_identify_times_uas_and_grey_box_beside_the_naive_baseline(bench_identify_json,
                                                                         bench_identify_table) -> None:
    """The seed 003 rows of ``hapticam bench identify`` (quick: --samples below 100,000)."""
    code, out, _, _ = bench_identify_json
    assert code == 0
    fr = json.loads(out)["friction"]
    assert fr["paper_uas_s"] == 3.43 and fr["required_speedup"] == 10.0 and fr["duration_s"] == 8.0
    assert [r["key"] for r in fr["rows"]] == ["uas", "greybox", "naive"]  # scipy's peer: full run only
    for r in fr["rows"]:
        assert r["time_s"] > 0 and r["speedup_vs_paper_uas"] == pytest.approx(3.43 / r["time_s"])
        assert r["naive_over_this"] == pytest.approx(fr["rows"][2]["time_s"] / r["time_s"])
    assert fr["rows"][1]["fit_arm_pct"] > 98.0 and fr["rows"][1]["fit_pendulum_pct"] > 98.0
    code, text, _, _ = bench_identify_table
    assert code == 0 and "seed 003 friction" in text
