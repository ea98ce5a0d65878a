"""scipy.stats distributions beyond those of :mod:`dualad.rules.scipy_stats`."""
