"""Contact (seed 004 eq. 2.1, seed 000 eq. 26) and friction (seed 003 eq. 5 / Brown & McPhee 2016, Karnopp,
LuGre) kernels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hapticam.errors import ModelValidationError
from hapticam.models.base import model_from_dict
from hapticam.models.contact import Contact, contact_force
from hapticam.models.friction import Friction, friction_force, stribeck_term

# -- contact ----------------------------------------------------------------------------------------


def reference_contact(law: str, x_c: float, k: float, b: float, n: float, side: int, x: float, v: float) -> float:
    d = side * (x - x_c)
    if d <= 0:
        return 0.0
    dd = side * v
    f = k * d + b * dd if law == "linear" else k * abs(d) ** (n - 1) * d + b * abs(d) ** n * dd  # seed 000 eq. 26
    return side * max(f, 0.0)


@pytest.mark.parametrize("law", ["linear", "hunt-crossley"])
def test_contact_kernel_matches_reference(law: str) -> None:
    rng = np.random.default_rng(21 if law == "linear" else 22)
    for _ in range(40):
        n = 1.0 if law == "linear" else float(rng.uniform(0.5, 2.5))
        side = int(rng.choice([-1, 1]))
        c = Contact(law, x_c_m=float(rng.uniform(-2e-3, 4e-3)), k_Npm=float(rng.uniform(0, 1e5)),
                    b_Nspm=float(rng.uniform(0, 50)), n=n, side=side)
        p, s = c.params_block(), c.initial_state()
        for x, v in zip(rng.uniform(-3e-3, 6e-3, 50), rng.normal(0, 0.2, 50)):
            want = reference_contact(law, c.x_c_m, c.k_Npm, c.b_Nspm, n, side, x, v)
            assert contact_force(p, s, x, v, 0.0, 1e-3) == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("law", ["linear", "hunt-crossley"])
def test_contact_never_tensile(law: str) -> None:
    rng = np.random.default_rng(23)
    for side in (1, -1):
        # linear: pulls when d_dot < -k d / b (down to -0.5 m/s); HC: when d_dot < -k / b (-0.5 m/s)
        b = 40.0 if law == "linear" else 4e4
        c = Contact(law, x_c_m=1e-3, k_Npm=2e4, b_Nspm=b, n=1.0 if law == "linear" else 1.5, side=side)
        p, s = c.params_block(), c.initial_state()
        x = 1e-3 + side * rng.uniform(0, 1e-3, 2000)
        v = -side * rng.uniform(0, 1.0, 2000)  # withdrawal: the unclamped law would pull
        forces = np.array([contact_force(p, s, xi, vi, 0.0, 1e-3) for xi, vi in zip(x, v)])
        assert np.all(side * forces >= 0.0)
        assert np.any(forces == 0.0) and np.any(forces != 0.0)  # the clamp was exercised, not vacuous


def bounce(c: Contact, m: float, v_in: float, dt: float = 2e-7) -> float:
    """Drop a free point mass onto the floor (side -1 wall at 0) with speed v_in; return the exit speed.

    The wall pushes the mass with -F (F is what the mass, as a probe, applies to the wall). RK4 steps.
    """
    p, s = c.params_block(), c.initial_state()

    def acc(x: float, v: float) -> float:
        return -contact_force(p, s, x, v, 0.0, dt) / m

    x, v = 0.0, -v_in
    while True:
        k1x, k1v = v, acc(x, v)
        k2x, k2v = v + 0.5 * dt * k1v, acc(x + 0.5 * dt * k1x, v + 0.5 * dt * k1v)
        k3x, k3v = v + 0.5 * dt * k2v, acc(x + 0.5 * dt * k2x, v + 0.5 * dt * k2v)
        k4x, k4v = v + dt * k3v, acc(x + dt * k3x, v + dt * k3v)
        x += dt * (k1x + 2 * k2x + 2 * k3x + k4x) / 6
        v += dt * (k1v + 2 * k2v + 2 * k3v + k4v) / 6
        if v > 0 and contact_force(p, s, x, v, 0.0, dt) == 0.0:  # separated
            return v


def test_hunt_crossley_bounce_loses_energy_as_predicted() -> None:
    m, v_in, k, n = 0.01, 0.3, 2e6, 1.5
    elastic = bounce(Contact("hunt-crossley", 0.0, k, 0.0, n, side=-1), m, v_in)
    assert elastic == pytest.approx(v_in, rel=1e-6)  # b = 0 keeps the energy
    lam = 0.2  # Hunt & Crossley: b = lam k, restitution e ~ 1 - (2/3) lam v_in for small lam v_in
    e = bounce(Contact("hunt-crossley", 0.0, k, lam * k, n, side=-1), m, v_in) / v_in
    assert e < 1.0
    assert e == pytest.approx(1.0 - 2.0 / 3.0 * lam * v_in, abs=2e-3)


def test_linear_contact_bounce_matches_closed_form() -> None:
    m, v_in, k, b = 0.01, 0.3, 1e4, 2.0
    e = bounce(Contact("linear", 0.0, k, b, side=-1), m, v_in) / v_in
    # separation where the clamped force reaches zero (Schwager & Poeschel 2007): beta = b/2m, w0^2 = k/m
    beta, w0 = b / (2 * m), math.sqrt(k / m)
    w = math.sqrt(w0 ** 2 - beta ** 2)
    e_ref = math.exp(-beta / w * (math.pi - math.atan(2 * beta * w / (w ** 2 - beta ** 2))))
    assert e < 1.0
    assert e == pytest.approx(e_ref, rel=1e-4)


@pytest.mark.parametrize("kwargs, match", [
    (dict(law="hunt-crossley", n=0.0), "n: must be > 0"),
    (dict(law="hunt-crossley", n=-1.0), "n: must be > 0"),
    (dict(law="linear", n=1.5), "n: the linear law has n = 1"),
    (dict(k_Npm=-1.0), "k_Npm: must be >= 0"),
    (dict(b_Nspm=-0.1), "b_Nspm: must be >= 0"),
    (dict(x_c_m=float("nan")), "x_c_m: must be finite"),
    (dict(k_Npm=float("inf")), "k_Npm: must be finite"),
    (dict(side=0), "side: expected"),
    (dict(side=True), "side: expected"),
    (dict(law="sticky"), "law: expected one of"),
])
def test_contact_validation_names_the_field(kwargs, match) -> None:
    base = dict(law="linear", x_c_m=0.0, k_Npm=1e4, b_Nspm=1.0)
    base.update(kwargs)
    with pytest.raises(ModelValidationError, match=match):
        Contact.from_dict(base)


def test_contact_round_trip() -> None:
    c = Contact("hunt-crossley", 3.6e-3, 5e5, 1e3, 1.5, side=1)
    assert model_from_dict("contact", c.to_dict()) == c
    with pytest.raises(ModelValidationError, match="contact: unknown field 'stiffness'"):
        Contact.from_dict({**c.to_dict(), "stiffness": 1.0})


# -- friction ---------------------------------------------------------------------------------------
STRIBECK = dict(mu_d=0.1, mu_s=0.15, mu_v_Nspm=0.05, v_t_mps=0.02, F_nt_N=1.0, F_n_N=0.8)
KARNOPP = dict(Fc_N=0.1, Fs_N=0.15, b_v_Nspm=0.05, dv_mps=1e-3, k_stick_Npm=2000.0, b_stick_Nspm=2.0)
LUGRE = dict(sigma0_Npm=1e4, sigma1_Nspm=2.0, sigma2_Nspm=0.05, Fc_N=0.1, Fs_N=0.15, vs_mps=0.01)


def reference_stribeck(v: np.ndarray, mu_d, mu_s, mu_v_Nspm, v_t_mps, F_nt_N, F_n_N, squared=True) -> np.ndarray:
    r = v / v_t_mps  # Brown & McPhee (2016) as quoted in seed 003 eq. 5 (squared denominator), term by term
    den = (0.25 * r ** 2 + 0.75) ** (2 if squared else 1)  # squared=False: as printed in seed 003 eq. 5
    return (F_n_N * mu_d * np.tanh(4 * r) + F_n_N * (mu_s - mu_d) * r / den
            + mu_v_Nspm * v * np.tanh(4 * F_n_N / F_nt_N))


def test_memoryless_laws_match_reference() -> None:
    rng = np.random.default_rng(31)
    v = np.concatenate([rng.normal(0, 0.05, 500), [0.0, 1e-9, -1e-9, 10.0, -10.0]])
    cv = Friction("coulomb-viscous", Fc_N=0.08, b_v_Nspm=0.3, v_eps_mps=4e-3)
    st = Friction("stribeck", **STRIBECK)
    for fr, want in ((cv, 0.08 * np.tanh(v / 4e-3) + 0.3 * v), (st, reference_stribeck(v, **STRIBECK))):
        p, s = fr.params_block(), fr.initial_state()
        got = np.array([friction_force(p, s, 0.0, vi, 0.0, 1e-3) for vi in v])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(fr.steady_state_force(v), want, rtol=1e-12, atol=1e-15)
        assert np.all(got * v >= 0)


def _peak(fn) -> tuple[float, float]:
    """Maximum of ``fn(v)`` over ``0 <= v <= 10 v_t`` by a bounded scalar search: (v at the peak, value)."""
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(lambda v: -fn(v), bounds=(0.0, 10 * STRIBECK["v_t_mps"]), method="bounded",
                          options={"xatol": 1e-14})
    return float(res.x), float(-res.fun)


def test_stribeck_term_peaks_at_v_t_with_value_fn_times_mu_s_minus_mu_d() -> None:
    """Brown & McPhee's squared law: the Stribeck term's peak is at v_t with F_n (mu_s - mu_d) (its
    parameters mean what they say); seed 003 eq. 5 as printed peaks at sqrt(3) v_t with 2/sqrt(3) of it."""
    fn, d_mu, vt = STRIBECK["F_n_N"], STRIBECK["mu_s"] - STRIBECK["mu_d"], STRIBECK["v_t_mps"]
    # the Stribeck term alone from the kernel: mu_d = 0 and mu_s = mu_s - mu_d keep it and drop the tanh
    # term, mu_v = 0 the viscous one
    alone = Friction("stribeck", **{**STRIBECK, "mu_d": 0.0, "mu_s": d_mu, "mu_v_Nspm": 0.0})
    p, s = alone.params_block(), alone.initial_state()
    v_pk, f_pk = _peak(lambda v: friction_force(p, s, 0.0, v, 0.0, 1e-3))
    assert v_pk == pytest.approx(vt, rel=1e-6)  # the peak's location (a flat maximum: located to ~sqrt(eps))
    assert f_pk == pytest.approx(fn * d_mu, rel=1e-9)
    full = Friction("stribeck", **STRIBECK)  # the Stribeck term at v_t, from the full law minus its other terms
    extra = fn * STRIBECK["mu_d"] * math.tanh(4.0) + STRIBECK["mu_v_Nspm"] * vt * math.tanh(4 * fn / STRIBECK["F_nt_N"])
    assert float(full.steady_state_force(vt)) - extra == pytest.approx(fn * d_mu, rel=1e-9)
    v_pk, f_pk = _peak(lambda v: fn * d_mu * float(stribeck_term(v / vt, squared=False)))  # as printed
    assert v_pk == pytest.approx(math.sqrt(3) * vt, rel=1e-6)
    assert f_pk == pytest.approx(2 / math.sqrt(3) * fn * d_mu, rel=1e-9)


def test_stribeck_slope_at_zero() -> None:
    """Documented slope at v = 0: F_n (4 mu_d + (16/9) (mu_s - mu_d)) / v_t + mu_v tanh(4 F_n / F_nt); the
    printed form's Stribeck shape has slope 4/3 there."""
    fn, vt, h = STRIBECK["F_n_N"], STRIBECK["v_t_mps"], 1e-9
    visc = STRIBECK["mu_v_Nspm"] * math.tanh(4 * fn / STRIBECK["F_nt_N"])
    fr = Friction("stribeck", **STRIBECK)
    slope = float(fr.steady_state_force(h) - fr.steady_state_force(-h)) / (2 * h)
    want = fn * (4 * STRIBECK["mu_d"] + 16 / 9 * (STRIBECK["mu_s"] - STRIBECK["mu_d"])) / vt + visc
    assert slope == pytest.approx(want, rel=1e-6)
    assert float(stribeck_term(1e-9, squared=False)) / 1e-9 == pytest.approx(4 / 3, rel=1e-9)


