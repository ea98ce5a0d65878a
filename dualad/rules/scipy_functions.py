"""SciPy functions called unchanged: scipy.stats, scipy.linalg, scipy.signal.
"""
