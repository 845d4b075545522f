"""The application layer: the command line (one module per command group), the benches and the papers'
reproductions. It stands on every other layer and nothing imports it but the root :mod:`hapticam.cli`,
which dispatches ``hapticam COMMAND`` to the module that registers it.

- commands: :mod:`~hapticam.commands.demo`, :mod:`~hapticam.commands.probe`, :mod:`~hapticam.commands.serve`,
  :mod:`~hapticam.commands.identify` (with :mod:`~hapticam.commands.identify_more`,
  :mod:`~hapticam.commands.identify_friction`, :mod:`~hapticam.commands.identify_hybrid_key`),
  :mod:`~hapticam.commands.model`, :mod:`~hapticam.commands.render`, :mod:`~hapticam.commands.verify`,
  :mod:`~hapticam.commands.library`, :mod:`~hapticam.commands.catalogue`
- :mod:`hapticam.commands.bench`: ``hapticam bench ...``, each measuring its peer in the same run
- :mod:`hapticam.commands.reproduce`: ``hapticam reproduce ...``, the papers' experiments beside their numbers

A command module parses and checks its arguments, calls the library layers and prints; the work itself is
in the layers below, where the Python API (:mod:`hapticam.api`) reaches it too.
"""
