"""The compiled entry points the render loop calls: :func:`model_force`, :func:`model_flags`, :func:`model_diag`,
:func:`model_impact`.

Each walks the component headers of a :class:`~hapticam.models.base.CompiledModel`; ``model_force`` sums
the component kernels' forces. Everything here is numba ``nopython``/``nogil``, callable from other
``@njit`` code and from a numba ``cfunc`` (the OpenHaptics scheduler callback path).

Model diagnostics (:func:`model_diag`, recorded per tick in the ring columns ``model_diag0`` and
``model_diag1``; the same table is :data:`DIAGNOSTICS`):

================  ==================================  ============================================
kind              diagnostic 0                        diagnostic 1
================  ==================================  ============================================
``hybrid-key``    hammer height ``y`` (m, up; 0 =     drive point height ``s`` (m): the jack ``r x``,
                  the jack top with the key at rest)  or the backcheck once escaped (``drive_point``)
any other kind    0.0                                 0.0
================  ==================================  ============================================
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hapticam.models.base import (FORCE_KERNEL, HEADER_FIELDS, KIND_CONTACT, KIND_END_STOPS, KIND_FRICTION,
                                  KIND_HYBRID_KEY, KIND_IMPEDANCE)
from hapticam.models.composite import end_stops_force
from hapticam.models.contact import contact_force
from hapticam.models.friction import friction_force
from hapticam.models.hybrid_key.impact import hybrid_key_impact
from hapticam.models.hybrid_key.kernel import hybrid_key_diag, hybrid_key_flags, hybrid_key_force
from hapticam.models.impedance import impedance_force


@njit(cache=True, nogil=True)
def model_force(params, state, x, v, a, dt):
    """Total force (N) the probe must apply at position ``x`` (m), velocity ``v`` (m/s), acceleration
    ``a`` (m/s^2), advancing internal state by ``dt`` (s). Writes the next state into ``state``.

    Returns NaN only if a component kernel does (the safety layer catches it).
    """
    n = int(params[0])
    total = 0.0
    for i in range(n):
        h = 1 + HEADER_FIELDS * i
        code = int(params[h])
        po = int(params[h + 1])
        pl = int(params[h + 2])
        so = int(params[h + 3])
        sl = int(params[h + 4])
        p = params[po:po + pl]
        s = state[so:so + sl]
        if code == KIND_IMPEDANCE:
            total += impedance_force(p, s, x, v, a, dt)
        elif code == KIND_CONTACT:
            total += contact_force(p, s, x, v, a, dt)
        elif code == KIND_FRICTION:
            total += friction_force(p, s, x, v, a, dt)
        elif code == KIND_HYBRID_KEY:
            total += hybrid_key_force(p, s, x, v, a, dt)
        elif code == KIND_END_STOPS:
            total += end_stops_force(p, s, x, v, a, dt)
        else:
            return np.nan
    return total


@njit(cache=True, nogil=True)
def model_flags(params, state):
    """Mode/event flags (int64 bit field) of the model's current state, for telemetry.

    Bits 0-7 come from the first hybrid key component (see :func:`hybrid_key_flags`); 0 otherwise.
    """
    n = int(params[0])
    for i in range(n):
        h = 1 + HEADER_FIELDS * i
        if int(params[h]) == KIND_HYBRID_KEY:
            po = int(params[h + 1])
            pl = int(params[h + 2])
            so = int(params[h + 3])
            sl = int(params[h + 4])
            return hybrid_key_flags(params[po:po + pl], state[so:so + sl])
    return 0


#: What :func:`model_diag` reports per kind: (diagnostic 0, diagnostic 1); kinds not listed report 0.0.
DIAGNOSTICS: dict[str, tuple[str, str]] = {
    "hybrid-key": ("hammer height y (m, up; 0 = the jack top with the key at rest)",
                   "drive point height s (m): the jack r x, or the backcheck once escaped"),
}


@njit(cache=True, nogil=True)
def model_diag(params, state, which):
    """A model diagnostic of the current state (after the last :func:`model_force` call), for telemetry.

    Parameters
    ----------
    params, state : ndarray of float64
        The compiled model's arrays (:class:`~hapticam.models.base.CompiledModel`).
    which : int
        0 or 1: which of the two diagnostics.

    Returns
    -------
    float
        The first component with diagnostics reports them (module table, :data:`DIAGNOSTICS`):
        hybrid key: ``which=0`` the hammer height ``y`` (m), ``which=1`` the drive point height (m),
        the jack or, once escaped, the backcheck. 0.0 for models without a component that has
        diagnostics.
    """
    n = int(params[0])
    for i in range(n):
        h = 1 + HEADER_FIELDS * i
        if int(params[h]) == KIND_HYBRID_KEY:
            po = int(params[h + 1])
            pl = int(params[h + 2])
            so = int(params[h + 3])
            sl = int(params[h + 4])
            return hybrid_key_diag(params[po:po + pl], state[so:so + sl], which)
    return 0.0


@njit(cache=True, nogil=True)
def model_impact(params, state):
    """The strongest impact the model's simulation detected in the last :func:`model_force` call, for the
    render loop's event-based transients: ``(code, speed)`` with the impact's event code
    (:data:`hapticam.models.transients.EVENT_CODES`) and speed (m/s, > 0), or ``(0, 0.0)``. Only kinds whose
    kernel detects impacts report them (``impact_events`` of the kind); today the hybrid key's hammer
    landing and string strike."""
    n = int(params[0])
    for i in range(n):
        h = 1 + HEADER_FIELDS * i
        if int(params[h]) == KIND_HYBRID_KEY:
            po = int(params[h + 1])
            pl = int(params[h + 2])
            so = int(params[h + 3])
            sl = int(params[h + 4])
            return hybrid_key_impact(params[po:po + pl], state[so:so + sl])
    return 0, 0.0


# Model.force evaluates through the registered kernel (hapticam.models.base needs no import of this module)
FORCE_KERNEL.append(model_force)
