"""Segmented impedance identification (Colton & Hollerbach, "Identification of nonlinear passive devices
for haptic simulations", 2005): exponentially weighted least squares per position segment, the passive
fit, and the reproduction of that paper's test device.

- :mod:`~hapticam.identify.impedance.fit`: :func:`identify_impedance` -> :class:`ImpedanceFit`
- :mod:`~hapticam.identify.impedance.ewls`, :mod:`~hapticam.identify.impedance.segmentation`,
  :mod:`~hapticam.identify.impedance.segment_params`: the estimator and its segments
- :mod:`~hapticam.identify.impedance.passive_fit`, :mod:`~hapticam.identify.impedance.constrained`,
  :mod:`~hapticam.identify.impedance.nnls`: the passivity-constrained fit
- :mod:`~hapticam.commands.reproduce.seed001`: ``hapticam reproduce seed001-test-device``
"""
