"""The hybrid key's impacts as the render loop's event-based transients read them (:func:`hybrid_key_impact`)."""

from __future__ import annotations

from numba import njit

from hapticam.models.hybrid_key.geometry import lever_at
from hapticam.models.hybrid_key.layout import (EV_LANDING, EV_STRING, KERNEL_JIT, MAX_LOGGED_EVENTS, S_ESCAPED, S_EV0,
                                               S_EV_COUNT, S_XPREV)


@njit(**KERNEL_JIT)
def hybrid_key_impact(p, s):
    """The strongest impact of the last tick that the key feels: ``(code, speed)`` with the event code
    (``EV_LANDING``: the hammer landing on the jack or in the backcheck; ``EV_STRING``: striking the string)
    and its impact speed (m/s, > 0), or ``(0, 0.0)``. A landing where the hammer's reaction does not reach the
    key (on its rail, lever ratio 0 at the key's position) is not one: the hand feels nothing of it."""
    code = 0
    speed = 0.0
    felt = lever_at(p, s, s[S_XPREV], s[S_ESCAPED]) != 0.0
    for j in range(min(int(s[S_EV_COUNT]), MAX_LOGGED_EVENTS)):
        k = S_EV0 + 3 * j
        c = int(s[k])
        if ((c == EV_LANDING and felt) or c == EV_STRING) and abs(s[k + 2]) > speed:
            code = c
            speed = abs(s[k + 2])
    return code, speed
