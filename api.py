"""The verbs of ``hapticam``'s command line as Python functions, where no layer below has one already.

Each function takes Python values instead of command-line text and gives back what the command reports
(a :class:`~hapticam.capture.Capture`, a :class:`~hapticam.render.session.SessionReport`, ranked library
entries) instead of printing it; it refuses what the command refuses, with the same errors
(:class:`~hapticam.errors.UsageError` and the rest of :mod:`hapticam.errors`).

===================================  ===========================================
command                              function
===================================  ===========================================
``hapticam probe --list``            :func:`targets`
``hapticam probe TARGET``            :func:`probe`
``hapticam render MODEL``            :func:`render_model`
``hapticam library nearest LIB Q``   :func:`library_nearest`
``hapticam library compare A B``     :func:`library_compare`
===================================  ===========================================

This module stands above every layer (``docs/architecture.md``, section "Layers"): it imports the
layers it drives inside its functions, so ``import hapticam`` loads none of them. SI units throughout
(m, N, s; a rotary target's captures: rad, N m).
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any

from hapticam.errors import UsageError

if TYPE_CHECKING:
    from hapticam.capture import Capture
    from hapticam.world.physics import Target
    from hapticam.models.base import Model
    from hapticam.render.session import SessionReport

__all__ = ["library_compare", "library_nearest", "probe", "render_model", "targets"]

#: the excitations of a rotary target (a knob): it is spun down or turned, never position-controlled
ROTARY_EXCITATIONS = ("spin-down", "turns")


def targets() -> dict[str, str]:
    """The simulated physical targets :func:`probe` takes, by name, each with a one-line description."""
    from hapticam.world.targets import describe

    return describe()


def probe(target: str | Target, excitation: str = "sweep", *, duration_s: float | None = None,
          range_m: tuple[float, float] | None = None, frequency_hz: float | None = None,
          band_hz: tuple[float, float] | None = None, sample_rate_hz: float = 4000.0, seed: int = 0,
          parameters: dict[str, Any] | None = None) -> Capture:
    """Probe a simulated physical target along an excitation and return the measured capture.

    Parameters
    ----------
    target : str or Target
        A name from :func:`targets` (``"tactile-switch"``), or a target object.
    excitation : str
        ``sweep`` (a 1-4 Hz linear swept sine, 90 s), ``sine``, ``triangle`` (one slow press and
        release, 4 s), ``multisine``, ``step``; a rotary target: ``spin-down`` or ``turns``
        (:func:`hapticam.world.excitations.make_excitation` gives each one's defaults).
    duration_s : float, optional
        Length of the excitation (s).
    range_m : (float, float), optional
        Low and high end of the commanded travel (m; rad for a rotary target); default the target's own.
    frequency_hz, band_hz : optional
        A sine's frequency (Hz); a sweep's or multisine's band (Hz).
    sample_rate_hz : float
        Sample rate of the capture (Hz).
    seed : int
        Seed of the sensor noise and of a multisine's phases.
    parameters : dict, optional
        Target parameters to change (SI units, names as in the target's class), with a name.

    Returns
    -------
    Capture
        ``t_s``, ``x_m``, ``f_N`` as measured (force the probe applies along +x), with the target,
        excitation and probe settings in its metadata.
    """
    from hapticam.world.excitations import make_excitation
    from hapticam.world.physics import Target
    from hapticam.world.probe import probe as probe_target
    from hapticam.world.targets import get_target

    if isinstance(target, Target):
        if parameters:
            raise UsageError("probe: give parameters with a target's name, or change the target object itself")
        body = target
    else:
        body = get_target(str(target), **(parameters or {}))
    rotary = getattr(body, "axis", "linear") == "rotary"
    if rotary and excitation not in ROTARY_EXCITATIONS:
        raise UsageError(f"probe {body.name}: a rotary target is spun down or turned (excitation "
                         f"{' or '.join(ROTARY_EXCITATIONS)}), not driven along a {excitation!r}")
    if not rotary and excitation in ROTARY_EXCITATIONS:
        raise UsageError(f"probe {body.name}: the excitation {excitation!r} is for rotary targets (knob)")
    lo, hi = body.probe_range_m() if range_m is None else range_m
    shape = make_excitation(excitation, lo, hi, duration_s, frequency_hz=frequency_hz, band_hz=band_hz, seed=seed)
    return probe_target(body, shape, sample_rate_hz=sample_rate_hz, seed=seed)


def render_model(model: Model | str | os.PathLike[str], device: str = "sim", *, duration_s: float | None = None,
                 rate_hz: float = 1000.0, realtime: bool = True, user: str = "press", depth_m: float = 4e-3,
                 record: str | os.PathLike[str] | None = None, max_force_N: float | None = None,
                 passivity: bool = False, display: str = "auto", allow_active: bool = False,
                 seed: int = 0) -> SessionReport:
    """Render a model on a haptic device in the servo loop, as ``hapticam render`` does, and return the
    session's report (loop statistics, safety events, the recording's path and ticks).

    Parameters
    ----------
    model : Model, path or str
        A model, or a model file (``.yaml``/``.msgpack``), ``example:NAME`` or ``library:DIR/NAME``, read in
        the units of the device's axis (a rotary device's, ``sim:rotary``: rad and N m).
    device : str
        ``NAME[:ADDRESS]`` of a device adapter (``sim``, ``serial:PORT``, ``zmq:ADDRESS``, ``phantom``;
        :func:`hapticam.devices.registry.available_devices`).
    duration_s : float, optional
        How long to render (s). Default: until Ctrl-C in real time, 2 s on the simulated clock.
    rate_hz : float
        Servo rate (Hz).
    realtime : bool
        Run on the wall clock; ``False``: on a simulated clock, as fast as possible (simulated devices only).
    user, depth_m : str, float
        The simulated user at a simulated device's handle (``press``, ``sine``, ``sweep``, ``finger``) and
        its travel (m).
    record : path, optional
        Record every tick to this capture file (``.csv``).
    max_force_N : float, optional
        Force limit of the safety layer (N); default the device's.
    passivity : bool
        Run the passivity observer and controller (Hannaford & Ryu, "Time-domain passivity control of
        haptic interfaces", 2002).
    display : str
        ``auto``: a model stiffer than the device displays passively is felt through a virtual coupling;
        ``off``: the model at the handle as it is (:class:`hapticam.render.loop.LoopConfig`).
    allow_active : bool
        Render a model that is not passive (each way it may generate energy is then a warning).
    seed : int
        Seed of a simulated device's sensor noise.

    Warns
    -----
    UserWarning
        Each note of the render gate (:func:`hapticam.render.gate.check_for_device`) and of the session.

    Raises
    ------
    HapticError
        What the command refuses, with the same error (:class:`UsageError`, :class:`ModelValidationError`...);
        a bad argument: :class:`~hapticam.errors.ParameterError`, which names it.
    StopFailed
        The run ended but a step of its finish failed (recording, device close): ``exc.report`` holds the
        session's statistics, ``exc.problems`` what failed (:class:`hapticam.render.session.StopFailed`).
    """
    from hapticam.render.run import RenderSettings, render_on_device
    from hapticam.render.session import StopFailed

    def warn(gate_warnings: list[str], _device: Any, session: Any) -> None:
        for note in [*gate_warnings, *session.notes]:
            warnings.warn(note, UserWarning, stacklevel=4)

    settings = RenderSettings(model, device, duration_s=duration_s, rate_hz=rate_hz, realtime=realtime, user=user,
                              depth_m=depth_m, record=record, max_force_N=max_force_N, passivity=passivity,
                              display=display, allow_active=allow_active, seed=seed)
    outcome = render_on_device(settings, warn)
    if outcome.problems:
        raise StopFailed(outcome.problems, outcome.report)
    return outcome.report


def library_nearest(library: str | os.PathLike[str], query: str | os.PathLike[str], n: int = 5
                    ) -> list[tuple[float, dict[str, Any]]]:
    """The ``n`` keys of ``library`` (a folder ``hapticam library build`` wrote) that feel most like
    ``query`` (a model file, ``example:NAME``, a capture, or a library entry ``DIR/NAME``): pairs of the
    perceptual distance (in just-noticeable differences: the features' and, where both keys have one, the
    force curves', as ``library nearest`` ranks) and the entry of ``index.json``, nearest first."""
    from hapticam.library.catalogue import load_index, nearest
    from hapticam.library.reference import features_and_curve_of

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UsageError(f"library nearest: n must be a whole number >= 1, got {n!r}")
    entries = load_index(library)["entries"]
    _name, features, curve = features_and_curve_of(os.fspath(query))
    return nearest(features, entries, n, curve=curve)


def library_compare(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> dict[str, Any]:
    """Key ``a`` against key ``b`` (each a model file, ``example:NAME``, a capture or a library entry
    ``DIR/NAME``), as ``hapticam library compare --json`` reports it: ``distance_jnd`` (perceptual
    distance), ``differences_jnd`` (each feature's A less B in JND units), ``noticeable`` (what a person
    would notice, largest first, read as A against B) and both keys' features (SI units)."""
    from hapticam.library.catalogue import compare, differences, distance
    from hapticam.library.reference import features_of

    name_a, fa = features_of(os.fspath(a))
    name_b, fb = features_of(os.fspath(b))
    return {"a": name_a, "b": name_b, "distance_jnd": distance(fa, fb), "differences_jnd": differences(fa, fb),
            "noticeable": compare(fa, fb), "features_a": fa, "features_b": fb}
