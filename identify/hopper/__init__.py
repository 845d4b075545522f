"""The hopper of seed 000 (Patoglu & Gillespie): a hybrid system identified from its hops, on the engine of
:mod:`hapticam.identify.hybrid`.

- :mod:`~hapticam.identify.hopper.model`: the hopper's dynamics; :mod:`~hapticam.identify.hopper.fit`: its
  identification; :mod:`~hapticam.identify.hopper.ivp`: the reference integration
- :mod:`~hapticam.commands.reproduce.hopper`, :mod:`~hapticam.identify.hopper.plot`,
  :mod:`~hapticam.commands.bench.hopper`: the paper's experiment, its figure and its bench
"""
