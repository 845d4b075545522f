"""Hybrid dynamical systems with forward trajectory sensitivity, switching-time sensitivity included.

A :class:`HybridModel` is a set of numba-compiled functions over a fixed-size continuous state ``x``
(n_x), a parameter vector ``p`` (n_p) and an integer mode (seed 000 eqs. 1-5)::

    flow(mode, t, x, p, dx)                          dx = F_i(x, t, p)                 (eq. 1)
    flow_jac(mode, t, x, p, Fx, Fp)                  Fx = dF_i/dx, Fp = dF_i/dp
    n_guards(mode) -> int
    guard(mode, j, t, x, p, gx, gp) -> (g, g_t)      f_i(x, t, p); an event is g rising through 0 (eq. 3)
    reset(mode, j, t, x, p, xr, Rx, Rp, Rt) -> mode'  x+ = phi_i(x-, t, p) and its Jacobians      (eq. 2)

Modes whose state is smaller than n_x keep the unused entries constant (zero flow). The sensitivity
``S = dx/d(directions)`` is carried along the trajectory for any set of m directions: the caller gives
``S0 = dx0/d(direction)`` and ``Pd = dp/d(direction)``; the default directions are the initial state then the
parameters. A direction that moves the initial time t0 enters through ``S0 = dx0/da - F(x0, t0) dt0/da``
(eq. 11). Between events (eq. 8)::

    S' = F_x S + F_p Pd

and at an event, with the guard gradient g_x, g_p, g_t at the state just before it (eq. 14, lambda_t = dt_e/da)::

    lambda_t = -(g_x S- + g_p Pd) / (g_x F- + g_t)
    S+ = R_x S- + R_p Pd + (R_x F- + R_t - F+) lambda_t          (eq. 12 in the Hiskens-Pai / saltation form)

Seed 000 prints eq. 7 as ``d alpha / d t_i`` (it is ``d t_i / d alpha``) and swaps the +/- labels of the text;
eq. 12 written out is the saltation form above (``lambda- + Delta lambda``, eq. 9, expands to it).

Integration is classical fixed-step RK4 on (x, S) together (one step per mode may be given), so S is the exact
derivative of the discrete flow map; steps end exactly on the requested output times. lambda_t and the jump
use the flow F at the event (the continuous-time formulas); they match the discrete map to the RK4 error of
one step, O(h^4) for smooth flows but only O(h^1.5) where the flow is not smooth (Hunt-Crossley contact
|rho|^1.5 at lift-off), which is why such a mode gets a finer step. Events are located on the RK4 partial step
``x(t + s) = RK4(x(t), s)`` by safeguarded regula falsi to the round-off of t, so the discrete map is smooth
in the parameters between event-sequence changes (finite differences agree with S). A guard is armed once it
has been seen negative in the current mode, so a reset that lands exactly on a guard does not re-trigger it;
a guard that starts on zero and is positive at the end of the first step (the state never left it: a ball
that the paddle catches again at once) stops the simulation with an error rather than passing through.

The kernel (:mod:`.kernel_source`) is bound to each model's compiled functions and loaded from a file of
its own, so numba caches it across processes (see :func:`_build_kernel`); :func:`kernel_for` keeps it.
Define the model's functions at module level with ``@njit(cache=True)`` for that (as :mod:`.thermostat`
and :mod:`.ball` do); functions made inside a function still work, compiled once per process.

References
----------
Hiskens, I. A., Pai, M. A. (2000). Trajectory sensitivity analysis of hybrid systems. IEEE TCAS-I 47(2).
Patoglu, V., Gillespie, R. B. The Haptic Probe (seed 000), eqs. 1-14.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.fileio import atomic_write_text
from hapticam.identify.hybrid.kernel_source import NOT_FINITE, NOT_TRANSVERSAL, OK, STUCK, TOO_MANY_EVENTS
_STATUS = {TOO_MANY_EVENTS: "more events than max_events (Zeno or chattering?)",
           STUCK: "the state crossed a guard it started on without leaving it first (sticking contact)",
           NOT_FINITE: "the state became non-finite", NOT_TRANSVERSAL: "the flow is tangent to a guard at an event"}


@dataclass(frozen=True)
class HybridModel:
    """A hybrid system as compiled functions (signatures in the module docstring)."""

    name: str
    n_x: int
    n_p: int
    max_guards: int
    flow: Callable
    flow_jac: Callable
    n_guards: Callable
    guard: Callable
    reset: Callable


@dataclass
class Events:
    """Events in order: time (s), modes, guard index, state and sensitivity either side, lambda_t = dt_e/d dir."""

    t: np.ndarray
    mode_from: np.ndarray
    mode_to: np.ndarray
    guard: np.ndarray
    x_minus: np.ndarray
    x_plus: np.ndarray
    lambda_t: np.ndarray
    S_minus: np.ndarray
    S_plus: np.ndarray


@dataclass
class Trajectory:
    """States ``x[k]`` and sensitivities ``S[k] = dx/d dir`` at ``t[k]``, the mode there, and the events."""

    t: np.ndarray
    x: np.ndarray
    S: np.ndarray
    mode: np.ndarray
    events: Events


_TEMPLATE = Path(__file__).with_name("kernel_source.py")
_BINDING = re.compile(r"# >>> binding.*?# <<< binding\n", re.S)
_MODEL_FUNCTIONS = ("flow", "flow_jac", "n_guards", "guard", "reset")


def _importable(fn: Callable) -> tuple[str, str] | None:
    """(module, name) of a module-level compiled function, or None when it cannot be imported by name."""
    py = getattr(fn, "py_func", fn)
    module, name = getattr(py, "__module__", None), getattr(py, "__qualname__", "<")
    if module is None or "<" in name or "." in name:
        return None
    try:
        return (module, name) if getattr(importlib.import_module(module), name) is fn else None
    except (ImportError, AttributeError):
        return None


def _kernel_folder() -> Path | None:
    """A folder of this user's, writable by no one else, for the bound kernels (None: none usable)."""
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "hapticam_hybrid_kernels"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None  # code is imported from it: it must be ours alone
    return folder


