"""Identification of the hybrid key (a key with a hammer in flight, the ``hybrid-key`` model kind) from
probe captures: the static line, let-off and keybed, the hammer's landings, friction beside the key.

- :mod:`~hapticam.identify.hybrid_key.fit`: :func:`identify_hybrid_key`
- :mod:`~hapticam.identify.hybrid_key.static`, :mod:`~hapticam.identify.hybrid_key.events`,
  :mod:`~hapticam.identify.hybrid_key.bounce`: its stages; :mod:`~hapticam.identify.hybrid_key.params`:
  parameters to a model file
- :mod:`~hapticam.commands.identify_hybrid_key`: ``hapticam identify hybrid-key``
"""
