"""The switch catalogue on the command line without a build (list, show, nearest with a person's wishes,
compare, render), its refusals, and a catalogue build that lists a broken capture and resumes."""

from __future__ import annotations

import json

import pytest

from hapticam.cli import main
from hapticam.library.catalogue import distance
from hapticam.library.entry import kind_of
from hapticam.library.search import FORCE_FEATURES
from hapticam.library.switches import CATALOGUE_DIR, load_catalogue

from conftest import SWITCH_DIR


@pytest.fixture(scope="module")
def entries():
    return {e["name"]: e for e in load_catalogue()["entries"]}


def _json(capsys, *argv, code=0):
    capsys.readouterr()
    assert main(list(argv)) == code
    return json.loads(capsys.readouterr().out)


def test_list_keeps_exactly_the_tactile_switches_with_a_bump_over_0_6_N(entries, capsys):
    data = _json(capsys, "library", "list", "--tactile", "--bump-above", "0.6", "--json")
    expected = {n for n, e in entries.items() if e["status"] == "ok" and kind_of(e["features"]) == "tactile"
                and e["features"]["bump_peak_N"] >= 0.6}
    assert {e["name"] for e in data["switches"]} == expected != set()
    assert data["of"] == len(entries) and data["credit"]["author"] == "bluepylons"


def test_a_lighter_wish_moves_the_target_and_finds_lighter_keys(entries, capsys):
    """--lighter 20%: the target is Gateron Black's force curve times 0.8 (travels kept); each switch found
    is nearer that target than Gateron Black itself, and its actuation force nearer 0.8 times Black's."""
    black = entries["Gateron-Black"]["features"]
    data = _json(capsys, "library", "nearest", "--like", "gateron black", "--lighter", "20%", "-n", "3", "--json")
    target = data["target_features"]
    for k, v in black.items():
        assert target[k] == (pytest.approx(0.8 * v) if k in FORCE_FEATURES and v is not None else v)
    assert data["reference_distance_jnd"] == pytest.approx(distance(black, target)) and distance(black, target) > 3.0
    found = [entries[r["name"]] for r in data["nearest"]]
    assert "Gateron-Black" not in [e["name"] for e in found] and len(found) == 3
    for e, r in zip(found, data["nearest"]):
        assert r["distance_jnd"] == pytest.approx(distance(e["features"], target))
        assert r["distance_jnd"] < data["reference_distance_jnd"]
        actuation = e["features"]["actuation_force_N"]
        assert abs(actuation - 0.8 * black["actuation_force_N"]) < abs(actuation - black["actuation_force_N"])


def test_a_wish_no_switch_comes_near_says_the_reference_is_nearer(entries, capsys):
    """Gateron Brown is among the lightest tactile switches: none is nearer a 20 % lighter Brown than Brown."""
    capsys.readouterr()
    assert main(["library", "nearest", "Gateron-Brown", "--lighter", "20%", "-n", "1"]) == 0
    brown = entries["Gateron-Brown"]["features"]
    itself = distance(brown, {k: (0.8 * v if k in FORCE_FEATURES and v is not None else v) for k, v in brown.items()})
    assert f"none is nearer to it than Gateron-Brown itself, at {itself:.2f}" in capsys.readouterr().out


def test_show_says_what_a_switch_feels_like_how_it_verified_who_measured_it_and_plays(entries, capsys):
    capsys.readouterr()
    assert main(["library", "show", "zealios v2 65g"]) == 0
    text = capsys.readouterr().out
    e = entries["Zealios-V2-65g"]
    assert text.startswith(f"Zealios-V2-65g ({kind_of(e['features'])})")
    assert f"{e['features']['total_travel_m'] * 1e3:.3f} mm" in text and "bluepylons" in text
    assert "Zealios-V2-65g-remeasured" in text
    play = next(line for line in text.splitlines() if "play it:" in line).split("play it: hapticam ")[1]
    assert play == f"render library:{CATALOGUE_DIR}/Zealios-V2-65g"
    assert main([*play.split(), "--simulated-clock", "--duration", "0.2"]) == 0


