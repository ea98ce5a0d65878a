"""scipy.linalg: its versions of NumPy's decompositions, further factorizations and special matrices."""
