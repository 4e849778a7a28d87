"""Statistics for tests that compare distributions (no scipy in the project's environment): the
two-sample Kolmogorov–Smirnov test."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence


def ks_statistic(a: Sequence[float], b: Sequence[float]) -> float:
    """D: the largest distance between the two samples' empirical distribution functions."""
    if not a or not b:
        raise ValueError("both samples need values")
    xs, ys = sorted(a), sorted(b)
    d = 0.0
    for v in sorted(set(xs) | set(ys)):
        fa = bisect.bisect_right(xs, v) / len(xs)
        fb = bisect.bisect_right(ys, v) / len(ys)
        d = max(d, abs(fa - fb))
    return d


def kolmogorov_q(lam: float) -> float:
    """P(K > lam) for the Kolmogorov distribution: 2 Σ_{j≥1} (-1)^(j-1) e^(-2 j² lam²)."""
    if lam < 0.2:  # the series converges slowly here, and the probability is 1 to 1e-12
        return 1.0
    total = 0.0
    for j in range(1, 101):
        term = 2 * (-1) ** (j - 1) * math.exp(-2 * j * j * lam * lam)
        total += term
        if abs(term) < 1e-16:
            break
    return min(1.0, max(0.0, total))


def ks_2samp(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """(D, p): the two-sample KS test, two-sided, with the asymptotic p-value and Stephens'
    small-sample correction (as Numerical Recipes' ``kstwo``): p = Q((√n_e + 0.12 +
    0.11/√n_e) D), n_e = n m / (n + m)."""
    d = ks_statistic(a, b)
    en = math.sqrt(len(a) * len(b) / (len(a) + len(b)))
    return d, kolmogorov_q((en + 0.12 + 0.11 / en) * d)
