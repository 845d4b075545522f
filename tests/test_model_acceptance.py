"""One definition of an acceptable model (hapticam.models.acceptance): the model files, ``model validate``
and render's gate judge a model alike; every kind declares its parameters' physical ranges."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from hapticam.cli import build_parser, main
from hapticam.world.sim import SimParams
from hapticam.errors import ModelFileError, ModelValidationError, UsageError
from hapticam.models import (Composite, Contact, EndStops, Friction, HybridKey, ImpedanceTable, Model,
                             SegmentedImpedance)
from hapticam.models.files import example_names, load_model
from hapticam.models.friction import LAWS
from hapticam.models.passivity import check_passivity
from hapticam.render.gate import check_for_device

PIANO = Path(__file__).resolve().parent.parent / "models" / "examples" / "piano-key.yaml"


def _impedance_file(path: Path, b_Nspm: list[float], k_Npm: list[float], active: bool | None = None) -> Path:
    parameters = {"interpolation": "constant",
                  "press": {"breakpoints_m": [0.0, 0.001, 0.002, 0.004][:len(k_Npm) + 1], "m_kg": [0.0] * len(k_Npm),
                            "b_Nspm": b_Nspm, "k_Npm": k_Npm, "f0_N": [0.0] * len(k_Npm)}}
    if active is not None:
        parameters["active"] = active
    path.write_text(yaml.safe_dump({"format": "hapticam-model", "schema_version": 1, "kind": "segmented-impedance",
                                    "parameters": parameters}))
    return path


def _absurd(tmp_path: Path, which: str) -> tuple[Path, str]:
    """The three models ``model validate`` once called valid, with the parameter each message must name."""
    if which == "negative damping":
        return _impedance_file(tmp_path / "d.yaml", [0.5, -1.0, 0.5], [100.0, 200.0, 300.0]), "press.b_Nspm[1]"
    if which == "stiffness 1e300":
        return _impedance_file(tmp_path / "k.yaml", [0.0], [1e300]), "press.k_Npm[0]"
    text = PIANO.read_text().replace("hammer_mass_kg: 0.010", "hammer_mass_kg: 1.0e-30")
    (tmp_path / "h.yaml").write_text(text)
    return tmp_path / "h.yaml", "hammer_mass_kg"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


RENDER = ("--simulated-clock", "--duration", "0.05")


@pytest.mark.parametrize("which", ["negative damping", "stiffness 1e300", "hammer 1e-30 kg"])
def test_validate_refuses_what_render_refuses_with_the_same_reason(tmp_path, capsys, which):
    path, parameter = _absurd(tmp_path, which)
    code_v, _, err_v = _run(capsys, "model", "validate", str(path))
    code_r, _, err_r = _run(capsys, "render", str(path), *RENDER)
    assert code_v == code_r == 2
    assert err_v == err_r and parameter in err_v and len(err_v.strip().splitlines()) == 1
    code_j, out_j, _ = _run(capsys, "model", "validate", "--json", str(path))
    verdict = json.loads(out_j)
    assert code_j == 2 and verdict["valid"] is False and parameter in verdict["error"]


def test_negative_damping_loads_only_when_marked_active_and_then_render_needs_allow_active(tmp_path, capsys):
    path = _impedance_file(tmp_path / "a.yaml", [0.5, -1.0, 0.5], [100.0, 200.0, 300.0], active=True)
    model, _ = load_model(path)
    assert model.active and not check_passivity(model).passive
    code, out, _ = _run(capsys, "model", "validate", "--json", str(path))
    verdict = json.loads(out)
    assert code == 1 and verdict["valid"] and not verdict["passive"] and not verdict["renderable"]
    assert verdict["marked_active"] and "--allow-active" in verdict["refusals"][0]
    code, _, err = _run(capsys, "render", str(path), *RENDER)
    assert code == 2 and "not passive" in err and "--allow-active" in err
    assert _run(capsys, "model", "validate", "--allow-active", str(path))[0] == 0
    code, _, err = _run(capsys, "render", str(path), *RENDER, "--allow-active")
    assert code == 0 and "warning: not passive" in err


def test_validate_passes_every_bundled_example_as_render_does(capsys):
    for name in example_names():
        code, out, _ = _run(capsys, "model", "validate", f"example:{name}")
        assert code == 0 and "passive:    yes" in out and "renderable: yes" in out, (name, out)


def test_the_gate_refuses_a_model_built_in_code_as_the_files_do():
    spec = SimParams().spec()
    stiff = SegmentedImpedance(ImpedanceTable([0.0, 0.004], [0.0], [0.0], [1e300], [0.0]))
    with pytest.raises(ModelValidationError, match=r"press\.k_Npm\[0\]: 1e\+300 N/m is outside"):
        check_for_device(stiff, spec, 1000.0)
    with pytest.raises(ModelValidationError, match=r"press\.k_Npm\[0\]"):
        check_for_device(stiff, spec, 1000.0, allow_active=True)        # a range is not a passivity matter
    active = SegmentedImpedance(ImpedanceTable([0.0, 0.004], [0.0], [-1.0], [100.0], [0.0]), active=True)
    with pytest.raises(UsageError, match="not passive"):
        check_for_device(active, spec, 1000.0)
    assert any("negative damping" in w for w in check_for_device(active, spec, 1000.0, allow_active=True))


@pytest.mark.parametrize("parameter, inside, outside", [
    ("hammer_mass_kg", 1e-6, 0.9e-6), ("keybed_k_Npm", 1e8, 1.01e8), ("key_mass_kg", 0.0, 1e-9),
    ("return_spring_Npm", 1e8, 1.01e8), ("preload_N", -1e4, -1.01e4), ("keybed_b_Nspm", 1e5, 1.01e5),
])
def test_a_hybrid_key_parameter_is_refused_just_past_its_bound(tmp_path, parameter, inside, outside):
    data = yaml.safe_load(PIANO.read_text())
    for value, accepted in ((inside, True), (outside, False)):
        data["parameters"][parameter] = value
        data["parameters"].pop("coupling_k_Npm")                # a coupled key needs a key mass > 0
        data["parameters"].pop("coupling_b_Nspm", None)
        (tmp_path / "m.yaml").write_text(yaml.safe_dump(data))
        data = yaml.safe_load(PIANO.read_text())
        if accepted:
            load_model(tmp_path / "m.yaml")
        else:
            with pytest.raises(ModelFileError, match=rf"^{tmp_path / 'm.yaml'}: {parameter}: "):
                load_model(tmp_path / "m.yaml")


def _one_of_each_kind() -> list[Model]:
    frictions = [Friction(law, **{name: 0.5 for name in fields}) for law, (_, fields, _, _) in LAWS.items()]
    return [SegmentedImpedance(ImpedanceTable([0.0, 1e-3, 2e-3], [0.0, 0.0], [0.1, 0.1], [100.0, 50.0],
                                              [0.0, 0.05]), dead_band_mps=1e-3),
            Contact("linear", 1e-3, 1e3, 1.0), Contact("hunt-crossley", 1e-3, 1e6, 10.0, n=1.5, side=-1),
            EndStops(-1e-3, 5e-3, 2000.0, 1.0), Friction("coulomb-viscous", active_from_m=1e-3, Fc_N=0.1),
            *frictions, HybridKey.from_dict(yaml.safe_load(PIANO.read_text())["parameters"])]


def test_every_numeric_parameter_of_every_kind_has_a_declared_range():
    models = _one_of_each_kind() + [load_model(f"example:{name}")[0] for name in example_names()]
    for model in models:
        for leaf in model.components():
            for path, _ in leaf.parameter_values():
                assert leaf.range_of(path) is not None, (leaf.kind, path)
            leaf.check_ranges()


def test_a_hunt_crossley_contact_is_bounded_by_its_stiffness_at_the_force_ceiling():
    # k d^n reaches 1e4 N at d_F = (1e4 / k)^(1/n), where its stiffness n 1e4 / d_F must stay <= 1e8 N/m:
    # k <= 1e4 (1e8 / (n 1e4))^n, 5.44e9 N/m^1.5 for n = 1.5 (Hertzian steel of a 1 mm sphere is ~4e9)
    limit = 1e4 * (1e8 / 1.5e4) ** 1.5
    Contact("hunt-crossley", 0.0, 0.999 * limit, 0.0, n=1.5).check_ranges()
    with pytest.raises(ModelValidationError, match=r"^k_Npm: .* N/m\^n is outside"):
        Contact("hunt-crossley", 0.0, 1.001 * limit, 0.0, n=1.5).check_ranges()


def test_a_kind_the_passivity_check_does_not_know_is_not_passive():
    class Unknown(Model):
        def to_dict(self):
            return {}

        @classmethod
        def from_dict(cls, data):
            return cls()

        def params_block(self):
            return np.zeros(0)

        def initial_state(self):
            return np.zeros(0)

    Unknown.kind = "unanalysed"             # set after the class exists: not registered as a file kind
    report = check_passivity(Composite([Contact("linear", 0.0, 100.0, 0.0), Unknown()]))
    assert not report.passive and any("unanalysed" in issue for issue in report.issues)


@pytest.mark.parametrize("where", ["interpolation", "unknown key", "law"])
def test_a_huge_value_is_quoted_as_a_short_excerpt(tmp_path, capsys, where):
    huge = "x" * 5_000_000
    data = yaml.safe_load(_impedance_file(tmp_path / "m.yaml", [0.0], [1.0]).read_text())
    if where == "interpolation":
        data["parameters"]["interpolation"] = huge
    elif where == "unknown key":
        data["parameters"][huge] = 1.0
    else:
        data = {"format": "hapticam-model", "schema_version": 1, "kind": "contact",
                "parameters": {"law": huge, "x_c_m": 0.0, "k_Npm": 1.0, "b_Nspm": 0.0}}
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(data, width=10**8))
    code, _, err = _run(capsys, "model", "validate", str(tmp_path / "m.yaml"))
    assert code == 2 and len(err) < 400 and "5000000 characters" in err


def test_convert_and_validate_describe_themselves_in_help():
    parser = build_parser()
    model = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "model")[1]
    actions = model._subparsers._group_actions[0].choices
    for name in ("convert", "validate"):
        assert actions[name].description and len(actions[name].description) > 40, name
    assert "exit" in actions["validate"].description.lower()


def test_linear_interpolation_is_fitted_passive_and_its_file_agrees_with_its_summary(tmp_path, capsys):
    from conftest import SWITCH_DIR

    out = tmp_path / "lin.yaml"
    code, text, _ = _run(capsys, "identify", "impedance", str(SWITCH_DIR / "Cherry-MX-Red.csv"), "-o", str(out),
                         "--interpolation", "linear", "--json", "--quiet")
    summary = json.loads(text)
    model, doc = load_model(out)
    assert code == 0 and model.interpolation == "linear" and not model.active
    assert summary["passive"] is doc.provenance["metrics"]["passive"] is check_passivity(model).passive is True
    assert doc.provenance["settings"]["passivity_constraints"] is True
    assert doc.provenance["metrics"]["passivity_issues"] == summary["passivity_issues"] == []
    assert summary["fit_percent"] >= 99.0 and doc.provenance["metrics"]["passivity_cost_percent"] < 1.0
    assert _run(capsys, "render", str(out), *RENDER)[0] == 0


def test_allow_active_writes_a_model_marked_active_that_says_it_is_not_passive(tmp_path, capsys):
    from conftest import SWITCH_DIR

    out = tmp_path / "act.yaml"
    code, text, _ = _run(capsys, "identify", "impedance", str(SWITCH_DIR / "Cherry-MX-Red.csv"), "-o", str(out),
                         "--allow-active", "--no-backlash", "--json", "--quiet")
    summary = json.loads(text)
    model, doc = load_model(out)
    assert code == 0 and model.active and yaml.safe_load(out.read_text())["parameters"]["active"] is True
    assert summary["passive"] is doc.provenance["metrics"]["passive"] is False
    assert doc.provenance["settings"]["passivity_constraints"] is False
    assert _run(capsys, "model", "validate", str(out))[0] == 1


def test_the_linear_passive_design_predicts_the_written_tables_static_force():
    from hapticam.identify.impedance.passive_fit import LinearDesign, with_held_ends

    rng = np.random.default_rng(5)
    bp = np.sort(rng.uniform(0.0, 4e-3, 7))
    design = LinearDesign(bp=bp, x=bp, phi=np.ones((bp.size, 4)), y=np.zeros(bp.size), free=[0, 1, 2, 3],
                          fixed=np.zeros(4), hold_m=0.5e-3)
    theta = np.column_stack([rng.uniform(0, 0.01, 7), rng.uniform(0, 1, 7), rng.normal(0, 300, 7),
                             rng.normal(0, 1, 7)])
    held_bp, held = with_held_ends(bp, theta, design.hold_m)
    model = SegmentedImpedance(ImpedanceTable(held_bp, *held.T), interpolation="linear")
    x = np.concatenate([rng.uniform(-1e-3, 5e-3, 400), held_bp])
    np.testing.assert_allclose(design.static_rows(x) @ theta.ravel(), model.static_force(x, 1), rtol=1e-9, atol=1e-9)
