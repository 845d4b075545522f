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
   ``verify.json``.

With ``capture=FILE`` (a real capture, e.g. one of the switch curves) steps 1 and 4 use that file:
identify from it, then verify against the same capture (quasi-static replay).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hapticam.errors import UsageError
from hapticam.fileio import make_output_folder

#: targets whose dynamics (a hammer in flight) a segmented impedance model cannot hold: identify hybrid-key
HYBRID_TARGETS = ("piano-key", "hybrid-key")
DEFAULT_TARGET = "tactile-switch"


@dataclass
class CameraRun:
    """What one pass of the haptic camera produced: files written and each stage's key numbers."""

    out_dir: Path
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    passed: bool = False
    files: dict[str, Path] = field(default_factory=dict)


def _probe_capture(target_name: str, kind: str, seed: int, duration_s: float | None = None):
    from hapticam.devices.excitations import make_excitation
    from hapticam.devices.probe import ProbeSpec, simulate
    from hapticam.devices.targets import get_target
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
    """Run the four stages (module notes), writing every artefact into ``out_dir``; return the numbers."""
    if capture_path is None:
        from hapticam.devices.targets import get_target

        if getattr(get_target(target), "axis", "linear") == "rotary":
            raise UsageError(f"--target {target}: a rotary target (angles, torques); the demo identifies keys "
                             "pressed along a line (a knob: hapticam probe, then hapticam identify friction)")
    out = Path(out_dir)
    make_output_folder("--out", out)
    result = CameraRun(out_dir=out)

    if capture_path is None and target in HYBRID_TARGETS:
        return _run_hybrid(result, out, target, seed, say)
    training = _stage_probe(result, out, target, capture_path, sweep_s, seed, say)
    fit = _stage_identify(result, out, training, say)
    _stage_render(result, out, fit, seed, say)
    _stage_verify(result, out, target, training, fit, capture_path, seed, say)
    return result


def _run_hybrid(result: CameraRun, out: Path, target: str, seed: int, say: Callable[[str], None]) -> CameraRun:
    """The four stages for a key with a hammer in flight (:mod:`hapticam.demos.camera_hybrid`)."""
    from types import SimpleNamespace

    from hapticam.demos.camera_hybrid import probe_and_identify

    model = probe_and_identify(result, out, target, seed, say)
    if model is None:
        say("verdict: FAIL: the captures do not fit the hybrid key (see the identify stage)")
        return result
    fit = SimpleNamespace(model=model)
    _stage_render(result, out, fit, seed, say)
    _stage_verify(result, out, target, None, fit, None, seed, say)
    return result


def _stage_probe(result: CameraRun, out: Path, target: str, capture_path: str | Path | None, sweep_s: float,
                 seed: int, say: Callable[[str], None]) -> Any:
    """1. probe the simulated target with a swept sine (or load the real capture)."""
    from hapticam.capture_io import load_capture, save_capture

    t0 = time.perf_counter()
    if capture_path is not None:
        training = load_capture(capture_path)
        source = str(capture_path)
        result.stages["probe"] = {"capture": source, "samples": training.n,
                                  "dropouts": int(training.dropouts.size)}
        say(f"[1/4] capture   {source}: {training.n} samples, {training.dropouts.size} dropouts excluded")
    else:
        training = _probe_capture(target, "sweep", seed, sweep_s)
        result.files["probe"] = out / "probe-sweep.csv"
        save_capture(result.files["probe"], training)
        result.stages["probe"] = {"target": target, "excitation": "swept sine 1-4 Hz (seed 001)",
                                  "duration_s": float(training.t_s[-1]), "samples": training.n,
                                  "sample_rate_hz": round(training.sample_rate_hz, 3),
                                  "seconds": round(time.perf_counter() - t0, 2)}
        say(f"[1/4] probe     {target}: swept sine 1-4 Hz, {training.t_s[-1]:.0f} s at "
            f"{training.sample_rate_hz:.0f} Hz -> {result.files['probe']}")

    return training


