"""numba's cache is keyed by the package's source, so a changed package never runs stale compiled code."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numba

import hapticam
from hapticam import NUMBA_CACHE_PREFIX, _source_digest


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
