"""The likelihood-ratio sign test behind ISVM Table 4.

With k of n data sets on which the inhibitory machine is better than a competitor, the maximum
likelihood ratio against H0 "the competitor is better than or equal" (p <= 1/2) is

    L = sup_p p^k (1-p)^(n-k) / sup_{p <= 1/2} p^k (1-p)^(n-k) = (k/n)^k ((n-k)/n)^(n-k) 2^n

for k > n/2 and 1 otherwise.  It reproduces every value ISVM Table 4 prints (446 = 13 of 14,
52 = 12 of 14, 11.35 = 11 of 14, 3.77 = 10 of 14, 1.78 = 9 of 14; 22.17 = 8 of 9, 4.35 = 7 of
9, 1.05 = 5 of 9).  Its exact level is the binomial tail P(K >= k | p = 1/2).
"""

from __future__ import annotations

import math

from scipy.stats import binom


def likelihood_ratio(k: int, n: int) -> float:
    """Max. likelihood ratio of 'better on k of n' against H0: p <= 1/2 (ISVM Table 4)."""
    if n == 0 or 2 * k <= n:
        return 1.0
    p = k / n
    log_l = k * math.log(p) + ((n - k) * math.log(1 - p) if k < n else 0.0) + n * math.log(2)
    return math.exp(log_l)


def sign_test_p_value(k: int, n: int) -> float:
    """P(K >= k) for K ~ Binomial(n, 1/2): the exact level of rejecting H0 at 'k of n'."""
    return float(binom.sf(k - 1, n, 0.5)) if n else 1.0
