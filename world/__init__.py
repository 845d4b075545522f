"""The simulated world: physical targets to probe, users who press, the probe and its excitations, and the
simulated devices, all in numba so that a probing or a rendering runs without hardware.

- :mod:`~hapticam.world.targets`: the target registry (``hapticam probe --list``); the targets themselves in
  :mod:`~hapticam.world.keyswitch`, :mod:`~hapticam.world.piano_key`, :mod:`~hapticam.world.knob`,
  :mod:`~hapticam.world.toggle`, on the shared contact physics of :mod:`~hapticam.world.physics`
- :mod:`~hapticam.world.excitations`: the probe's trajectories (sweep, sine, triangle, multisine, ...)
- :mod:`~hapticam.world.probe`: the simulated probe, which presses a target along an excitation
- :mod:`~hapticam.world.users`: scripted users (a press, a finger, a probe replaying a capture)
- :mod:`~hapticam.world.sim`, :mod:`~hapticam.world.delayed_sim`: the simulated haptic device (and the one
  with a serial link's delay); :mod:`~hapticam.world.nonlinear_device`: seed 001's test device

Real hardware lives beside it, in :mod:`hapticam.devices` (adapters and their emulators): the simulated
device implements the same :class:`~hapticam.devices.base.Device` interface.
"""
