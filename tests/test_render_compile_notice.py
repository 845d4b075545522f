"""``hapticam render`` in a terminal says what it compiles, and claims "first run only" only when true."""

from __future__ import annotations

import sys

from hapticam import NUMBA_CACHE_PREFIX
from terminal import run_with_terminal_stderr

RENDER = [sys.executable, "-m", "hapticam", "render", "example:linear-key", "--simulated-clock", "--duration", "0.1"]


def test_the_model_kernels_are_announced_on_a_cold_cache_only(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / (NUMBA_CACHE_PREFIX + "render"))}     # a cold cache, kept for the rerun
    code, out, err = run_with_terminal_stderr(RENDER, env, timeout_s=900)
    assert code == 0 and "ticks 100 at 1000 Hz" in out
    assert "compiling the model kernels (first run only, about" in err and "compiling" not in out
    code, out, err = run_with_terminal_stderr(RENDER, env, timeout_s=900)
    assert code == 0 and "ticks 100 at 1000 Hz" in out
    assert "model kernels" not in err and "first run only" not in err             # loaded from the cache
