"""A library of identified keys: batch identification and verification, a catalogue, "feels like".

- :mod:`~hapticam.render.verify.library.build`: :func:`build_library` (local processes or Dask, resumable)
- :mod:`~hapticam.render.verify.library.entry`: one capture -> model, verification, features
- :mod:`~hapticam.render.verify.library.catalogue`: ``index.json`` schema, ``index.html``, perceptual
  distance, :func:`nearest`, :func:`compare`
"""
