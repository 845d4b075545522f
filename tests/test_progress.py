"""Notices of long steps: on standard error in a terminal only, a compile notice only when numba compiles."""

from __future__ import annotations

import io
import sys
import textwrap

from hapticam import NUMBA_CACHE_PREFIX, progress
from terminal import Terminal, run_with_terminal_stderr


def test_a_step_says_what_it_does_in_a_terminal_and_clears_the_line(monkeypatch):
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with progress.step("probing the switch"):
        during = term.getvalue()
    assert during == "\rprobing the switch"
    assert term.getvalue().endswith("\r" + " " * len("probing the switch") + "\r")   # nothing left standing


def test_nothing_is_written_when_stderr_is_not_a_terminal(monkeypatch):
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    with progress.step("probing", compiles="the probe"):
        with progress.bar(3, desc="items", unit="item") as items:
            items.update(3)
    assert plain.getvalue() == ""


def test_an_inner_step_holds_the_line_and_gives_it_back(monkeypatch):
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with progress.step("outer"):
        with progress.step("inner, longer"):
            pass
        assert term.getvalue().endswith("\r" + "outer".ljust(len("inner, longer")))   # padded over the longer
    with progress.step("x", quiet=True):
        pass
    assert "x" not in term.getvalue()


KERNEL = textwrap.dedent("""
    import sys
    import numpy as np
    from numba import njit
    from hapticam import progress

    @njit(cache=True)
    def doubled_sum(x):
        s = 0.0
        for i in range(x.size):
            s += 2.0 * x[i]
        return s

    with progress.step("adding", compiles="the adder", about_s=3):
        total = doubled_sum(np.ones(3))
    print(total)
""")


def test_the_compile_notice_shows_on_a_cold_cache_only_and_never_on_stdout(tmp_path):
    script = tmp_path / "adder.py"
    script.write_text(KERNEL)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / (NUMBA_CACHE_PREFIX + "test"))}   # keyed: the same on both runs
    code, out, err = run_with_terminal_stderr([sys.executable, str(script)], env, timeout_s=300)
    assert code == 0 and out == "6.0\n"
    assert "compiling the adder (first run only, about 3 s)" in err and "adding" in err
    code, out, err = run_with_terminal_stderr([sys.executable, str(script)], env, timeout_s=300)
    assert code == 0 and out == "6.0\n"
    assert "adding" in err and "compiling" not in err                 # loaded from the cache


def test_a_bar_shows_a_compile_notice_as_its_description(monkeypatch):
    from numba.core import event

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with progress.bar(2, desc="probing", unit="excitation"), progress.compiling("the probe", 7):
        with event.trigger_event("numba:compile", data={"dispatcher": None}):
            during = term.getvalue().rsplit("\r", 1)[-1]
        after = term.getvalue().rsplit("\r", 1)[-1]
    assert during.startswith("compiling the probe (about 7 s):")       # an uncached kernel: no "first run"
    assert after.startswith("probing:")


def test_the_compile_notice_says_first_run_only_for_a_cached_kernel():
    assert progress.compile_notice("the servo loop", 20, cached=True) == \
        "compiling the servo loop (first run only, about 20 s)"
    assert progress.compile_notice("the servo loop", 20, cached=False) == "compiling the servo loop (about 20 s)"


def test_a_status_line_is_cut_to_the_terminal_width():
    term = Terminal()
    line = progress.StatusLine(term)
    line.show("x" * 500)
    assert len(term.getvalue()) <= progress.terminal_columns(term)
    line.keep()
    assert term.getvalue().endswith("\n")


KERNELS = textwrap.dedent("""
    from numba import njit

    @njit(cache=True)
    def cached(x):
        return x + 1.0

    @njit
    def uncached(x):
        return x + 2.0

    def closure_over(kernel):
        @njit(cache=True)
        def outer(x):
            return kernel(x) * 2.0
        return outer
""")


def test_first_run_only_is_said_of_kernels_the_next_run_loads(tmp_path):
    import importlib.util

    (tmp_path / "kernels_for_notice.py").write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("kernels_for_notice", tmp_path / "kernels_for_notice.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert progress.kept_for_next_run(module.cached)                   # cached, and not yet in its cache
    assert not progress.kept_for_next_run(module.uncached)             # numba keeps nothing
    assert not progress.kept_for_next_run(module.closure_over(module.cached))   # keyed by per-process ids
    module.cached(1.0)                                                 # now in the cache: were it compiled
    assert not progress.kept_for_next_run(module.cached)               # again, the cache was not reused
