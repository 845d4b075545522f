"""Hybrid models: trajectory sensitivities, reconstruction and Newton observers (seed 000), periodic orbits.

Public API of the engine (:mod:`hapticam.identify.hybrid.engine`, stable): :class:`~.engine.HybridModel`
(a model as numba-compiled flow, guards and resets), :func:`~.engine.simulate` (trajectory, events and
forward sensitivities including switching-time sensitivities, seed 000 eqs. 6-14), :func:`~.engine.event_map`
(one impact-map step with its Jacobian), :class:`~.engine.Trajectory`, :class:`~.engine.Events`,
:class:`~.engine.EventStep`. Example models: :mod:`.thermostat` (seed 000 Table 1) and :mod:`.ball` (a ball
on a sinusoidal paddle, rigid and Hunt-Crossley contact).
"""
