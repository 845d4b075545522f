"""Search the catalogue by feel: constraints a person speaks in, and the switches measured more than once.

A wish (:class:`Wish`) is what ``hapticam library nearest`` and ``list`` are asked for:

- a reference to be near (a capture, a model or a catalogue name), optionally made lighter or heavier
  (``--lighter 20%``): the reference's whole force curve scaled, i.e. every force and stiffness feature
  and every force of its curve times ``1 - 0.20``, the travels unchanged (:func:`scaled`,
  :func:`scaled_curve`); the switches are ranked by their distance to it over the features and along
  the force curves (:func:`~hapticam.library.catalogue.key_distance`);
- a kind (``--linear``, ``--tactile``, ``--clicky``: :func:`~hapticam.library.entry.kind_of`);
- bounds on features in a person's units (``--bump-above 0.6``: a tactile peak over 0.6 N;
  ``--travel-below 3.5``: bottoming out within 3.5 mm; :data:`BOUNDS`). A switch without the feature (no
  bump, no actuation force read) does not pass a bound on it.

Siblings (:func:`sibling_groups`): the author's names mark a switch measured again with a suffix
(``-2``, ``Remeasured``, ``measurement-2``, ``Measurement-II``, ``Sample-1-Measurement-2``). Stripped of
it, a name is matched to the others: exactly (case, separators and the maker's short name ``NK`` for
NovelKeys aside), else to the unmarked name sharing the most words, when they share at least
:data:`MIN_SHARED_WORDS` of the words either has (the author sometimes words one switch two ways).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hapticam.errors import ParameterError
from hapticam.library.catalogue import key_distance
from hapticam.library.entry import kind_of

KINDS = ("linear", "tactile", "clicky")
#: the features a lighter or heavier key scales (forces and stiffnesses; travels stay)
FORCE_FEATURES = ("preload_N", "actuation_force_N", "bump_peak_N", "bump_drop_N", "hysteresis_N",
                  "travel_stiffness_Npm", "drop_steepness_Npm")
#: ``--NAME-above`` / ``--NAME-below`` options: NAME -> (feature, SI per option unit, option unit, meaning)
BOUNDS = {"bump": ("bump_peak_N", 1.0, "N", "the tactile bump's peak force"),
          "actuation": ("actuation_force_N", 1.0, "N", "the force 2 mm past contact"),
          "preload": ("preload_N", 1.0, "N", "the force just after contact"),
          "travel": ("total_travel_m", 1e-3, "mm", "the travel from contact to bottom-out"),
          "pretravel": ("pretravel_m", 1e-3, "mm", "the travel to the top of the bump")}
#: the largest force factor ``--heavier`` takes (10 times the reference)
MAX_HEAVIER_PERCENT = 900.0


@dataclass
class Wish:
    """What a search asks for (module notes): a kind, a force factor on the reference, feature bounds (SI)."""

    kind: str | None = None
    force_factor: float = 1.0
    bounds: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)

    def describe(self) -> str:
        """The wish in words, e.g. ``"20 % lighter, tactile, bump peak above 0.6 N"`` ('' for no wish)."""
        parts = []
        if self.force_factor != 1.0:
            change = (self.force_factor - 1.0) * 100.0
            parts.append(f"{abs(change):g} % {'heavier' if change > 0 else 'lighter'}")
        if self.kind:
            parts.append(self.kind)
        for name, (lo, hi) in self.bounds.items():
            option = next(k for k, v in BOUNDS.items() if v[0] == name)
            _, scale, unit, _ = BOUNDS[option]
            if lo is not None:
                parts.append(f"{option} above {lo / scale:g} {unit}")
            if hi is not None:
                parts.append(f"{option} below {hi / scale:g} {unit}")
        return ", ".join(parts)


def percent(text: str, parameter: str) -> float:
    """``"20%"`` or ``"20"`` as 20.0 (percent); otherwise one :class:`~hapticam.errors.ParameterError`
    naming ``parameter``."""
    try:
        value = float(str(text).strip().rstrip("%").strip())
    except ValueError:
        raise ParameterError(parameter, f"takes a percentage such as 20%, got {text!r}") from None
    if not 0.0 < value < float("inf"):
        raise ParameterError(parameter, f"must be a positive percentage, got {text!r}")
    return value


def bound_parameter(option: str) -> str:
    """How a :class:`~hapticam.errors.ParameterError` names the bounds on ``option`` (a key of
    :data:`BOUNDS`) given to :func:`make_wish`: ``bounds['bump']``."""
    return f"bounds[{option!r}]"


def make_wish(kind: str | None = None, lighter: str | None = None, heavier: str | None = None,
              bounds: dict[str, tuple[float | None, float | None]] | None = None) -> Wish:
    """A :class:`Wish` from the options as typed (``lighter``, ``heavier``: percent such as ``"20%"``;
    ``bounds``: option NAME -> (above, below) in its unit). A bad ``lighter`` or ``heavier`` raises a
    :class:`~hapticam.errors.ParameterError` naming it; a lower bound not below its upper bound, one naming
    the pair (:func:`bound_parameter`)."""
    if lighter is not None and heavier is not None:
        raise ParameterError("heavier", "give lighter or heavier, not both")
    factor = 1.0
    if lighter is not None:
        p = percent(lighter, "lighter")
        if p >= 100.0:
            raise ParameterError("lighter", f"must be under 100%, got {lighter!r}")
        factor = 1.0 - p / 100.0
    if heavier is not None:
        p = percent(heavier, "heavier")
        if p > MAX_HEAVIER_PERCENT:
            raise ParameterError("heavier", f"must be at most {MAX_HEAVIER_PERCENT:g}%, got {heavier!r}")
        factor = 1.0 + p / 100.0
    si: dict[str, tuple[float | None, float | None]] = {}
    for option, (above, below) in (bounds or {}).items():
        if above is None and below is None:
            continue
        feature, scale, unit, _ = BOUNDS[option]
        if above is not None and below is not None and above >= below:
            raise ParameterError(bound_parameter(option), f"the lower bound {above:g} {unit} is not below the "
                                                          f"upper bound {below:g} {unit}")
        si[feature] = (None if above is None else above * scale, None if below is None else below * scale)
    return Wish(kind, factor, si)


def scaled(features: dict[str, Any], factor: float) -> dict[str, Any]:
    """``features`` of the same key with its whole force curve times ``factor`` (travels unchanged)."""
    return {k: (v * factor if (k in FORCE_FEATURES and v is not None) else v) for k, v in features.items()}


def scaled_curve(curve: dict[str, Any] | None, factor: float) -> dict[str, Any] | None:
    """The force ``curve`` of the same key with every force times ``factor`` (None stays None)."""
    if curve is None:
        return None
    return {**curve, **{d: [None if v is None else v * factor for v in curve[d]] for d in ("press_N", "release_N")}}


def passes(entry: dict[str, Any], wish: Wish) -> bool:
    """Whether a catalogue entry is identified and meets the wish's kind and bounds."""
    if entry.get("status") != "ok":
        return False
    features = entry["features"]
    if wish.kind and kind_of(features) != wish.kind:
        return False
    for name, (lo, hi) in wish.bounds.items():
        value = features.get(name)
        if value is None or (name.startswith("bump_") and kind_of(features) == "linear"):
            return False
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            return False
    return True


