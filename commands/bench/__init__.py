"""``hapticam bench ...``: each bench measures hapticam and its peer in the same run and reports ratios
(render: the compiled servo tick against a Python loop; probe, identify, contact, friction, hopper,
hybrid key, library)."""
