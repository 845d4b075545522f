"""Rendering: the numba servo loop, safety layer, telemetry and control, probe-vs-rendered verification."""
