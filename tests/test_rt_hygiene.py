"""Real-time hygiene: memory lock and stack prefault by default, core pinning only on request, and undone."""

from __future__ import annotations

import os
import threading

import pytest

from hapticam.render.clock import DEFAULT_HYGIENE, HYGIENE_ENV, enable_hygiene, release_hygiene, request_realtime


def _in_thread(fn):
    out = {}
    th = threading.Thread(target=lambda: out.update(result=fn(), cpus=os.sched_getaffinity(0)))
    th.start()
    th.join()
    return out


def test_pinning_is_on_request_only(monkeypatch):
    monkeypatch.delenv(HYGIENE_ENV, raising=False)
    assert enable_hygiene() == DEFAULT_HYGIENE and "affinity" not in DEFAULT_HYGIENE
    try:
        out = _in_thread(request_realtime)
        assert "affinity off" in out["result"] and "prefault 512 KiB" in out["result"]
    finally:
        release_hygiene()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two cores")
def test_affinity_pins_the_servo_thread_to_the_last_core_and_release_gives_the_cores_back(monkeypatch):
    before = os.sched_getaffinity(0)
    monkeypatch.setenv(HYGIENE_ENV, "affinity")
    assert enable_hygiene() == ("affinity",)
    try:
        out = _in_thread(request_realtime)
        assert out["cpus"] == {max(before)} and f"servo on CPU {max(before)}" in out["result"]
        assert os.sched_getaffinity(0) == before - {max(before)}          # this (another) thread moved off it
    finally:
        release_hygiene()
    assert os.sched_getaffinity(0) == before
