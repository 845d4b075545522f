"""``identify hybrid-key``: fit the ``hybrid-key`` model to probe captures of a piano-like key.

The captures carry position and force only (seed 000's probe). Each kind of capture identifies part of
the model (:func:`~hapticam.identify.hybrid_key.params.describe_roles`):

1. a slow press and release gives, in closed form, the quasi-static parameters and the escapement
   geometry (:mod:`hapticam.identify.hybrid_key.static`): return spring, preload, let-off point and the
   force drop there (the hammer's weight through the lever), check drop, repetition point, lever ratio,
   hammer mass, keybed position and stiffness; their standard errors come from the Jacobian of the
   simulated slow stroke's force (low-passed, as the closed form reads it);
2. every capture together (the long periodic excitation among them) gives the parameters that enter the
   key's force linearly, given the hammer: the kernel drives the key kinematically, so its force is
   ``F = m_k a + k_r x + F_p + k_kb (x - x_kb)+ + b_kb v [x > x_kb] + R(t)`` with the hammer's reaction
   ``R`` simulated at the current estimate; linear least squares (impacts, which a rigid kinematic key
   cannot reproduce sample by sample, are left out by iterative 5-MAD rejection) gives the key mass,
   return spring, preload, keybed stiffness and damping with their standard errors (a one-step
   prediction-error fit of those terms, seed 002 section 4);
3. strokes at graded speeds: the hammer leaves the jack at let-off and lands on the backcheck; the first
   landing after each let-off is a force spike whose time the hammer's flight sets (the string height
   when the hammer reaches the string; its restitution trades off against the height there and is kept
   at its prior): least squares on those event times (seed 000 section 4: event times identify
   parameters), standard errors from the Jacobian;
4. the hammer's bounces in the backcheck after let-off: the onsets of their landing spikes give the
   Hunt-Crossley ``alpha = b / k`` (the restitution of a Hunt-Crossley impact depends on alpha times the
   impact speed only), fitted along the captures whose first landing the model places (a slow key: the
   hammer falls the check drop; :mod:`hapticam.identify.hybrid_key.bounce`); without such a sequence,
   an oscillation below let-off with the hammer bouncing on the jack, its first bounces' landing times;
   ``k`` itself sets the sub-millisecond contact duration, which the probe's force
   through its tip does not resolve; ``n`` is fixed at 1.5 (seed 000 eq. 26) and gravity is known;
5. a tap, the key held past let-off and rocked by micrometres on the probe's resting tip, gives ``k``: the
   hammer resting on its felt is a spring the felt's k sets, and the key simulated on the tip along the
   probe's position reproduces the held force best at one k (:mod:`hapticam.identify.hybrid_key.tap`).
   Without a tap (or without the tip's stiffness and alpha), k is fixed at ``PRIORS`` and reported so.

What the captures show beside the hybrid key (an independent action's Coulomb friction and let-off bump,
:mod:`hapticam.identify.hybrid_key.static`) is taken out of every capture's force before the steps above
and returned in ``KeyFit.extra``, to be written as ``friction`` and ``contact`` components beside the key
(:func:`~hapticam.identify.hybrid_key.params.with_extras`); their standard errors are not computed (the
probe's noise alone would make them sub-millinewton: their error is the action's departure from the laws).

Every standard error is ``sqrt(diag(s^2 (J^T J)^-1))`` with ``s^2 = RSS / (N - p)`` (seed 002 section 4),
inflated where the residuals are correlated in time
(:func:`~hapticam.identify.hybrid_key.errors.correlation_inflation`).
A parameter whose data are missing (no stroke reached the string, no capture pressed into the keybed) is
fixed at its prior and reported as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.identify.metrics import fit_percent
from hapticam.identify.hybrid_key.bounce import backcheck_alpha
from hapticam.identify.hybrid_key.events import bounce_alpha, string_fit
from hapticam.identify.hybrid_key.errors import correlation_inflation, jacobian_errors
from hapticam.identify.hybrid_key.params import (ACCELERATION_CUTOFF_HZ, FIXED_DEFAULTS, Prepared, classify,
                                                 describe_roles, extra_force, prepare, to_model)
from hapticam.identify.hybrid_key.static import smooth, static_estimates
from hapticam.identify.hybrid_key.tap import contact_stiffness
from hapticam.models.base import Model
from hapticam.models.hybrid_key.model import EV_LANDING, EV_LETOFF, FLAG_CONTACT, FLAG_ESCAPED, FLAG_FLIGHT, HybridKey

#: Priors for what the captures do not identify (a grand action's typical values).
PRIORS = {"key_mass_kg": 0.03, "keybed_b_Nspm": 50.0, "contact_k_Npm": 5e6, "contact_alpha_spm": 2.0,
          "string_restitution": 0.5}
#: A parameter whose standard error exceeds this fraction of its value is reported as not identified.
MAX_RELATIVE_SE = 0.5
#: a capture the identified model reproduces worse than this is named in the notes and a warning (%, seed 003
#: eq. 53 at 100 Hz: 75 % is an RMS error half the force's spread)
POOR_FIT_PERCENT = 75.0
#: Low-pass (Hz) of the slow stroke's force for the static parameters' standard errors.
SLOW_CUTOFF_HZ = 20.0
#: Parameters whose standard errors come from the slow stroke's Jacobian.
STATIC_FREE = ("hammer_mass_kg", "lever_ratio", "let_off_m", "check_drop_m", "repetition_m", "keybed_m")


@dataclass
class KeyFit:
    """Result of :func:`identify_hybrid_key`: the model, every parameter's value and standard error (SI
    units; NaN where fixed), what was fixed and why, the captures' roles and fits, notes."""

    model: HybridKey
    values: dict[str, float]
    std_errors: dict[str, float]
    fixed: dict[str, str]
    roles: dict[str, str]
    fit_percent: dict[str, float]
    notes: list[str] = field(default_factory=list)
    #: what the captures showed beside the hybrid key (:func:`~hapticam.identify.hybrid_key.params.with_extras`):
    #: ``friction_N`` (Coulomb), ``bump_k_Npm`` and ``bump_x_m`` (a spring rising before let-off)
    extra: dict[str, float] = field(default_factory=dict)

    def coupling(self, device_damping_Nspm: float = 2.0, render_rate_hz: float = 1000.0) -> tuple[float, float]:
        """The virtual coupling ``(k_c, b_c)`` (N/m, N s/m) through which a device of physical damping
        ``device_damping_Nspm`` (N s/m) renders the key passively at ``render_rate_hz`` (Hz)
        (:func:`~hapticam.models.hybrid_key.model.coupling_for_device`, the key's mass reflected to the handle)."""
        from hapticam.models.hybrid_key.model import coupling_for_device

        v = self.values
        return coupling_for_device(device_damping_Nspm, render_rate_hz,
                                   v["key_mass_kg"] + v["lever_ratio"] ** 2 * v["hammer_mass_kg"])

    def to_model(self, device_damping_Nspm: float = 2.0, render_rate_hz: float = 1000.0,
                 handle_mass_kg: float = 0.05) -> Model:
        """The key to render on a device of physical damping ``device_damping_Nspm`` (N s/m) at
        ``render_rate_hz`` (Hz) whose handle weighs ``handle_mass_kg`` (kg): the hybrid key behind its
        :meth:`coupling`, with what the captures showed beside it
        (:func:`~hapticam.identify.hybrid_key.params.with_extras`). The defaults are the simulated device's."""
        from hapticam.identify.hybrid_key.params import friction_width, with_extras

        width = friction_width(self.extra.get("friction_N", 0.0), handle_mass_kg, render_rate_hz)
        return with_extras(to_model(dict(self.values), self.coupling(device_damping_Nspm, render_rate_hz)),
                           self.extra, width)

    def uncertainty(self) -> dict[str, Any]:
        """Standard errors in the model file's parameter layout (the contact's under ``contact``)."""
        out: dict[str, Any] = {}
        for name, se in self.std_errors.items():
            if not math.isfinite(se):
                continue
            if name in ("contact_k_Npm", "contact_b_Nspm"):
                out.setdefault("contact", {})[name[len("contact_"):]] = float(se)
            elif name in self.model.to_dict():
                out[name] = float(se)
        return out


