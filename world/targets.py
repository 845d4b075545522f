"""Registry of the simulated physical targets and the compiled step that dispatches to their kernels.

``TARGETS`` maps a name to a factory returning a fresh target (a frozen dataclass; change parameters
with :func:`dataclasses.replace` or the factory's keyword arguments)::

    >>> from hapticam.world.targets import TARGETS, get_target
    >>> sorted(TARGETS)  # doctest: +NORMALIZE_WHITESPACE
    ['clicky-switch', 'friction-key', 'hybrid-key', 'knob', 'linear-switch', 'piano-key', 'tactile-switch',
     'test-device', 'toggle-switch']
    >>> get_target("tactile-switch", preload_N=0.35).preload_N
    0.35

Every target documents its physics and parameters in its class docstring; :func:`describe` gives one
line per target.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
from numba import njit

from hapticam.world.keyswitch import KIND_KEYSWITCH, Keyswitch, keyswitch_step
from hapticam.world.knob import KIND_FRICTION_BODY, DetentKnob, FrictionKey, friction_body_step
from hapticam.world.nonlinear_device import KIND_TEST_DEVICE, NonlinearTestDevice, test_device_step
from hapticam.world.physics import Target
from hapticam.world.piano_key import (KIND_HYBRID_KEY_TARGET, KIND_PIANO_KEY, HybridKeyTarget,
                                        hybrid_key_target_step, PianoKey, piano_key_step)
from hapticam.world.toggle import KIND_TOGGLE, ToggleSwitch, toggle_step
from hapticam.errors import UsageError

__all__ = ["TARGETS", "Target", "describe", "get_target", "target_step"]


@njit(cache=True, nogil=True)
def target_step(kind, p, s, xp, vp, dt, obs):
    """Advance target ``kind`` (its ``kind_code``) by ``dt`` (s) with the probe carriage at ``xp`` (m),
    ``vp`` (m/s); update state ``s`` and observables ``obs`` in place; return the force (N) the probe
    applies to the target along +x (what the force sensor reads). NaN for an unknown kind."""
    if kind == KIND_TEST_DEVICE:
        return test_device_step(p, s, xp, vp, dt, obs)
    if kind == KIND_KEYSWITCH:
        return keyswitch_step(p, s, xp, vp, dt, obs)
    if kind == KIND_PIANO_KEY:
        return piano_key_step(p, s, xp, vp, dt, obs)
    if kind == KIND_TOGGLE:
        return toggle_step(p, s, xp, vp, dt, obs)
    if kind == KIND_FRICTION_BODY:
        return friction_body_step(p, s, xp, vp, dt, obs)
    if kind == KIND_HYBRID_KEY_TARGET:
        return hybrid_key_target_step(p, s, xp, vp, dt, obs)
    return np.nan


def _named(factory: Callable[..., Target], name: str, cls: type) -> Callable[..., Target]:
    fields = tuple(f.name for f in dataclasses.fields(cls) if f.name != "name")

    def make(**changes: Any) -> Target:
        unknown = sorted(set(changes) - set(fields))
        if unknown:
            raise UsageError(f"{name}: unknown parameter(s) {', '.join(unknown)}; parameters: {', '.join(fields)}")
        try:
            return factory(name=name, **changes)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, UsageError):
                raise
            raise UsageError(f"{name}: bad parameter value ({exc})") from None
    make.__doc__ = f"Return a fresh {name!r} target; keyword arguments override its parameters."
    return make


#: name -> factory(**parameter_overrides) -> Target
TARGETS: dict[str, Callable[..., Target]] = {
    "test-device": _named(NonlinearTestDevice, "test-device", NonlinearTestDevice),
    "linear-switch": _named(Keyswitch.linear, "linear-switch", Keyswitch),
    "tactile-switch": _named(Keyswitch.tactile, "tactile-switch", Keyswitch),
    "clicky-switch": _named(Keyswitch.clicky, "clicky-switch", Keyswitch),
    "piano-key": _named(PianoKey, "piano-key", PianoKey),
    "hybrid-key": _named(HybridKeyTarget, "hybrid-key", HybridKeyTarget),
    "toggle-switch": _named(ToggleSwitch, "toggle-switch", ToggleSwitch),
    "knob": _named(DetentKnob, "knob", DetentKnob),
    "friction-key": _named(FrictionKey, "friction-key", FrictionKey),
}


def get_target(name: str, **changes: Any) -> Target:
    """Build the target registered as ``name``; raise :class:`UsageError` listing the names if unknown."""
    try:
        factory = TARGETS[name]
    except KeyError:
        raise UsageError(f"unknown target {name!r}; known targets: {', '.join(sorted(TARGETS))}") from None
    return factory(**changes)


def describe() -> dict[str, str]:
    """One-line description of every registered target, by name."""
    return {name: factory().summary for name, factory in sorted(TARGETS.items())}
