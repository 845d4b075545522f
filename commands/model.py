"""``hapticam model ...``: show, convert and validate model files.

``model validate`` exits 0 for a model render takes (a rotary one on a rotary device), 1 for a valid file
render refuses (not passive without ``--allow-active``), 2 for a file that is not a valid model: the verdict of
:mod:`hapticam.models.acceptance`, the definition the model files and render's gate apply too."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hapticam.capture_columns import AXIS_UNITS, parameter_unit
from hapticam.errors import HapticError, UsageError
from hapticam.models.files import (MSGPACK_SUFFIXES, YAML_SUFFIXES, ModelDocument, example_names, load_model,
                                   save_document)

_MODEL_HELP = "a model file (.yaml or .msgpack) or a bundled example, example:NAME"
#: what ``model show`` prints of one value (characters) and of one mapping (entries) at most; --json prints all
SHOWN_CHARS = 1000
SHOWN_ENTRIES = 100


def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``hapticam model show|convert|validate|examples``."""
    model = sub.add_parser("model", help="show, convert and validate model files",
                           description="Show, convert and validate model files.")
    msub = model.add_subparsers(dest="model_command", metavar="ACTION", required=True,
                                parser_class=type(model))

    show = msub.add_parser("show", help="kind, parameters, provenance and passivity report of a model",
                           description="Print a model's kind, axis, parameters (long lists as count and range), "
                                       "provenance, uncertainty, event-based transients and passivity report.")
    show.add_argument("model", metavar="MODEL", help=_MODEL_HELP)
    show.add_argument("--json", action="store_true", help="print the whole file content as JSON")
    show.set_defaults(func=_cmd_show)

    convert = msub.add_parser(
        "convert", help="convert a model file to YAML or msgpack (by OUT's suffix)",
        description="Read MODEL, check it as every loader does, and write the same document (parameters, "
                    "provenance, uncertainty, axis, transients) to OUT: YAML for .yaml/.yml, msgpack for "
                    ".msgpack. OUT is written atomically: never half a file.")
    convert.add_argument("model", metavar="MODEL", help=_MODEL_HELP)
    convert.add_argument("out", metavar="OUT", help="output file, .yaml or .msgpack")
    convert.set_defaults(func=_cmd_convert)

    validate = msub.add_parser(
        "validate", help="is a model valid, passive and renderable? (exit 0, 1 or 2)",
        description="Judge MODEL as the model files and render's gate do (one definition, "
                    "hapticam.models.acceptance): valid (a model file whose every parameter lies within its "
                    "kind's physical range), passive (no way to generate energy), renderable (render takes it: "
                    "passive unless --allow-active, on a device of its axis: a rotary model on --device sim:rotary). "
                    "Exit code 0: valid and renderable; 1: a valid file that render refuses (not passive), with "
                    "the reason; "
                    "2: not a valid model, with the reason. A stiffness above what a device renders stably "
                    "is render's warning on that device, not a refusal.",
        epilog="exit codes: 0 renderable, 1 valid but refused by render, 2 invalid")
    validate.add_argument("model", metavar="MODEL", help=_MODEL_HELP)
    validate.add_argument("--allow-active", action="store_true",
                          help="judge renderability as 'render --allow-active' does (a model that is not passive "
                               "is rendered, with warnings)")
    validate.add_argument("--json", action="store_true",
                          help="print the verdict as one JSON object (an invalid model too: valid false, error)")
    validate.set_defaults(func=_cmd_validate)

    examples = msub.add_parser("examples", help="list the bundled example models")
    examples.set_defaults(func=_cmd_examples)


def _summarise(value: Any, indent: str = "  ", axis: str = "linear") -> list[str]:
    """Readable lines for a parameter mapping; long lists shown as count and range; on a rotary axis each
    parameter's unit (N m for ``_N``, rad for ``_m``...) is shown beside it."""
    lines: list[str] = []
    if isinstance(value, dict):
        for n, (key, item) in enumerate(value.items()):
            if n == SHOWN_ENTRIES:
                lines.append(f"{indent}... {len(value) - n} more (model show --json prints them)")
                break
            key = _clipped(str(key))
            if isinstance(item, dict):
                lines.append(f"{indent}{key}:")
                lines.extend(_summarise(item, indent + "  ", axis))
            elif isinstance(item, list) and item and all(isinstance(v, dict) for v in item):
                lines.append(f"{indent}{key}:")
                for i, sub_item in enumerate(item):
                    if i == SHOWN_ENTRIES:
                        lines.append(f"{indent}  ... {len(item) - i} more (model show --json prints them)")
                        break
                    label = _clipped(str(sub_item.get("kind", i)))
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
        shown = (f"{v:.6g}" if isinstance(v, float) else _clipped(str(v)) for v in item[:SHOWN_ENTRIES])
        more = f", ... {len(item) - SHOWN_ENTRIES} more" if len(item) > SHOWN_ENTRIES else ""
        return _clipped("[" + ", ".join(shown) + more + "]")
    if isinstance(item, float):
        return f"{item:.6g}"
    return _clipped(str(item))