def _static_errors(slow: Prepared, values: dict[str, float]) -> dict[str, float]:
    """Standard errors of the slow stroke's nonlinear parameters from the Jacobian of its simulated,
    low-passed force (sampled at 10 times the cut-off; the low-passed residual is correlated over several of
    those samples and over the model's misfit, so the variance is inflated by :func:`correlation_inflation`
    of the residual, as in :func:`linear_terms`); with a hammer rail
    the jack pickup takes the repetition point's place (the jack slips back there)."""
    free = tuple(("jack_pickup_m" if n == "repetition_m" else n) for n in STATIC_FREE) \
        if values.get("hammer_rail") else STATIC_FREE
    free = tuple(n for n in free if values[n] > 0.0)        # a position at 0 has no relative step to take
    step = max(1, int(round(1.0 / (10.0 * SLOW_CUTOFF_HZ * slow.dt_s))))
    target = smooth(slow.f_N, slow.dt_s, SLOW_CUTOFF_HZ)[slow.use][::step]

    def residual(z: np.ndarray) -> np.ndarray:
        v = dict(values, **dict(zip(free, z)))
        return smooth(slow.predict(to_model(v)), slow.dt_s, SLOW_CUTOFF_HZ)[slow.use][::step] - target

    z = np.array([values[n] for n in free])
    r0, se = jacobian_errors(residual, z)
    inflation = correlation_inflation(r0)
    return dict(zip(free, (float(s) * math.sqrt(inflation) for s in se)))


