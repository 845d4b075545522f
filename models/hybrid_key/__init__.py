"""The ``hybrid-key`` model kind: a key with a hammer in flight (seed 000, section 1), in one folder.

- :mod:`~hapticam.models.hybrid_key.model`: :class:`HybridKey`, its parameters and checks
- :mod:`~hapticam.models.hybrid_key.kernel`: the compiled force kernel and the hammer's modes
- :mod:`~hapticam.models.hybrid_key.coupling`: the simulated key coupled to the handle
- :mod:`~hapticam.models.hybrid_key.geometry`, :mod:`~hapticam.models.hybrid_key.events`,
  :mod:`~hapticam.models.hybrid_key.impact`: the action's geometry, its events and the contact law
- :mod:`~hapticam.models.hybrid_key.layout`: the parameter and state vectors' layout
"""
