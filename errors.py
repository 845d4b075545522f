"""The one exception tree of hapticam.

Every error hapticam raises on purpose derives from :class:`HapticError`; each subclass also derives
the matching builtin so callers may catch either (``except ValueError`` still works). The CLI turns any
``HapticError`` into a one-line message and exit code 2.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, NoReturn


class HapticError(Exception):
    """Root of every error hapticam raises on purpose."""


class ModelValidationError(HapticError, ValueError):
    """A model parameter is invalid; the message names the field."""


class ModelFileError(HapticError, ValueError):
    """A model file cannot be read or written (corrupt, truncated, too large, newer schema, unknown kind)."""


class CaptureError(HapticError, ValueError):
    """A capture file or array is unusable (missing columns, NaN, non-monotonic time, no motion...)."""


class IdentificationError(HapticError, ValueError):
    """A fit cannot be carried out with the given data and settings."""


class DeviceError(HapticError, RuntimeError):
    """A device adapter failed to open, read or write; driver errors are chained with ``from``."""


class DependencyMissingError(HapticError, ImportError):
    """An optional dependency needed by the requested feature is not installed."""


class RenderError(HapticError, RuntimeError):
    """The servo loop could not start or was stopped by a fault."""


class SafetyFault(RenderError):
    """The safety layer stopped the loop (NaN force, watchdog, repeated overruns)."""


class ControlError(HapticError, ValueError):
    """A control request is malformed or cannot be carried out."""


class UsageError(HapticError, ValueError):
    """A command-line argument is invalid."""


class ParameterError(UsageError):
    """An argument of a library function is invalid: ``parameter`` names it as the function's signature
    does, ``problem`` says why. A command says its flag instead (:func:`parameters_as_flags`)."""

    def __init__(self, parameter: str, problem: str) -> None:
        super().__init__(f"{parameter}: {problem}")
        self.parameter = parameter
        self.problem = problem

    def __reduce__(self) -> tuple[type, tuple[str, str]]:        # a process pool's worker raises it whole
        return type(self), (self.parameter, self.problem)


@contextlib.contextmanager
def parameters_as_flags(flags: dict[str, str]) -> Iterator[None]:
    """Within a command: a :class:`ParameterError` of a parameter in ``flags`` (parameter name -> the flag
    that sets it) is said as a :class:`UsageError` of that flag."""
    try:
        yield
    except ParameterError as exc:
        if exc.parameter not in flags:
            raise
        raise UsageError(f"{flags[exc.parameter]}: {exc.problem}") from None


def missing_subcommand(prog: str) -> NoReturn:
    """What a command group given no subcommand does (``hapticam identify``): one error line, exit 2."""
    raise UsageError(f"'{prog}' needs a subcommand (see '{prog} --help')")
