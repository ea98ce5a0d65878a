"""Polynomials as coefficient arrays (``np.poly*``, ``np.roots``, ``np.vander``)."""
