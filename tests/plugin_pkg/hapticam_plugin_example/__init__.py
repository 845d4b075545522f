"""An example hapticam plugin: the device adapter ``light-sim``, the model kind ``tactile-bump`` and the
contact estimator ``huber``."""