def key_force_terms(prep: Prepared, values: dict[str, float], phase: str
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Regressors of the key's linear terms [a, x, 1, (x - x_kb)+, v [x > x_kb]], the hammer's reaction R (N)
    simulated at ``values`` (the kernel's force minus its key terms) and the samples of ``phase``: ``jack``
    (the simulated hammer has rested on the jack, below let-off, with no landing or lift-off within
    ``QUIET_S``: the real one rests there too, whatever bounces came before), ``flight`` (the hammer away
    from the key between a let-off and the first landing after it, ``FLIGHT_MARGIN_S`` from its events,
    above the keybed: the force is the key's alone, whatever the hammer's estimates; the later bounces'
    times depend on every landing before them, and behind a compliant tip they drift from the model's)
    or ``keybed`` (the key pressed ``20 um`` into the keybed, the keybed's force clear of its clamp at zero)."""
    x, v, a = prep.x_m, prep.v_mps, prep.a_mps2
    x_kb = values["keybed_m"]
    on = x > x_kb
    phi = np.column_stack([a, x, np.ones_like(x), np.where(on, x - x_kb, 0.0), np.where(on, v, 0.0)])
    trace = to_model(values).simulate(x, prep.dt_s, v_mps=v, a_mps2=a)
    theta = np.array([values[n] for n in LINEAR])
    kb = phi[:, 3:] @ theta[3:]
    key = phi[:, :3] @ theta[:3] + np.maximum(kb, 0.0)      # the keybed never pulls (max(0, .))
    t = np.arange(x.size) * prep.dt_s
    margin = FLIGHT_MARGIN_S if phase == "flight" else QUIET_S
    near = np.zeros(x.size, dtype=bool)
    for te in trace.event_time_s:
        near |= np.abs(t - te) < margin
    # with a hammer rail, only past twice the jack pickup: the probe's free travel and the knock of the
    # pickup (the jack meeting the hammer resting on its rail) lie before it
    past = x > (2.0 * values.get("jack_pickup_m", 0.0) if values.get("hammer_rail") else -np.inf)
    if phase == "jack":
        mask = ((trace.flags & FLAG_CONTACT) != 0) & ((trace.flags & FLAG_ESCAPED) == 0) & ~near & (x < values["let_off_m"]) \
            & past
    elif phase == "flight":     # from each let-off to the first landing (string_fit fits its time); the
        first = np.zeros(x.size, dtype=bool)     # later bounces' times depend on every landing before them
        landings = trace.events(EV_LANDING)
        for t_off in trace.events(EV_LETOFF):
            later = landings[landings > t_off]
            first |= (t > t_off) & (t < (later[0] if later.size else np.inf))
        mask = ((trace.flags & FLAG_FLIGHT) != 0) & first & ~near & (x < x_kb) & past
    else:   # on the keybed and far from its clamp (the keybed never pulls: max(0, k (x - x_kb) + b v))
        mask = (x > x_kb + 20e-6) & (kb > 0.5 * values["keybed_k_Npm"] * (x - x_kb))
    return phi, trace.force_N - key, mask


def same_filter(prep: Prepared, phi: np.ndarray, reaction: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The regression's every term through the one low-pass the key's acceleration went through
    (``ACCELERATION_CUTOFF_HZ``): the force, the hammer's reaction and the regressors but the acceleration
    (already filtered). A linear filter keeps the equation linear in the parameters, and the key's ringing
    on the probe's tip, which the acceleration's filter removes, leaves the force too."""
    out = phi.copy()
    for j in range(1, phi.shape[1]):
        out[:, j] = smooth(phi[:, j], prep.dt_s, ACCELERATION_CUTOFF_HZ)
    return out, smooth(reaction, prep.dt_s, ACCELERATION_CUTOFF_HZ), smooth(prep.f_N, prep.dt_s, ACCELERATION_CUTOFF_HZ)


LINEAR = ("key_mass_kg", "return_spring_Npm", "preload_N", "keybed_k_Npm", "keybed_b_Nspm")
#: A sample counts for the linear terms when no hammer event is nearer than this (s).
QUIET_S = 0.03
FLIGHT_MARGIN_S = 0.005


def linear_terms(preps: Sequence[Prepared], values: dict[str, float], free: Sequence[str], phase: str
                 ) -> tuple[dict[str, float], dict[str, float]]:
    """Weighted least squares of the ``free`` linear key terms over the captures' quiet samples given the
    simulated hammer (module step 2), the other terms at ``values``; outliers rejected at 5 MADs.
    Returns values and standard errors (parameters without excitation are left out)."""
    rows, ys, ws = [], [], []
    idx = [LINEAR.index(n) for n in free]
    rest = [i for i in range(len(LINEAR)) if i not in idx]
    for p in preps:
        phi, reaction, quiet = key_force_terms(p, values, phase)
        phi, reaction, f = same_filter(p, phi, reaction) if phase == "flight" else (phi, reaction, p.f_N)
        use = p.use[quiet[p.use]]
        fixed_part = phi[use][:, rest] @ np.array([values[LINEAR[i]] for i in rest])
        rows.append(phi[use][:, idx])
        ys.append(f[use] - reaction[use] - fixed_part)
        ws.append(np.full(use.size, 1.0 / p.noise_N))
    X, y, w = np.vstack(rows), np.concatenate(ys), np.concatenate(ws)
    if y.size == 0:
        return {}, {}
    cols = [j for j in range(X.shape[1]) if np.ptp(X[:, j]) > 0 or LINEAR[idx[j]] == "preload_N"]
    if not cols or y.size < 10 * len(cols):
        return {}, {}
    keep = np.ones(y.size, dtype=bool)
    for _ in range(3):
        A = X[keep][:, cols] * w[keep, None]
        theta, *_ = np.linalg.lstsq(A, y[keep] * w[keep], rcond=None)
        r = (y - X[:, cols] @ theta) * w
        mad = 1.4826 * np.median(np.abs(r[keep] - np.median(r[keep])))
        keep = np.abs(r - np.median(r[keep])) < 5.0 * mad
    A = X[keep][:, cols] * w[keep, None]
    r = y[keep] * w[keep] - A @ theta
    s2 = float(r @ r) / max(A.shape[0] - A.shape[1], 1) * correlation_inflation(r)
    se = np.sqrt(np.diag(s2 * np.linalg.pinv(A.T @ A)))
    names = [free[j] for j in cols]
    return dict(zip(names, (float(v) for v in theta))), dict(zip(names, (float(s) for s in se)))


def _keybed(preps: Sequence[Prepared], values: dict[str, float], se: dict[str, float]) -> None:
    """Keybed stiffness, damping and position from the samples pressed into it: F - R - (key terms) =
    k_kb (x - x_kb) + b_kb v + c, the intercept c moving the keybed by -c / k_kb (updates in place)."""
    lin, lin_se = linear_terms(preps, values, ("keybed_k_Npm", "keybed_b_Nspm", "preload_N"), "keybed")
    if "keybed_k_Npm" not in lin or not lin["keybed_k_Npm"] > 0.0:
        return
    shift = (lin.pop("preload_N") - values["preload_N"]) / lin["keybed_k_Npm"]
    values.update(lin, keybed_m=values["keybed_m"] - shift)
    se.update({k: v for k, v in lin_se.items() if k != "preload_N"},
              keybed_m=lin_se["preload_N"] / lin["keybed_k_Npm"])


def _unidentified(values: dict[str, float], se: dict[str, float], fixed: dict[str, str]) -> None:
    """Parameters the captures do not pin (standard error above ``MAX_RELATIVE_SE`` of the value, or an estimate
    of the wrong sign) are reported as fixed: at their prior when the data allow it (within 3 standard errors of
    the estimate), else at the estimate clipped to its physical bound (>= 0)."""
    for name, err in list(se.items()):
        if name in fixed or name not in values or not math.isfinite(err):
            continue
        value = values[name]
        if err <= MAX_RELATIVE_SE * abs(value) and value >= 0.0:
            continue
        prior = PRIORS.get(name, math.nan)
        use_prior = abs(prior - value) <= 3.0 * err
        keep = prior if use_prior else max(value, 0.0)
        fixed[name] = (f"not identified by these captures ({value:.4g} +- {err:.3g}): kept at "
                       + ("its prior " if use_prior else "") + f"{keep:.4g}")
        values[name] = keep
        se.pop(name)


def _beside_the_key(st: Any, preps: Sequence[Prepared]) -> dict[str, float]:
    """What the slow stroke showed beside the hybrid key (Coulomb friction, a let-off bump's spring), taken out
    of every capture's force (in place) so that the hybrid key is fitted to what remains."""
    extra: dict[str, float] = {}
    if st.friction_N > 0.0:
        extra["friction_N"] = float(st.friction_N)
    if st.bump_k_Npm > 0.0:
        extra.update(bump_k_Npm=float(st.bump_k_Npm), bump_x_m=float(st.bump_x_m))
    for p in preps:
        p.f_N = p.f_N - extra_force(extra, p.x_m, p.v_mps)
    return extra


Captures = Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray, "str | None"]]


def _group(captures: Captures, tip: tuple[float, float] | None = None
           ) -> tuple[dict[str, list[Prepared]], dict[str, str]]:
    """Prepare the captures (``tip``: the probe tip's stiffness and damping, :func:`prepare`) and sort them by
    role (the slow stroke first: its let-off tells a bounce)."""
    roles = {c[0]: classify(c[1], c[2], kind=c[4]) for c in captures}
    if "slow" not in roles.values():
        raise IdentificationError("identify hybrid-key: needs a slow press and release past let-off onto the keybed "
                                  "(e.g. hapticam probe ... --excitation triangle --duration 4)")
    groups: dict[str, list[Prepared]] = {"slow": [], "bounce": [], "stroke": [], "periodic": [], "tap": []}
    let_off = None
    for name, t, x, f, kind in sorted(captures, key=lambda c: roles[c[0]] != "slow"):
        if roles[name] == "slow":         # each slow stroke must show the whole press: the first one is used
            try:
                found = static_estimates(t, x, f, FIXED_DEFAULTS["gravity_mps2"]).let_off_m
            except IdentificationError as exc:
                raise IdentificationError(f"{name}: {exc}") from None
            let_off = found if let_off is None else let_off
        else:
            roles[name] = classify(t, x, let_off, kind)
        groups[roles[name]].append(prepare(name, roles[name], t, x, f, tip))
    return groups, roles


def _initial_values(st: Any) -> dict[str, float]:
    """The parameter mapping from the slow stroke's closed forms (``st``), the rest at their priors."""
    return {"return_spring_Npm": st.return_spring_Npm, "preload_N": st.preload_N, "hammer_mass_kg": st.hammer_mass_kg,
           "lever_ratio": st.lever_ratio, "let_off_m": st.let_off_m, "check_drop_m": st.check_drop_m,
           "repetition_m": st.repetition_m, "keybed_m": st.keybed_m, "keybed_k_Npm": max(st.keybed_k_Npm, 0.0),
           "key_mass_kg": PRIORS["key_mass_kg"], "keybed_b_Nspm": PRIORS["keybed_b_Nspm"],
           "contact_k_Npm": PRIORS["contact_k_Npm"],
           "contact_b_Nspm": PRIORS["contact_alpha_spm"] * PRIORS["contact_k_Npm"],
           "string_restitution": PRIORS["string_restitution"],
           "hammer_rail": float(st.hammer_rail), "jack_pickup_m": st.jack_pickup_m,
           "touch_m": math.nan if st.touch_m is None else st.touch_m}


def _contact_damping(groups: dict[str, list[Prepared]], values: dict[str, float], se: dict[str, float],
                     fixed: dict[str, str], notes: list[str], probe_tip: tuple[float, float] | None) -> str:
    """The contact's Hunt-Crossley alpha = b / k from the bounces in the backcheck after let-off, else from the
    oscillation's landings (:mod:`hapticam.identify.hybrid_key.bounce`): ``values`` and ``se`` get b when the
    captures pin it, ``fixed`` says why when they do not; ``notes`` get each fit's note. Returns where alpha
    was read, or "" when it was not."""
    alpha, alpha_se, note = backcheck_alpha(groups["slow"] + groups["stroke"], values, probe_tip)
    notes.append(note)
    source = "the bounces in the backcheck after let-off"
    if not math.isfinite(alpha) and groups["bounce"]:
        alpha, alpha_se, note = bounce_alpha(groups["bounce"][0], values, probe_tip)
        notes.append(note)
        source = "the oscillation's landings"
    if math.isfinite(alpha) and not alpha_se < MAX_RELATIVE_SE * alpha:
        fixed["contact_b_Nspm"] = (f"{source} do not pin alpha = b / k (alpha {alpha:.3g} s/m, "
                                   f"standard error {alpha_se:.3g}): kept at alpha k = {values['contact_b_Nspm']:g}")
        alpha = math.nan
    if math.isfinite(alpha):
        values["contact_b_Nspm"] = alpha * values["contact_k_Npm"]
        se["contact_b_Nspm"] = alpha_se * values["contact_k_Npm"]
        return source
    if "contact_b_Nspm" not in fixed:
        why = ("no bounce sequence after let-off and " + ("no landing of the oscillation was found" if groups["bounce"]
                                                          else "no oscillation below let-off"))
        fixed["contact_b_Nspm"] = f"{why}: kept at alpha k = {values['contact_b_Nspm']:g}"
    return ""


def _contact_stiffness(taps: list[Prepared], values: dict[str, float], se: dict[str, float], fixed: dict[str, str],
                       notes: list[str], extra: dict[str, float], tip: tuple[float, float] | None) -> bool:
    """The contact's k from the taps (:mod:`hapticam.identify.hybrid_key.tap`), alpha = b / k kept: ``values``
    and ``se`` get k and b when the taps pin k, ``fixed`` keeps why not; ``notes`` get the fit's note. ``tip``:
    the probe's resting tip (N/m, s/m), without which the key cannot be simulated on it. True when fitted."""
    if tip is None:
        notes.append("tap: k not fitted: the fit simulates the key resting on the probe's one-sided tip, and these "
                     "captures name no such tip with its stiffness and alpha (a capture's probe metadata; a bolted "
                     "tip is not one)")
        return False
    k_old, alpha = values["contact_k_Npm"], values["contact_b_Nspm"] / values["contact_k_Npm"]
    k, k_se, note = contact_stiffness([(p, p.f_N) for p in taps], values, extra, tip)
    notes.append(note)
    if not (math.isfinite(k) and k_se < MAX_RELATIVE_SE * k):
        return False
    alpha_se = se.get("contact_b_Nspm", math.nan) / k_old
    values.update(contact_k_Npm=k, contact_b_Nspm=alpha * k)
    se["contact_k_Npm"] = k_se
    if math.isfinite(alpha_se):
        se["contact_b_Nspm"] = math.hypot(alpha_se * k, alpha * k_se)
    if "contact_b_Nspm" in fixed:
        fixed["contact_b_Nspm"] += f"; with the tap's k, b = alpha k = {alpha * k:g}"
    fixed.pop("contact_k_Npm", None)
    return True


def identify_hybrid_key(captures: Captures, *,
                        coupling: tuple[float, float] | None = None,
                        probe_tip: tuple[float, float] | None = None, key_on_tip: bool = False,
                        tip_alpha_spm: float | None = None,
                        progress: Callable[[str], None] | None = None) -> KeyFit:
    """Fit the hybrid key to captures ``(name, t_s, x_m, f_N, excitation kind or None)`` (module docstring;
    the kind, e.g. ``"strokes"``, names the capture's role when known); ``probe_tip``: the probe tip's
    stiffness (N/m) and damping (N s/m) when known, through which the probe pulls the key in the contact
    fit (the key's recoil on a landing); ``key_on_tip``: the key rests on that tip, a one-sided pad it can
    leave (not bolted to it), so the key's own acceleration is read through it (:func:`prepare`), and a tap
    (the key held down and rocked on it) gives the contact's k when ``tip_alpha_spm``, the tip's Hunt-Crossley
    alpha (s/m), is known too (:mod:`hapticam.identify.hybrid_key.tap`); ``coupling``: the
    ``(k_c, b_c)`` written into the model for rendering (the fit drives the key with the captured position)."""
    say = progress or (lambda _msg: None)
    if not captures:
        raise IdentificationError("identify hybrid-key: give at least one capture")
    groups, roles = _group(captures, probe_tip if key_on_tip else None)
    slow = groups["slow"][0]
    st = static_estimates(np.arange(slow.f_N.size) * slow.dt_s, slow.x_m, slow.f_N, FIXED_DEFAULTS["gravity_mps2"])
    values = _initial_values(st)
    values["string_height_m"] = values["lever_ratio"] * values["keybed_m"] + 0.02   # out of reach until fitted
    notes, fixed = list(st.notes), {"contact_n": "fixed at 1.5 (seed 000 eq. 26)", "gravity_mps2": "known, 9.81 m/s^2",
                                    "contact_k_Npm": f"fixed at {PRIORS['contact_k_Npm']:g} N/m^1.5: the contact's "
                                    "sub-millisecond duration is not resolved by the force through the probe's tip, "
                                    "and no tap on a resting tip gave it"}
    say("slow stroke: closed-form estimates")
    every = [p for role, g in groups.items() if role != "tap" for p in g]     # a tap is fitted as measured
    extra = _beside_the_key(st, every)
    se = _static_errors(slow, values)
    lin, lin_se = linear_terms([slow], values, ("return_spring_Npm", "preload_N"), "jack")
    values.update(lin)
    se.update(lin_se)
    if groups["stroke"]:
        vals, errs, note = string_fit(groups["stroke"], values)
        values.update(vals)
        se.update(errs)
        notes.append(note)
        say("strokes: string height and restitution from landing times")
    fixed["string_restitution"] = (f"kept at {values['string_restitution']:g}: in the landing times after let-off "
                                   "it trades off against the string height")
    height, height_se = values["string_height_m"], se.get("string_height_m", math.nan)
    if "string_height_m" in se and not height_se <= MAX_RELATIVE_SE * height:
        # a string the landing times do not pin would stand in the flights the key's mass is read over
        se.pop("string_height_m")
        fixed["string_height_m"] = (f"not identified by the landing times after let-off ({height:.4g} +- "
                                    f"{height_se:.3g} m): kept out of reach")
    if "string_height_m" not in se:
        values["string_height_m"] = values["lever_ratio"] * values["keybed_m"] + 0.02
        fixed.setdefault("string_height_m", "no stroke reached the string: kept out of reach")
    dynamic = groups["stroke"] + groups["periodic"]
    if dynamic:                       # a slow stroke has no acceleration to tell the key's mass by
        lin, lin_se = linear_terms(dynamic, values, ("key_mass_kg",), "flight")
        values.update(lin)
        se.update(lin_se)
    _keybed(groups["slow"], values, se)
    say("slow stroke and strokes: key mass and keybed by least squares on the simulated hammer")
    source = _contact_damping(groups, values, se, fixed, notes, probe_tip)
    if source:
        say(f"Hunt-Crossley alpha = b / k from {source}")
    resting = (probe_tip[0], tip_alpha_spm) if key_on_tip and probe_tip and tip_alpha_spm is not None else None
    if groups["tap"] and _contact_stiffness(groups["tap"], values, se, fixed, notes, extra, resting):
        say("tap: the contact's k by the key simulated on the probe's tip")
    for name in ("keybed_b_Nspm", "key_mass_kg"):
        if name not in se or not math.isfinite(se[name]):
            fixed[name] = f"not excited by these captures: kept at {values[name]:g}"
    _unidentified(values, se, fixed)
    model = to_model(values, coupling)
    plain = to_model(values)
    fits = {p.name: fit_percent(smooth(p.f_N, p.dt_s, 100.0)[p.use], smooth(p.predict(plain), p.dt_s, 100.0)[p.use])
            for p in every}
    notes.extend(f"{name}: the model reproduces this capture at {pct:.1f} % (100 Hz, below {POOR_FIT_PERCENT:g} %)"
                 for name, pct in fits.items() if not pct >= POOR_FIT_PERCENT)
    notes.append("the force sensor's constant bias cannot be told from the preload: it is part of preload_N")
    # the rail is a structure, not a number; with it the repetition point is the jack pickup
    skip = {"hammer_rail", "touch_m", "repetition_m" if values["hammer_rail"] else "jack_pickup_m"}
    std = {n: float(se.get(n, math.nan)) for n in values if n not in fixed and n not in skip}
    return KeyFit(model=model, values={**values, **FIXED_DEFAULTS}, std_errors=std, fixed=fixed, roles=roles,
                  fit_percent=fits, notes=notes, extra=extra)


__all__ = ["KeyFit", "identify_hybrid_key", "fit_percent", "describe_roles", "PRIORS"]
