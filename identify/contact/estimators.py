"""The built-in contact estimators in their families' signatures (:mod:`hapticam.identify.estimators`).

Family ``contact``: ``estimate(t_s, d_m, f_N, v_mps, settings) -> EstimateResult``, the linear law
``F = k d + b d'`` from the samples in contact: times (s), penetration (m), force into the wall (N),
penetration rate (m/s), and the :class:`~hapticam.identify.contact.fit.ContactSettings` each estimator
reads its own settings from (Agar, "Contact parameter estimation using a space manipulator verification
facility", 2004, chapters 2-3). Family ``spectral``:
``estimate(spectra, theta0) -> EstimateResult`` (:mod:`~hapticam.identify.contact.frequency`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import hapticam.identify.contact.frequency as frequency
import hapticam.identify.contact.recursive as recursive
from hapticam.identify.contact.batch import gls
from hapticam.identify.contact.result import EstimateResult

if TYPE_CHECKING:
    from hapticam.identify.contact.fit import ContactSettings


def rls(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray, s: ContactSettings) -> EstimateResult:
    """Recursive least squares on ``[d, d', d'']`` (:func:`~.recursive.rls`; it differentiates ``d_m`` itself)."""
    return recursive.rls(t_s, d_m, f_N, theta0=(s.k0_Npm, s.b0_Nspm, s.m0_kg), lam=s.lam, p0=s.p0, p_max=s.p_max)


def ils(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray, s: ContactSettings) -> EstimateResult:
    """Instantaneous least squares on ``[d, d']`` (:func:`~.recursive.ils`)."""
    return recursive.ils(t_s, d_m, f_N, v_mps, theta0=(s.k0_Npm, s.b0_Nspm), lam=s.lam, p0=s.p0, p_max=s.p_max)


def kalman(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray, s: ContactSettings) -> EstimateResult:
    """Kalman filter estimate of ``[k, b]`` (:func:`~.recursive.kalman`)."""
    return recursive.kalman(t_s, d_m, f_N, v_mps, theta0=(s.k0_Npm, s.b0_Nspm), r=s.kalman_r_N2, p0=s.p0,
                            q=s.kalman_q)


def indirect_adaptive(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray,
                      s: ContactSettings) -> EstimateResult:
    """Indirect adaptive estimate of ``[k, b]`` (:func:`~.recursive.indirect_adaptive`)."""
    return recursive.indirect_adaptive(t_s, d_m, f_N, v_mps, theta0=(s.k0_Npm, s.b0_Nspm), gamma=s.gamma)


def global_ls(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray,
              s: ContactSettings) -> EstimateResult:
    """Global least squares over the record (:func:`~.batch.gls`); it takes no settings."""
    return gls(t_s, d_m, f_N, v_mps)


def _frequency(method: str, t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray,
               s: ContactSettings) -> EstimateResult:
    est = frequency.FrequencyEstimator(method, (s.k0_Npm, s.b0_Nspm), freqs_Hz=s.freqs_Hz, n_freq=s.n_freq,
                                       f_max_Hz=s.f_max_Hz, derivative=s.derivative)
    return est.fit(t_s, d_m, f_N, v_mps)


def etfe(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray, s: ContactSettings) -> EstimateResult:
    """Empirical transfer function estimate (:func:`~.frequency.etfe`) from the record's spectra."""
    return _frequency("etfe", t_s, d_m, f_N, v_mps, s)


def oem(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray, s: ContactSettings) -> EstimateResult:
    """Output error method (:func:`~.frequency.oem`) from the record's spectra."""
    return _frequency("oem", t_s, d_m, f_N, v_mps, s)


def eem(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray, s: ContactSettings) -> EstimateResult:
    """Equation error method (:func:`~.frequency.eem`) from the record's spectra."""
    return _frequency("eem", t_s, d_m, f_N, v_mps, s)


def gmle(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray, s: ContactSettings) -> EstimateResult:
    """Gaussian maximum likelihood (:func:`~.frequency.gmle`) from the record's spectra."""
    return _frequency("gmle", t_s, d_m, f_N, v_mps, s)


def spectral_etfe(sp: frequency.Spectra, theta0: Any) -> EstimateResult:
    """:func:`~.frequency.etfe` in the ``spectral`` family's signature (it needs no starting point)."""
    return frequency.etfe(sp)


def spectral_eem(sp: frequency.Spectra, theta0: Any) -> EstimateResult:
    """:func:`~.frequency.eem` in the ``spectral`` family's signature (it needs no starting point)."""
    return frequency.eem(sp)
