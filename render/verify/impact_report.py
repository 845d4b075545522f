"""What verify reports about a press's impacts (:mod:`hapticam.render.verify.impacts` finds and judges them): the
impact windows with their impulses, the onsets on either side and how they matched, and the verdict of the
criterion's items 1-3, as one-line failures, table rows and JSON.

An onset whose rise began from zero force (the force within one force JND of zero somewhere in the ``RISE_S``
before it, :func:`hapticam.render.verify.impacts.recontacts`) is where the probe met the key again after losing
it: a key rebounding off a probe's tip, or the probe's first touch. The report lists them (``recontacts_s``)
and its failures name the unmatched ones.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: A captured and a rendered onset match within this (s); rises closer than it are one impact.
MATCH_S = 0.01
#: A window's rendered impulse may differ from the captured one by this fraction of it, or by one force JND
#: times the window's length, whichever is larger.
IMPULSE_TOLERANCE = 0.15

#: The criteria (``ImpactReport.criterion``) and what each judges.
CRITERION_IMPACTS, CRITERION_FIT = "impacts", "fit"
CRITERIA = {CRITERION_IMPACTS: "the fit outside the impact windows, their impulses and onsets, and the features",
            CRITERION_FIT: "the fit and the features"}


@dataclass
class ImpactWindow:
    """One impact window (times in s on the capture's clock, impulses in N s) and its item-2 verdict."""

    start_s: float
    end_s: float
    captured_impulse_Ns: float
    rendered_impulse_Ns: float
    tolerance_Ns: float
    #: which bound the tolerance is: "15 % of the captured impulse" or "force JND x length"
    bound: str
    passed: bool


@dataclass
class ImpactReport:
    """What verify found about impacts and, for a press with impacts, the verdict of items 1-3."""

    criterion: str
    captured_onsets_s: list[float] = field(default_factory=list)
    rendered_onsets_s: list[float] = field(default_factory=list)
    #: of the rendered onsets, those of the ticks the model flagged whose pulse carries momentum (felt_flagged)
    flagged_onsets_s: list[float] = field(default_factory=list)
    matched: list[tuple[float, float]] = field(default_factory=list)
    unmatched_captured_s: list[float] = field(default_factory=list)
    unmatched_rendered_s: list[float] = field(default_factory=list)
    windows: list[ImpactWindow] = field(default_factory=list)
    fit_outside_percent: float | None = None
    fit_threshold_percent: float = 95.0
    note: str = ""
    #: the onsets, of either side, whose rise began from zero force: the probe meeting the key again (module notes)
    recontacts_s: list[float] = field(default_factory=list)
    #: item 4, every perceptual feature the same (set by verify once it has judged them)
    features_same: bool | None = None
    #: item 3 judged within the key's own repeatability, when repeat presses were given
    #: (:class:`~hapticam.render.verify.repeats.RepeatedOnsets`); it then decides instead of the strict item 3
    repeated: Any = None

    @property
    def has_impacts(self) -> bool:
        return self.criterion == CRITERION_IMPACTS

    def items(self) -> dict[str, bool]:
        """Items 1-3 (module notes): passed or not; empty for a press without impacts."""
        if not self.has_impacts:
            return {}
        fit = self.fit_outside_percent
        items = {"fit_outside_impacts": fit is not None and fit >= self.fit_threshold_percent,
                 "impulses": all(w.passed for w in self.windows),
                 "onsets": not self.unmatched_captured_s and not self.unmatched_rendered_s}
        if self.repeated is not None:
            items["onsets_within_repeats"] = self.repeated.passed
        return items

    def deciding(self) -> dict[str, bool]:
        """The items the verdict rests on: with repeat presses, item 3 within them instead of the strict one."""
        items = self.items()
        if "onsets_within_repeats" in items:
            del items["onsets"]
        return items

    def failures(self) -> list[str]:
        """One line per failed item the verdict rests on, with its figures."""
        items = self.deciding()
        says = (("fit_outside_impacts", _fit_outside_failure), ("impulses", _impulse_failure),
                ("onsets", _onset_failure), ("onsets_within_repeats", _repeated_failure))
        return [say(self) for item, say in says if item in items and not items[item]]

    def set_aside(self) -> list[str]:
        """The strict item 3 when repeat presses decided instead and it failed: said, not counted."""
        if self.repeated is None or self.items()["onsets"]:
            return []
        return [_onset_failure(self) + f" (the strict item 3; judged instead within {self.repeated.repeats} "
                "repeat presses of the key)"]

    def summary(self) -> str:
        """One line: the impacts found on either side and the criterion applied."""
        if not self.has_impacts:
            note = f" ({self.note})" if self.note else ""
            return f"impacts: none found{note}; judged by {CRITERIA[self.criterion]}"
        return (f"impacts: {len(self.captured_onsets_s)} captured, {len(self.rendered_onsets_s)} rendered "
                f"({len(self.flagged_onsets_s)} flagged by the model); judged by {CRITERIA[self.criterion]}")

    def table_rows(self) -> list[tuple[str, str, str, str, str, bool]]:
        """Rows (metric, captured, rendered, difference, threshold, passed) of items 1-3; none without impacts."""
        if not self.has_impacts:
            return []
        fit = self.fit_outside_percent
        rows = [("fit outside impacts (%)", "", "-" if fit is None else f"{fit:.2f}", "",
                 f">= {self.fit_threshold_percent:g}", self.items()["fit_outside_impacts"])]
        for w in self.windows:
            rows.append((f"impulse {w.start_s:.3f}-{w.end_s:.3f} s (mN s)", f"{w.captured_impulse_Ns * 1e3:.4g}",
                         f"{w.rendered_impulse_Ns * 1e3:.4g}",
                         f"{(w.rendered_impulse_Ns - w.captured_impulse_Ns) * 1e3:.4g}",
                         f"{w.tolerance_Ns * 1e3:.3g}", w.passed))
        rows.append(("impact onsets (matched)", f"{len(self.captured_onsets_s)}", f"{len(self.rendered_onsets_s)}",
                     f"{len(self.matched)}", f"{MATCH_S * 1e3:g} ms", self.items()["onsets"]))
        if self.repeated is not None:
            rows.append((f"onsets within {self.repeated.repeats} repeats (demanded)", f"{len(self.repeated.demanded_s)}",
                         f"{len(self.rendered_onsets_s)}",
                         f"{len(self.repeated.unmatched_captured_s) + len(self.repeated.unmatched_rendered_s)} unmatched",
                         f"{MATCH_S * 1e3:g} ms", self.repeated.passed))
        return rows

    def to_dict(self) -> dict[str, Any]:
        """Every number, JSON-ready; ``items`` adds item 4 (``features``) when verify has judged them."""
        items = self.items()
        if items and self.features_same is not None:
            items["features"] = self.features_same
        onsets = {"captured_s": self.captured_onsets_s, "rendered_s": self.rendered_onsets_s,
                  "rendered_flagged_s": self.flagged_onsets_s,
                  "matched": [{"captured_s": c, "rendered_s": r, "offset_s": r - c} for c, r in self.matched],
                  "unmatched_captured_s": self.unmatched_captured_s,
                  "unmatched_rendered_s": self.unmatched_rendered_s, "recontacts_s": self.recontacts_s,
                  "tolerance_s": MATCH_S}
        return {"criterion": self.criterion, "judged_by": CRITERIA[self.criterion], "items": items,
                "deciding": sorted(self.deciding()) + (["features"] if "features" in items else []),
                "repeated": None if self.repeated is None else self.repeated.to_dict(), "note": self.note, "fit_outside_impacts_percent": self.fit_outside_percent,
                "windows": [asdict(w) for w in self.windows], "onsets": onsets}


def _fit_outside_failure(report: ImpactReport) -> str:
    if report.fit_outside_percent is None:
        return "fit outside the impact windows: no samples outside them (the residual never falls below the force JND)"
    span = sum(w.end_s - w.start_s for w in report.windows)
    plural = "s" if len(report.windows) > 1 else ""
    return (f"fit outside the impact windows {report.fit_outside_percent:.2f} % is below "
            f"{report.fit_threshold_percent:g} % ({len(report.windows)} window{plural}, {span:.3g} s left out)")


def _impulse_failure(report: ImpactReport) -> str:
    bad = [w for w in report.windows if not w.passed]
    plural = "s" if len(report.windows) > 1 else ""
    each = [f"{w.start_s:.3f}-{w.end_s:.3f} s rendered {w.rendered_impulse_Ns * 1e3:.3g} mN s, captured "
            f"{w.captured_impulse_Ns * 1e3:.3g} mN s (tolerance {w.tolerance_Ns * 1e3:.2g} mN s, {w.bound})"
            for w in bad[:4]]
    return (f"impulse of {len(bad)} of {len(report.windows)} impact window{plural} beyond its tolerance: "
            + "; ".join(each) + ("; ..." if len(bad) > 4 else ""))


def _onset_failure(report: ImpactReport) -> str:
    parts = _unmatched(report.unmatched_captured_s, len(report.captured_onsets_s),
                       f"captured without a rendered one within {MATCH_S * 1e3:g} ms", report.unmatched_rendered_s,
                       len(report.rendered_onsets_s), "rendered without a captured one")
    again = sorted(set(report.recontacts_s) & set(report.unmatched_captured_s + report.unmatched_rendered_s))
    if again:
        parts.append(f"of these, re-contacts (rising from zero force: the probe meeting the key again) {_times(again)}")
    return "impact onsets: " + "; ".join(parts)


def _repeated_failure(report: ImpactReport) -> str:
    rep = report.repeated
    parts = _unmatched(rep.unmatched_captured_s, len(rep.demanded_s),
                       f"onsets the key repeats without a rendered one within {MATCH_S * 1e3:g} ms",
                       rep.unmatched_rendered_s, len(report.rendered_onsets_s),
                       f"rendered where neither the capture nor its {rep.repeats} repeats have one")
    return "impact onsets within the key's repeat presses: " + "; ".join(parts)


def _unmatched(captured: list[float], of_captured: int, captured_what: str, rendered: list[float], of_rendered: int,
               rendered_what: str) -> list[str]:
    """'N of M what (times)' for the unmatched onsets of each side that has any."""
    return [f"{len(ts)} of {of} {what} ({_times(ts)})"
            for ts, of, what in ((captured, of_captured, captured_what), (rendered, of_rendered, rendered_what)) if ts]


def _times(ts: list[float]) -> str:
    return ", ".join(f"{t:.3f}" for t in ts[:8]) + (", ..." if len(ts) > 8 else "") + " s"
