"""Compile a numba function once per set of kernels it calls, with a cache entry that lasts across runs.

numba keys the cache entry of a closure by a pickle of its captured values, and a compiled function
pickles with an identity that is new in every process: a closure over the model and device kernels is
compiled again, and adds a new entry to the cache, on every run. Instead the servo's functions are
templates at module level that call their kernels by global name (``force_fn``, ``sense_fn``, ...), and
:func:`specialize` compiles a copy of a template whose globals bind those names to one set of kernels.
The copy's cache entry is named by the template and :func:`kernel_tag`, a digest of the kernels' module
paths, names and source-file stamps (the same in every process), so the second run of the same model
and device loads the compiled servo from the cache.

A kernel that cannot be found again by its module and name (a function built inside another function) has
no stable name: its set gets no tag and is compiled without the cache.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
import types
from typing import Any, Callable


def _stable_name(fn: Any) -> str | None:
    """``module.qualname@mtime_ns:size`` of a compiled function's Python source, or None when the name
    does not lead back to ``fn`` (a closure, a function replaced in its module)."""
    py_func = getattr(fn, "py_func", None)
    if py_func is None or "<locals>" in py_func.__qualname__:
        return None
    module = sys.modules.get(py_func.__module__)
    try:
        found = functools.reduce(getattr, py_func.__qualname__.split("."), module)
        st = os.stat(inspect.getfile(py_func))
    except (AttributeError, TypeError, OSError):
        return None
    if found is not fn:
        return None
    return f"{py_func.__module__}.{py_func.__qualname__}@{st.st_mtime_ns}:{st.st_size}"


def kernel_tag(kernels: dict[str, Any]) -> str | None:
    """A 12-hex-digit name for a set of compiled kernels (global name -> numba dispatcher), the same in
    every process while their sources are unchanged; None if one of them has no stable name."""
    names = []
    for name in sorted(kernels):
        stable = _stable_name(kernels[name])
        if stable is None:
            return None
        names.append(f"{name}={stable}")
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:12]


def specialize(template: Any, bindings: dict[str, Any], tag: str | None,
               compile_fn: Callable[[Callable, bool], Any]) -> Any:
    """Compile ``template`` (a module-level numba dispatcher, or a Python function) with the global names
    in ``bindings`` bound to the given objects. ``compile_fn(py_func, cache)`` compiles the copy (e.g.
    ``njit(cache=cache, nogil=True)(py_func)``); the copy is cached under ``TEMPLATE_TAG`` when ``tag``
    is given, and not cached otherwise."""
    py_func = getattr(template, "py_func", template)
    namespace = dict(py_func.__globals__)
    namespace.update(bindings)
    copy = types.FunctionType(py_func.__code__, namespace, py_func.__name__, py_func.__defaults__)
    copy.__doc__ = py_func.__doc__
    copy.__qualname__ = f"{py_func.__name__}_{tag}" if tag else py_func.__qualname__
    return compile_fn(copy, tag is not None)
