"""YAML read in one pass with limits checked before anything is built: depth, node count, no tags, no
anchors or aliases, no duplicate keys.

:func:`load_bounded` drives PyYAML's event parser (libyaml's C parser, ``CSafeLoader``, when PyYAML was
built with it; the pure-Python one otherwise) and builds the plain Python value from the events itself,
so a limit is enforced at the event that crosses it: a file of 100,000 nested brackets is refused at
bracket ``max_depth + 1`` instead of being composed recursively (which ends in ``RecursionError``), and
a two-million-number list at node ``max_nodes + 1``. Scalars get exactly the types ``yaml.safe_load``
gives them (YAML 1.1 core schema through PyYAML's resolver and ``SafeConstructor``), with a fast path
for plain decimal numbers that is a strict subset of the YAML 1.1 int and float patterns.

References
----------
YAML 1.1 (2005), sections 3.2 (representation graph) and the tag repository (int, float, bool, null,
timestamp); PyYAML's ``resolver.py`` implicit resolvers.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from hapticam.errors import HapticError

#: libyaml's event parser with PyYAML's safe resolver and constructor, or the pure-Python one
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
C_LOADER = LOADER is not yaml.SafeLoader
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")                      # subset of YAML 1.1 int (decimal)
_FLOAT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)\.[0-9]*(?:[eE][-+][0-9]+)?$")   # subset of YAML 1.1 float
_STR_TAG = "tag:yaml.org,2002:str"


class _Frame:
    __slots__ = ("value", "key", "has_key")

    def __init__(self, value: Any) -> None:
        self.value, self.key, self.has_key = value, None, False


def load_bounded(text: str | bytes, name: str, *, max_depth: int, max_nodes: int,
                 error: type[HapticError] = HapticError) -> Any:
    """Parse one YAML document into plain data (dict, list, str, int, float, bool, None, datetime).

    Raises ``error`` naming ``name`` and the line for: a YAML syntax error, nesting deeper than
    ``max_depth``, more than ``max_nodes`` nodes, a tag, an anchor or alias, a duplicate key, a key that
    is not a scalar, or more than one document.
    """
    loader = None
    try:
        loader = LOADER(text)                 # the pure-Python reader checks the characters here already
        return _build(loader, name, max_depth, max_nodes, error)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise error(f"{name}: not valid YAML{where}: {problem}") from None
    finally:
        if loader is not None:
            loader.dispose()


def _line(event: Any) -> str:
    mark = getattr(event, "start_mark", None)
    return f" (line {mark.line + 1})" if mark is not None else ""


def _build(loader: Any, name: str, max_depth: int, max_nodes: int, error: type[HapticError]) -> Any:
    stack: list[_Frame] = []
    nodes = 0
    documents = 0
    result: Any = None
    while True:
        ev = loader.get_event()
        if isinstance(ev, yaml.StreamEndEvent):
            return result
        if isinstance(ev, (yaml.StreamStartEvent, yaml.DocumentEndEvent)):
            continue
        if isinstance(ev, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise error(f"{name}: more than one YAML document{_line(ev)}")
            continue
        if isinstance(ev, yaml.AliasEvent) or getattr(ev, "anchor", None) is not None:
            raise error(f"{name}: YAML anchors and aliases are not allowed in model files{_line(ev)}")
        if isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            value = stack.pop().value
        else:
            nodes += 1
            if nodes > max_nodes:
                raise error(f"{name}: more than {max_nodes:,} YAML nodes{_line(ev)}; not a model file")
            if isinstance(ev, yaml.ScalarEvent):
                value = _scalar(loader, ev, name, error)
            else:
                if ev.tag is not None and not ev.implicit:
                    raise error(f"{name}: YAML tags are not allowed in model files{_line(ev)}")
                if len(stack) >= max_depth:
                    raise error(f"{name}: nested deeper than {max_depth} levels{_line(ev)}")
                stack.append(_Frame({} if isinstance(ev, yaml.MappingStartEvent) else []))
                continue
        if not stack:
            result = value
            continue
        _add(stack[-1], value, ev, name, error)


def _add(top: _Frame, value: Any, ev: Any, name: str, error: type[HapticError]) -> None:
    container = top.value
    if isinstance(container, list):
        container.append(value)
    elif not top.has_key:
        if isinstance(value, (dict, list)):
            raise error(f"{name}: a mapping key must be a plain value{_line(ev)}")
        if value in container:
            raise error(f"{name}: duplicate key {value!r}{_line(ev)}")
        top.key, top.has_key = value, True
    else:
        container[top.key] = value
        top.key, top.has_key = None, False


def _scalar(loader: Any, ev: Any, name: str, error: type[HapticError]) -> Any:
    plain, quoted_implicit = ev.implicit
    if ev.tag is not None and not (plain or quoted_implicit):
        raise error(f"{name}: YAML tags are not allowed in model files{_line(ev)}")
    value = ev.value
    if not plain:
        return value                                      # quoted: a string, never a number
    if _FLOAT.match(value):
        return float(value)
    if _INT.match(value):
        return int(value)
    tag = loader.resolve(yaml.ScalarNode, value, (True, False))
    construct = loader.yaml_constructors.get(tag)
    if tag == _STR_TAG or construct is None:
        return value
    return construct(loader, yaml.ScalarNode(tag, value))
