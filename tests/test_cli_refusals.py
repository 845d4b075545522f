"""Mistaken command lines a first-time user gives: one message, exit 2, nothing left behind; and --passivity,
which could not be used at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from hapticam.cli import main

CAPTURE = str(Path(__file__).parent / "data" / "switch_curves" / "Cherry-MX-Red.csv")


def test_render_with_the_passivity_controller_runs(capsys) -> None:
    """It raised NameError for every model: the session checked the model against the loop it had not built."""
    assert main(["render", "example:linear-key", "--simulated-clock", "--duration", "0.1", "--passivity"]) == 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("group", ["identify", "bench", "library"])
def test_a_command_group_without_its_subcommand_says_so_on_stderr(group: str, capsys) -> None:
    assert main([group]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"'hapticam {group}' needs a subcommand" in err


@pytest.mark.parametrize("argv, message", [
    (["library", "build", CAPTURE, "-o", "/proc/lib", "--quiet"], "cannot create the folder"),
    (["reproduce", "seed004-contact", "--quick", "-o", "/proc/rp"], "cannot create the folder"),
    (["reproduce", "seed004-contact", "--quick", "-o", CAPTURE], "exists and is not a folder"),
    (["demo", "--sweep-seconds", "2", "--out", "/proc/dm"], "cannot create the folder"),
    (["demo", "--sweep-seconds", "2", "--out", "{tmp}/dm", "--seed", "-1"], "--seed"),
    (["library", "build", CAPTURE, "-o", "{tmp}/lib", "--dask", "garbage"], "not a scheduler address"),
    (["library", "build", CAPTURE, "-o", "{tmp}/lib", "--jobs", "100000"], "--jobs: must be from 1"),
    (["probe", "linear-switch", "-o", "{tmp}/q.csv", "--excitation", "multisine", "--duration", "0.5",
      "--band-hz", "1", "1e9"], "above 1000 Hz"),
    (["bench", "identify", "--repeat", "1", "--samples", "1000000000"], "--samples must be from 1000"),
    (["bench", "library", "--copies", "1000000", CAPTURE], "--copies must be from 1"),
    (["bench", "render", "--seconds", "1e9"], "at most 3600 s"),
    (["identify", "impedance", CAPTURE, "-o", "{tmp}/o.yaml", "--fix", "m=-1"], "a negative mass or damping"),
    (["render", "example:linear-key", "--simulated-clock", "--telemetry", "tcp://127.0.0.1:99999"],
     "from 0 to 65535"),
    (["device", "serve", "tcp://127.0.0.1:99999", "--duration", "1"], "from 0 to 65535"),
    (["device", "serve", "--duration", "1e308"], "of at most 1e+09"),
    (["verify", "example:linear-key", CAPTURE, "--rate", "1e9"], "between 100 and 10000 Hz"),
    (["monitor", "--batches", "-1", "--duration", "1"], "--batches must be >= 1"),
    (["render", "example:linear-key", "--simulated-clock", "--seed", "-1"], "--seed"),
    (["render", "example:linear-key", "--simulated-clock", "--depth-mm", "1e9"], "(0, 50]"),
    (["bench", "identify", "--repeat", "1", "--plot", "{tmp}/x.txt"], "the plot is a PNG"),
    (["identify", "impedance", CAPTURE, "-o", "/proc/x.yaml"], "cannot write in /proc"),
    (["bench", "soak", "--minutes", "0.05", "--json-file", "/proc/x.json"], "cannot write in /proc"),
    (["identify", "contact", CAPTURE, "-o", "{tmp}/c.yaml", "--plot", "/proc/x.png"], "cannot write in /proc"),
])
def test_refused_with_one_message_and_nothing_left(argv: list[str], message: str, tmp_path, capsys) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []                    # no folder, no half-written file


def test_a_yaml_number_read_as_text_is_explained(tmp_path, capsys) -> None:
    model = tmp_path / "m.yaml"
    model.write_text("format: hapticam-model\nschema_version: 1\nkind: contact\nparameters:\n"
                     "  law: linear\n  x_c_m: 0.001\n  k_Npm: 3e3\n  b_Nspm: 0.0\n")
    assert main(["model", "validate", str(model)]) == 2
    assert "write 3.0e+3" in capsys.readouterr().err


def test_a_repeated_time_is_shown_as_numbers(tmp_path, capsys) -> None:
    capture = tmp_path / "c.csv"
    capture.write_text("t_s,x_m,force_N\n" + "".join(f"{max(i - 1, 0) * 0.001},{i * 1e-5},{i * 0.01}\n"
                                                      for i in range(50)))
    assert main(["identify", "impedance", str(capture), "-o", str(tmp_path / "o.yaml")]) == 2
    err = capsys.readouterr().err
    assert "time is duplicated at sample 1 (t_s 0.0 then 0.0)" in err and "np.float64" not in err


@pytest.mark.parametrize("argv, message", [
    (["identify", "impedance", CAPTURE, "-o", "{tmp}/o.yaml", "--fix", "b=1e300"], "--fix"),
    (["identify", "friction", "{tmp}/sd.csv", "-o", "{tmp}/f.yaml", "--inertia", "1e300"], "--inertia"),
    (["identify", "hybrid-key", "{tmp}/sd.csv", "-o", "{tmp}/k.yaml", "--device-damping", "1e300"], "--device-damping"),
    (["identify", "impedance", "{tmp}/sd.csv", "-o", "{tmp}/o.yaml"], "a rotary capture"),
    (["identify", "impedance", CAPTURE, "-o", "{tmp}/o.yaml", "--validate", "{tmp}/flat.csv"], "never changes"),
    (["demo", "--target", "knob", "--out", "{tmp}/dk"], "a rotary target"),
])
def test_options_beyond_physics_and_the_wrong_axis_are_refused(argv, message, tmp_path, capsys) -> None:
    """A knob's spin-down given to identify impedance was read as 8.4 m of travel; --inertia 1e300 flooded
    stderr with warnings and blamed the output file; a validation capture with a flat force gave a -inf fit."""
    assert main(["probe", "knob", "-o", str(tmp_path / "sd.csv"), "--excitation", "spin-down", "--duration", "2"]) == 0
    (tmp_path / "flat.csv").write_text("t_s,x_m,force_N\n" + "".join(f"{i * 0.001},{i * 1e-5},0\n" for i in range(400)))
    before = set(tmp_path.iterdir())
    capsys.readouterr()
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "Warning" not in err
    assert set(tmp_path.iterdir()) == before


def test_a_library_build_with_a_capture_it_cannot_read_exits_1(tmp_path, capsys) -> None:
    """It exited 0 with every capture failed; the failed entry is kept in the library, marked failed."""
    bad = tmp_path / "img.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    assert main(["library", "build", str(bad), "-o", str(tmp_path / "lib"), "--jobs", "1", "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert "0 built, 1 failed" in out and "could not be built" in err
