"""Model files: one schema, two encodings (YAML for people, msgpack for machines).

A model file is a mapping with exactly these fields::

    format: hapticam-model        # fixed
    schema_version: 1             # integer; files from a newer schema are refused
    kind: composite               # a model kind: built in or a plugin's (hapticam.models.registry)
    parameters: {...}             # the model's to_dict(), SI units
    provenance:                   # where the model came from
      created: "2026-11-21T12:00:00Z"
      hapticam_version: 0.1.0
      method: ewls-segmented      # or hand-authored, ...
      settings: {...}             # the method's settings (forgetting factor, grid, tolerance...)
      source: {name: capture.csv, sha256: <64 hex digits> | null}
      metrics: {...}              # fit metrics (fit_percent, rms_N, ...)
      notes: [...]                # optional free text (e.g. identifiability statements)
    uncertainty: {...}            # optional: parameter standard deviations, same layout as parameters
    axis: rotary                  # optional: linear (default: m, N) or rotary (rad, N m; a knob)
    transients:                   # optional: event-based pulses (hapticam.models.transients), one per event
      - {event: landing, gain_N_per_mps: 12.0, frequency_hz: 95.0, decay_s: 0.004, samples: 6}

YAML is parsed once, by libyaml's event parser where available, into plain data built from the events
(:mod:`hapticam.bounded_yaml`): nesting depth (``MAX_DEPTH``) and node count (``MAX_NODES``) are checked
as the events arrive, and tags, anchors and aliases are refused (no object construction, no
billion-laughs expansion). msgpack is read with size and length limits and without extension types, its
nodes (``MAX_NODES``) and a composite's components (``MAX_COMPONENTS``) counted as they are decoded.
Pipes and devices are refused before they are opened, files over 64 MiB (16 MiB for msgpack) before
they are read. Numbers are numbers: a quoted "120" is a string and refused where a number is expected.
Every parameter must lie within the physical range its kind declares (:mod:`hapticam.models.ranges`;
:mod:`hapticam.models.acceptance` says what else render asks); a message quotes at most a short excerpt of
a refused value. Writes go to a temporary file in the target folder that is renamed over the target, so a
reader never sees a half-written model, and what is written is first checked as a reader will check it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import msgpack
import yaml

from hapticam._version import __version__
from hapticam.bounded_json import MAX_INDEX_BYTES, parse_index
from hapticam.errors import HapticError, ModelFileError
from hapticam.fileio import MODEL_SUFFIXES, MSGPACK_SUFFIXES, YAML_SUFFIXES, atomic_write_bytes, read_limited
from hapticam.models.acceptance import axis_refusal
from hapticam.models.ranges import on_axis
from hapticam.models.base import Model, model_from_dict
from hapticam.models.file_decoding import (MAX_DEPTH, MAX_MSGPACK_BYTES, MAX_NODES, decode_msgpack, decode_yaml,  # noqa: F401
                                             plain_data)
from hapticam.models.transients import Transient
from hapticam.models.validation import excerpt, one_line

FORMAT_NAME = "hapticam-model"
SCHEMA_VERSION = 1
MAX_FILE_BYTES = 64 * 1024 * 1024
EXAMPLE_PREFIX = "example:"
#: ``library:DIR/NAME``: the model of entry NAME in the key library at DIR (``hapticam library build``)
LIBRARY_PREFIX = "library:"
#: ``switch:NAME``: the model of switch NAME in the shipped switch catalogue (the package's ``switches/``)
SWITCH_PREFIX = "switch:"
SWITCH_CATALOGUE = Path(__file__).resolve().parents[1] / "switches"

_TOP_REQUIRED = {"format", "schema_version", "kind", "parameters"}
_TOP_OPTIONAL = {"provenance", "uncertainty", "axis", "transients"}
AXES = ("linear", "rotary")
_PROVENANCE_FIELDS = {"created", "hapticam_version", "method", "settings", "source", "metrics", "notes"}
_SOURCE_FIELDS = {"name", "sha256"}


@dataclass
class ModelDocument:
    """The content of a model file besides the model object itself."""

    kind: str
    parameters: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)
    uncertainty: dict[str, Any] | None = None
    schema_version: int = SCHEMA_VERSION
    path: str | None = None
    axis: str = "linear"
    #: the event-based transients' mappings (:meth:`Transient.to_dict`), None when the file has none
    transients: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the file mapping (the same for both encodings); ``axis`` only when not linear and
        ``transients`` only when there are some, so other files read as before everywhere."""
        out: dict[str, Any] = {"format": FORMAT_NAME, "schema_version": self.schema_version,
                               "kind": self.kind, "parameters": self.parameters,
                               "provenance": self.provenance}
        if self.uncertainty is not None:
            out["uncertainty"] = self.uncertainty
        if self.axis != "linear":
            out["axis"] = self.axis
        if self.transients:
            out["transients"] = self.transients
        return out


