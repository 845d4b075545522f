"""Estimator registries: each family of estimators declared in one place, by name.

A family is the set of estimators that one fitting pipeline may run in the same place, each a function
with the family's signature (:attr:`EstimatorFamily.signature`). The built-in estimators are declared here
as ``NAME: "module:function"`` (a module is imported only when its estimator is run); another distribution
adds one through the entry point group ``hapticam.estimators`` (:mod:`hapticam.plugins`), named
``FAMILY.NAME``, without editing hapticam::

    [project.entry-points."hapticam.estimators"]
    "contact.ols" = "my_package.estimators:ols"      # fit_contact(..., estimator="ols"); --estimator ols

A built-in name always means the built-in estimator; a plugin that cannot be imported, or that names no
function, is refused with one :class:`~hapticam.errors.IdentificationError` (or
:class:`~hapticam.errors.DependencyMissingError`) that names it. Listing a family's names imports nothing
of its estimators, so a command line offers them as its choices.

Families
--------
``contact`` (:func:`hapticam.identify.contact.fit.fit_contact`, ``identify contact --estimator``): the
linear contact law ``F = k d + b d'`` from the samples in contact,
``estimate(t_s, d_m, f_N, v_mps, settings) -> EstimateResult`` with times (s), penetration (m), force into
the wall (N), penetration rate (m/s) and the :class:`~hapticam.identify.contact.fit.ContactSettings`.

``spectral`` (:class:`hapticam.identify.contact.frequency.FrequencyEstimator`): the same law from the
record's spectra, ``estimate(spectra, theta0) -> EstimateResult`` with a
:class:`~hapticam.identify.contact.frequency.Spectra` and the starting ``(k, b)`` (N/m, N s/m).

``friction`` (``identify friction --method``): a friction law from captures,
``estimate(captures, law, *, experiment, axis, inertia, added_inertia, window_s) -> FrictionEstimate``
(:mod:`hapticam.identify.friction.methods`): the captures, the law's name, the experiment (``spin-down``
or ``speeds``), the axis kind, a known moment of inertia (kg m^2) or the inertias added to each capture,
and the differentiation window (s).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from hapticam.errors import IdentificationError
from hapticam.plugins import ESTIMATOR_GROUP, load_function, plugins

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint


@dataclass(frozen=True)
class EstimatorFamily:
    """Estimators run in one place, by name: ``builtins`` (name -> ``"module:function"``, in the order they
    are listed) and the plugins of entry point group ``hapticam.estimators`` named ``{name}.NAME``."""

    name: str
    builtins: dict[str, str]
    signature: str

    def plugins(self) -> dict[str, EntryPoint]:
        """The family's estimators other distributions declare, by name (built-in names left out); nothing
        of them is imported."""
        prefix = f"{self.name}."
        return {key[len(prefix):]: entry for key, entry in plugins(ESTIMATOR_GROUP).items()
                if key.startswith(prefix) and key[len(prefix):] not in self.builtins}

    def names(self) -> tuple[str, ...]:
        """Every estimator's name: the built-in ones in their order, then the plugins' sorted."""
        return (*self.builtins, *sorted(self.plugins()))

    def knows(self, name: str) -> bool:
        """Whether ``name`` is one of the family's estimators (a built-in name is known without reading the
        installed distributions' metadata)."""
        return isinstance(name, str) and (name in self.builtins or name in self.plugins())

    def get(self, name: str) -> Callable[..., Any]:
        """The estimator ``name`` (its module imported now); :class:`IdentificationError` for an unknown
        name, naming the family's estimators, or for a plugin that is not a function."""
        if isinstance(name, str) and name in self.builtins:
            module, _, function = self.builtins[name].partition(":")
            return getattr(importlib.import_module(module), function)
        entry = self.plugins().get(name) if isinstance(name, str) else None
        if entry is None:
            raise IdentificationError(f"estimator: expected one of {', '.join(self.names())}, got {name!r}")
        return load_function(entry, f"{self.name} estimator", IdentificationError)


#: the linear contact law's estimators (Agar, "Contact parameter estimation using a space manipulator
#: verification facility", 2004, chapters 2-3): recursive, batch and frequency domain
CONTACT_ESTIMATORS = EstimatorFamily("contact", {
    "rls": "hapticam.identify.contact.estimators:rls",
    "ils": "hapticam.identify.contact.estimators:ils",
    "ia": "hapticam.identify.contact.estimators:indirect_adaptive",
    "kalman": "hapticam.identify.contact.estimators:kalman",
    "gls": "hapticam.identify.contact.estimators:global_ls",
    "etfe": "hapticam.identify.contact.estimators:etfe",
    "oem": "hapticam.identify.contact.estimators:oem",
    "eem": "hapticam.identify.contact.estimators:eem",
    "gmle": "hapticam.identify.contact.estimators:gmle",
}, "estimate(t_s, d_m, f_N, v_mps, settings: ContactSettings) -> EstimateResult")

#: the contact law from spectra (:mod:`hapticam.identify.contact.frequency`)
SPECTRAL_ESTIMATORS = EstimatorFamily("spectral", {
    "etfe": "hapticam.identify.contact.estimators:spectral_etfe",
    "oem": "hapticam.identify.contact.frequency:oem",
    "eem": "hapticam.identify.contact.estimators:spectral_eem",
    "gmle": "hapticam.identify.contact.frequency:gmle",
}, "estimate(spectra: Spectra, theta0: (k_Npm, b_Nspm)) -> EstimateResult")

#: friction laws from captures: least squares, and the universal adaptive stabilizer's observer (Wadi,
#: Mukhopadhyay & Romdhane, "Identifying Friction in a Nonlinear Chaotic System Using a Universal Adaptive
#: Stabilizer"), which identifies nothing
FRICTION_METHODS = EstimatorFamily("friction", {
    "ls": "hapticam.identify.friction.methods:least_squares",
    "uas": "hapticam.identify.friction.methods:uas_observer",
}, "estimate(captures, law, *, experiment, axis, inertia, added_inertia, window_s) -> FrictionEstimate")

#: every family, by name
FAMILIES = {family.name: family for family in (CONTACT_ESTIMATORS, SPECTRAL_ESTIMATORS, FRICTION_METHODS)}
