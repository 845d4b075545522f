"""The haptic camera end to end: probe -> identify -> render -> verify (``hapticam demo``).

For a simulated target (default: the tactile keyswitch) the pipeline

1. probes it with seed 001's swept sine (1-4 Hz, 90 s, the target's travel, 4 kHz) -> ``probe-sweep.csv``;
2. identifies a segmented impedance model by EWLS (seed 001) -> ``model.yaml`` (for a key with a hammer in
   flight, ``piano-key`` or ``hybrid-key``, the hybrid-key model from the excitations it needs, at 10 kHz:
   :mod:`hapticam.demos.camera_hybrid`);
3. renders the model in the servo loop on the simulated device with a scripted press and release
   (simulated clock) -> ``render.csv`` and the loop statistics;
4. probes the target again with a held-out excitation (a slow triangular press and release, as switch
   testers do) -> ``probe-triangle.csv``, and verifies the model against it -> ``verify.png``,
   ``verify.json``. A key with a hammer is pressed twice more, 1 % slower and 1 % faster
   (``probe-triangle-repeat-*.csv``): its impact onsets are judged within the key's own repeatability
   (:mod:`hapticam.render.verify.repeats`).

With ``capture=FILE`` (a real capture, e.g. one of the switch curves) steps 1 and 4 use that file: part of
it is held out as ``hapticam identify impedance`` holds a part out (:mod:`hapticam.demos.capture_split`:
the last press/release cycle, or every fifth sample of a single stroke), the model is identified from the
rest and verified against the held-out part (quasi-static replay). A capture that cannot be split is
identified and verified whole, and the verdict and the JSON say that it is a training fit. A capture whose
force never changes is refused before anything is written. The stages write into a temporary folder
(beside the output folder, or inside it when it exists already) whose files are moved into the output
folder when the run completes: a run that fails leaves the output folder, and every file in it, as it
was (or absent, with the folders made for it).

Each stage says on standard error what it is doing while it runs, and what it compiles on a first run
(:mod:`hapticam.progress`; only in a terminal).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from hapticam.errors import IdentificationError, ParameterError
from hapticam.progress import step

#: targets whose dynamics (a hammer in flight) a segmented impedance model cannot hold: identify hybrid-key
HYBRID_TARGETS = ("piano-key", "hybrid-key")
#: The held-out press's duration (s) and the speeds of its repeat presses for a key with a hammer (its impact
#: onsets are judged within them; presses without impacts need none)
HELD_OUT_S = 4.0
REPEAT_SPEEDS = (0.99, 1.01)
DEFAULT_TARGET = "tactile-switch"
#: a first run's compilation (s, one core) of the simulated probe and of the estimators
PROBE_COMPILE_S = 30.0
IDENTIFY_COMPILE_S = 15.0


@dataclass
class CameraRun:
    """What one pass of the haptic camera produced: files written and each stage's key numbers."""

    out_dir: Path
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    passed: bool = False
    files: dict[str, Path] = field(default_factory=dict)


def _probe_capture(target_name: str, kind: str, seed: int, duration_s: float | None = None):
    from hapticam.world.excitations import make_excitation
    from hapticam.world.probe import ProbeSpec, simulate
    from hapticam.world.targets import get_target
    from hapticam.capture import Capture

    target = get_target(target_name)
    lo, hi = target.probe_range_m()
    excitation = make_excitation(kind, lo, hi, duration_s, seed=seed)
    run = simulate(target, excitation, ProbeSpec(), seed=seed)
    return Capture.from_arrays(run.t_s, run.x_m, run.force_N, metadata=run.metadata,
                               name=f"{target_name} ({kind})")


