"""Subcommands of this subpackage (registered by :mod:`hapticam.cli`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add this subpackage's subcommands to the ``hapticam`` parser."""
