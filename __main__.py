"""``python -m hapticam``: the same as the ``hapticam`` command."""

from hapticam.cli import main

raise SystemExit(main())
