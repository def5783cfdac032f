"""Plane-wave expansion for 2D photonic crystals of circular cylinders (Ho, Chan & Soukoulis 1990, with
the inverse-permittivity rule): TM (E along z) and TE (H along z) bands in units of c/a."""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import eigh
from scipy.special import j1


class Crystal:
    def __init__(self, basis: np.ndarray, radius: float, eps_in: float, eps_out: float, n_max: int):
        self.recip = np.linalg.inv(basis).T  # rows: b1, b2 in units of 2pi/a
        area = abs(np.linalg.det(basis))
        m = np.arange(-n_max, n_max + 1)
        mm, nn = np.meshgrid(m, m, indexing="ij")
        self.idx = np.stack([mm.ravel(), nn.ravel()], axis=1)
        self.G = self.idx @ self.recip
        dG = (self.idx[:, None, :] - self.idx[None, :, :]) @ self.recip
        g = 2 * math.pi * np.linalg.norm(dG, axis=2)
        f = math.pi * radius ** 2 / area
        with np.errstate(invalid="ignore", divide="ignore"):
            shape = np.where(g > 1e-12, 2 * j1(g * radius) / (g * radius), 1.0)
        eps = (eps_in - eps_out) * f * shape
        eps[g <= 1e-12] = f * eps_in + (1 - f) * eps_out
        self.inv_eps = np.linalg.inv(eps)

    def bands(self, k_red: tuple[float, float], pol: str, n_bands: int) -> np.ndarray:
        kG = np.asarray(k_red) @ self.recip + self.G
        if pol == "tm":
            norm = np.linalg.norm(kG, axis=1)
            m = norm[:, None] * self.inv_eps * norm[None, :]
        else:
            m = (kG @ kG.T) * self.inv_eps
        lam = eigh(m, eigvals_only=True, subset_by_index=[0, n_bands - 1])
        return np.sqrt(np.clip(lam, 0, None))
