"""Command-line behaviour a first-time user meets: plots, clear refusals, exit codes."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.image import imread

from hapticam.cli import main
from hapticam.capture_io import load_capture

from conftest import SWITCH_DIR

CAPTURE = str(SWITCH_DIR / "Gateron-Brown.csv")


def test_plot_draws_captures_and_models_to_a_png(tmp_path, capsys):
    out = tmp_path / "p.png"
    assert main(["plot", CAPTURE, "example:gateron-brown", "-o", str(out)]) == 0
    img = imread(out)
    assert img.shape[0] > 300 and img.shape[1] > 800                       # two panels side by side
    # something other than white and grid was drawn: many saturated (Okabe-Ito orange) pixels
    orange = np.all(np.abs(img[..., :3] - np.array([0xE6, 0x9F, 0x00]) / 255) < 0.08, axis=-1)
    assert orange.sum() > 200


@pytest.mark.parametrize("argv, message", [
    (["plot", CAPTURE, "-o", "x.jpg"], "PNG"),
    (["plot", CAPTURE, "-o", "/nonexistent/x.png"], "does not exist"),
    (["plot", "/nonexistent.csv", "-o", "x.png"], "no such file"),
    (["verify", "example:gateron-brown", CAPTURE, "--fit-threshold", "200"], "0 to 100"),
    (["verify", "example:gateron-brown", CAPTURE, "--fit-threshold", "-5"], "0 to 100"),
    (["verify", "example:gateron-brown", CAPTURE, "--speedup", "1e9"], "one servo tick per capture sample"),
])
def test_bad_arguments_give_one_line_and_exit_2_without_output(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not list(tmp_path.iterdir())


def test_debug_shows_the_traceback_and_still_exits_2(capsys):
    assert main(["--debug", "plot", "/nonexistent.csv"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "no such file" in err.splitlines()[-1]


def test_identify_writes_its_fit_plot_beside_the_model(tmp_path, capsys):
    model = tmp_path / "gb.yaml"
    assert main(["identify", "impedance", CAPTURE, "-o", str(model), "--plot"]) == 0
    assert (tmp_path / "gb.png").stat().st_size > 10_000
    text = capsys.readouterr().out
    assert "passive: yes" in text and "held-out fit" in text and "beyond it the force holds" in text


def test_render_refuses_an_active_model_unless_told(tmp_path, capsys):
    active = tmp_path / "active.yaml"
    assert main(["identify", "impedance", CAPTURE, "-o", str(active), "--allow-active", "--no-backlash"]) == 0
    capsys.readouterr()
    assert main(["render", str(active), "--simulated-clock", "--duration", "0.1"]) == 2
    assert "not passive" in capsys.readouterr().err
    assert main(["render", str(active), "--simulated-clock", "--duration", "0.1", "--allow-active"]) == 0
    assert "warning: not passive" in capsys.readouterr().err


def test_verify_prints_the_passivity_verdict_and_the_alignment(capsys):
    assert main(["verify", "example:gateron-brown", CAPTURE]) == 0
    out = capsys.readouterr().out
    assert "passive" in out and "alignment: backlash" in out
    capture = load_capture(CAPTURE)
    assert capture.n > 1000


def test_render_says_how_it_displays_a_stiffness_beyond_the_device(capsys):
    from hapticam.world.sim import SimParams
    from hapticam.models.files import load_model_only
    from hapticam.render.display import DISPLAY_MARGIN, model_stiffness, plan_display

    model = load_model_only("example:cherry-mx-red")
    spec = SimParams().spec()                                  # b = 2 N s/m: 4000 N/m at 1 kHz, 40,000 at 10 kHz
    source, worst = model_stiffness(model, spec)
    assert 4000 < worst < 40_000 and source.endswith("k_Npm[12]")  # the bottom-out wall segment
    assert plan_display((source, worst), spec, 10_000.0).coupling_Npm == 0.0     # within 2 b / T at 10 kHz
    assert main(["render", "example:cherry-mx-red", "--simulated-clock", "--duration", "0.2"]) == 0
    out = capsys.readouterr().out
    kc = DISPLAY_MARGIN * 4000.0
    assert f"floor displayed at {worst * kc / (worst + kc):.4g} N/m of {worst:.4g}" in out
    assert "expect saturation" not in out


def test_the_gate_reads_the_stiffness_the_handle_feels() -> None:
    """A Hunt-Crossley wall's k is N/m^1.5: at the device's peak force F its local stiffness is n F / d_F, checked
    here against a central difference of the law itself; a coupled hybrid key's inner stiffnesses act on its
    simulated key, so the handle feels the coupling alone."""
    from hapticam.world.sim import SimParams
    from hapticam.models.contact import Contact
    from hapticam.models.files import load_model_only
    from hapticam.render.display import model_stiffness, plan_display
    from hapticam.render.gate import stiffnesses_Npm

    spec = SimParams().spec()                                  # 8 N peak, 4000 N/m at 1 kHz
    wall = Contact(law="hunt-crossley", x_c_m=0.004, k_Npm=1.0e6, b_Nspm=0.0, n=1.5)
    depth = (spec.max_force_N / 1.0e6) ** (1.0 / 1.5)
    h = 1e-9
    local = 1.0e6 * ((depth + h) ** 1.5 - (depth - h) ** 1.5) / (2.0 * h)
    (name, k), = stiffnesses_Npm(wall, spec.max_force_N)
    assert k == pytest.approx(local, rel=1e-6) and "local, at 8 N" in name
    assert k == pytest.approx(30_000.0, rel=0.01)              # not 1e6
    assert stiffnesses_Npm(wall) == [("k_Npm", 1.0e6)]         # without a force: as written
    piano = load_model_only("example:piano-key")               # coupled: contact 5e6 inside, keybed 1e5 at the handle
    found = dict(stiffnesses_Npm(piano, spec.max_force_N))
    assert set(found) == {"coupling_k_Npm", "keybed_k_Npm", "return_spring_Npm"}
    # the kernel's own stiffness at the handle on the keybed, the key held where it is: the three together
    x = piano.keybed_m + 1e-3
    state = piano.compile().reset_state()
    piano.force(x, 0.0, 0.0, 0.0, state)                        # the key at rest under the handle
    h = 1e-7
    slope = (piano.force(x + h, 0.0, 0.0, 0.0, state.copy()) - piano.force(x - h, 0.0, 0.0, 0.0, state.copy())) / (2 * h)
    assert slope == pytest.approx(sum(found.values()), rel=1e-4)
    assert plan_display(model_stiffness(piano, spec), spec, 1000.0).stiffness_source == "keybed_k_Npm"


def test_control_refuses_a_coupled_keys_keybed_beyond_the_device() -> None:
    """A keybed of 1e9 N/m acts on the handle as a contact of 1e9 N/m does: both refused (it was accepted)."""
    from hapticam.world.sim import SimParams
    from hapticam.errors import UsageError
    from hapticam.models.files import load_model_only
    from hapticam.render.gate import control_check

    piano = load_model_only("example:piano-key")
    check = control_check(lambda: piano, SimParams().spec(), 1000.0)
    check(piano)                                               # as stiff as the current model: allowed
    with pytest.raises(UsageError, match="1e\\+09 N/m is beyond"):
        check(type(piano).from_dict({**piano.to_dict(), "keybed_k_Npm": 1.0e9}))


@pytest.mark.parametrize("argv, message", [
    (["render", "example:linear-key", "--duration", "inf"], "finite"),
    (["render", "example:linear-key", "--simulated-clock", "--duration", "1e7"], "ticks"),
    (["monitor", "foo", "--duration", "1"], "not an address"),
    (["render", "--telemetry", "example:linear-key"], "not an address"),
    (["bench", "render", "--json-file", "/nonexistent/x.json"], "does not exist"),
])
def test_render_monitor_bench_refuse_bad_arguments_before_working(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_monitor_says_when_nothing_publishes(capsys):
    assert main(["monitor", "tcp://127.0.0.1:1", "--duration", "0.3"]) == 0
    assert "nothing was published" in capsys.readouterr().err


def test_hybrid_key_passivity_is_analysed(capsys):
    assert main(["model", "show", "example:piano-key"]) == 0
    out = capsys.readouterr().out
    assert "passive as a mechanical system" in out and "not analysed" not in out


def test_windows_without_a_display_exit_2(monkeypatch):
    from hapticam.demos import key_window

    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)
    assert key_window.main(["--frames", "2"]) == 2


def test_the_readme_model_example_validates(tmp_path, capsys):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "docs" / "models.md").read_text()
    example = re.search(r"```yaml\n(format: hapticam-model.*?)```", readme, re.S).group(1)
    (tmp_path / "m.yaml").write_text(example)
    assert main(["model", "validate", str(tmp_path / "m.yaml")]) == 0


def test_ignored_capture_columns_reach_the_user(tmp_path, capsys):
    lines = open(CAPTURE).read().splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith("t_s")][0]
    rows = [l + ",7" for l in lines[head + 1:]]
    (tmp_path / "c.csv").write_text("\n".join(lines[:head] + [lines[head] + ",temperature_C"] + rows) + "\n")
    assert main(["identify", "impedance", str(tmp_path / "c.csv"), "-o", str(tmp_path / "m.yaml")]) == 0
    assert "ignored columns: temperature_C" in capsys.readouterr().out


def test_a_semicolon_csv_of_position_and_force_only_is_identified_with_notes(tmp_path, capsys):
    import numpy as np

    x = np.concatenate([np.linspace(0, 4e-3, 400), np.linspace(4e-3, 0, 400)])
    f = 100 * x + 0.3 * (x > 0.5e-3) - 0.02 * (np.arange(800) >= 400)
    (tmp_path / "s.csv").write_text("x_mm;force_N\n" + "\n".join(f"{a * 1e3:.6f};{b:.6f}" for a, b in zip(x, f)) + "\n")
    assert main(["identify", "impedance", str(tmp_path / "s.csv"), "-o", str(tmp_path / "m.yaml")]) == 0
    out = capsys.readouterr().out
    assert "no time column" in out and "separated by semicolons" in out and "passive: yes" in out


def test_quoted_numbers_and_booleans_are_refused_naming_file_and_field(tmp_path, capsys):
    for bad, said in (('["120"]', "the string '120'"), ("[true]", "a boolean"), ("[.nan]", "must be finite")):
        text = (open(str(SWITCH_DIR.parent.parent.parent / "docs" / "models.md")).read()
                .split("```yaml\n")[1].split("```")[0].replace("k_Npm: [120.0, 60.0]", f"k_Npm: [{bad[1:-1]}, 60.0]"))
        (tmp_path / "m.yaml").write_text(text)
        assert main(["model", "validate", str(tmp_path / "m.yaml")]) == 2
        err = capsys.readouterr().err
        assert f"{tmp_path / 'm.yaml'}:" in err and "k_Npm[0]" in err and said in err and ": ." not in err
