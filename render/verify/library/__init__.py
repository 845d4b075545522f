"""A library of identified keys: batch identification and verification, a catalogue, "feels like".

- :mod:`~hapticam.render.verify.library.build`: :func:`build_library` (local processes or Dask, resumable)
- :mod:`~hapticam.render.verify.library.entry`: one capture -> model, verification, features
- :mod:`~hapticam.render.verify.library.plot`: each key's force-travel plot
- :mod:`~hapticam.render.verify.library.catalogue`: ``index.json`` schema, perceptual distance,
  :func:`nearest`, :func:`compare` (A against B)
- :mod:`~hapticam.render.verify.library.page`: ``index.html``, a sortable, filterable page that explains its
  numbers and credits the data (its fixed text in :mod:`~hapticam.render.verify.library.page_text`)
"""
