"""Device adapters behind one interface: simulated device, simulated probe and targets, Phantom/Touch."""