def test_compare_reads_catalogue_names_a_against_b(entries, capsys):
    data = _json(capsys, "library", "compare", "Gateron Brown", "switch:Cherry-MX-Red", "--json")
    a, b = entries["Gateron-Brown"]["features"], entries["Cherry-MX-Red"]["features"]
    assert (data["a"], data["b"]) == ("Gateron-Brown", "Cherry-MX-Red")
    assert data["differences_jnd"]["bump_drop_N"] > 0 and a["bump_drop_N"] > b["bump_drop_N"] == 0.0
    assert any(line.startswith("bump_drop_N: more by") for line in data["noticeable"])


def test_nearest_still_reads_a_library_folder_and_a_capture(tmp_path, entries, capsys):
    capture = str(SWITCH_DIR / "Cherry-MX-Red.csv")
    data = _json(capsys, "library", "nearest", capture, "-n", "1", "--json")
    assert data["nearest"][0]["name"] == "Cherry-MX-Red"          # its own capture: itself, first
    data = _json(capsys, "library", "nearest", str(CATALOGUE_DIR), capture, "-n", "2", "--linear", "--json")
    assert all(kind_of(entries[r["name"]]["features"]) == "linear" for r in data["nearest"])


@pytest.mark.parametrize("argv, words", [
    (["library", "show", "Cherry MX Purpleish"], "no switch"),
    (["library", "show", "gateron"], "say which"),
    (["library", "nearest", "--like", "Cherry-MX-Red", "--lighter", "120%"], "under 100%"),
    (["library", "nearest", "--like", "Cherry-MX-Red", "--lighter", "lots"], "percentage"),
    (["library", "nearest", "--tactile"], "needs a key"),
    (["library", "list", "--bump-above", "2", "--bump-below", "1"], "not below"),
    (["library", "build", "--catalogue", str(SWITCH_DIR)], "give no CAPTURE"),
])
def test_bad_wishes_are_one_clear_line(argv, words, capsys):
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]


def test_nearest_says_so_when_no_switch_meets_the_wish(capsys):
    data = _json(capsys, "library", "nearest", "Cherry-MX-Red", "--linear", "--bump-above", "0.1", "--json", code=1)
    assert data["nearest"] == [] and data["candidates"] == 0


def test_a_catalogue_build_lists_a_broken_capture_and_resumes(tmp_path):
    """Two real captures and one that cannot be read: three switches, one failed with its reason; a second
    run builds nothing again."""
    from hapticam.library.export import build_catalogue, pack_captures

    src = tmp_path / "src"
    src.mkdir()
    for name in ("Cherry-MX-Red.csv", "Gateron-Brown.csv"):
        (src / name).write_bytes((SWITCH_DIR / name).read_bytes())
    (src / "Broken-Switch.csv").write_text("t_s,x_m,force_N\n0,0,nonsense\n")
    assert pack_captures([src], tmp_path / "captures.tar.xz", "# test captures\n") == 3
    first = build_catalogue(tmp_path / "out", tmp_path / "work", archive=tmp_path / "captures.tar.xz", jobs=1,
                            quiet=True)
    assert (first.build.done, first.build.failed, first.switches) == (2, 1, 3)
    index = load_catalogue(tmp_path / "out")
    broken = next(e for e in index["entries"] if e["name"] == "Broken-Switch")
    assert broken["status"] == "failed" and "nonsense" in broken["reason"] and str(tmp_path) not in broken["reason"]
    assert sorted(p.name for p in (tmp_path / "out" / "models").iterdir()) == ["Cherry-MX-Red.yaml",
                                                                               "Gateron-Brown.yaml"]
    assert index["catalogue"]["captures_readme"] == "# test captures\n"
    again = build_catalogue(tmp_path / "out", tmp_path / "work", archive=tmp_path / "captures.tar.xz", jobs=1,
                            quiet=True)
    assert (again.build.done, again.build.skipped) == (0, 3)


def test_render_plays_a_shipped_switch_by_name(capsys):
    """``switch:NAME`` renders the catalogue's model of NAME; an unknown name is one line, exit 2."""
    assert main(["render", "switch:Gateron-Brown", "--simulated-clock", "--duration", "0.2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stats"]["ticks"] == 200
    assert main(["render", "switch:No-Such-Switch", "--simulated-clock", "--duration", "0.2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No-Such-Switch" in err[0]
