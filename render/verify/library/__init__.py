"""A library of identified keys: batch identification and verification, a catalogue, "feels like".

- :mod:`~hapticam.render.verify.library.build`: :func:`build_library` (local processes or Dask, resumable)
- :mod:`~hapticam.render.verify.library.entry`: one capture -> model, verification, features
- :mod:`~hapticam.render.verify.library.plot`: each key's force-travel plot
- :mod:`~hapticam.render.verify.library.catalogue`: ``index.json`` schema, perceptual distance,
  :func:`nearest`, :func:`compare` (A against B)
- :mod:`~hapticam.render.verify.library.page`: ``index.html``, a sortable, filterable page that explains its
  numbers and credits the data (its fixed text in :mod:`~hapticam.render.verify.library.page_text`)
- :mod:`~hapticam.render.verify.library.switches`: the shipped switch catalogue (``switches/``: real
  switches' models, their captures, the author's credit); :mod:`~hapticam.render.verify.library.export`
  rebuilds it (``library build --catalogue``)
- :mod:`~hapticam.render.verify.library.search`: search by feel (``--lighter 20%``, ``--tactile``, bounds)
  and the switches measured twice; :mod:`~hapticam.render.verify.library.catalogue_cli`: ``library
  list|show|nearest``; :mod:`~hapticam.render.verify.library.reference`: a key's features from a file,
  a library entry or a catalogue name
"""