def run_camera(target: str = DEFAULT_TARGET, *, capture_path: str | Path | None = None,
               out_dir: str | Path = "hapticam-demo", sweep_s: float = 90.0, seed: int = 0,
               say: Callable[[str], None] = print) -> CameraRun:
    """Run the four stages (module notes), writing every artefact into ``out_dir``; return the numbers.
    A stage that raises leaves nothing behind: ``out_dir`` is left as it was, or absent (:func:`_staged`)."""
    capture = None
    if capture_path is None:
        from hapticam.world.targets import get_target

        if getattr(get_target(target), "axis", "linear") == "rotary":
            raise ParameterError("target", f"{target}: a rotary target (angles, torques); the demo identifies "
                                 "keys pressed along a line (a knob: hapticam probe, then hapticam identify friction)")
    else:
        capture = _read_capture(capture_path)
    result = CameraRun(out_dir=Path(out_dir))
    with _staged(result.out_dir) as work:
        if capture is None and target in HYBRID_TARGETS:
            return _run_hybrid(result, work, target, seed, say)
        split = _stage_probe(result, work, target, capture, sweep_s, seed, say)
        fit, split = _stage_identify(result, work, split, say)
        _stage_render(result, work, fit, seed, say)
        _stage_verify(result, work, target, split, fit, seed, say)
    return result


def _read_capture(path: str | Path) -> Any:
    """The real capture, refused before anything is written when its force never changes."""
    from hapticam.capture_io import load_capture
    from hapticam.demos.capture_split import check_force_changes

    with step(f"reading {path}"):
        capture = load_capture(path)
    check_force_changes(capture)
    return capture


@contextmanager
def _staged(out: Path) -> Iterator[Path]:
    """A temporary folder to write the run into: beside ``out`` when ``out`` does not exist (renamed to
    ``out`` when the block completes), inside it when it does (its files moved into ``out``, replacing those
    of the same name). When the block raises, the temporary folder and the folders made for ``out`` are
    removed, and ``out`` is left as it was."""
    if out.exists() and not out.is_dir():
        raise ParameterError("out_dir", f"{out}: exists and is not a folder")
    full = Path(os.path.abspath(out))
    made = [p for p in full.parents if not p.exists()]     # deepest first
    existed = out.is_dir()
    try:
        full.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{full.name}-", suffix=".partial", dir=full if existed else full.parent))
    except OSError as exc:
        _remove_empty(made)
        raise ParameterError("out_dir", f"{out}: cannot create the folder ({exc.strerror or exc})") from None
    try:
        yield work
        _move_in(work, out, existed)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        _remove_empty(made)
        raise


def _move_in(work: Path, out: Path, existed: bool) -> None:
    """Move the run's files from ``work`` into ``out``; refuse, before moving any, a file name that is a
    folder in ``out``."""
    if not existed:
        umask = os.umask(0)
        os.umask(umask)
        work.chmod(0o777 & ~umask)                        # an ordinary folder, not a private temporary one
        work.rename(os.path.abspath(out))
        return
    names = sorted(p.name for p in work.iterdir())
    taken = [name for name in names if (out / name).is_dir()]
    if taken:
        raise ParameterError("out_dir", f"{out}: {', '.join(taken)} is a folder there; the run's files were not "
                             "moved in")
    for name in names:
        os.replace(work / name, out / name)
    work.rmdir()


def _remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (deepest first) that are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _run_hybrid(result: CameraRun, work: Path, target: str, seed: int, say: Callable[[str], None]) -> CameraRun:
    """The four stages for a key with a hammer in flight (:mod:`hapticam.demos.camera_hybrid`)."""
    from types import SimpleNamespace

    from hapticam.demos.camera_hybrid import probe_and_identify

    model = probe_and_identify(result, work, target, seed, say)
    if model is None:
        say("verdict: FAIL: the captures do not fit the hybrid key (see the identify stage)")
        return result
    fit = SimpleNamespace(model=model)
    _stage_render(result, work, fit, seed, say)
    _stage_verify(result, work, target, None, fit, seed, say)
    return result


