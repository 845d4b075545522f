"""An example hapticam plugin: the device adapter ``light-sim`` and the model kind ``tactile-bump``."""