def test_model_files_naming_stribeck_keep_loading_with_the_corrected_law() -> None:
    """A model file written before the correction (schema 1, law stribeck) loads unchanged and renders the
    squared law; the change of its Stribeck term is the documented factor 1 / (u^2/4 + 3/4)."""
    from hapticam.models.files import document_from_mapping

    raw = {"format": "hapticam-model", "schema_version": 1, "kind": "friction",
           "parameters": {"law": "stribeck", **STRIBECK}}
    model, doc = document_from_mapping(raw, "old.yaml")
    assert model == Friction("stribeck", **STRIBECK) and doc.parameters["law"] == "stribeck"
    v = np.linspace(-0.1, 0.1, 41)
    np.testing.assert_allclose(model.steady_state_force(v), reference_stribeck(v, **STRIBECK), rtol=1e-12,
                               atol=1e-15)
    u = v / STRIBECK["v_t_mps"]
    ratio = stribeck_term(u[u != 0]) / stribeck_term(u[u != 0], squared=False)
    np.testing.assert_allclose(ratio, 1 / (0.25 * u[u != 0] ** 2 + 0.75), rtol=1e-12)


def reference_karnopp(prm: dict, xs, vs) -> list[float]:
    """The documented stick-band scheme, written plainly."""
    fc, fs, bv, dv, ks, bs = (prm[k] for k in ("Fc_N", "Fs_N", "b_v_Nspm", "dv_mps", "k_stick_Npm", "b_stick_Nspm"))
    anchor, mode, out = xs[0], 0.0, []
    for x, v in zip(xs, vs):
        if mode != 0.0:
            if abs(v) >= dv:
                mode = math.copysign(1.0, v)
                out.append(fc * mode + bv * v)
                continue
            anchor, mode = x - mode * fc / ks, 0.0
        e = ks * (x - anchor)
        if abs(e) >= fs:
            sg = math.copysign(1.0, e)
            anchor, e = x - sg * fs / ks, sg * fs
            if sg * v >= dv:
                mode = sg
                out.append(fc * sg + bv * v)
                continue
        out.append(e + (bs + bv) * v)
    return out


