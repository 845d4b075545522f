"""Contact parameter identification (seed 004, Agar's thesis, chapters 2-5).

- :func:`fit_contact` -> :class:`ContactFit` (``to_model()`` gives the ``contact`` model): onset, datum,
  series compliance, the nine estimators or the Hunt-Crossley law, the damping verdict
  (:mod:`~hapticam.identify.contact.fit`);
- the nine estimators: :mod:`~.recursive` (RLS, ILS, indirect adaptive, Kalman), :mod:`~.batch` (global
  LS), :mod:`~.frequency` (ETFE, OEM, EEM, GMLE);
- :mod:`~.onset` (contact onset, datum, orientation), :mod:`~.mechanics` (series springs, secant, Hertz),
  :mod:`~.power_law` (``F = k d^n (1 + b' d')``);
- :mod:`~.multipoint` (eqs. 4.1-4.9) with files in :mod:`~.multipoint_io`;
- :func:`convergence_figure` (:mod:`~.plot`); synthetic records (:mod:`~.synthetic`, :mod:`~.multipoint_sim`).
"""

from hapticam.identify.contact.batch import GlobalLS, gls
from hapticam.identify.contact.fit import ESTIMATORS, ContactFit, ContactSettings, fit_contact
from hapticam.identify.contact.frequency import FrequencyEstimator, eem, etfe, gmle, oem, spectra
from hapticam.identify.contact.multipoint import MultiPointData, MultiPointFit, fit_multipoint
from hapticam.identify.contact.multipoint_io import load_multipoint, save_multipoint
from hapticam.identify.contact.plot import convergence_figure
from hapticam.identify.contact.power_law import PowerLawFit, fit_power_law
from hapticam.identify.contact.recursive import (ILS, RLS, ContactKalman, IndirectAdaptive, ils, indirect_adaptive,
                                                 kalman, rls)
from hapticam.identify.contact.result import EstimateResult

__all__ = ["ESTIMATORS", "ContactFit", "ContactKalman", "ContactSettings", "EstimateResult", "FrequencyEstimator",
           "GlobalLS", "ILS", "IndirectAdaptive", "MultiPointData", "MultiPointFit", "PowerLawFit", "RLS",
           "convergence_figure", "eem", "etfe", "fit_contact", "fit_multipoint", "fit_power_law", "gls", "gmle",
           "ils", "indirect_adaptive", "kalman", "load_multipoint", "oem", "rls", "save_multipoint", "spectra"]