def make_provenance(method: str, *, settings: dict[str, Any] | None = None, source_name: str | None = None,
                    source_sha256: str | None = None, metrics: dict[str, Any] | None = None,
                    notes: list[str] | None = None) -> dict[str, Any]:
    """Build a provenance mapping stamped with the current UTC time and hapticam version."""
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    prov: dict[str, Any] = {"created": created, "hapticam_version": __version__, "method": method,
                            "settings": dict(settings or {}),
                            "source": {"name": source_name, "sha256": source_sha256},
                            "metrics": dict(metrics or {})}
    if notes:
        prov["notes"] = list(notes)
    return prov


def sha256_of_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 hex digest of a file's bytes (for provenance)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# -- reading -----------------------------------------------------------------------------------------
#: short names of bundled real keys: ``example:linear-key`` is the Cherry MX Red, and so on
EXAMPLE_ALIASES = {"linear-key": "cherry-mx-red", "tactile-key": "gateron-brown", "clicky-key": "kailh-box-jade"}


def example_names() -> list[str]:
    """Names of the bundled example models (use as ``example:NAME``), aliases included."""
    folder = resources.files("hapticam.models") / "examples"
    return sorted([p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml")] + list(EXAMPLE_ALIASES))


def library_model_path(spec: str) -> Path:
    """The model file of ``library:DIR/NAME`` (read from ``DIR/index.json``); one clear error otherwise."""
    rest = spec[len(LIBRARY_PREFIX):]
    folder, _, name = rest.rpartition("/")
    if not folder or not name:
        raise ModelFileError(f"{spec}: name a library entry as library:DIR/NAME")
    raw = read_limited(Path(folder) / "index.json", MAX_INDEX_BYTES, error=ModelFileError, what="library index")
    index = parse_index(raw, f"{folder}/index.json", ModelFileError)
    entries = index.get("entries", []) if isinstance(index, dict) else []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("name") == name and entry.get("status") == "ok":
            model = entry.get("model")
            if not isinstance(model, str) or Path(model).is_absolute() or ".." in Path(model).parts:
                raise ModelFileError(f"{spec}: the index's model path {excerpt(model)} is not inside the library")
            return Path(folder) / model
    names = sorted(e.get("name", "?") for e in entries if isinstance(e, dict) and e.get("status") == "ok")
    raise ModelFileError(f"{spec}: no entry {excerpt(name)} in the library (entries: {', '.join(names[:12]) or 'none'})")


def _read_bytes(source: str | os.PathLike[str]) -> tuple[bytes, str, str]:
    """Return (bytes, suffix, display name) for a path, ``example:NAME`` or ``library:DIR/NAME``."""
    text = os.fspath(source)
    if text.startswith(EXAMPLE_PREFIX):
        name = text[len(EXAMPLE_PREFIX):]
        if name not in example_names():
            raise ModelFileError(f"unknown example {excerpt(name)} (known: {', '.join(example_names())})")
        data = (resources.files("hapticam.models") / "examples" / f"{EXAMPLE_ALIASES.get(name, name)}.yaml").read_bytes()
        return data, ".yaml", text
    if text.startswith(SWITCH_PREFIX):
        text = f"{LIBRARY_PREFIX}{SWITCH_CATALOGUE}/{text[len(SWITCH_PREFIX):]}"
    path = library_model_path(text) if text.startswith(LIBRARY_PREFIX) else Path(text)
    suffix = path.suffix.lower()
    if suffix not in MODEL_SUFFIXES:
        raise ModelFileError(f"{text}: unknown model file type {excerpt(suffix or '(none)')}; use .yaml or .msgpack")
    data = read_limited(path, MAX_FILE_BYTES, error=ModelFileError, what="model file")
    return data, suffix, text


def _check_provenance(prov: Any, name: str) -> dict[str, Any]:
    if not isinstance(prov, dict):
        raise ModelFileError(f"{name}: provenance: expected a mapping")
    unknown = sorted(set(prov) - _PROVENANCE_FIELDS)
    if unknown:
        raise ModelFileError(f"{name}: provenance: unknown field {excerpt(unknown[0])}")
    for key in ("settings", "metrics"):
        if key in prov and not isinstance(prov[key], dict):
            raise ModelFileError(f"{name}: provenance.{key}: expected a mapping")
    if "source" in prov:
        src = prov["source"]
        if not isinstance(src, dict) or set(src) - _SOURCE_FIELDS:
            raise ModelFileError(f"{name}: provenance.source: expected a mapping with name and sha256")
        sha = src.get("sha256")
        if sha is not None and (not isinstance(sha, str) or len(sha) != 64
                                or any(c not in "0123456789abcdef" for c in sha)):
            raise ModelFileError(f"{name}: provenance.source.sha256: expected 64 lowercase hex digits")
    if "notes" in prov and not (isinstance(prov["notes"], list) and all(isinstance(n, str) for n in prov["notes"])):
        raise ModelFileError(f"{name}: provenance.notes: expected a list of strings")
    return prov


def _check_uncertainty(value: Any, name: str, where: str) -> None:
    """Standard deviations: mappings of non-negative finite numbers, lists of them, or null (unknown)."""
    if isinstance(value, dict):
        if where == "uncertainty" and not value:
            return
        for key, item in value.items():
            _check_uncertainty(item, name, f"{where}.{key}")
        return
    if where == "uncertainty":
        raise ModelFileError(f"{name}: uncertainty: expected a mapping")
    items = value if isinstance(value, list) else [value]
    for i, item in enumerate(items):
        at = f"{where}[{i}]" if isinstance(value, list) else where
        if item is None:
            continue
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            shown = f"the string {excerpt(item, 20)}" if isinstance(item, str) else type(item).__name__
            raise ModelFileError(f"{name}: {at}: expected a standard deviation (a number >= 0), got {shown}")
        if not item >= 0:
            raise ModelFileError(f"{name}: {at}: a standard deviation must be >= 0, got {excerpt(item)}")


def parse_transients(value: Any, name: str) -> tuple[Transient, ...]:
    """The ``transients`` list of a model file: one mapping per event kind, each checked by
    :meth:`Transient.from_dict`; raises :class:`ModelFileError` naming ``transients[i].field``."""
    if not isinstance(value, list):
        raise ModelFileError(f"{name}: transients: expected a list of mappings (event, gain_N_per_mps, "
                             f"frequency_hz, decay_s), got {excerpt(value)}")
    parsed: list[Transient] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ModelFileError(f"{name}: transients[{i}]: expected a mapping, got {excerpt(item)}")
        try:
            transient = Transient.from_dict(item)
        except HapticError as exc:
            raise ModelFileError(f"{name}: transients[{i}].{exc}") from None
        if any(t.event == transient.event for t in parsed):
            raise ModelFileError(f"{name}: transients[{i}].event: {transient.event!r} given twice (one pulse "
                                 "per event kind)")
        parsed.append(transient)
    return tuple(parsed)


def document_from_mapping(raw: Any, name: str = "<model>") -> tuple[Model, ModelDocument]:
    """Validate a decoded file mapping and build the model. Raises :class:`ModelFileError`."""
    if not isinstance(raw, dict):
        raise ModelFileError(f"{name}: not a hapticam model file (expected a mapping at the top level)")
    try:
        raw = plain_data(raw)
    except ModelFileError as exc:
        raise ModelFileError(f"{name}: {exc}") from None
    if raw.get("format") != FORMAT_NAME:
        raise ModelFileError(f"{name}: not a hapticam model file (format is {excerpt(raw.get('format'))}, "
                             f"expected {FORMAT_NAME!r})")
    version = raw.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFileError(f"{name}: schema_version: expected a positive integer, got {excerpt(version)}")
    if version > SCHEMA_VERSION:
        raise ModelFileError(f"{name}: written by a newer hapticam (schema version {excerpt(version)}; this "
                             f"version reads up to {SCHEMA_VERSION}); upgrade hapticam to read it")
    missing = sorted(_TOP_REQUIRED - raw.keys())
    if missing:
        raise ModelFileError(f"{name}: missing field {excerpt(missing[0])}")
    unknown = sorted(raw.keys() - _TOP_REQUIRED - _TOP_OPTIONAL)
    if unknown:
        raise ModelFileError(f"{name}: unknown field {excerpt(unknown[0])}")
    kind = raw["kind"]
    if not isinstance(kind, str):
        raise ModelFileError(f"{name}: kind: expected a string")
    if not isinstance(raw["parameters"], dict):
        raise ModelFileError(f"{name}: parameters: expected a mapping")
    provenance = _check_provenance(raw.get("provenance", {}), name)
    axis = raw.get("axis", "linear")
    if axis not in AXES:
        raise ModelFileError(f"{name}: axis: expected one of {', '.join(AXES)}, got {excerpt(axis)}")
    uncertainty = raw.get("uncertainty")
    if uncertainty is not None:
        _check_uncertainty(uncertainty, name, "uncertainty")
    transients = parse_transients(raw["transients"], name) if "transients" in raw else ()
    try:
        model = model_from_dict(kind, raw["parameters"])
        with on_axis(axis):
            model.check_ranges()
    except HapticError as exc:
        raise ModelFileError(one_line(f"{name}: {exc}")) from None
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        reason = excerpt(str(exc), 60, quoted=False)
        raise ModelFileError(f"{name}: invalid {kind} parameters ({reason})") from None
    model.transients = transients
    doc = ModelDocument(kind=kind, parameters=model.to_dict(), provenance=provenance,
                        uncertainty=uncertainty, schema_version=version, path=name, axis=axis,
                        transients=[t.to_dict() for t in transients] if "transients" in raw else None)
    return model, doc


def load_model(source: str | os.PathLike[str]) -> tuple[Model, ModelDocument]:
    """Load and validate a model file (``.yaml``/``.msgpack``) or a bundled ``example:NAME``.

    Returns the model and its :class:`ModelDocument` (provenance, uncertainty). Every problem raises
    :class:`~hapticam.errors.ModelFileError` with a one-line message naming the file and the field.
    """
    data, suffix, name = _read_bytes(source)
    if not data or data.isspace():
        raise ModelFileError(f"{name}: empty file")
    raw = decode_yaml(data, name) if suffix in YAML_SUFFIXES else decode_msgpack(data, name)
    return document_from_mapping(raw, name)


def load_model_only(source: str | os.PathLike[str]) -> Model:
    """Load a model file or ``example:NAME`` and return just the model."""
    return load_model(source)[0]


def load_model_to_render(source: str | os.PathLike[str], axis: str = "linear") -> Model:
    """Load a model for a device whose handle moves on ``axis`` (``linear``: m, N; ``rotary``: a knob, rad,
    N m): a model on the other axis kind is refused with a :class:`~hapticam.errors.ModelFileError` instead of
    being read in the device's units."""
    model, doc = load_model(source)
    check_axis(doc, axis)
    return model


def check_axis(doc: ModelDocument | None, device_axis: str) -> None:
    """Refuse with a :class:`~hapticam.errors.ModelFileError` naming the file a model file declared on the other
    axis kind than ``device_axis`` (``linear``: m, N; ``rotary``: rad, N m), whose numbers would be read in the
    device's units; a model given as such (``doc`` None) is the caller's to match."""
    if doc is None:
        return
    refused = axis_refusal(doc.axis, device_axis)
    if refused:
        raise ModelFileError(f"{doc.path}: {refused}")


# -- writing -----------------------------------------------------------------------------------------
def to_builtin(value: Any) -> Any:
    """Convert NumPy scalars/arrays and tuples inside ``value`` to plain Python types for encoding."""
    if isinstance(value, dict):
        return {str(k): to_builtin(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_builtin(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return to_builtin(value.tolist())
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value


def encode_document(doc: ModelDocument, suffix: str) -> bytes:
    """Encode a document as YAML (``.yaml``) or msgpack (``.msgpack``) bytes."""
    mapping = doc.to_dict()
    if suffix in YAML_SUFFIXES:
        return yaml.safe_dump(mapping, sort_keys=False, default_flow_style=None, width=100,
                              allow_unicode=True).encode("utf-8")
    if suffix in MSGPACK_SUFFIXES:
        return msgpack.packb(mapping, use_bin_type=True)
    raise ModelFileError(f"unknown model file type {excerpt(suffix or '(none)')}; use .yaml or .msgpack")


def save_document(path: str | os.PathLike[str], doc: ModelDocument) -> None:
    """Write a document atomically, encoding chosen by ``path``'s suffix."""
    suffix = Path(path).suffix.lower()
    data = encode_document(doc, suffix)
    atomic_write_bytes(path, data, error=ModelFileError)


def save_model(path: str | os.PathLike[str], model: Model, *, provenance: dict[str, Any] | None = None,
               uncertainty: dict[str, Any] | None = None, axis: str = "linear",
               transients: "tuple[Transient, ...] | list[Transient] | None" = None) -> ModelDocument:
    """Write ``model`` to ``path`` (``.yaml`` or ``.msgpack``) atomically and return the document.

    ``provenance`` defaults to ``make_provenance("hand-authored")``; it is validated like a loaded file's.
    ``axis`` is the axis kind the parameters' units refer to (``rotary``: rad, N m). ``transients``
    (:class:`~hapticam.models.transients.Transient`) default to the model's own (``model.transients``);
    the file holds the key only when there are some.
    """
    prov = provenance if provenance is not None else make_provenance("hand-authored")
    pulses = tuple(model.transients if transients is None else transients)
    doc = ModelDocument(kind=model.kind, parameters=to_builtin(model.to_dict()), provenance=to_builtin(prov),
                        uncertainty=None if uncertainty is None else to_builtin(uncertainty), axis=axis,
                        transients=[to_builtin(t.to_dict()) for t in pulses] or None)
    # Validate exactly what a reader will see (plain data, known fields) before touching the disk.
    document_from_mapping(doc.to_dict(), os.fspath(path))
    save_document(path, doc)
    return doc
