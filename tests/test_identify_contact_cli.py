"""``hapticam identify contact`` and ``hapticam reproduce`` on synthetic records of known truth."""

from __future__ import annotations

import json

import pytest

from hapticam.capture import Capture
from hapticam.capture_io import save_capture
from hapticam.cli import main
from hapticam.identify.contact.synthetic import persistent_excitation, quasi_static_steps
from hapticam.models.files import load_model


def _capture(tmp_path, record, name):
    path = tmp_path / name
    save_capture(path, Capture.from_arrays(record.t_s, record.x_m, record.f_N, detect=False))
    return str(path)


def test_identify_contact_recovers_k_and_b_and_writes_a_contact_model(tmp_path, capsys):
    cap = _capture(tmp_path, persistent_excitation(k=1e6, b=200.0, duration_s=2.0), "wall.csv")
    out = tmp_path / "wall.yaml"
    assert main(["identify", "contact", cap, "-o", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["k_Npm"] == pytest.approx(1e6, rel=0.01) and data["b_identifiable"]
    assert data["b_Nspm"] == pytest.approx(200.0, rel=0.05)
    model, doc = load_model(out)
    assert model.kind == "contact" and model.to_dict()["k_Npm"] == pytest.approx(1e6, rel=0.01)
    assert doc.provenance["method"] == "contact-gls"


def test_all_nine_side_by_side_with_a_convergence_plot_and_unidentifiable_damping_said(tmp_path, capsys):
    cap = _capture(tmp_path, quasi_static_steps(k=1e6, b=200.0), "steps.csv")
    png = tmp_path / "conv.png"
    assert main(["identify", "contact", cap, "-o", str(tmp_path / "s.yaml"), "--estimator", "all",
                 "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    for name in ("rls", "ils", "ia", "kalman", "gls", "etfe", "oem", "eem", "gmle"):
        assert f"\n{name} " in text
    assert "not identifiable" in text and png.stat().st_size > 20_000
    assert load_model(tmp_path / "s.yaml")[0].to_dict()["b_Nspm"] == 0.0


def test_ia_writes_its_model_without_standard_errors(tmp_path, capsys):
    """IA gives no standard error: the model is written with the metrics it has (it was refused for a NaN)."""
    cap = _capture(tmp_path, persistent_excitation(k=1e6, b=200.0, duration_s=2.0), "wall.csv")
    assert main(["identify", "contact", cap, "-o", str(tmp_path / "ia.yaml"), "--estimator", "ia"]) == 0
    model, doc = load_model(tmp_path / "ia.yaml")
    assert model.to_dict()["k_Npm"] == pytest.approx(1e6, rel=0.05) and "k_se_Npm" not in doc.provenance["metrics"]


@pytest.mark.parametrize("plot", ["nodir/p.png", "folder.png"])
def test_a_plot_that_cannot_be_written_is_refused_before_any_model_is(tmp_path, capsys, monkeypatch, plot):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.png").mkdir()
    cap = _capture(tmp_path, persistent_excitation(k=1e6, b=200.0, duration_s=2.0), "wall.csv")
    assert main(["identify", "contact", cap, "-o", "m.yaml", "--plot", plot]) == 2
    assert "--plot" in capsys.readouterr().err and not (tmp_path / "m.yaml").exists()


def test_reproduce_lists_and_runs_the_contact_experiment(tmp_path, capsys):
    assert main(["reproduce", "--list"]) == 0
    assert "seed004-contact" in capsys.readouterr().out
    assert main(["reproduce", "seed004-contact", "--quick", "-o", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["seed004-contact"]
    assert any("Hertz" in row[0] for row in data["rows"]) and all(p.endswith(".png") for p in data["figures"])
    assert main(["reproduce", "nope"]) == 2
