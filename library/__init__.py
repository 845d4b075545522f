"""A library of identified keys: batch identification and verification, a catalogue, "feels like".

- :mod:`~hapticam.library.build`: :func:`build_library` (local processes or Dask, resumable)
- :mod:`~hapticam.library.entry`: one capture -> model, verification, features
- :mod:`~hapticam.library.plot`: each key's force-travel plot
- :mod:`~hapticam.library.catalogue`: ``index.json`` schema, perceptual distance,
  :func:`nearest`, :func:`compare` (A against B)
- :mod:`~hapticam.library.page`: ``index.html``, a sortable, filterable page that explains its
  numbers and credits the data (its fixed text in :mod:`~hapticam.library.page_text`)
- :mod:`~hapticam.library.switches`: the shipped switch catalogue (``switches/``: real
  switches' models, their captures, the author's credit); :mod:`~hapticam.library.export`
  rebuilds it (``library build --catalogue``)
- :mod:`~hapticam.library.search`: search by feel (``--lighter 20%``, ``--tactile``, bounds)
  and the switches measured twice; :mod:`~hapticam.commands.catalogue`: ``library
  list|show|nearest``; :mod:`~hapticam.library.reference`: a key's features from a file,
  a library entry or a catalogue name
"""