def _stage_probe(result: CameraRun, work: Path, target: str, capture: Any, sweep_s: float,
                 seed: int, say: Callable[[str], None]) -> Any:
    """1. probe the simulated target with a swept sine (or split the real capture); return the
    :class:`~hapticam.demos.capture_split.Split` (no held-out part for a simulated target: it is probed
    again in stage 4)."""
    from hapticam.capture_io import save_capture
    from hapticam.demos.capture_split import Split, split_capture

    t0 = time.perf_counter()
    if capture is not None:
        with step("[1/4] holding part of the capture out"):
            split = split_capture(capture)
        result.stages["probe"] = {"capture": capture.name, "samples": capture.n,
                                  "dropouts": int(capture.dropouts.size),
                                  "held_out": split.how, "not_split": split.reason or None}
        part = (f"held out {split.how}" if split.how else f"not split ({split.reason})")
        say(f"[1/4] capture   {capture.name}: {capture.n} samples, {capture.dropouts.size} dropouts excluded, "
            f"{part}")
        return split
    with step(f"[1/4] probing {target} with a {sweep_s:g} s swept sine", compiles="the simulated probe",
              about_s=PROBE_COMPILE_S):
        training = _probe_capture(target, "sweep", seed, sweep_s)
        save_capture(work / "probe-sweep.csv", training)
        result.files["probe"] = result.out_dir / "probe-sweep.csv"
    result.stages["probe"] = {"target": target, "excitation": "swept sine 1-4 Hz (seed 001)",
                              "duration_s": float(training.t_s[-1]), "samples": training.n,
                              "sample_rate_hz": round(training.sample_rate_hz, 3),
                              "seconds": round(time.perf_counter() - t0, 2)}
    say(f"[1/4] probe     {target}: swept sine 1-4 Hz, {training.t_s[-1]:.0f} s at "
        f"{training.sample_rate_hz:.0f} Hz -> {result.files['probe']}")
    return Split(training, None, "a triangular press probed apart", source=None)


def _stage_identify(result: CameraRun, work: Path, split: Any, say: Callable[[str], None]) -> tuple[Any, Any]:
    """2. identify a segmented impedance model (passive) and write it; return the fit and the split it
    holds to (the whole capture, a training fit, when its training part cannot be identified)."""
    from hapticam.demos.capture_split import unsplit
    from hapticam.identify.impedance.fit import identify_impedance

    t0 = time.perf_counter()
    with step("[2/4] identifying a segmented impedance model (EWLS, passive fit)", compiles="the estimators",
              about_s=IDENTIFY_COMPILE_S):
        try:
            fit = identify_impedance(split.training)
        except IdentificationError as exc:
            if split.source is None or split.is_training_fit:
                raise
            split = unsplit(split.source, f"its training part could not be identified ({exc})")
            fit = identify_impedance(split.training)
        fit.save(work / "model.yaml")
        result.files["model"] = result.out_dir / "model.yaml"
    segments = {d: int(len(getattr(fit.model, t).breakpoints_m) - 1) for d, t in (("press", "press"),
                                                                                  ("release", "release"))}
    fixed = sorted(k for k, ok in fit.identifiable.items() if not ok)
    result.stages["identify"] = {"fit_percent": fit.summary.get("fit_percent"), "segments": segments,
                                 "not_identifiable": fixed, "seconds": round(time.perf_counter() - t0, 2)}
    say(f"[2/4] identify  EWLS (lambda 0.999), {segments['press']} + {segments['release']} segments, "
        f"training fit {fit.summary.get('fit_percent', float('nan')):.2f} %"
        + (f", not identifiable: {', '.join(fixed)} (fixed)" if fixed else "") + f" -> {result.files['model']}")
    return fit, split


def _stage_render(result: CameraRun, work: Path, fit: Any, seed: int, say: Callable[[str], None]) -> None:
    """3. render a scripted press and release on the simulated device (simulated clock) and record it."""
    from hapticam.capture import Capture
    from hapticam.capture_io import save_capture
    from hapticam.render.loop import run_simulated

    t0 = time.perf_counter()
    with step("[3/4] rendering a scripted press in the servo loop (simulated device and clock)"):
        rendered = run_simulated(fit.model, user="press", rate_hz=1000.0, duration_s=1.5, seed=seed)
        save_capture(work / "render.csv", Capture.from_arrays(
            rendered.t_s, rendered.x_m, rendered.force_N, rendered.v_mps, name="render",
            metadata={"source": "hapticam render (simulated device, scripted press)",
                      "model": str(result.files["model"])}))
        result.files["render"] = result.out_dir / "render.csv"
    events = sorted({e.name for e in rendered.events})
    result.stages["render"] = {"ticks": int(rendered.t_s.size), "rate_hz": 1000.0,
                               "peak_force_N": float(abs(rendered.force_N).max()), "safety_events": events,
                               "seconds": round(time.perf_counter() - t0, 2), "stats": rendered.stats.to_dict()}
    say(f"[3/4] render    {rendered.t_s.size} ticks at 1 kHz (simulated clock), peak force "
        f"{abs(rendered.force_N).max():.3f} N, safety: {', '.join(events) or 'no interventions'} "
        f"-> {result.files['render']}")