def test_karnopp_matches_reference() -> None:
    rng = np.random.default_rng(32)
    fr = Friction("karnopp", **KARNOPP)
    v = np.concatenate([rng.normal(0, 2e-3, 300), rng.normal(0.01, 0.02, 300), rng.normal(0, 5e-4, 300)])
    x = np.cumsum(v) * 1e-3 + rng.normal(0, 2e-6, v.size)
    p, s = fr.params_block(), fr.initial_state()
    got = [friction_force(p, s, xi, vi, 0.0, 1e-3) for xi, vi in zip(x, v)]
    want = reference_karnopp(KARNOPP, x, v)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    # bounded: the spring part never exceeds Fs; dampers add at most (b_stick + b_v) |v|
    bound = KARNOPP["Fs_N"] + (KARNOPP["b_stick_Nspm"] + KARNOPP["b_v_Nspm"]) * np.abs(v)
    assert np.all(np.abs(got) <= bound + 1e-12)


def lugre_rhs(z: float, v: float, p: dict) -> float:
    g = (p["Fc_N"] + (p["Fs_N"] - p["Fc_N"]) * math.exp(-(v / p["vs_mps"]) ** 2)) / p["sigma0_Npm"]
    return v - abs(v) * z / g  # dz/dt = v - |v| z / g(v)