def _stage_identify(result: CameraRun, out: Path, training: Any, say: Callable[[str], None]) -> Any:
    """2. identify a segmented impedance model (passive) and write it."""
    from hapticam.identify.impedance_fit import identify_impedance

    t0 = time.perf_counter()
    fit = identify_impedance(training)
    result.files["model"] = out / "model.yaml"
    fit.save(result.files["model"])
    segments = {d: int(len(getattr(fit.model, t).breakpoints_m) - 1) for d, t in (("press", "press"),
                                                                                  ("release", "release"))}
    fixed = sorted(k for k, ok in fit.identifiable.items() if not ok)
    result.stages["identify"] = {"fit_percent": fit.summary.get("fit_percent"), "segments": segments,
                                 "not_identifiable": fixed, "seconds": round(time.perf_counter() - t0, 2)}
    say(f"[2/4] identify  EWLS (lambda 0.999), {segments['press']} + {segments['release']} segments, "
        f"training fit {fit.summary.get('fit_percent', float('nan')):.2f} %"
        + (f", not identifiable: {', '.join(fixed)} (fixed)" if fixed else "") + f" -> {result.files['model']}")

    return fit


def _stage_render(result: CameraRun, out: Path, fit: Any, seed: int, say: Callable[[str], None]) -> None:
    """3. render a scripted press and release on the simulated device (simulated clock) and record it."""
    from hapticam.capture import Capture
    from hapticam.capture_io import save_capture
    from hapticam.render.loop import run_simulated

    t0 = time.perf_counter()
    rendered = run_simulated(fit.model, user="press", rate_hz=1000.0, duration_s=1.5, seed=seed)
    result.files["render"] = out / "render.csv"
    save_capture(result.files["render"], Capture.from_arrays(
        rendered.t_s, rendered.x_m, rendered.force_N, rendered.v_mps, name="render",
        metadata={"source": "hapticam render (simulated device, scripted press)", "model": str(result.files["model"])}))
    stats = rendered.stats
    result.stages["render"] = {"ticks": int(rendered.t_s.size), "rate_hz": 1000.0,
                               "peak_force_N": float(abs(rendered.force_N).max()),
                               "safety_events": sorted({e.name for e in rendered.events}),
                               "seconds": round(time.perf_counter() - t0, 2), "stats": stats.to_dict()}
    say(f"[3/4] render    {rendered.t_s.size} ticks at 1 kHz (simulated clock), peak force "
        f"{abs(rendered.force_N).max():.3f} N, safety: "
        + (", ".join(sorted({e.name for e in rendered.events})) or "no interventions")
        + f" -> {result.files['render']}")



def _stage_verify(result: CameraRun, out: Path, target: str, training: Any, fit: Any,
                  capture_path: str | Path | None, seed: int, say: Callable[[str], None]) -> None:
    """4. verify against a held-out probing (or the same real capture) and write the report."""
    from hapticam.capture_io import save_capture
    from hapticam.render.verify import verify
    from hapticam.render.verify.report import write_figure, write_json

    t0 = time.perf_counter()
    if capture_path is not None:
        held_out = training
    else:
        held_out = _probe_capture(target, "triangle", seed + 1)
        result.files["held_out"] = out / "probe-triangle.csv"
        save_capture(result.files["held_out"], held_out)
    check = verify(fit.model, held_out, model_name=str(result.files["model"]))
    result.files["report_png"] = out / "verify.png"
    result.files["report_json"] = out / "verify.json"
    write_json(result.files["report_json"], check.to_dict())
    write_figure(result.files["report_png"], check)
    result.passed = check.passed
    result.stages["verify"] = {"fit_percent": check.fit_percent, "rms_N": check.rms_N,
                               "max_error_N": check.max_error_N, "noticeable": check.features.noticeable,
                               "passed": check.passed, "passive": check.passive, "seconds": round(time.perf_counter() - t0, 2)}
    what = "the same capture" if capture_path is not None else "a held-out triangular press"
    say(f"[4/4] verify    against {what}: fit {check.fit_percent:.2f} %, RMS {check.rms_N * 1e3:.1f} mN, "
        f"max {check.max_error_N * 1e3:.0f} mN, passive {'yes' if check.passive else 'NO'} "
        f"-> {result.files['report_png']}")
    for verdict in check.features.verdicts:
        say(f"              {verdict.name:<30} {'a user could feel the difference' if verdict.noticeable else 'same'}")
    say(f"verdict: {'PASS: the rendering feels like the object' if check.passed else 'FAIL: ' + '; '.join(check.failures)}")
    say(f"everything is in {out}/")
