"""Device adapters behind one interface (Phantom/Touch, the serial protocol, a remote device) and the emulators
of their interfaces; the simulated device, targets and probe are in :mod:`hapticam.world`."""
