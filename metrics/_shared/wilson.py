"""The Wilson score interval, shared by the modules that report pass rates of small groups.

Unlike the normal approximation it stays inside [0, 1] and says something at 0 % and 100 %, which
small groups (a decision class, a dimension scored on a few turns) often hit.
"""
import math

Z_95 = 1.959963984540054


def wilson_interval(successes, n, z=Z_95):
    """(low, high) of `successes` out of `n`, or (None, None) when n is 0."""
    if n == 0:
        return None, None
    estimate = successes / n
    denominator = 1.0 + z * z / n
    centre = (estimate + z * z / (2 * n)) / denominator
    half = z * math.sqrt(estimate * (1.0 - estimate) / n + z * z / (4 * n * n)) / denominator
    # Rounding can put a bound a hair past the estimate at 0 % or 100 %.
    return min(max(0.0, centre - half), estimate), max(min(1.0, centre + half), estimate)
