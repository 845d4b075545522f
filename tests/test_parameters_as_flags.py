"""A library function names its own parameter when refusing a value (the switch library's build and search,
the credentials of the render's endpoints, the demo); the command that calls it names the flag that set it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hapticam.cli import main
from hapticam.errors import ControlError, ParameterError
from hapticam.render.endpoints import Auth
from hapticam.library.build import MAX_JOBS, build_library
from hapticam.library.export import build_catalogue
from hapticam.library.search import MAX_HEAVIER_PERCENT, bound_parameter, make_wish

CAPTURE = str(Path(__file__).parent / "data" / "switch_curves" / "Cherry-MX-Red.csv")


@pytest.mark.parametrize("kwargs, parameter", [
    ({"lighter": "100%"}, "lighter"),
    ({"lighter": "lots"}, "lighter"),
    ({"heavier": f"{MAX_HEAVIER_PERCENT * 2:g}%"}, "heavier"),
    ({"lighter": "10%", "heavier": "10%"}, "heavier"),
])
def test_a_wish_names_the_parameter_it_refuses(kwargs, parameter) -> None:
    with pytest.raises(ParameterError) as refused:
        make_wish(**kwargs)
    assert refused.value.parameter == parameter
    assert "--" not in str(refused.value)                       # no command-line flag in a library message


def test_a_wish_names_the_bounds_it_refuses() -> None:
    with pytest.raises(ParameterError) as refused:
        make_wish(bounds={"travel": (None, 3.5), "bump": (0.8, 0.5)})
    assert refused.value.parameter == bound_parameter("bump") and "--" not in str(refused.value)
    assert make_wish(bounds={"bump": (0.5, 0.8)}).bounds == {"bump_peak_N": (0.5, 0.8)}


def test_a_wish_in_range_is_kept() -> None:
    assert make_wish(lighter="20%").force_factor == pytest.approx(0.8, rel=1e-12)
    assert make_wish(heavier="50").force_factor == pytest.approx(1.5, rel=1e-12)


@pytest.mark.parametrize("jobs", [0, MAX_JOBS + 1])
def test_a_build_names_jobs_and_writes_nothing(jobs, tmp_path) -> None:
    with pytest.raises(ParameterError) as refused:
        build_library([CAPTURE], tmp_path / "lib", jobs=jobs, quiet=True)
    assert refused.value.parameter == "jobs" and "--" not in str(refused.value)
    assert list(tmp_path.iterdir()) == []


def test_a_build_names_the_output_folder_it_cannot_make(tmp_path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ParameterError) as refused:
        build_library([CAPTURE], tmp_path / "file", jobs=1, quiet=True)
    assert refused.value.parameter == "out" and "--" not in str(refused.value)
    with pytest.raises(ParameterError) as refused:
        build_catalogue(tmp_path / "catalogue", tmp_path / "file", jobs=1, quiet=True)
    assert refused.value.parameter == "work" and "--" not in str(refused.value)
    assert (tmp_path / "file").read_text() == ""


def test_a_build_names_dask_for_a_bad_address(tmp_path) -> None:
    with pytest.raises(ParameterError) as refused:
        build_library([CAPTURE], tmp_path / "lib", dask="not an address", quiet=True)
    assert refused.value.parameter == "dask"


@pytest.mark.parametrize("argv, flag", [
    (["library", "nearest", "--like", "Cherry-MX-Red", "--lighter", "100%"], "--lighter"),
    (["library", "nearest", "--like", "Cherry-MX-Red", "--heavier", f"{MAX_HEAVIER_PERCENT * 2:g}%"], "--heavier"),
    (["library", "build", CAPTURE, "-o", "{tmp}/lib", "--jobs", "0"], "--jobs"),
    (["library", "build", CAPTURE, "-o", "{tmp}/lib", "--dask", "not-an-address"], "--dask"),
    (["library", "page", "--catalogue", "-o", "{tmp}/site", "--only", "0", "--jobs", "1"], "--only"),
])
def test_the_command_names_the_flag(argv, flag, tmp_path, capsys) -> None:
    capsys.readouterr()
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and flag in err[0] and "Traceback" not in err[0]
    parameter = flag.lstrip("-")
    assert f"{parameter}:" not in err[0].replace(f"{flag}:", "")   # said as the flag, not as the parameter


@pytest.mark.parametrize("argv, flags, parameter", [
    (["library", "nearest", "--like", "Cherry-MX-Red", "--bump-above", "0.8", "--bump-below", "0.5"],
     ("--bump-above", "--bump-below"), "bounds"),
    (["library", "list", "--travel-above", "4", "--travel-below", "3.5"], ("--travel-above", "--travel-below"),
     "bounds"),
    (["library", "build", CAPTURE, "-o", "{tmp}/file", "--quiet"], ("-o",), "out"),
    (["library", "build", "--catalogue", "-o", "{tmp}/cat", "--work", "{tmp}/file", "--quiet"], ("--work",), "work"),
])
def test_the_command_names_the_flags_of_bounds_and_folders(argv, flags, parameter, tmp_path, capsys) -> None:
    (tmp_path / "file").write_text("")
    capsys.readouterr()
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and "Traceback" not in lines[0]
    assert all(flag in lines[0] for flag in flags)
    assert f"{parameter}:" not in lines[0].replace(f"--{parameter}:", "") and "bounds[" not in lines[0]


def _secret(folder: Path, mode: int) -> str:
    path = folder / "secret"
    path.write_text("correct horse battery staple\n")
    path.chmod(mode)
    return str(path)


def test_credentials_name_their_parameter_and_stay_a_control_error(tmp_path) -> None:
    with pytest.raises(ControlError) as refused:
        Auth.from_options(_secret(tmp_path, 0o644), None)
    assert refused.value.parameter == "secret_file" and "--" not in str(refused.value)
    with pytest.raises(ControlError) as refused:
        Auth.from_options(None, str(tmp_path / "no-such-folder"))
    assert refused.value.parameter == "curve_dir"
    assert Auth.from_options(_secret(tmp_path, 0o600), None).secret == b"correct horse battery staple"


def test_the_monitor_names_the_credential_flags(tmp_path, capsys) -> None:
    capsys.readouterr()
    argv = ["monitor", "tcp://127.0.0.1:1", "--duration", "0.1"]
    assert main(argv + ["--auth-secret", _secret(tmp_path, 0o644)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--auth-secret" in err[0] and "secret_file" not in err[0]
    assert main(argv + ["--auth-curve", str(tmp_path / "no-such-folder")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--auth-curve" in err[0] and "curve_dir" not in err[0]


def test_the_demo_names_target_and_out(tmp_path, capsys) -> None:
    from hapticam.demos.camera import run_camera

    with pytest.raises(ParameterError) as refused:
        run_camera("knob", out_dir=tmp_path / "dk", say=lambda _line: None)
    assert refused.value.parameter == "target"
    (tmp_path / "file").write_text("")
    with pytest.raises(ParameterError) as refused:
        run_camera(out_dir=tmp_path / "file", say=lambda _line: None)
    assert refused.value.parameter == "out_dir"
    capsys.readouterr()
    assert main(["demo", "--target", "knob", "--out", str(tmp_path / "dk")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--target" in err[0]
    assert main(["demo", "--sweep-seconds", "2", "--out", str(tmp_path / "file")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out" in err[0] and "out_dir" not in err[0]
    assert [p.name for p in tmp_path.iterdir()] == ["file"]              # nothing written by the refused runs
