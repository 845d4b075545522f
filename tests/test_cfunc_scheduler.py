"""Drive mode 2: the servo step as a numba cfunc called by a device's own C scheduler.

A tiny scheduler in C, compiled here with the system compiler, plays the part of OpenHaptics'
``hdScheduleAsynchronous``: every period it writes the device position and velocity into the loop's
I/O block, calls the callback (no Python on that thread: ctypes releases the GIL for the call), and
reads the force back.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from hapticam.devices import base as io_layout
from hapticam.world.sim import SimulatedDevice
from hapticam.models.files import load_model_only
from hapticam.models.kernels import model_force
from hapticam.render.loop import LoopConfig, ServoLoop
from hapticam.render.servo import HD_CALLBACK_CONTINUE, HD_CALLBACK_DONE

SCHEDULER_C = r"""
#include <stdint.h>
#include <time.h>

typedef int (*servo_cb)(int64_t *table);

/* Call cb every period_ns until it returns HD_CALLBACK_DONE or n ticks have run; before each call the
   "device" publishes a fresh sample, after it the force is read back. Returns the ticks run. */
int run_scheduler(servo_cb cb, int64_t *table, double *io, const double *xs, const double *vs,
                  double *forces, int *codes, int n, long period_ns) {
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    int i = 0;
    while (i < n) {
        next.tv_nsec += period_ns;
        while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec += 1; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, 0);
        io[IO_X] = xs[i];
        io[IO_V] = vs[i];
        io[IO_HAS_V] = 1.0;
        io[IO_SEQ] = (double)(i + 1);
        codes[i] = cb(table);
        forces[i] = io[IO_FORCE];
        i += 1;
        if (codes[i - 1] == 0) break;
    }
    return i;
}
"""


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc is not None, "a C compiler (cc) is needed to build the scheduler"
    d = tmp_path_factory.mktemp("sched")
    src = d / "sched.c"
    src.write_text(SCHEDULER_C)
    lib = d / "libsched.so"
    defs = [f"-D{name}={getattr(io_layout, name)}" for name in ("IO_X", "IO_V", "IO_HAS_V", "IO_SEQ", "IO_FORCE")]
    subprocess.run([cc, "-O2", "-shared", "-fPIC", *defs, "-o", str(lib), str(src)], check=True)
    so = ctypes.CDLL(str(lib))
    f = so.run_scheduler
    dp = ctypes.POINTER(ctypes.c_double)
    f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, dp, dp, dp, dp, ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                  ctypes.c_long]
    f.restype = ctypes.c_int
    return f


def _ptr(a, ctype=ctypes.c_double):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def run(scheduler, loop, xs, vs, n_calls, period_ns=100_000):
    cb = loop.kernels.make_callback()
    table = loop.callback_table()
    forces = np.zeros(n_calls)
    codes = np.zeros(n_calls, dtype=np.int32)
    ran = scheduler(ctypes.c_void_p(cb.address), table.ctypes.data, _ptr(loop.io), _ptr(xs), _ptr(vs),
                    _ptr(forces), _ptr(codes, ctypes.c_int), n_calls, period_ns)
    return ran, forces[:ran], codes[:ran]


def test_c_scheduler_runs_1000_ticks_of_the_cfunc_with_correct_forces(scheduler):
    model = load_model_only("example:linear-key")
    loop = ServoLoop(model, SimulatedDevice(), LoopConfig(proxy="off", display="off"))
    t = np.arange(1000) * 1e-3
    xs = 0.002 - 0.0024 * np.cos(2 * np.pi * t)             # one press-release cycle, -0.4 .. 4.4 mm
    vs = 0.0024 * 2 * np.pi * np.sin(2 * np.pi * t)
    ran, forces, codes = run(scheduler, loop, xs, vs, 1000)
    assert ran == 1000 and np.all(codes == HD_CALLBACK_CONTINUE)
    assert loop.ticks == 1000
    c = model.compile()
    s = c.reset_state()
    ref = np.array([model_force(c.params, s, xs[i], vs[i], 0.0, 1e-3) for i in range(1000)])
    ring = loop.ring[:1000]
    np.testing.assert_allclose(ring[:, 3], ref, rtol=0, atol=1e-12)      # model force = kernel offline
    np.testing.assert_array_equal(forces, ring[:, 4])                     # what the device got
    after = t >= 0.1                                                      # after the ramp-in
    np.testing.assert_allclose(forces[after], np.clip(ref[after], -8, 8), atol=1e-12)
    assert np.abs(ref).max() > 0.3


def test_callback_returns_done_after_stop_and_zeroes_force(scheduler):
    model = load_model_only("example:linear-key")
    loop = ServoLoop(model, SimulatedDevice(), LoopConfig(proxy="off", display="off"))
    xs = np.full(50, 0.003)
    vs = np.zeros(50)
    ran, forces, _ = run(scheduler, loop, xs, vs, 20)
    assert ran == 20 and forces[-1] != 0.0
    loop.request_stop()
    ran, forces, codes = run(scheduler, loop, xs, vs, 20)
    assert ran == 1 and codes[0] == HD_CALLBACK_DONE and forces[0] == 0.0
    assert loop.all_events()[-1].name == "stop"
