"""The haptic camera for a key with a hammer in flight: probe -> identify hybrid-key -> render -> verify.

A segmented impedance model cannot hold a hammer's flight, so for the piano-like targets the demo probes
the excitations the hybrid key's identification needs (:mod:`hapticam.identify.hybrid_key.fit`), at
10 kHz: a slow press and release past let-off onto the keybed, strokes at graded speeds, an oscillation
below let-off, a swept sine and, for a key resting on the probe's tip, a tap (held past let-off, rocked by
micrometres: the felt's stiffness); identifies the ``hybrid-key`` model (coupled to the handle for the
simulated device at 1 kHz) and verifies it against a held-out slow press and release. Each stage says on
standard error what it is doing (:mod:`hapticam.progress`, in a terminal only).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from hapticam.errors import IdentificationError
from hapticam.progress import bar, compiling, step

RATE_HZ = 10_000.0
#: a first run's compilation (s, one core) of the simulated probe and of the hybrid key's identification
PROBE_COMPILE_S = 30.0
HYBRID_COMPILE_S = 30.0


def _excitations(target: Any) -> list[tuple[str, Any]]:
    """The excitations; a key resting on the probe's tip is also tapped (held midway between let-off and the
    deepest travel, rocked by 2 um: :class:`~hapticam.world.key_tap.KeyTap`) for its felt's stiffness."""
    from hapticam.world.excitations import make_excitation
    from hapticam.world.key_tap import KeyTap
    from hapticam.world.piano_key import KeyStrokes

    lo, hi = target.probe_range_m()
    let_off = getattr(target, "let_off_m", getattr(target, "letoff_m", 0.8 * hi))
    out = [("slow", make_excitation("triangle", lo, hi, 4.0)), ("strokes", KeyStrokes(lo, hi)),
           ("bounce", make_excitation("sine", 0.45 * let_off, 0.55 * let_off, 1.0, frequency_hz=12.0)),
           ("periodic", make_excitation("sweep", lo, hi, 4.0))]
    if target.probe_tip() is not None:
        out.append(("tap", KeyTap(lo, let_off + 0.5 * (hi - let_off))))
    return out


def probe_and_identify(result: Any, work: Path, target_name: str, seed: int, say: Callable[[str], None]) -> Any:
    """Stages 1 and 2 for a hybrid target: write the captures and the model into ``work`` (listed in
    ``result.files`` at their names in ``result.out_dir``, where the run moves them when it completes);
    return the model, or None (the stage's failure is recorded in ``result``) when the captures do not fit
    the hybrid key."""
    from hapticam.capture_io import save_capture
    from hapticam.world.probe import probe
    from hapticam.world.targets import get_target
    from hapticam.identify.hybrid_key.fit import identify_hybrid_key
    from hapticam.models.files import make_provenance, save_model
    from hapticam.world.sim import SimParams
    from hapticam.identify.transients import identify_transients

    t0 = time.perf_counter()
    target = get_target(target_name)
    caps = []
    excitations = _excitations(target)
    with bar(len(excitations), desc=f"[1/4] probing {target_name}", unit="excitation") as progress, \
            compiling("the simulated probe", PROBE_COMPILE_S):
        for name, exc in excitations:
            cap = probe(target, exc, sample_rate_hz=RATE_HZ, seed=seed)
            save_capture(work / f"probe-{name}.csv", cap)
            result.files[f"probe_{name}"] = result.out_dir / f"probe-{name}.csv"
            caps.append((name, cap.t_s, cap.x_m, cap.f_N, exc.metadata()["kind"]))
            progress.update(1)
    result.stages["probe"] = {"target": target_name, "excitations": [c[0] for c in caps], "sample_rate_hz": RATE_HZ,
                              "seconds": round(time.perf_counter() - t0, 2)}
    tapped = ", a tap held past let-off" if any(c[0] == "tap" for c in caps) else ""
    say(f"[1/4] probe     {target_name}: slow press, graded strokes, oscillation below let-off, sweep{tapped} at "
        f"{RATE_HZ:.0f} Hz -> {result.out_dir}/probe-*.csv")
    t0 = time.perf_counter()
    tip = getattr(target, "pad_Npm", None)
    pad = target.probe_tip()
    resting = pad is not None                          # a one-sided pad the key rests on: no damper of the tip's
    try:
        with step("[2/4] identifying the hybrid key (key, hammer, let-off, keybed)", compiles="the hybrid key",
                  about_s=HYBRID_COMPILE_S):
            damping = 0.0 if resting else getattr(target, "pad_Nspm", 0.0)
            fit = identify_hybrid_key(caps, probe_tip=None if tip is None else (tip, damping), key_on_tip=resting,
                                      tip_alpha_spm=pad["alpha_spm"] if resting else None)
    except IdentificationError as exc:
        result.stages["identify"] = {"method": "hybrid-key", "error": str(exc)}
        say(f"[2/4] identify  hybrid-key: {exc}")
        return None
    model = fit.to_model(2.0, 1000.0, SimParams().handle_mass_kg)
    uncertainty = fit.uncertainty() if not fit.extra else {"hybrid-key": fit.uncertainty()}
    model.transients, transient_notes = identify_transients(model, caps)
    save_model(work / "model.yaml", model, uncertainty=uncertainty,
               provenance=make_provenance("hybrid-key", notes=[f"fixed {k}: {w}" for k, w in fit.fixed.items()]
                                          + fit.notes + transient_notes))
    result.files["model"] = result.out_dir / "model.yaml"
    result.stages["identify"] = {"method": "hybrid-key", "roles": fit.roles, "fixed": sorted(fit.fixed),
                                 "beside_the_key": dict(fit.extra),
                                 "transients": [t.to_dict() for t in model.transients],
                                 "fit_percent_100Hz": fit.fit_percent, "seconds": round(time.perf_counter() - t0, 2)}
    beside = "".join(f", {k} {val:.4g}" for k, val in fit.extra.items())
    beside += "".join(f", {t.event} transient {t.gain_N_per_mps:.3g} N/(m/s) {t.frequency_hz:.3g} Hz"
                      for t in model.transients)
    say(f"[2/4] identify  hybrid-key ({len(fit.std_errors)} parameters with standard errors, fixed: "
        f"{', '.join(sorted(fit.fixed))}{beside}) -> {result.files['model']}")
    return model
