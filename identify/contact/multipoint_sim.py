"""A gravity drop of a box on four v-guides into V-grooves: multi-point contact data with known truth.

After the thesis's ACU gravity drop (seed 004 sec. 5.2.1): a 9.2 kg body starts 5 mm above its seat and
settles for 0.4 s; contact parameters k = 1e5 N/m, b = 38.37 N s/m (``2 zeta sqrt(k m)`` with zeta 0.02),
mu = 0.1. The body translates only (its moment is what the contacts apply about its centre); each of its
four v-guides has two edge points that meet the two 45-degree faces of a groove running along y: eight
contacts at rest, as the thesis's simulation found. It also slides along the grooves (0.8 m/s initially, so
every contact keeps sliding and its friction direction is defined, the condition of eq. 4.4).

Contact law while ``delta > 0``: ``Fn = k delta + b delta'`` (eq. 4.3, unclamped as in the estimator's model),
``Ft = mu k delta`` opposite the sliding velocity (eq. 4.4). Integrated by semi-implicit Euler at 10 kHz and
recorded at 1 kHz.
"""

from __future__ import annotations

import numpy as np

from hapticam.identify.contact.mechanics import damping_from_ratio
from hapticam.identify.contact.multipoint import MultiPointData

K_NPM = 1e5
MASS_KG = 9.2
B_NSPM = damping_from_ratio(0.02, K_NPM, MASS_KG)  # 38.37 N s/m (seed 004 sec. 5.2.1)
MU = 0.1


def _geometry(half_width_m: float = 0.004) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Body points (8 x 3, from the centre, seated), groove face normals (8 x 3) and face points (8 x 3)."""
    s = np.sqrt(0.5)
    pts, nrm, face = [], [], []
    for gx, gy in ((0.12, 0.09), (-0.12, 0.09), (0.12, -0.09), (-0.11, -0.08)):
        for side in (-1.0, 1.0):
            p = np.array([gx + side * half_width_m, gy, -0.15])
            pts.append(p)
            nrm.append(np.array([-side * s, 0.0, s]))  # the face pushes the point inwards and up
            face.append(p.copy())  # seated: the point lies on its face
    return np.array(pts), np.array(nrm), np.array(face)


def gravity_drop(duration_s: float = 0.4, drop_m: float = 5e-3, k: float = K_NPM, b: float = B_NSPM,
                 mu: float = MU, mass_kg: float = MASS_KG, resolution_N: float = 0.0, record_Hz: float = 1000.0,
                 dither: float = 0.0, seed: int = 0) -> MultiPointData:
    """Simulate the drop, recorded at ``record_Hz`` (a divisor of 10 kHz).

    ``resolution_N`` is the force plate's resolution (0.5 N for the thesis's, sec. 3.1.1): forces are
    rounded to it after Gaussian analog noise of ``dither`` counts, moments to ``resolution_N * 0.1 m``;
    0 gives exact data.
    """
    pts, nrm, face = _geometry()
    dt = 1e-4
    every = max(1, int(round(1.0 / (record_Hz * dt))))
    steps = int(round(duration_s / dt))
    pos = np.array([0.0015, 0.0, drop_m])  # body centre offset from its seat (m)
    vel = np.array([0.0, 0.8, 0.0])
    g = np.array([0.0, 0.0, -9.81])
    T, C = steps // every, pts.shape[0]
    rec = {"t": np.empty(T), "F": np.empty((T, 3)), "M": np.empty((T, 3)), "d": np.full((T, C), np.nan),
           "dd": np.full((T, C), np.nan), "n": np.full((T, C, 3), np.nan), "t_": np.full((T, C, 3), np.nan),
           "r": np.full((T, C, 3), np.nan)}
    for i in range(steps):
        F, M, d, dd, tan = _contact_forces(pts, nrm, face, pos, vel, k, b, mu)
        if i % every == 0 and i // every < T:
            j = i // every
            on = d > 0
            rec["t"][j], rec["F"][j], rec["M"][j] = i * dt, F, M
            rec["d"][j, on], rec["dd"][j, on] = d[on], dd[on]
            rec["n"][j, on], rec["t_"][j, on], rec["r"][j, on] = nrm[on], tan[on], pts[on]
        vel = vel + dt * (F / mass_kg + g)  # m v' = sum F_i + m g (semi-implicit Euler)
        pos = pos + dt * vel
    F, M = rec["F"], rec["M"]
    if resolution_N > 0:
        rng = np.random.default_rng(seed)
        F = np.round((F + rng.normal(0, dither * resolution_N, F.shape)) / resolution_N) * resolution_N
        mq = 0.1 * resolution_N
        M = np.round((M + rng.normal(0, dither * mq, M.shape)) / mq) * mq
    return MultiPointData(rec["t"], F, rec["d"], rec["dd"], rec["n"], rec["t_"], moment_Nm=M, r_m=rec["r"])


def _contact_forces(pts: np.ndarray, nrm: np.ndarray, face: np.ndarray, pos: np.ndarray, vel: np.ndarray, k: float,
                    b: float, mu: float) -> tuple[np.ndarray, ...]:
    p = pts + pos
    d = np.einsum("ij,ij->i", nrm, face - p)  # interference along the face normal
    dd = -nrm @ vel  # its rate (the berth is fixed)
    vt = vel[None, :] - (nrm @ vel)[:, None] * nrm  # tangential sliding velocity
    speed = np.linalg.norm(vt, axis=1)
    tan = -vt / np.maximum(speed, 1e-12)[:, None]  # opposite the sliding velocity  (eq. 4.2)
    on = d > 0
    fn = np.where(on, k * d + b * dd, 0.0)  # Fn = k delta + b delta'  (eq. 4.3)
    ft = np.where(on, mu * k * d, 0.0)  # Ft = mu k delta  (eq. 4.4)
    Fi = fn[:, None] * nrm + ft[:, None] * tan  # F_i = Fn n + Ft t  (eq. 4.2)
    return Fi.sum(0), np.cross(pts, Fi).sum(0), d, dd, tan  # F_R = sum F_i (eq. 4.1), M_R = sum r x F_i