def _clipped(text: str) -> str:
    """``text`` up to :data:`SHOWN_CHARS` characters, with its length said when longer."""
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}... ({len(text)} characters; model show --json prints it whole)"


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
    if model.transients:
        print("transients (event-based pulses, F = gain v exp(-t / decay) sin(2 pi f t) at an impact of speed v):")
        for transient in model.transients:
            print(f"  {_transient_line(transient)}")
    print("passivity:")
    for line in str(check_passivity(model)).splitlines():
        print(f"  {line}")
    data_range = (doc.provenance.get("settings") or {}).get("data_range_m")
    if (isinstance(data_range, list) and len(data_range) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data_range)):
        print(f"data:     captured from {1e3 * data_range[0]:.3f} to {1e3 * data_range[1]:.3f} mm; beyond that the "
              "model extrapolates (identified models hold the force at its end value)")
    elif doc.provenance.get("method") != "hand-authored":
        print("data:     the model file does not say which range of positions its data covered")
    switch = _switch_points_line(doc.provenance.get("metrics") or {})
    if switch:
        print(switch)
    return 0


def _switch_points_line(metrics: dict[str, Any]) -> str:
    """``switch:`` and where the key actuates and releases (provenance metrics ``actuation_m``,
    ``release_m``, m, shown in mm), or nothing when the model carries neither."""
    parts = [f"{what} at {1e3 * value:.3f} mm" for key, what in (("actuation_m", "actuates"), ("release_m", "releases"))
             if isinstance(value := metrics.get(key), (int, float)) and not isinstance(value, bool)]
    if not parts:
        return ""
    return f"switch:   {', '.join(parts)} (the source capture's electrical contact, in the model's frame)"


def _sd(value: float | None, scale: float = 1.0) -> str:
    """`` +- value`` (times ``scale``: a unit change) for a known standard deviation, else nothing."""
    return "" if value is None else f" +- {value * scale:.2g}"


def _transient_line(t: Any) -> str:
    """One line for a :class:`~hapticam.models.transients.Transient`: event, gain, frequency, decay, each with
    its standard deviation when known, and the impacts it was fitted on."""
    return (f"{t.event:<8} gain {t.gain_N_per_mps:.4g}{_sd(t.gain_sd)} N/(m/s), frequency {t.frequency_hz:.4g}"
            f"{_sd(t.frequency_sd_hz)} Hz, decay {t.decay_s * 1e3:.4g}{_sd(t.decay_sd_s, 1e3)} ms, "
            f"fitted on {t.samples} impact{'s' if t.samples != 1 else ''}")


def _cmd_convert(args: argparse.Namespace) -> int:
    suffix = Path(args.out).suffix.lower()
    if suffix not in YAML_SUFFIXES + MSGPACK_SUFFIXES:
        raise UsageError(f"{args.out}: output must end in .yaml or .msgpack")
    _model, doc = load_model(args.model)
    out = ModelDocument(kind=doc.kind, parameters=doc.parameters, provenance=doc.provenance,
                        uncertainty=doc.uncertainty, schema_version=doc.schema_version, axis=doc.axis,
                        transients=doc.transients)
    save_document(args.out, out)
    print(f"wrote {args.out} ({doc.kind}, {'YAML' if suffix in YAML_SUFFIXES else 'msgpack'})")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from hapticam.models.acceptance import judge

    try:
        model, doc = load_model(args.model)
    except HapticError as exc:
        if args.json:
            print(json.dumps({"model": args.model, "valid": False, "error": str(exc)}))
        raise
    verdict = judge(model, axis=doc.axis, allow_active=args.allow_active)
    if args.json:
        print(json.dumps({"model": args.model, **verdict.to_dict()}))
    else:
        n = verdict.components
        print(f"{args.model}: valid {doc.kind} model ({n} component{'s' if n != 1 else ''})")
        print(f"passive:    {'yes' if verdict.passive else 'no'}"
              + "".join(f"\n  issue: {issue}" for issue in verdict.passivity.issues))
        print(f"renderable: {'yes' if verdict.renderable else 'no'}"
              + "".join(f"\n  refused: {why}" for why in verdict.refusals)
              + "".join(f"\n  warning: {why}" for why in verdict.warnings))
    return 0 if verdict.renderable else 1


def _cmd_examples(args: argparse.Namespace) -> int:
    for name in example_names():
        print(f"example:{name}")
    return 0