def _stage_verify(result: CameraRun, work: Path, target: str, split: Any, fit: Any, seed: int,
                  say: Callable[[str], None]) -> None:
    """4. verify against a held-out probing, the held-out part of the real capture, or (a capture that
    could not be split) the capture itself, and write the report."""
    from hapticam.capture_io import save_capture
    from hapticam.render.verify import verify
    from hapticam.render.verify.report import write_figure, write_json

    t0 = time.perf_counter()
    training_fit = split is not None and split.is_training_fit
    if split is not None and split.held_out is not None:
        what = (f"the capture it was fitted on (a training fit: not split, {split.reason})" if training_fit
                else f"the held-out part of the capture ({split.how})")
    else:
        what = "a held-out triangular press"
    with step(f"[4/4] verifying against {what}"):
        if split is not None and split.held_out is not None:
            held_out = split.held_out
        else:
            held_out = _probe_capture(target, "triangle", seed + 1, HELD_OUT_S)
            save_capture(work / "probe-triangle.csv", held_out)
            result.files["held_out"] = result.out_dir / "probe-triangle.csv"
        repeats = _repeat_presses(result, work, target, seed) if split is None and target in HYBRID_TARGETS else []
        check = verify(fit.model, held_out, model_name=str(result.files["model"]), repeats=repeats)
        write_json(work / "verify.json", check.to_dict())
        result.files["report_json"] = result.out_dir / "verify.json"
        write_figure(work / "verify.png", check)
        result.files["report_png"] = result.out_dir / "verify.png"
    result.passed = check.passed
    result.stages["verify"] = {"against": "training" if training_fit else "held-out", "training_fit": training_fit,
                               "data": what, "fit_percent": check.fit_percent, "rms_N": check.rms_N,
                               "max_error_N": check.max_error_N, "noticeable": check.features.noticeable,
                               "passed": check.passed, "passive": check.passive,
                               "seconds": round(time.perf_counter() - t0, 2)}
    say(f"[4/4] verify    against {what}: fit {check.fit_percent:.2f} %, RMS {check.rms_N * 1e3:.1f} mN, "
        f"max {check.max_error_N * 1e3:.0f} mN, passive {'yes' if check.passive else 'NO'} "
        f"-> {result.files['report_png']}")
    for verdict in check.features.verdicts:
        say(f"              {verdict.name:<30} {'a user could feel the difference' if verdict.noticeable else 'same'}")
    say("verdict: " + _verdict(check, training_fit))
    for line in ([] if check.impacts is None else check.impacts.set_aside()):
        say("         set aside: " + line)
    say(f"everything is in {result.out_dir}/")


def _repeat_presses(result: CameraRun, work: Path, target: str, seed: int) -> list:
    """The held-out press again at each of ``REPEAT_SPEEDS``, saved beside it."""
    from hapticam.capture_io import save_capture

    repeats = []
    for i, speed in enumerate(REPEAT_SPEEDS, start=1):
        repeat = _probe_capture(target, "triangle", seed + 1, HELD_OUT_S / speed)
        save_capture(work / f"probe-triangle-repeat-{i}.csv", repeat)
        result.files[f"held_out_repeat_{i}"] = result.out_dir / f"probe-triangle-repeat-{i}.csv"
        repeats.append(repeat)
    return repeats


def _verdict(check: Any, training_fit: bool) -> str:
    if not check.passed:
        return "FAIL: " + "; ".join(check.failures) + (" (on the training data itself)" if training_fit else "")
    if training_fit:
        return ("PASS on the training data only: a training fit, not a validation (the capture could not be "
                "split; probe two or more press/release cycles to validate)")
    return "PASS: the rendering feels like the object"