@pytest.mark.parametrize("dt", [1e-3, 1e-4])
def test_lugre_matches_fine_step_reference(dt: float) -> None:
    """Kernel at the servo tick vs RK4 with 200 sub-steps per tick, v held over each tick (zero-order hold)."""
    rng = np.random.default_rng(33)
    fr = Friction("lugre", **LUGRE)
    p, s = fr.params_block(), fr.initial_state()
    v = np.concatenate([0.03 * np.sin(np.arange(150) * 2 * np.pi * dt * 5), rng.normal(0, 0.02, 150)])
    z, h = 0.0, dt / 200
    for vi in v:
        z0 = z
        for _ in range(200):
            k1 = lugre_rhs(z, vi, LUGRE)
            k2 = lugre_rhs(z + 0.5 * h * k1, vi, LUGRE)
            k3 = lugre_rhs(z + 0.5 * h * k2, vi, LUGRE)
            k4 = lugre_rhs(z + h * k3, vi, LUGRE)
            z += h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        want = LUGRE["sigma0_Npm"] * z + LUGRE["sigma1_Nspm"] * (z - z0) / dt + LUGRE["sigma2_Nspm"] * vi
        got = friction_force(p, s, 0.0, vi, 0.0, dt)
        assert got == pytest.approx(want, rel=1e-8, abs=1e-10)
        assert s[0] == pytest.approx(z, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("dt", [1e-3, 1e-4])
def test_lugre_steady_state_is_its_stribeck_curve(dt: float) -> None:
    fr = Friction("lugre", **LUGRE)
    for v in (-0.2, -0.01, -1e-3, 1e-4, 5e-3, 0.01, 0.05, 0.5):
        p, s = fr.params_block(), fr.initial_state()
        n = int(min(2e5, 60 * 2e-5 / (abs(v) * dt)) + 10)  # ~60 bristle time constants g/|v|
        for _ in range(n):
            f = friction_force(p, s, 0.0, v, 0.0, dt)
        g = LUGRE["Fc_N"] + (LUGRE["Fs_N"] - LUGRE["Fc_N"]) * math.exp(-(v / LUGRE["vs_mps"]) ** 2)
        assert f == pytest.approx(math.copysign(g, v) + LUGRE["sigma2_Nspm"] * v, rel=1e-9)
        assert fr.steady_state_force(v) == pytest.approx(f, rel=1e-9)


def test_lugre_bristle_bounded_for_wild_inputs() -> None:
    rng = np.random.default_rng(34)
    fr = Friction("lugre", **LUGRE)
    for dt in (1e-3, 1e-4):
        p, s = fr.params_block(), fr.initial_state()
        for v in rng.normal(0, 5.0, 5000) * rng.choice([1e-4, 1.0, 100.0], 5000):
            f = friction_force(p, s, 0.0, v, 0.0, dt)
            assert math.isfinite(f)
            assert abs(s[0]) <= LUGRE["Fs_N"] / LUGRE["sigma0_Npm"] * (1 + 1e-12)


def simulate_mass(force, m: float, v0: float, f_ext, dt: float = 1e-3, t_end: float = 2.0):
    """A mass on a 1 kHz device: the device renders -F(x, v) from the last measured state (symplectic Euler).

    ``f_ext`` (N) is a constant or a function of time pushing the mass along +x.
    """
    push = f_ext if callable(f_ext) else (lambda t: f_ext)
    x, v, vs = 0.0, v0, []
    for i in range(int(round(t_end / dt))):
        f = force(x, v)
        v += (push(i * dt) - f) / m * dt
        x += v * dt
        vs.append(v)
    return x, np.array(vs)


def sign_flips(vs: np.ndarray, floor: float = 1e-5) -> tuple[int, int]:
    """Sign changes of v among samples with |v| > floor, and the index of the last such sample."""
    idx = np.flatnonzero(np.abs(vs) > floor)
    if idx.size < 2:
        return 0, int(idx[-1]) if idx.size else 0
    return int(np.sum(np.diff(np.sign(vs[idx])) != 0)), int(idx[-1])


def test_naive_sign_coulomb_chatters() -> None:
    """The check below can fail: an unsmoothed Fc sign(v) keeps flipping until the end of the run."""
    _, vs = simulate_mass(lambda x, v: 0.1 * np.sign(v), m=0.05, v0=0.0513, f_ext=0.0)
    flips, last = sign_flips(vs)
    assert flips > 500 and last == vs.size - 1


@pytest.mark.parametrize("law, prm, max_flips", [
    ("coulomb-viscous", dict(Fc_N=0.1, b_v_Nspm=0.05), 0),
    ("stribeck", STRIBECK, 0),
    ("karnopp", KARNOPP, 25),  # the stuck mass rings on the damped stick spring (zeta ~ 0.1), then rests
    ("lugre", LUGRE, 40),  # pre-sliding ringing on the bristles, decaying
])
@pytest.mark.parametrize("f_ext", [0.0, 0.08])
def test_no_chatter_at_zero_velocity(law: str, prm: dict, max_flips: int, f_ext: float) -> None:
    """A 50 g mass sliding at 50 mm/s, pushed with f_ext below Fc, settles without a limit cycle."""
    fr = Friction(law, **prm)
    p, s = fr.params_block(), fr.initial_state()
    _, vs = simulate_mass(lambda x, v: friction_force(p, s, x, v, 0.0, 1e-3), m=0.05, v0=0.05, f_ext=f_ext)
    flips, last = sign_flips(vs)
    assert flips <= max_flips
    if law in ("karnopp", "lugre") or f_ext == 0.0:
        assert last < 500  # no motion above 10 um/s after 0.5 s
        assert np.max(np.abs(vs[-1000:])) < 1e-9  # at rest, no limit cycle
    else:
        # smooth laws cannot hold a load: the mass creeps steadily where F(v) = f_ext, without flips
        assert fr.steady_state_force(vs[-1]) == pytest.approx(f_ext, abs=1e-9)
        assert np.ptp(vs[-1000:]) < 1e-9


def test_karnopp_sticks_below_breakaway_and_slides_above() -> None:
    """A hand ramping its push up (0.5 N/s) to a hold level below or above Fs = 0.15 N."""
    for f_hold, moves in ((0.14, False), (0.16, True)):
        fr = Friction("karnopp", **KARNOPP)
        p, s = fr.params_block(), fr.initial_state()
        x, vs = simulate_mass(lambda x, v: friction_force(p, s, x, v, 0.0, 1e-3), m=0.05, v0=0.0,
                              f_ext=lambda t: min(f_hold, 0.5 * t), t_end=1.0)
        if moves:
            assert x > 0.1  # sliding against Fc = 0.1 N with 0.16 N: accelerates
        else:
            assert x == pytest.approx(f_hold / KARNOPP["k_stick_Npm"], rel=1e-3)  # held by the stick spring
            assert np.max(np.abs(vs[-100:])) < 1e-9


@pytest.mark.parametrize("law, kwargs, match", [
    ("coulomb-viscous", dict(Fc_N=-0.1), "Fc_N: must be >= 0"),
    ("coulomb-viscous", dict(Fc_N=0.1, v_eps_mps=0.0), "v_eps_mps: must be > 0"),
    ("coulomb-viscous", dict(Fc_N=float("nan")), "Fc_N: must be finite"),
    ("coulomb-viscous", dict(b_v_Nspm=0.1), "Fc_N: missing"),
    ("coulomb-viscous", dict(Fc_N=0.1, Fs_N=0.2), "Fs_N: not a parameter of the coulomb-viscous"),
    ("stribeck", {**STRIBECK, "v_t_mps": 0.0}, "v_t_mps: must be > 0"),
    ("stribeck", {**STRIBECK, "mu_v_Nspm": -1.0}, "mu_v_Nspm: must be >= 0"),
    ("stribeck", {**STRIBECK, "F_nt_N": float("inf")}, "F_nt_N: must be finite"),
    ("karnopp", {**KARNOPP, "Fs_N": 0.05}, "Fs_N: static friction must be >= Fc_N"),
    ("karnopp", {**KARNOPP, "k_stick_Npm": -5.0}, "k_stick_Npm: must be > 0"),
    ("karnopp", {**KARNOPP, "b_stick_Nspm": -5.0}, "b_stick_Nspm: must be >= 0"),
    ("lugre", {**LUGRE, "sigma0_Npm": 0.0}, "sigma0_Npm: must be > 0"),
    ("lugre", {**LUGRE, "sigma1_Nspm": -1.0}, "sigma1_Nspm: must be >= 0"),
    ("lugre", {**LUGRE, "vs_mps": float("nan")}, "vs_mps: must be finite"),
    ("dahl", {}, "law: expected one of"),
])
def test_friction_validation_names_the_field(law, kwargs, match) -> None:
    with pytest.raises(ModelValidationError, match=match):
        Friction.from_dict({"law": law, **kwargs})


def test_friction_round_trip_and_defaults() -> None:
    for law, prm in (("stribeck", STRIBECK), ("karnopp", KARNOPP), ("lugre", LUGRE)):
        fr = Friction(law, **prm)
        assert model_from_dict("friction", fr.to_dict()) == fr
    cv = Friction("coulomb-viscous", Fc_N=0.1)
    assert cv.to_dict() == {"law": "coulomb-viscous", "Fc_N": 0.1, "b_v_Nspm": 0.0, "v_eps_mps": 5e-3}
    with pytest.raises(ModelValidationError, match="friction: missing field 'law'"):
        Friction.from_dict({"Fc_N": 0.1})


@pytest.mark.parametrize("law, params", [("coulomb-viscous", {"Fc_N": 0.1, "v_eps_mps": 1e-3}),
                                         ("lugre", {"sigma0_Npm": 1e4, "sigma1_Nspm": 0.0, "sigma2_Nspm": 0.0,
                                                    "Fc_N": 0.1, "Fs_N": 0.15, "vs_mps": 1e-3})])
def test_friction_acts_only_from_active_from_m(law: str, params: dict) -> None:
    """``active_from_m``: no force before it (a key's friction once the key is touched), the law's force
    from it on, the same block as without it there; the field round-trips and old files are unchanged."""
    gated, plain = Friction(law, active_from_m=0.2e-3, **params), Friction(law, **params)
    sg, sp = gated.initial_state(), plain.initial_state()
    for x in (0.0, 0.1e-3, 0.19e-3):
        assert friction_force(gated.params_block(), sg, x, 0.01, 0.0, 1e-3) == 0.0
    for x in (0.2e-3, 0.5e-3, 1e-3):
        assert (friction_force(gated.params_block(), sg, x, 0.01, 0.0, 1e-3)
                == friction_force(plain.params_block(), sp, x, 0.01, 0.0, 1e-3))
    assert model_from_dict("friction", gated.to_dict()).active_from_m == 0.2e-3
    assert "active_from_m" not in plain.to_dict()
