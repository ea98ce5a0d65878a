"""scipy.special functions beyond those of :mod:`dualad.rules.special`."""
