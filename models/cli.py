"""``hapticam model ...``: show, convert and validate model files."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hapticam.capture_columns import AXIS_UNITS, parameter_unit
from hapticam.errors import UsageError
from hapticam.models.files import (MSGPACK_SUFFIXES, YAML_SUFFIXES, ModelDocument, example_names, load_model,
                                   save_document)

_MODEL_HELP = "a model file (.yaml or .msgpack) or a bundled example, example:NAME"


def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``hapticam model show|convert|validate|examples``."""
    model = sub.add_parser("model", help="show, convert and validate model files",
                           description="Show, convert and validate model files.")
    msub = model.add_subparsers(dest="model_command", metavar="ACTION", required=True,
                                parser_class=type(model))

    show = msub.add_parser("show", help="kind, parameters, provenance and passivity report of a model")
    show.add_argument("model", metavar="MODEL", help=_MODEL_HELP)
    show.add_argument("--json", action="store_true", help="print the whole file content as JSON")
    show.set_defaults(func=_cmd_show)

    convert = msub.add_parser("convert", help="convert a model file to YAML or msgpack (by OUT's suffix)")
    convert.add_argument("model", metavar="MODEL", help=_MODEL_HELP)
    convert.add_argument("out", metavar="OUT", help="output file, .yaml or .msgpack")
    convert.set_defaults(func=_cmd_convert)

    validate = msub.add_parser("validate", help="exit 0 if a model file is valid, 2 with the reason if not")
    validate.add_argument("model", metavar="MODEL", help=_MODEL_HELP)
    validate.set_defaults(func=_cmd_validate)

    examples = msub.add_parser("examples", help="list the bundled example models")
    examples.set_defaults(func=_cmd_examples)


def _summarise(value: Any, indent: str = "  ", axis: str = "linear") -> list[str]:
    """Readable lines for a parameter mapping; long lists shown as count and range; on a rotary axis each
    parameter's unit (N m for ``_N``, rad for ``_m``...) is shown beside it."""
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict):
                lines.append(f"{indent}{key}:")
                lines.extend(_summarise(item, indent + "  ", axis))
            elif isinstance(item, list) and item and all(isinstance(v, dict) for v in item):
                lines.append(f"{indent}{key}:")
                for i, sub_item in enumerate(item):
                    label = sub_item.get("kind", i) if isinstance(sub_item, dict) else i
                    lines.append(f"{indent}  [{i}] {label}")
                    lines.extend(_summarise(sub_item.get("parameters", sub_item), indent + "      ", axis))
            else:
                unit = parameter_unit(key, axis) if axis != "linear" else ""
                lines.append(f"{indent}{key}: {_short(item)}" + (f" {unit}" if unit else ""))
    return lines


def _short(item: Any) -> str:
    if isinstance(item, list):
        nums = [v for v in item if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(item) > 6 and len(nums) == len(item):
            return f"{len(item)} values, {min(nums):.6g} .. {max(nums):.6g}"
        return "[" + ", ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in item) + "]"
    if isinstance(item, float):
        return f"{item:.6g}"
    return str(item)


def _cmd_show(args: argparse.Namespace) -> int:
    from hapticam.models.passivity import check_passivity

    model, doc = load_model(args.model)
    if args.json:
        print(json.dumps(doc.to_dict(), indent=2))
        return 0
    print(f"model:    {args.model}")
    print(f"kind:     {doc.kind} (schema version {doc.schema_version})")
    units = AXIS_UNITS[doc.axis]
    print(f"axis:     {doc.axis} (position {units['position']}, force {units['force']}, stiffness "
          f"{units['stiffness']}; parameter names keep their linear SI suffixes)")
    print("parameters:")
    print("\n".join(_summarise(doc.parameters, axis=doc.axis)))
    print("provenance:")
    print("\n".join(_summarise(doc.provenance)) or "  (none)")
    if doc.uncertainty:
        print("uncertainty:")
        print("\n".join(_summarise(doc.uncertainty, axis=doc.axis)))
    print("passivity:")
    for line in str(check_passivity(model)).splitlines():
        print(f"  {line}")
    data_range = (doc.provenance.get("settings") or {}).get("data_range_m")
    if isinstance(data_range, list) and len(data_range) == 2:
        print(f"data:     captured from {1e3 * data_range[0]:.3f} to {1e3 * data_range[1]:.3f} mm; beyond that the "
              "model extrapolates (identified models hold the force at its end value)")
    elif doc.provenance.get("method") != "hand-authored":
        print("data:     the model file does not say which range of positions its data covered")
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    suffix = Path(args.out).suffix.lower()
    if suffix not in YAML_SUFFIXES + MSGPACK_SUFFIXES:
        raise UsageError(f"{args.out}: output must end in .yaml or .msgpack")
    _model, doc = load_model(args.model)
    out = ModelDocument(kind=doc.kind, parameters=doc.parameters, provenance=doc.provenance,
                        uncertainty=doc.uncertainty, schema_version=doc.schema_version, axis=doc.axis)
    save_document(args.out, out)
    print(f"wrote {args.out} ({doc.kind}, {'YAML' if suffix in YAML_SUFFIXES else 'msgpack'})")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    model, doc = load_model(args.model)
    n = len(model.components())
    print(f"{args.model}: valid {doc.kind} model ({n} component{'s' if n != 1 else ''})")
    return 0


def _cmd_examples(args: argparse.Namespace) -> int:
    for name in example_names():
        print(f"example:{name}")
    return 0
