"""numba's cache is keyed by the package's source, so a changed package never runs stale compiled code, and
the servo compiled around module-level kernels is loaded from the cache on a second run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numba
from device_scenarios import no_flags, spring_force
from numba import njit

import hapticam
from hapticam import NUMBA_CACHE_PREFIX, _source_digest
from hapticam.world.sim import sim_binding_actuate, sim_binding_sense
from hapticam.render.specialize import kernel_tag


def test_the_cache_folder_is_named_by_the_source_digest():
    folder = os.path.basename(numba.config.CACHE_DIR)
    assert folder == NUMBA_CACHE_PREFIX + _source_digest()
    assert os.environ["NUMBA_CACHE_DIR"] == numba.config.CACHE_DIR


def test_the_digest_follows_every_source_file_and_nothing_else(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("y = 2\n")
    before = _source_digest(str(tmp_path / "pkg"))
    (tmp_path / "pkg" / "sub" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "sub" / "__pycache__" / "b.nbi").write_bytes(b"cache")
    (tmp_path / "pkg" / "notes.txt").write_text("not source")
    assert _source_digest(str(tmp_path / "pkg")) == before
    (tmp_path / "pkg" / "sub" / "b.py").write_text("y = 3\n")               # a called module changes
    assert _source_digest(str(tmp_path / "pkg")) != before


def test_a_child_keys_its_own_base_once(tmp_path):
    code = "import os, hapticam, numba; print(json.dumps([os.environ['NUMBA_CACHE_DIR'], numba.config.CACHE_DIR]))"
    for base, expected in ((str(tmp_path), str(tmp_path / (NUMBA_CACHE_PREFIX + _source_digest()))),
                           (numba.config.CACHE_DIR, numba.config.CACHE_DIR)):    # already keyed: kept
        env = {**os.environ, "NUMBA_CACHE_DIR": base}
        out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True,
                             env=env, timeout=60, check=True).stdout
        assert json.loads(out) == [expected, expected]
    assert hapticam.__version__


# Renders the spring-damper key on the simulator for 50 ticks through a servo built around module-level
# kernels; prints the numba cache hits and misses of the step, the simulated-clock driver and the callback.
SERVO_RUN = """
import json, numpy as np
from device_scenarios import MODEL, no_flags, spring_force
from hapticam.world.sim import SimulatedDevice, sim_binding_actuate, sim_binding_sense
from hapticam.render.loop import LoopConfig, ServoLoop
from hapticam.render.servo import build_servo
kd = build_servo(spring_force, no_flags, sim_binding_sense, sim_binding_actuate)
dev = SimulatedDevice().open()
loop = ServoLoop(MODEL, dev, LoopConfig(ring_capacity=256), kernels=kd)
loop.run_simulated(0.05)
ticks = int(loop.ticks)
cb = kd.make_callback()
dev.close()
stats = {name: (sum(f.stats.cache_hits.values()), sum(f.stats.cache_misses.values()))
         for name, f in (("step", kd.step), ("run_sim", kd.run_sim))}
stats["callback"] = (cb.cache_hits, 0)
print(json.dumps({"ticks": ticks, "stats": stats}))
"""


def _cache_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc"))


def test_a_second_run_loads_the_servo_from_the_cache_and_adds_no_entry(tmp_path):
    tests_dir = Path(__file__).resolve().parent
    keyed = tmp_path / (NUMBA_CACHE_PREFIX + "servo")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(keyed),
           "PYTHONPATH": os.pathsep.join([str(tests_dir), os.environ.get("PYTHONPATH", "")])}
    runs, files = [], []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", SERVO_RUN], capture_output=True, text=True, env=env,
                             timeout=600, cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        files.append(_cache_files(keyed))
    assert runs[0]["ticks"] == runs[1]["ticks"] == 50
    assert runs[0]["stats"]["run_sim"] == [0, 1]                               # the first run compiles
    assert runs[1]["stats"]["run_sim"] == [1, 0] and runs[1]["stats"]["step"][1] == 0
    assert runs[1]["stats"]["callback"][0] >= 1
    assert files[1] == files[0]                                                 # nothing added


def test_kernels_without_a_module_level_name_are_compiled_without_the_cache():
    @njit(nogil=True)
    def local_force(p, s, x, v, a, dt):
        return 0.0

    stable = {"force_fn": spring_force, "flags_fn": no_flags, "sense_fn": sim_binding_sense,
              "actuate_fn": sim_binding_actuate}
    tag = kernel_tag(stable)
    assert tag is not None and tag == kernel_tag(dict(stable))
    assert tag != kernel_tag({**stable, "sense_fn": sim_binding_actuate, "actuate_fn": sim_binding_sense})
    assert kernel_tag({**stable, "force_fn": local_force}) is None