def rank(target: dict[str, Any], entries: list[dict[str, Any]], wish: Wish, n: int,
         exclude: str | None = None, curve: dict[str, Any] | None = None
         ) -> tuple[list[tuple[float, dict[str, Any]]], int]:
    """The ``n`` entries that pass ``wish`` nearest the key of features ``target`` and force ``curve``
    (JND, :func:`~hapticam.library.catalogue.key_distance`), and how many passed."""
    candidates = [e for e in entries if passes(e, wish) and e.get("name") != exclude]
    scored = sorted(((key_distance(target, curve, e), e) for e in candidates), key=lambda item: item[0])
    return scored[:n], len(candidates)


# -- siblings ------------------------------------------------------------------------------------------
#: a name's suffix saying the switch was measured again (module notes)
REMEASURED = re.compile(r"(?:-(?:re-?measured|measurement-(?:\d+|[ivx]+)|sample-\d+(?:-measurement-\d+)?|\d))$")
#: makers' short names the author uses beside the long ones
MAKER_ALIASES = {"nk": "novelkeys"}
#: least share of words (of the two names' words together) a reworded sibling shares
MIN_SHARED_WORDS = 0.6


def _words(name: str) -> list[str]:
    return [MAKER_ALIASES.get(w, w) for w in re.split(r"[\s_-]+", name.strip().lower()) if w]


def split_remeasured(name: str) -> tuple[str, bool]:
    """``(base, marked)``: the name's words without a remeasurement suffix (joined by ``-``), and whether
    it had one."""
    joined = "-".join(_words(name))
    base = REMEASURED.sub("", joined)
    return base, base != joined and bool(base)


def sibling_groups(names: list[str]) -> list[list[str]]:
    """Groups (two or more names, sorted) of switches measured more than once (module notes)."""
    bases = {n: split_remeasured(n) for n in names}
    plain = {base: n for n, (base, marked) in bases.items() if not marked}
    marked_bases = [base for base, marked in bases.values() if marked]
    groups: dict[str, list[str]] = {}
    for name, (base, marked) in bases.items():
        if not marked:
            continue
        together = base in plain or marked_bases.count(base) > 1
        anchor = base if together else _reworded(base, list(plain))
        groups.setdefault(anchor or base, []).append(name)
    out = []
    for anchor, members in groups.items():
        group = sorted(set(members) | ({plain[anchor]} if anchor in plain else set()))
        if len(group) > 1:
            out.append(group)
    return sorted(out)


def _reworded(base: str, plain_bases: list[str]) -> str | None:
    """The unmarked base sharing the most words with ``base``, if at least :data:`MIN_SHARED_WORDS`."""
    words = set(base.split("-"))
    best, share = None, 0.0
    for other in plain_bases:
        theirs = set(other.split("-"))
        s = len(words & theirs) / len(words | theirs)
        if s > share:
            best, share = other, s
    return best if share >= MIN_SHARED_WORDS else None


def sibling_pairs(groups: list[list[str]]) -> list[tuple[str, str]]:
    """Every pair of names within each group."""
    return [(a, b) for g in groups for i, a in enumerate(g) for b in g[i + 1:]]