def _build_kernel(model: HybridModel) -> Callable:
    """Bind the kernel template (:mod:`.kernel_source`) to ``model`` and load it.

    When the model's functions are importable by name the bound copy is written to a file (named by a
    hash of its text and of the model functions' source) and imported, so numba's cache serves later
    processes; otherwise it is compiled in memory, once per process.
    """
    fns = [getattr(model, name) for name in _MODEL_FUNCTIONS]
    template = _TEMPLATE.read_text(encoding="utf-8")
    sizes = f"n, npar, G = {model.n_x}, {model.n_p}, {model.max_guards}\n"
    where = [_importable(fn) for fn in fns]
    folder = _kernel_folder() if all(where) else None
    try:
        model_source = "".join(inspect.getsource(getattr(fn, "py_func", fn)) for fn in fns)
    except (OSError, TypeError):
        folder = None
    if folder is None:
        source = _BINDING.sub(lambda _: "# >>> binding\n" + sizes + "# <<< binding\n", template)
        namespace: dict = dict(zip(_MODEL_FUNCTIONS, fns))
        exec(compile(source.replace("@njit(cache=True)", "@njit"), f"<hybrid kernel {model.name}>", "exec"),
             namespace)
        return namespace["run"]
    lines = ["from importlib import import_module as _import_module\n"]
    lines += [f"{name} = getattr(_import_module({mod!r}), {attr!r})\n"
              for name, (mod, attr) in zip(_MODEL_FUNCTIONS, where)]
    source = _BINDING.sub(lambda _: "# >>> binding\n" + "".join(lines) + sizes + "# <<< binding\n", template)
    digest = hashlib.sha256((source + model_source).encode()).hexdigest()[:16]
    path = folder / f"hybrid_kernel_{re.sub(r'[^A-Za-z0-9]', '_', model.name)}_{digest}.py"
    if not path.is_file() or path.read_text(encoding="utf-8") != source:
        atomic_write_text(path, source, error=IdentificationError)
    spec = importlib.util.spec_from_file_location(f"hapticam_hybrid_kernel_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's cache finds the kernel's module again by its name
    spec.loader.exec_module(module)
    return module.run


_KERNELS: dict[HybridModel, Callable] = {}


def kernel_for(model: HybridModel) -> Callable:
    """The compiled simulation kernel of ``model`` (built on first use in this process; two models of
    the same name but different functions get their own)."""
    if model not in _KERNELS:
        _KERNELS[model] = _build_kernel(model)
    return _KERNELS[model]


def default_directions(model: HybridModel) -> tuple[np.ndarray, np.ndarray]:
    """``S0 = [I 0]``, ``Pd = [0 I]``: sensitivities to the initial state, then to the parameters."""
    n, q = model.n_x, model.n_p
    S0 = np.zeros((n, n + q))
    S0[:, :n] = np.eye(n)
    Pd = np.zeros((q, n + q))
    Pd[:, n:] = np.eye(q)
    return S0, Pd


def _check(model: HybridModel, x0: np.ndarray, p: np.ndarray, t_out: np.ndarray, h: np.ndarray) -> None:
    if x0.shape != (model.n_x,) or p.shape != (model.n_p,):
        raise IdentificationError(f"{model.name}: x0 must have {model.n_x} entries and p {model.n_p}, "
                                  f"got {x0.shape} and {p.shape}")
    if not (np.all(np.isfinite(x0)) and np.all(np.isfinite(p)) and np.all(np.isfinite(t_out))):
        raise IdentificationError(f"{model.name}: initial state, parameters and output times must be finite")
    if t_out.ndim != 1 or t_out.size == 0:
        raise IdentificationError(f"{model.name}: output times must be a non-empty 1-D array")
    d = np.diff(t_out)
    if not (np.all(d >= 0) or np.all(d <= 0)):
        raise IdentificationError(f"{model.name}: output times must be monotonic")
    if h.ndim != 1 or h.size == 0 or not (np.all(np.isfinite(h)) and np.all(h > 0)):
        raise IdentificationError(f"{model.name}: step h must be positive, got {h}")


def simulate(model: HybridModel, x0: np.ndarray, p: np.ndarray, t_out: np.ndarray, *, mode0: int = 0,
             t0: float | None = None, h: float | np.ndarray = 1e-3, S0: np.ndarray | None = None,
             Pd: np.ndarray | None = None, events: bool = True, max_events: int = 10_000, stop_after: int = 0) -> Trajectory:
    """Simulate ``model`` from ``(t0, x0, mode0)`` with sensitivities, sampled at ``t_out`` (s).

    Parameters
    ----------
    x0, p : initial state (model units) and parameter vector.
    t_out : output times (s), monotonic; may run backwards from t0 (then ``events`` must be False: resets are
        not invertible in general).
    mode0, t0 : initial mode and time (s); t0 defaults to ``t_out[0]``.
    h : RK4 step (s), or one step per mode (mode i uses ``h[min(i, len(h) - 1)]``): a mode whose flow is
        not smooth (Hunt-Crossley contact near zero penetration) needs a finer step than free flight.
    S0, Pd : initial sensitivity (n_x x m) and parameter directions (n_p x m); default
        :func:`default_directions` (m = n_x + n_p).
    events : False flows in ``mode0`` and ignores the guards (used to continue a mode past its switch).
    stop_after : stop at that event (> 0); outputs after it keep ``mode = -1`` and undefined states.

    Returns
    -------
    Trajectory with ``S[k] = dx(t_k)/d dir`` at fixed t_k and the events' ``lambda_t = dt_e/d dir``.
    """
    x0 = np.asarray(x0, dtype=float)
    p = np.asarray(p, dtype=float)
    t_out = np.atleast_1d(np.asarray(t_out, dtype=float))
    h = np.atleast_1d(np.asarray(h, dtype=float))
    _check(model, x0, p, t_out, h)
    t0 = float(t_out[0]) if t0 is None else float(t0)
    if S0 is None or Pd is None:
        S0, Pd = default_directions(model)
    S0 = np.ascontiguousarray(S0, dtype=float)
    Pd = np.ascontiguousarray(Pd, dtype=float)
    if S0.shape[0] != model.n_x or Pd.shape != (model.n_p, S0.shape[1]):
        raise IdentificationError(f"{model.name}: S0 must be n_x x m and Pd n_p x m")
    if t_out[-1] < t0 and events:
        raise IdentificationError(f"{model.name}: backward integration is only possible with events=False")
    n, m, K, E = model.n_x, S0.shape[1], t_out.size, max_events
    X, SS, MODE = np.empty((K, n)), np.empty((K, n, m)), np.empty(K, np.int64)
    ev = (np.empty(E), np.empty((E, 3), np.int64), np.empty((E, n)), np.empty((E, n)), np.empty((E, m)),
          np.empty((E, n, m)), np.empty((E, n, m)))
    status, n_ev = kernel_for(model)(int(mode0), t0, x0, S0, Pd, p, t_out, h, bool(events),
                                      int(stop_after), X, SS, MODE, *ev)
    if status != OK:
        raise IdentificationError(f"{model.name}: simulation failed: {_STATUS[status]}")
    e_t, e_i, e_xm, e_xp, e_lt, e_sm, e_sp = (a[:n_ev] for a in ev)
    return Trajectory(t_out, X, SS, MODE, Events(e_t, e_i[:, 0], e_i[:, 1], e_i[:, 2], e_xm, e_xp, e_lt, e_sm, e_sp))


@dataclass
class EventStep:
    """One step of an impact map (flow to the next event and reset) and its derivatives.

    ``t`` (s) and ``x_plus`` are the event time and the state just after it, ``mode`` the new mode;
    ``dt = dt_e/d dir`` (m,) and ``dx_plus = d x_plus/d dir`` (n_x x m) are total derivatives along the
    caller's directions (the event moves with them, so ``dx_plus = S+ + F+ lambda_t``).
    """

    t: float
    x_plus: np.ndarray
    mode: int
    dt: np.ndarray
    dx_plus: np.ndarray


def event_map(model: HybridModel, mode: int, t0: float, x0: np.ndarray, p: np.ndarray, dx0: np.ndarray,
              dt0: np.ndarray, dp: np.ndarray, *, h: float | np.ndarray = 1e-3, t_max: float = 10.0) -> EventStep:
    """Flow ``model`` from ``(t0 s, x0)`` in ``mode`` to its next event (within ``t_max`` s) and reset.

    The directions are given as ``dx0 = dx0/d dir`` (n_x x m), ``dt0 = dt0/d dir`` (m,) and
    ``dp = dp/d dir`` (n_p x m); the initial sensitivity is ``S0 = dx0 - F(x0, t0) dt0`` (seed 000 eq. 11).
    This is the impact map of seed 000 section 4 with its Jacobian (the state augmented with time).
    """
    x0 = np.asarray(x0, dtype=float)
    p = np.asarray(p, dtype=float)
    f0 = np.empty(model.n_x)
    model.flow(int(mode), float(t0), x0, p, f0)
    S0 = np.asarray(dx0, dtype=float) - np.outer(f0, np.asarray(dt0, dtype=float))  # seed 000 eq. 11
    traj = simulate(model, x0, p, np.array([t0, t0 + t_max]), mode0=mode, h=h, S0=S0, Pd=dp, max_events=2,
                    stop_after=1)
    ev = traj.events
    if ev.t.size == 0:
        raise IdentificationError(f"{model.name}: no event within {t_max} s of t = {t0} s")
    f_plus = np.empty(model.n_x)
    model.flow(int(ev.mode_to[0]), float(ev.t[0]), ev.x_plus[0], p, f_plus)
    dx_plus = ev.S_plus[0] + np.outer(f_plus, ev.lambda_t[0])  # total derivative: the event moves too
    return EventStep(float(ev.t[0]), ev.x_plus[0].copy(), int(ev.mode_to[0]), ev.lambda_t[0].copy(), dx_plus)
