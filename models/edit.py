"""Editing one parameter of a model by its path in the model's parameter mapping.

A path names a value in ``Model.to_dict()`` with dots and list indices, e.g. ``"stiffness_N_per_m"``,
``"press.k_Npm.0"`` or ``"components.1.k"``; :func:`set_path` edits the mapping in place, and the
caller validates the edited mapping with the model's own ``from_dict``. Used by the render loop's
``set_param`` control request.
"""

from __future__ import annotations

from typing import Any

from hapticam.errors import ModelValidationError
from hapticam.models.validation import excerpt


def set_path(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Set ``value`` at ``path`` in the nested mapping ``data`` (in place) and return ``data``.

    Raises :class:`~hapticam.errors.ModelValidationError` naming the first part of the path that does
    not exist."""
    if not isinstance(path, str) or not path:
        raise ModelValidationError("parameter path must be a non-empty string")
    node: Any = data
    keys = path.split(".")
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        where = ".".join(keys[:i]) or "model"
        if isinstance(node, list):
            try:
                idx = int(key)
                node[idx]
            except (ValueError, IndexError):
                raise ModelValidationError(f"no element {excerpt(key)} in {where}") from None
        elif isinstance(node, dict):
            if key not in node:
                raise ModelValidationError(f"model has no parameter {excerpt('.'.join(keys[:i + 1]))}")
            idx = key
        else:
            raise ModelValidationError(f"{excerpt(where)} is not a group of parameters")
        if last:
            node[idx] = value
        else:
            node = node[idx]
    return data

