"""Synthetic switch captures for testing and benchmarking the library: the simulated keyswitch
targets (:mod:`hapticam.world.keyswitch`) with randomised spring, preload and friction, probed with a
slow triangle (a press and a release) as a switch tester would."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hapticam.capture import Capture
from hapticam.capture_io import save_capture

FAMILIES = ("linear-switch", "tactile-switch", "clicky-switch")
#: each parameter is scaled by a factor drawn uniformly from 1 +- this
SPREAD = 0.10


def synthetic_capture(family: str, rng: np.random.Generator, seed: int) -> Capture:
    """One probed capture of ``family`` with randomised parameters (metadata record the draw)."""
    from hapticam.world.excitations import make_excitation
    from hapticam.world.probe import ProbeSpec, simulate
    from hapticam.world.targets import get_target

    base = get_target(family)
    changes = {name: getattr(base, name) * (1.0 + rng.uniform(-SPREAD, SPREAD))
               for name in ("spring_Npm", "preload_N", "housing_friction_N")}
    target = get_target(family, **changes)
    lo, hi = target.probe_range_m()
    run = simulate(target, make_excitation("triangle", lo, hi, None, seed=seed), ProbeSpec(), seed=seed)
    meta = {**run.metadata, "family": family, "licence": "CC0 (synthetic)",
            **{f"drawn_{k}": float(v) for k, v in changes.items()}}
    return Capture.from_arrays(run.t_s, run.x_m, run.force_N, metadata=meta, name=f"{family}-{seed}")


def write_synthetic(folder: str | Path, per_family: int, seed: int = 0) -> list[Path]:
    """Write ``per_family`` captures of each family into ``folder``; returns the paths."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(per_family):
        for family in FAMILIES:
            s = seed * 100_000 + i * len(FAMILIES) + FAMILIES.index(family)
            path = out / f"{family}-{s:06d}.csv"
            save_capture(path, synthetic_capture(family, rng, s))
            paths.append(path)
    return paths
