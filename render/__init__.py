"""Rendering: the numba servo loop, safety layer, telemetry and control, probe-vs-rendered verification.

Entry points:

- :func:`hapticam.render.loop.run_simulated` -- render a model on the simulated device on a simulated
  clock and get every tick back (:class:`~hapticam.render.loop.RenderResult`).
- :class:`hapticam.render.loop.ServoLoop` -- the loop itself: real-time thread (``start``/``stop``),
  simulated clock (``run_simulated``), model swap (``load_model``/``set_parameter``), C callback table.
- :class:`hapticam.render.session.RenderSession` -- the loop with recording, telemetry and control
  (what ``hapticam render`` runs); protocol in docs/telemetry.md.
- :func:`hapticam.render.servo.build_servo` -- the compiled step and its drivers for a pair of kernels.
"""
